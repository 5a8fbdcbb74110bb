// Where a suspended continuation or coroutine resumes, and how: as a task (future.hpp,
// coroutine.hpp, task_group.hpp's join()).
#pragma once

#include <coroutine>
#include <type_traits>

#include "heist/detail/config.hpp"
#include "heist/detail/core/arena_lifetime.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/wait/completion_callback.hpp"
#include "heist/detail/wait/stack_headroom.hpp"

namespace heist::detail {

// The arena a continuation runs in when none was named: the completing thread's, if it runs
// inside an executor; else `own` (alive: the caller knows it); else the default executor's.
inline arena& continuation_arena(arena* own) {
  const thread_context* c = t_context;
  if (c != nullptr && c->current_arena() != nullptr) return *c->current_arena();
  return own != nullptr ? *own : default_executor_arena();
}

// The arena an arena_ref names, usable for a scope: the calling thread's own arena if it is
// that one (a thread inside an arena keeps it alive), else pinned (arena_lifetime.hpp).
// get() is null if the reference is empty or the arena is closed.
class arena_in_use {
 public:
  explicit arena_in_use(const arena_ref& r) noexcept {
    const thread_context* c = t_context;
    if (c != nullptr && c->current_arena() != nullptr && c->current_arena()->is(r)) {
      m_arena = c->current_arena();
    } else if (r) {
      m_arena = r.get()->pin();
      if (m_arena != nullptr) m_pinned = r.get();
    }
  }
  arena_in_use(const arena_in_use&) = delete;
  arena_in_use& operator=(const arena_in_use&) = delete;
  ~arena_in_use() {
    if (m_pinned != nullptr) m_pinned->unpin();
  }
  arena* get() const noexcept { return m_arena; }

 private:
  arena* m_arena = nullptr;
  arena_lifetime* m_pinned = nullptr;
};

// Calls run(arena&) with the arena a continuation completed here goes to: the completing
// thread's, if it runs inside an executor; else the home `home` names (pinned for the call);
// else, with no home, the default executor's. False, without calling run: the home is gone
// (its executor or task_arena was destroyed).
template <class Run>
bool with_continuation_arena(const arena_ref& home, Run&& run) {
  const thread_context* c = t_context;
  if (c != nullptr && c->current_arena() != nullptr) {
    run(*c->current_arena());
    return true;
  }
  if (!home) {
    run(default_executor_arena());
    return true;
  }
  arena_in_use use(home);
  if (use.get() == nullptr) return false;
  run(*use.get());
  return true;
}

// --- the group a coroutine runs in (docs/design/async.md, "The group a coroutine runs in") --
// A heist coroutine has an enclosing group E for its whole life: the task_group it is a
// member of (task_group::run(task)), else the E of the heist coroutine that awaits it, else
// none. While its body runs, the thread's running group (thread_context::m_group, the
// parent of new groups) is E, so groups created inside a member nest under its group as they
// do inside a task, wherever and however often it resumes. Each heist awaiter notes the
// running group when it is made (in the body, so E) and puts it back when the body resumes;
// in a coroutine that is not heist's it puts back none, since that coroutine may outlive the
// group of the task that first ran it. E outlives the body: a group waits for its members,
// and an awaiting coroutine for the task it awaits.
struct heist_promise_tag {};
template <class P>
inline constexpr bool k_heist_promise = std::is_base_of_v<heist_promise_tag, P>;

// The running group to put back when a coroutine of promise type P resumes, given the one
// noted when its awaiter was made.
template <class P>
inline wait_context* group_to_resume_in(wait_context* noted) noexcept {
  if constexpr (k_heist_promise<P>) {
    return noted;
  } else {
    return nullptr;
  }
}

// Makes `g` the calling thread's running group (a body resumes; a member starts).
inline void enter_group(wait_context* g) noexcept {
  if (thread_context* const c = t_context) c->exchange_group(g);
}

// A completion callback taken over by the thread that completed its event
// (wait_context::finish_member_taking_resumer): its continuation, a suspended coroutine, to
// be resumed next by symmetric transfer, or, for a callback without one, fired here (noop: back
// to the scheduler).
inline std::coroutine_handle<> take_over(completion_callback* r) noexcept {
  if (void* const frame = r->continuation()) return std::coroutine_handle<>::from_address(frame);
  r->fire();
  return std::noop_coroutine();
}

// A heist task that resumes a coroutine.
struct resume_job {
  explicit resume_job(std::coroutine_handle<> h) noexcept : handle(h) {}
  std::coroutine_handle<> handle;
  void operator()(task*) noexcept { handle.resume(); }
};

// A heist task that resumes a coroutine in the running group `group`: the next coroutine of
// a chain of awaits, queued from a low stack (transfer_or_queue, below) in place of a
// symmetric transfer, which would have kept that group.
struct resume_in_group_job {
  resume_in_group_job(std::coroutine_handle<> h, wait_context* g) noexcept : handle(h), group(g) {}
  std::coroutine_handle<> handle;
  wait_context* group;
  void operator()(task*) noexcept {
    enter_group(group);
    handle.resume();
  }
};

// The next coroutine of a chain of awaits, `h`: the task a co_await starts (coroutine.hpp,
// task_awaiter) or the awaiter a task's end continues (final_awaiter). Returns `h`, for a
// symmetric transfer. Where a transfer may keep a stack frame (HEIST_AWAIT_STACK_GUARD,
// config.hpp) and this thread's stack is below its mark for that
// (thread_context::await_stack_mark(): the helping waits' headroom mark; nearer the top under
// TSan), `h` is queued instead, as a task of this thread's arena that resumes it in the
// running group (the one the transfer would have kept: the awaiter's, which the awaited task
// runs in), and noop is returned: every transfer on the stack returns to the scheduler, which
// resumes `h` on a fresh stack. The suspending frame is not touched after the spawn (`h` may
// run on a thief at once, and end, resume or destroy that frame); if the spawn fails, the
// transfer (docs/design/async.md, "Chains of awaits where transfers keep frames").
inline std::coroutine_handle<> transfer_or_queue(std::coroutine_handle<> h) noexcept {
#if HEIST_AWAIT_STACK_GUARD
  thread_context* const c = t_context;
  if (c != nullptr && c->current_arena() != nullptr && stack_address() < c->await_stack_mark()) {
    try {
      spawn_from<resume_in_group_job>(*c, *c->current_arena(), nullptr, h, c->running_group());
      HEIST_PERTURB_POINT(awaiter_queued);
      return std::noop_coroutine();
    } catch (...) {  // not queued (the executor refused it, no memory): it is still ours
    }
  }
#endif
  return h;
}

// Resumes `h` on this thread, now: its executor is gone or refused it, and a coroutine is
// never left suspended for good. Outside any task here: what the body makes the running group
// must not stay.
inline void resume_here(std::coroutine_handle<> h) noexcept {
  wait_context* const outside = current_group();
  h.resume();
  enter_group(outside);
}

// Resumes `h` as a task in `a`; if `a`'s executor refuses it (shut down, and this thread is
// outside it), resumes it here instead: a coroutine is never left suspended for good.
inline void resume_in(arena& a, std::coroutine_handle<> h) noexcept {
  try {
    thread_context* const c = t_context;
    if (c != nullptr && c->at_task_end() && !c->bypass_taken()) {
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
    resume_here(h);
  }
}

}  // namespace heist::detail
