// task_group and parallel_invoke: fork/join with helping waits,
// cancellation and exception propagation.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "heist/detail/config.hpp"
#include "heist/detail/core/run_task.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/wait/wait_context.hpp"

namespace heist {

class executor;
class task_group;

namespace detail {
class join_awaiter;
// task_group::run(task<void>): defined in coroutine.hpp, which the caller includes.
template <class Task>
void run_task_in_group(arena& a, wait_context& group, Task&& t);
// parallel_invoke's functions but the last, as tasks of `group` (below).
template <class Refs, std::size_t... I>
HEIST_ALWAYS_INLINE void run_by_reference(task_group& group, Refs& refs, std::index_sequence<I...>);

// A caller's function, called through a pointer: what the paths out of line take (a thread
// that holds no slot of the group's arena leases one there, src/wait/leased_join.cpp).
struct erased_call {
  void (*fn)(void*);
  void* arg;
  void operator()() const { fn(arg); }
  template <class F>
  static erased_call of(F& f) noexcept {
    return {[](void* p) { std::invoke(*static_cast<F*>(p)); },
            const_cast<void*>(static_cast<const void*>(std::addressof(f)))};
  }
};
}  // namespace detail

class HEIST_API task_group {
 public:
  // On the current executor: the one running the calling task, the arena of an enclosing
  // task_arena::execute, else default_executor().
  HEIST_ALWAYS_INLINE task_group() : task_group(detail::t_context) {}
  // On `ex` (its default arena). Out of line: this header does not define executor.
  explicit task_group(executor& ex);
  // Waits for the tasks still running. If the group is destroyed by an exception
  // unwinding the stack, unstarted tasks are cancelled first. Task exceptions not
  // collected by wait() are dropped.
  // Inline: after wait() (the common case) both parts of the count read zero (quiet()), and
  // nothing is left to do; anything else (a task still counted, a count that only adds up to
  // zero, a claimed group) goes out of line to wait properly.
  HEIST_ALWAYS_INLINE ~task_group() {
    if (HEIST_UNLIKELY(!m_context.quiet())) wait_in_destructor();
  }
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;

  // Runs f as a task of this group. Thread-safe: tasks may run more tasks into their group.
  // Or a heist::task<void> (coroutine.hpp): a member of the group until it ends.
  // Always inline, like the constructors and wait(): clang 14 otherwise kept a call per
  // spawn, and GCC 12 an out-of-line constructor in a large fork function (heist-bench's
  // check_fork_join_inline.sh).
  template <class F>
  HEIST_ALWAYS_INLINE void run(F&& f) {
    if constexpr (requires { typename std::decay_t<F>::promise_type; }) {
      detail::run_task_in_group(*m_arena, m_context, std::forward<F>(f));
    } else {
      detail::spawn<detail::group_job<std::decay_t<F>>>(*m_arena, &m_context, std::forward<F>(f));
    }
  }

  // co_await group.join() inside a coroutine: suspends until every task of the group has
  // finished (the last one resumes the coroutine as a task: no thread waits, no stack
  // grows), then rethrows the first exception, like wait(). The group is reusable after.
  // Defined in coroutine.hpp, which a coroutine that awaits it includes.
  detail::join_awaiter join() noexcept;

  // Runs f on the calling thread as a member of the group, then wait(). A thread outside
  // the pool joins it for the duration (a leased slot), so f's spawns are cheap.
  template <class F>
  void run_and_wait(F&& f) {
    detail::thread_context& c = detail::current_context();
    if (HEIST_LIKELY(detail::holds_slot_of(c, *m_arena))) {
      run_here_and_wait(c, f);
      return;
    }
    detail::erased_call call = detail::erased_call::of(f);
    run_leased(c, &call, 1);
  }

  // Runs tasks until every task of the group has finished, then rethrows the first
  // exception a task threw, if any. The group is reusable afterwards. Inline in the caller:
  // the common join (its child on top of the caller's deque) runs in the caller's frame
  // (run_task.hpp, wait_for_group).
  HEIST_ALWAYS_INLINE void wait() {
    detail::wait_for_group(*m_arena, m_context);
    m_context.reset();
    if (HEIST_UNLIKELY(m_context.has_exception())) {
      std::rethrow_exception(m_context.take_exception());
    }
  }

  // Tasks not yet started are skipped; running ones finish.
  void cancel() noexcept { m_context.cancel(); }
  bool is_canceling() const noexcept { return m_context.is_cancelled(); }

  // Not part of the public contract: the arena the group's tasks run in.
  detail::arena& arena_of() const noexcept { return *m_arena; }

 private:
  explicit task_group(detail::arena& a)
      : m_arena(&a), m_context(detail::current_group(), 0, detail::join_counting::owner) {}
  // The default constructor's: one read of the thread's context (`c`, may be null) for the
  // arena, the parent group and the owner; it runs once per fork of a fork-join function.
  HEIST_ALWAYS_INLINE explicit task_group(detail::thread_context* c)
      : m_arena(&detail::current_arena(c)),
        m_context(c != nullptr ? c->running_group() : nullptr, 0, detail::join_counting::owner, c) {
  }

  // run_and_wait's work once the calling thread (`c`) holds a slot of the group's arena (or
  // none is free): f as a member of the group on this thread, unless the group was
  // cancelled, then wait(). parallel_invoke calls it inside its own lease.
  template <class F>
  HEIST_ALWAYS_INLINE void run_here_and_wait(detail::thread_context& c, F& f) {
    if (!m_context.is_cancelled()) detail::run_inline_in_group(c, m_context, f);
    wait();
  }

  // parallel_invoke's body on a thread (`c`) that holds a slot of the group's arena: the
  // functions but the last as tasks, the last here, then the wait. Inline in the caller, like
  // a fork of task_group run + wait.
  template <class... F>
  HEIST_ALWAYS_INLINE void invoke_here(detail::thread_context& c, F&... fs) {
    auto refs = std::forward_as_tuple(fs...);
    detail::run_by_reference(*this, refs, std::make_index_sequence<sizeof...(F) - 1>{});
    run_here_and_wait(c, std::get<sizeof...(F) - 1>(refs));
  }
  // The same for any other thread: it leases a slot of the arena for the call, if one is free
  // (arena_lease.hpp), out of line: a task's parallel_invoke keeps only the test for it.
  template <class... F>
  void invoke_leased(detail::thread_context& c, F&... fs) {
    detail::erased_call calls[] = {detail::erased_call::of(fs)...};
    run_leased(c, calls, sizeof...(F));
  }
  // run_and_wait and parallel_invoke on a thread `c` that holds no slot of the group's arena:
  // leases one for the call if one is free, runs calls[0 .. n-1) as tasks and the last on this
  // thread, then wait(); without a slot where the arena counts its callers, every call runs as
  // a task and this thread only waits. src/wait/leased_join.cpp.
  void run_leased(detail::thread_context& c, detail::erased_call* calls, std::size_t n);
  // Queues f as a task of the group; f outlives the group's wait (the caller's frame).
  template <class F>
  void run_referenced(F& f) {
    run(detail::call_by_reference<F>{std::addressof(f)});
  }
  template <class... F>
  friend void parallel_invoke(F&&... fs);

  // The destructor of a group whose count does not read quiet (a task still counted, or not
  // yet reset by a wait). Out of line: a fork-join function keeps only the two-word check.
  HEIST_NOINLINE void wait_in_destructor() noexcept {
    if (!m_context.done()) {
      // Like oneTBB: unwinding past a group with running tasks cancels the rest.
      if (std::uncaught_exceptions() > 0) m_context.cancel();
      try {
        detail::help_until_pending(*m_arena, m_context);
      } catch (...) {  // a destructor does not throw; the tasks are finished either way
      }
    }
    if (m_context.has_exception()) (void)m_context.take_exception();
  }

  detail::arena* m_arena;
  mutable detail::wait_context m_context;  // not over-aligned (see wait_context's fields)
};

namespace detail {
// parallel_invoke's functions but the last, as tasks of `group`. A function template rather
// than a templated lambda with an init-capture per pack element: clang 14 crashed
// instantiating that form for lambdas local to a function template.
template <class Refs, std::size_t... I>
HEIST_ALWAYS_INLINE void run_by_reference(task_group& group, Refs& refs,
                                          std::index_sequence<I...>) {
  (group.run(call_by_reference<std::remove_reference_t<std::tuple_element_t<I, Refs>>>{
       std::addressof(std::get<I>(refs))}),
   ...);
}
}  // namespace detail

// Runs every function, in parallel, and returns when all have finished; the last runs on
// the calling thread. The first exception is rethrown after all have finished or been
// skipped. A task calling it (the fork of a recursive parallel_invoke) pays a test for its
// slot and the last function's group membership over a task_group run + wait; only a thread
// without a slot of the arena goes out of line, to lease one (304 instructions per fib spawn
// + join, against 280 for run + wait).
template <class... F>
void parallel_invoke(F&&... fs) {
  if constexpr (sizeof...(F) == 1) {
    (std::invoke(fs), ...);
  } else if constexpr (sizeof...(F) > 1) {
    detail::thread_context& c = detail::current_context();
    task_group group(&c);
    if (HEIST_LIKELY(detail::holds_slot_of(c, *group.m_arena))) {
      group.invoke_here(c, fs...);
    } else {
      group.invoke_leased(c, fs...);
    }
  }
}

}  // namespace heist
