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

std::coroutine_handle<> join_awaiter::take_member_after_pop(thread_context& c, slot& s,
                                                            task* popped) noexcept {
  wait_context& group = m_ctx;
  for (task* t = popped; t != nullptr; t = s.m_deque.pop()) {
    // relaxed: as take_member's.
    task_promise<void>* const p = t->m_invoke == &frame_member ? &member_promise(t) : nullptr;
    if (p == nullptr || p->group() != &group ||
        t->m_isolation.load(std::memory_order_relaxed) != c.isolation()) {
      // Not ours (or of another isolation region than the running task, which an isolated
      // waiter below us must not run: the scheduler will): back on top, where it was, waking
      // a thief that found the deque empty meanwhile (the pop made room: no growth, no throw).
      t->m_next.store(nullptr, std::memory_order_relaxed);
      push_back_foreign(c, t);
      return {};
    }
    if (!group.is_cancelled()) return inline_member(c, s, *p);
    // A cancelled member: destroyed unrun, counted as run here (as execute_task counts a
    // skipped task) and out of its group; then the next one.
    finish_counter(c, s, false).bump_release();
    const bool owner_counted = p->owner_counted();
    std::coroutine_handle<task_promise<void>>::from_promise(*p).destroy();
    group.finish_member(&c, owner_counted);
  }
  return {};
}

}  // namespace heist::detail
