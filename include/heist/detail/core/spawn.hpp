// spawn: building a task from a closure and queueing it. The fast path is inline: a thread
// that owns a deque of the target arena allocates a block from its task_pool, constructs
// the closure in place, pushes, and reads the idle word; no heap, no lock, no fence beyond
// the deque's own release store. Every other caller goes through the injection queue.
#pragma once

#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

#include "heist/detail/config.hpp"
#include "heist/detail/core/arena.hpp"
#include "heist/detail/core/task.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/diagnostics/analysis_hooks.hpp"
#include "heist/detail/wait/stack_headroom.hpp"
#include "heist/detail/wait/wait_context.hpp"

namespace heist::detail {

// --- out-of-line entry points (src/core/arena_visit.cpp, src/wait/helping_wait.cpp) -------------
// Queues `t` on `a`'s injection queue and wakes a sleeper if needed.
HEIST_API void inject(arena& a, const thread_context& c, task* t) noexcept;
// New work in task arena `a`: if it has a free slot, wake a roamer of the executor to visit.
HEIST_API void attract_visitor(arena& a) noexcept;
// Helping wait: the calling thread runs tasks until `w` is done.
HEIST_API void help_until(arena& a, wait_context& w);
// The same, for a caller that just saw `w` not done (saves the first check).
HEIST_API void help_until_pending(arena& a, wait_context& w);
// Runs fn(arg) on a fresh stack when the calling thread's stack is nearly used up
// (helping recursion); otherwise calls it directly. Rethrows what fn throws.
HEIST_API void call_with_stack_headroom(void (*fn)(void*), void* arg);
// Routes an exception thrown by a post() task to its executor's handler.
HEIST_API void report_unhandled_exception(std::exception_ptr e) noexcept;

// The arena that task_group() and the algorithms use when none is given: the arena of the
// running task or task_arena::execute, else the default executor's.
HEIST_API arena& default_executor_arena();
// The same for a caller that read the thread's context (`c`, may be null) already.
HEIST_ALWAYS_INLINE arena& current_arena(const thread_context* c) {
  if (HEIST_LIKELY(c != nullptr && c->current_arena() != nullptr)) return *c->current_arena();
  return default_executor_arena();
}
HEIST_ALWAYS_INLINE arena& current_arena() {
  return current_arena(t_context);
}

// --- task kinds -----------------------------------------------------------------------------
// Each job wraps the user's callable; operator() never throws.
template <class F>
class group_job {
 public:
  template <class A>
  explicit group_job(A&& fn) : m_fn(std::forward<A>(fn)) {}
  void operator()(task* self) noexcept {
    try {
      std::invoke(m_fn);
    } catch (...) {
      group_of(self)->capture_exception(std::current_exception());
    }
  }

 private:
  F m_fn;
};

template <class F>
class post_job {
 public:
  template <class A>
  explicit post_job(A&& fn) : m_fn(std::forward<A>(fn)) {}
  void operator()(task*) noexcept {
    try {
      std::invoke(m_fn);
    } catch (...) {
      report_unhandled_exception(std::current_exception());
    }
  }

 private:
  F m_fn;
};

template <class Job>
void invoke_job(task* self, bool run) noexcept {
  Job& job = task_closure<Job>(self);
  if (run) job(self);
  destroy_closure<Job>(self);
}

// Builds a task of kind Job from `args` in a block of the calling thread's pool; its group
// is left unset for the caller (queue_on_own_slot sets it once, tagged or not).
template <class Job, class... Args>
task* build_task_ungrouped(thread_context& c, Args&&... args) {
  task* t = c.m_pool.allocate();
  try {
    construct_closure<Job>(t, std::forward<Args>(args)...);
  } catch (...) {
    c.m_pool.deallocate(t);
    throw;
  }
  t->m_invoke = &invoke_job<Job>;
  // relaxed: published to thieves by the deque push (release) or the injection lock.
  t->m_isolation.store(c.isolation(), std::memory_order_relaxed);
  return t;
}

template <class Job, class... Args>
task* build_task(thread_context& c, wait_context* group, Args&&... args) {
  task* t = build_task_ungrouped<Job>(c, std::forward<Args>(args)...);
  t->m_group = group;
  return t;
}

// Undoes a built task that could not be queued (push ran out of memory).
HEIST_API void abandon_task(thread_context& c, task* t) noexcept;

// After a push from inside a task into an *empty* deque of `a` (spawns, spawn_built, the
// isolated waiter's push-back): wakes a sleeper if no one searches (P3-P4, idle_state.hpp)
// and, in a strict task arena, looks for a visitor. A push onto a non-empty deque calls
// nothing: whoever saw the earlier task wakes or searches for the rest. Out of line
// (src/core/arena_visit.cpp): the idle state is not part of what a spawn's header carries.
HEIST_API void publish_push_into_empty(arena& a) noexcept;

// The rest of a spawn onto the calling thread's own slot `own` of `a`, once `t` is built: counts it
// in `group` (if any) and, if `count_created`, in the slot's flow counters, pushes it, and
// wakes a sleeper or attracts a visitor if one is needed. A push that runs out of memory
// undoes the task and rethrows.
HEIST_ALWAYS_INLINE void queue_on_own_slot(arena& a, thread_context& c, slot& own,
                                           wait_context* group, task* t, bool count_created) {
  wait_context* counted_in = group;
  if (group != nullptr) {
    // The group's owner counts its own spawns without an atomic RMW (owner_count.hpp).
    if (group->try_add_owned(&c)) {
      counted_in = tag_group(group, true);
    } else {
      group->add(1);
    }
  }
  t->m_group = counted_in;  // one store; published by the push below
  if (count_created) own.m_counters.created.bump();
  bool was_empty;
  try {
    was_empty = own.m_deque.push(t);
  } catch (...) {
    abandon_task(c, t);
    throw;
  }
  HEIST_PERTURB_POINT(spawn_pushed);
  if (was_empty) publish_push_into_empty(a);
}

// spawn() from a thread holding a leased slot outside any task of this executor
// (run_and_wait's function, task_arena::execute's body, a helping wait between tasks), with
// `t` built: it is outside the executor, so after shutdown began its submissions are refused
// like any outsider's (then `t` is discarded and executor_closed thrown).
HEIST_API void spawn_built_from_lease(arena& a, thread_context& c, wait_context* group, task* t);
// spawn() from a thread without a slot of `a` (an outsider, or a thread of another arena),
// with `t` built: admitted like any outsider's submission, counted in `group` and queued on
// the injection queue.
HEIST_API void spawn_built_from_outside(arena& a, thread_context& c, wait_context* group, task* t);

// Spawns a task of kind Job, built from `args`, into arena `a`, as a member of `group` (may
// be null). Inline in the caller (a task_group::run in a loop is the hot path of nested
// parallelism). The task is built first, on every path, and only the built task goes to the
// paths out of line: the closure then never needs an address of its own, and the compiler
// stores it into the block from registers. (Handing the closure by reference to an
// out-of-line path made it build the closure on the stack, one store per member, and copy it
// into the block with one wider load: a store-forwarding stall on every spawn, a quarter of
// the time of heist-bench's nqueens spawn loop.) `c`: the calling thread's context.
template <class Job, class... Args>
HEIST_ALWAYS_INLINE void spawn_from(thread_context& c, arena& a, wait_context* group,
                                    Args&&... args) {
  task* const t = build_task_ungrouped<Job>(c, std::forward<Args>(args)...);
  if (analysing()) analysis_spawned(c, a.exec(), t);
  // Read once: the stores into the task block and the group would otherwise make the compiler
  // read the thread's slot again for the counter and again for the push.
  slot* const own = c.current_slot();
  if (HEIST_LIKELY(own != nullptr && c.current_arena() == &a)) {
    if (HEIST_UNLIKELY(c.task_depth() == 0)) {
      spawn_built_from_lease(a, c, group, t);
    } else {
      queue_on_own_slot(a, c, *own, group, t, true);
    }
    return;
  }
  spawn_built_from_outside(a, c, group, t);
}

// The same, for a caller that has not read its thread's context.
template <class Job, class... Args>
HEIST_ALWAYS_INLINE void spawn(arena& a, wait_context* group, Args&&... args) {
  spawn_from<Job>(current_context(), a, group, std::forward<Args>(args)...);
}

// Queues `t`, built earlier (a continuation, built when it was attached), into `a`: the
// admission and the push of spawn(). Throws executor_closed like spawn (then `t` is not
// queued and still the caller's). Out of line (src/core/arena_visit.cpp).
HEIST_API void spawn_built(arena& a, task* t);

// The bypass. A task whose last act completes a future (submit()'s task, a then()
// continuation) calls that completion inside a task_end_scope; a continuation that the
// completion queues into this thread's own arena is then handed to execute_task, which runs
// it as soon as the running task returns, instead of being pushed: no deque operation, no
// wake-up, and no idle thread stealing the next link of a then() chain. One task at most
// (thread_context::hand_over); it must be as eligible to run here as the running task (same
// isolation), and a task is never left there while anything else could wait for it (only code that
// returns to execute_task at once runs inside the scope).
class task_end_scope {
 public:
  task_end_scope() noexcept : m_context(t_context) {
    if (m_context != nullptr) m_context->set_at_task_end(true);
  }
  ~task_end_scope() {
    if (m_context != nullptr) m_context->set_at_task_end(false);
  }
  task_end_scope(const task_end_scope&) = delete;
  task_end_scope& operator=(const task_end_scope&) = delete;

 private:
  thread_context* m_context;
};

// True if `t` (built, not queued) was handed to the bypass: `a` is this thread's arena and
// the running task is in its last act (task_end_scope).
HEIST_ALWAYS_INLINE bool try_bypass(arena& a, task* t) noexcept {
  thread_context* const c = t_context;
  if (c == nullptr || !c->at_task_end() || c->bypass_taken() || c->current_slot() == nullptr ||
      c->current_arena() != &a) {
    return false;
  }
  // relaxed: this thread built `t` or got it through the future's synchronization.
  if (t->m_isolation.load(std::memory_order_relaxed) != c->isolation()) return false;
  c->current_slot()->m_counters.created.bump();  // counted like a spawn; execute_task counts it out
  if (analysing()) analysis_spawned(*c, a.exec(), t);
  c->hand_over(t);
  return true;
}

// The group the calling thread's running task belongs to: the parent of new groups, so
// that cancelling a group cancels the groups created inside its tasks.
inline wait_context* current_group() noexcept {
  thread_context* c = t_context;
  return c != nullptr ? c->running_group() : nullptr;
}

// call_with_stack_headroom(f) for the calling thread `c`, with its common case inline: while
// the stack has room, f is called directly, not through a function pointer, so a small f
// inlines into its caller; only a stack nearly used up goes out of line to the stack
// extension. "Room" is the wait's inline step's test (stack_headroom.hpp,
// inline_stack_is_low): where the stack's bounds are known the address alone decides and no
// nesting is counted (a parallel_invoke per fork pays no increment and decrement of
// the help depth); under TSan the call counts one level, as there; with the bounds unknown
// every call goes out of line, where call_with_stack_headroom counts it.
template <class F>
HEIST_ALWAYS_INLINE void call_inline_with_stack_headroom(thread_context& c, F& f) {
  if (HEIST_UNLIKELY(inline_stack_is_low(c))) {
    call_with_stack_headroom([](void* p) { std::invoke(*static_cast<F*>(p)); },
                             static_cast<void*>(std::addressof(f)));
    return;
  }
  inline_depth_guard depth(c);
  std::invoke(f);
}

// A task that calls a function which outlives the wait for it, by reference (parallel_invoke's
// functions; a loop's root handed to the pool by a caller without a slot).
template <class F>
struct call_by_reference {
  F* fn;
  void operator()() const { std::invoke(*fn); }
};

// True if the thread of context `c` may run work of arena `a` on its own stack (a loop's
// root, parallel_invoke's last function, run_and_wait's function, a pipeline's input): it
// holds a slot, or `a` lets threads without one take part (arena::slotless_threads_wait).
// Otherwise the caller queues that work as a task and only waits.
inline bool runs_work_of(const thread_context& c, const arena& a) noexcept {
  return holds_slot_of(c, a) || !a.slotless_threads_wait();
}

// Runs f on the calling thread (`c`) as a member of group `g` (run_and_wait, parallel_invoke's
// last function, a loop's root): new groups inside f are children of g, an exception cancels
// g, and f moves to a fresh stack if this one is nearly used up.
template <class F>
HEIST_ALWAYS_INLINE void run_inline_in_group(thread_context& c, wait_context& g, F& f) {
  wait_context* const saved = c.exchange_group(&g);
  try {
    call_inline_with_stack_headroom(c, f);
  } catch (...) {
    g.capture_exception(std::current_exception());
  }
  c.exchange_group(saved);
}
template <class F>
void run_inline_in_group(wait_context& g, F& f) {
  run_inline_in_group(current_context(), g, f);
}

}  // namespace heist::detail
