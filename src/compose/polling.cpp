// polling: the executor's side of polled completions (detail/compose/poller.hpp): the seam's
// calls (the poller itself is kept by arena_registry, which hands it to every arena) and
// waking a worker to drive it. The driving itself is in search.cpp (before a
// park, and the timed park while anything is pending) and worker_loop.cpp (every 64 tasks).
#include "core/scheduler_internal.hpp"

namespace heist::detail {

void executor_impl::notify_poll_pending() noexcept {
  HEIST_PERTURB_POINT(poll_registered);
  // P2: pairs with a parking worker's S2 (its S4 reads pending() to choose a timed park) and
  // with a leaver's L2 (which re-checks pending() for roamers).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  idle().notify_visitor_wanted();  // P3-P4 on the roamers' word: only roamers poll
}

poller& install_poller(executor_impl& exec, std::unique_ptr<poller> (*make)(executor_impl&)) {
  return exec.registry().poller_or_install(exec, make);
}
poller* installed_poller(executor_impl& exec) noexcept {
  return exec.registry().installed_poller();
}
void notify_poll_pending(executor_impl& exec) noexcept {
  exec.notify_poll_pending();
}

}  // namespace heist::detail
