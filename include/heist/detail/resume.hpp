// Where a suspended continuation or coroutine resumes, and how: as a task (future.hpp,
// coroutine.hpp, task_group.hpp's join()).
#pragma once

#include <coroutine>

#include "heist/detail/arena.hpp"
#include "heist/detail/spawn.hpp"
#include "heist/detail/thread_context.hpp"

namespace heist::detail {

// The arena a continuation runs in when none was named: the completing thread's, if it runs
// inside an executor; else the future's own; else the default executor's.
inline arena& continuation_arena(arena* own) {
  const thread_context* c = t_context;
  if (c != nullptr && c->m_arena != nullptr) return *c->m_arena;
  return own != nullptr ? *own : default_executor_arena();
}

// A heist task that resumes a coroutine.
struct resume_job {
  explicit resume_job(std::coroutine_handle<> h) noexcept : handle(h) {}
  std::coroutine_handle<> handle;
  void operator()(task*) noexcept { handle.resume(); }
};

// Resumes `h` as a task in `a`; if `a`'s executor refuses it (shut down, and this thread is
// outside it), resumes it here instead: a coroutine is never left suspended for good.
inline void resume_in(arena& a, std::coroutine_handle<> h) noexcept {
  try {
    thread_context* const c = t_context;
    if (c != nullptr && c->m_at_task_end && c->m_bypass == nullptr) {
      // The completing task's last act: the coroutine may continue next on this thread.
      task* const t = build_task<resume_job>(*c, nullptr, h);
      if (try_bypass(a, t)) return;
      try {
        spawn_built(a, t);
      } catch (...) {
        c->m_pool.deallocate(t);  // not queued: still ours (resume_job needs no destructor)
        throw;
      }
      return;
    }
    spawn<resume_job>(a, nullptr, h);
  } catch (...) {
    h.resume();
  }
}

}  // namespace heist::detail
