// standin_pool: the executor's side of heist::blocking (how many threads block, how many
// spares stand in, starting and parking spares; standin_pool.hpp). The spare's loop is in
// worker_loop.cpp.
#include <chrono>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "core/executor_impl.hpp"
#include "heist/detail/diagnostics/perturb.hpp"

namespace heist::detail {

void spare_main(executor_impl& exec);  // worker_loop.cpp

namespace {
constexpr auto k_spare_keep_alive = std::chrono::milliseconds(200);
}

void standin_pool::enter_blocking() noexcept {
  // acq_rel: orders against should_retire's reads (a relaxed hint would only delay
  // a retirement or a call, never lose one: each side re-reads in a CAS loop).
  const std::size_t blocked = m_blocked.fetch_add(1, std::memory_order_acq_rel) + 1;
  HEIST_PERTURB_POINT(blocking_changed);
  // acquire: pairs with the acq_rel CASes of the other callers and of retiring spares; a
  // stale count fails the CAS below, which reloads it.
  std::size_t on_duty = m_on_duty.load(std::memory_order_acquire);
  while (on_duty < blocked && on_duty < m_max_on_duty) {
    if (m_on_duty.compare_exchange_weak(on_duty, on_duty + 1, std::memory_order_acq_rel)) {
      start();
      return;
    }
  }
}

void standin_pool::leave_blocking() noexcept {
  // acq_rel: as in enter_blocking (should_retire reads it with acquire).
  const std::size_t blocked = m_blocked.fetch_sub(1, std::memory_order_acq_rel) - 1;
  HEIST_PERTURB_POINT(blocking_changed);
  // A stand-in is now surplus. If it sleeps (nothing to do), it would stay on duty until
  // work arrives: wake the sleeping stand-ins (only them) so that one retires now.
  // acquire: pairs with the CASes that change the duty count; a stale value only leaves a
  // surplus stand-in on duty until its next task boundary (should_retire).
  if (m_on_duty.load(std::memory_order_acquire) > blocked) m_exec.idle().wake_stand_ins();
}

bool standin_pool::should_retire() noexcept {
  // acquire (both loads) and acq_rel (the CAS): pair with enter_blocking's and
  // leave_blocking's RMWs; a CAS on a stale duty count fails and reloads it, so two spares
  // cannot both retire for one leaving thread.
  std::size_t on_duty = m_on_duty.load(std::memory_order_acquire);
  while (on_duty > m_blocked.load(std::memory_order_acquire)) {
    if (m_on_duty.compare_exchange_weak(on_duty, on_duty - 1, std::memory_order_acq_rel)) {
      return true;
    }
  }
  return false;
}

void standin_pool::start() {
  {
    std::lock_guard<std::mutex> lock(m_lock);
    if (m_parked > m_calls) {  // a retired spare takes the call
      ++m_calls;
      m_cv.notify_one();
      return;
    }
    ++m_threads;
  }
  try {
    std::thread(&spare_main, std::ref(m_exec)).detach();
  } catch (...) {
    // No thread: the blocked worker's place stays empty (the pool runs one short).
    std::lock_guard<std::mutex> lock(m_lock);
    --m_threads;
    // acq_rel: the duty count's RMWs all are (enter_blocking).
    m_on_duty.fetch_sub(1, std::memory_order_acq_rel);
    m_cv.notify_all();
  }
}

// A retired spare: waits to be called again (true) or for its keep-alive to end (false).
bool standin_pool::park() {
  std::unique_lock<std::mutex> lock(m_lock);
  ++m_parked;
  const bool called =
      m_cv.wait_for(lock, k_spare_keep_alive, [this] { return m_calls != 0 || m_exec.stopping(); });
  --m_parked;
  if (called && m_calls != 0 && !m_exec.stopping()) {
    --m_calls;
    return true;
  }
  return false;
}

void standin_pool::exited() noexcept {
  std::lock_guard<std::mutex> lock(m_lock);
  --m_threads;
  m_cv.notify_all();
}

void standin_pool::wait_all_exited() {
  std::unique_lock<std::mutex> lock(m_lock);
  m_cv.notify_all();
  m_cv.wait(lock, [this] { return m_threads == 0; });
}

}  // namespace heist::detail
