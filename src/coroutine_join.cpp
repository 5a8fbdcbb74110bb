// Inline joins (include/heist/detail/join_awaiter.hpp): the rare steps of a join that takes
// its group's member from the top of its own deque, out of line.
#include <heist/coroutine.hpp>

#include "scheduler_internal.hpp"

namespace heist::detail {

void put_back_popped(thread_context& c, task* t) noexcept {
  // Back on top, where it was, waking a thief that found the deque empty meanwhile (the pop
  // made room: no growth, no throw).
  t->m_next.store(nullptr, std::memory_order_relaxed);
  push_back_foreign(c, t);
}

void skip_cancelled_member(const group_start_job& job, thread_context& c) noexcept {
  job.handle.destroy();
  job.group->finish_member(&c, job.owner_counted);
}

}  // namespace heist::detail
