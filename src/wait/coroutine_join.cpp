// Inline joins (include/heist/detail/compose/join_awaiter.hpp): a coroutine in co_await
// group.join() takes the group's member on top of its own deque and runs it itself.
//
// Only the deque's owner pops, and what it pops is its own to run (Chase-Lev: a task is
// popped or stolen, never both), so the member is checked after the pop; a task that is not a
// member of the group goes back on the deque at once, and a thief that looked at the deque in
// between is woken like after any spawn. A popped member counts as run here for executor
// accounting (wait_idle, statistics), as execute_task would count it.
#include <heist/coroutine.hpp>

#include "core/scheduler_internal.hpp"

namespace heist::detail {

std::coroutine_handle<> join_awaiter::take_member() noexcept {
  wait_context& group = m_ctx;
  thread_context* const c = t_context;
  if (c == nullptr || c->m_slot == nullptr) return {};
  // Symmetric transfer is a tail call in optimized builds, and a chain of inline joins runs
  // on one stack frame; in sanitizer and unoptimized builds each transfer keeps its frame, so
  // a fork-join tree of coroutines joined inline would grow the stack by the tree's size
  // (ASan overflowed at fib(22)). Below the helping waits' headroom mark the join arms
  // instead: the coroutine suspends and every transfer on the stack returns.
  if (HEIST_UNLIKELY(stack_is_low(*c))) return {};
  slot& s = *c->m_slot;
  for (;;) {
    task* const t = s.m_deque.pop();
    if (t == nullptr) return {};
    // relaxed: a task of our own deque, pushed by this thread (or by an earlier occupant of
    // the slot, whose pushes the slot hand-off ordered before ours).
    if (t->m_invoke != &invoke_job<group_start_job> ||
        task_closure<group_start_job>(t).group != &group ||
        t->m_isolation.load(std::memory_order_relaxed) != c->m_isolation) {
      // Not ours (or of another isolation region than the running task, which an isolated
      // waiter below us must not run: the scheduler will): back on top, where it was, waking
      // a thief that found the deque empty meanwhile (the pop made room: no growth, no throw).
      t->m_next.store(nullptr, std::memory_order_relaxed);
      push_back_foreign(*c, t);
      return {};
    }
    HEIST_PERTURB_POINT(member_inlined);
    // The closure is three plain words (trivially destructible, below): copied out, its
    // block goes straight back to the pool, without the indirect call that would destroy it.
    static_assert(std::is_trivially_destructible_v<group_start_job>);
    const group_start_job job = task_closure<group_start_job>(t);
    c->m_pool.deallocate(t);
    // release: as execute_task's (executor_impl::in_flight).
    finish_counter(*c, s, true).bump_release();
    if (group.is_cancelled()) {
      job.handle.destroy();
      group.finish_member(c, job.owner_counted);
      continue;
    }
    task_promise<void>& p = job.handle.promise();
    p.m_group = &group;
    p.m_owner_counted = job.owner_counted;
    p.m_inlined_by = this;
    c->m_group = &group;  // the member's body runs in its group (resume.hpp, enter_group)
    return job.handle;
  }
}

}  // namespace heist::detail
