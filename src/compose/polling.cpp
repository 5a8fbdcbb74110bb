// polling: the executor's side of polled completions (detail/compose/poller.hpp): installing the
// poller and waking a worker to drive it. The driving itself is in search.cpp (before a
// park, and the timed park while anything is pending) and worker_loop.cpp (every 64 tasks).
#include "core/scheduler_internal.hpp"

namespace heist::detail {

poller& executor_impl::poller_or_install(std::unique_ptr<poller> (*make)(executor_impl&)) {
  // acquire: pairs with the release store below (the poller is built when seen).
  if (poller* p = m_poller.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(m_arenas_lock);
  // relaxed under the lock: only holders of the lock store it.
  if (poller* p = m_poller.load(std::memory_order_relaxed)) return *p;
  m_poller_owner = make(*this);
  // release: pairs with the acquire loads in poll_pending/poll_once; the poller is fully
  // built before a worker can see it.
  m_poller.store(m_poller_owner.get(), std::memory_order_release);
  // Each arena's copy (arena::poll_pending); an arena registering later copies it itself.
  m_arena->set_poller(m_poller_owner.get());
  for (arena* a : m_task_arenas)
    a->set_poller(m_poller_owner.get());
  return *m_poller_owner;
}

void executor_impl::notify_poll_pending() noexcept {
  HEIST_PERTURB_POINT(poll_registered);
  // P2: pairs with a parking worker's S2 (its S4 reads pending() to choose a timed park) and
  // with a leaver's L2 (which re-checks pending() for roamers).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  idle().notify_visitor_wanted();  // P3-P4 on the roamers' word: only roamers poll
}

poller& install_poller(executor_impl& exec, std::unique_ptr<poller> (*make)(executor_impl&)) {
  return exec.poller_or_install(make);
}
poller* installed_poller(executor_impl& exec) noexcept {
  return exec.installed_poller();
}
void notify_poll_pending(executor_impl& exec) noexcept {
  exec.notify_poll_pending();
}

}  // namespace heist::detail
