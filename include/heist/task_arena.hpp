// task_arena, isolate and blocking: concurrency control that composes.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "heist/detail/config.hpp"
#include "heist/detail/core/arena.hpp"
#include "heist/detail/core/arena_lease.hpp"
#include "heist/detail/core/executor_seam.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/wait/wait_context.hpp"
#include "heist/executor.hpp"

namespace heist {

class task_arena;

// A task_arena's priority. Threads choosing among arenas with queued work
// serve higher priority first; a thread running lower-priority work switches at its next
// task boundary. The executor's own submissions (submit/post, the default arena) are normal.
enum class priority { low, normal, high };

namespace detail {
// The state of one task_arena: a strict arena with its own slots (src/core/task_arena.cpp).
class task_arena_state;
// Isolation tags: one per isolate() call, never reused. Each thread reserves them from the
// shared counter k_isolation_tag_block at a time, so an isolate() costs one atomic
// read-modify-write per 256 calls (one per call cost 7.7 ns on the Intel VM; oneTBB's
// isolate 3.6-3.9).
extern HEIST_API std::atomic<std::uintptr_t> g_next_isolation;
inline constexpr std::uintptr_t k_isolation_tag_block = 256;
HEIST_API void reserve_isolation_tags(thread_context& c) noexcept;
HEIST_ALWAYS_INLINE std::uintptr_t new_isolation_tag(thread_context& c) noexcept {
  if (HEIST_UNLIKELY(!c.tags_left())) reserve_isolation_tags(c);
  return c.take_tag();
}
HEIST_API arena& arena_of(task_arena& a) noexcept;

// Runs f on the calling thread with `a` as its current arena, holding slot `s`.
template <class F>
decltype(auto) run_in_slot(thread_context& c, arena& a, slot* s, F& f);
}  // namespace detail

// A scheduling domain over an executor's threads: at most max_concurrency threads run its
// tasks at any moment, the thread inside execute() counted. It creates no thread of its own:
// idle workers of the executor visit it when it has work and a free slot, and leave when it
// has none. Tasks created inside execute() (task_group, parallel_for, ...) run in the arena.
class HEIST_API task_arena {
 public:
  // max_concurrency 0 or above 4096: std::invalid_argument naming max_concurrency.
  explicit task_arena(std::size_t max_concurrency, executor& ex = default_executor());
  // The same with a priority; a value outside low/normal/high:
  // std::invalid_argument naming priority.
  task_arena(std::size_t max_concurrency, executor& ex, priority p);
  // Waits until every task of the arena (enqueued ones included) has finished.
  ~task_arena();
  task_arena(const task_arena&) = delete;
  task_arena& operator=(const task_arena&) = delete;

  std::size_t max_concurrency() const noexcept { return m_max_concurrency; }
  heist::priority arena_priority() const noexcept { return m_priority; }

  // Runs f inside the arena and returns its result (or rethrows its exception). The calling
  // thread joins the arena for the call, taking one of its slots. If every slot is taken,
  // f is queued in the arena and the caller blocks (without running tasks) until it is done.
  template <class F>
  auto execute(F&& f) -> std::invoke_result_t<F&> {
    using result = std::invoke_result_t<F&>;
    detail::thread_context& c = detail::current_context();
    detail::arena& a = *m_arena;
    if (detail::holds_slot_of(c, a)) return std::invoke(f);  // already inside
    if (detail::slot* s = a.try_lease()) return detail::run_in_slot(c, a, s, f);
    // Delegate: f runs as a task of the arena; this thread waits without running anything.
    detail::wait_context done(nullptr, 1);
    std::optional<std::conditional_t<std::is_void_v<result>, char, result>> value;
    std::exception_ptr error;
    enqueue_job([&] {
      try {
        if constexpr (std::is_void_v<result>) {
          std::invoke(f);
          value.emplace('\0');
        } else {
          value.emplace(std::invoke(f));
        }
      } catch (...) {
        error = std::current_exception();
      }
      done.finish_one();
    });
    detail::help_until(a, done);  // a thread without a slot only waits here
    if (error) std::rethrow_exception(error);
    if constexpr (!std::is_void_v<result>) return std::move(*value);
  }

  // Runs f in the arena, fire and forget; an exception goes to the executor's
  // on_unhandled_exception.
  template <class F>
  void enqueue(F&& f) {
    enqueue_job(std::forward<F>(f));
  }

 private:
  friend detail::arena& detail::arena_of(task_arena& a) noexcept;
  template <class F>
  void enqueue_job(F&& f) {
    // Always through the injection queue (FIFO), also from inside the arena.
    detail::thread_context& c = detail::current_context();
    detail::executor_impl& exec = m_arena->exec();
    detail::admit_external(exec, c);
    detail::task* t;
    try {
      t = detail::build_task<detail::post_job<std::decay_t<F>>>(c, nullptr, std::forward<F>(f));
    } catch (...) {
      detail::cancel_admission(exec, c);
      throw;
    }
    detail::inject(*m_arena, c, t);
  }

  std::size_t m_max_concurrency;
  heist::priority m_priority = heist::priority::normal;
  std::unique_ptr<detail::task_arena_state> m_state;
  detail::arena* m_arena;
};

namespace detail {
inline arena& arena_of(task_arena& a) noexcept {
  return *a.m_arena;
}

template <class F>
decltype(auto) run_in_slot(thread_context& c, arena& a, slot* s, F& f) {
  // Joins `a` on slot `s` for the call (like arena_lease, with a slot already taken).
  struct joined {
    thread_context& c;
    arena& a;
    slot& s;
    scheduling_state saved;
    joined(thread_context& ctx, arena& ar, slot& sl) : c(ctx), a(ar), s(sl), saved(ctx) {
      c.occupy(&a.exec(), &a, &s);
    }
    ~joined() { end_lease(c, a, s, saved); }
  } scope(c, a, *s);
  return std::invoke(f);
}
}  // namespace detail

// While the calling thread waits inside f (a task_group wait, a nested loop), it runs only
// tasks spawned inside f and their descendants, never outer or unrelated work.
template <class F>
auto isolate(F&& f) -> std::invoke_result_t<F&> {
  detail::thread_context& c = detail::current_context();
  struct restore {
    detail::thread_context& c;
    std::uintptr_t saved;
    ~restore() { c.exchange_isolation(saved); }
  } guard{c, c.isolation()};
  // A tag never used before: tasks an earlier region left running cannot match it.
  c.exchange_isolation(detail::new_isolation_tag(c));
  return std::invoke(f);
}

// Tells the executor that f will block (I/O, a lock, a sleep). If the calling thread is one
// of an executor's threads, a stand-in thread takes its place while f runs (a stand-in that
// blocks is replaced too, up to executor_options::max_blocking_threads), so the pool keeps its
// full compute concurrency; stand-ins retire when no longer needed. Elsewhere just calls f.
template <class F>
auto blocking(F&& f) -> std::invoke_result_t<F&> {
  detail::thread_context* c = detail::t_context;
  detail::executor_impl* exec = c != nullptr ? c->worker_of() : nullptr;
  if (exec == nullptr) return std::invoke(f);
  detail::enter_blocking(*exec);
  struct leave {
    detail::executor_impl* e;
    ~leave() { detail::leave_blocking(*e); }
  } guard{exec};
  return std::invoke(f);
}

}  // namespace heist
