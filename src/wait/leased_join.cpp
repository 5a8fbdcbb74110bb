// task_group::run_and_wait and parallel_invoke on a thread that holds no slot of the group's
// arena (task_group.hpp, run_leased): the call leases a free slot for its duration
// (arena_lease.hpp), so the functions' spawns go to a deque of the caller's own and idle
// workers steal from it. Out of line: a task's fork-join keeps only the test for its slot.
#include "heist/detail/core/arena_lease.hpp"
#include "heist/task_group.hpp"

namespace heist {

void task_group::run_leased(detail::thread_context& c, detail::erased_call* calls, std::size_t n) {
  detail::arena_lease lease(c, *m_arena);
  if (!detail::runs_work_of(c, *m_arena)) {
    // No slot, and the arena counts its callers: every call runs as a task, this thread
    // waits.
    for (std::size_t i = 0; i < n; ++i)
      run_referenced(calls[i]);
    wait();
    return;
  }
  for (std::size_t i = 0; i + 1 < n; ++i)
    run_referenced(calls[i]);
  run_here_and_wait(c, calls[n - 1]);
}

}  // namespace heist
