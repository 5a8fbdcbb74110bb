// blocking() stand-ins: the executor's side of heist::blocking (how many threads block, how
// many spares stand in, starting and parking spares). The spare's loop is in
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

// --- blocking() stand-ins ---------------------------------------------------------------------
// One stand-in (spare) is on duty per thread inside blocking(), up to max_blocking_threads.
// A spare retires at a task boundary once fewer threads block than spares stand in; a
// retired spare waits k_spare_keep_alive to be called again, then its thread exits.
namespace {
constexpr auto k_spare_keep_alive = std::chrono::milliseconds(200);
}

void executor_impl::enter_blocking() noexcept {
  // acq_rel: orders against spare_should_retire's reads (a relaxed hint would only delay
  // a retirement or a call, never lose one: each side re-reads in a CAS loop).
  const std::size_t blocked = m_blocked.fetch_add(1, std::memory_order_acq_rel) + 1;
  HEIST_PERTURB_POINT(blocking_changed);
  // acquire: pairs with the acq_rel CASes of the other callers and of retiring spares; a
  // stale count fails the CAS below, which reloads it.
  std::size_t on_duty = m_spares_on_duty.load(std::memory_order_acquire);
  while (on_duty < blocked && on_duty < m_options.max_blocking_threads) {
    if (m_spares_on_duty.compare_exchange_weak(on_duty, on_duty + 1, std::memory_order_acq_rel)) {
      start_spare();
      return;
    }
  }
}

void executor_impl::leave_blocking() noexcept {
  // acq_rel: as in enter_blocking (spare_should_retire reads it with acquire).
  const std::size_t blocked = m_blocked.fetch_sub(1, std::memory_order_acq_rel) - 1;
  HEIST_PERTURB_POINT(blocking_changed);
  // A stand-in is now surplus. If it sleeps (nothing to do), it would stay on duty until
  // work arrives: wake the sleeping stand-ins (only them) so that one retires now.
  // acquire: pairs with the CASes that change the duty count; a stale value only leaves a
  // surplus stand-in on duty until its next task boundary (spare_should_retire).
  if (m_spares_on_duty.load(std::memory_order_acquire) > blocked) idle().wake_stand_ins();
}

bool executor_impl::spare_should_retire() noexcept {
  // acquire (both loads) and acq_rel (the CAS): pair with enter_blocking's and
  // leave_blocking's RMWs; a CAS on a stale duty count fails and reloads it, so two spares
  // cannot both retire for one leaving thread.
  std::size_t on_duty = m_spares_on_duty.load(std::memory_order_acquire);
  while (on_duty > m_blocked.load(std::memory_order_acquire)) {
    if (m_spares_on_duty.compare_exchange_weak(on_duty, on_duty - 1, std::memory_order_acq_rel)) {
      return true;
    }
  }
  return false;
}

void executor_impl::start_spare() {
  {
    std::lock_guard<std::mutex> lock(m_spares_lock);
    if (m_spares_parked > m_spare_calls) {  // a retired spare takes the call
      ++m_spare_calls;
      m_spares_cv.notify_one();
      return;
    }
    ++m_spare_threads;
  }
  try {
    std::thread(&spare_main, std::ref(*this)).detach();
  } catch (...) {
    // No thread: the blocked worker's place stays empty (the pool runs one short).
    std::lock_guard<std::mutex> lock(m_spares_lock);
    --m_spare_threads;
    // acq_rel: the duty count's RMWs all are (enter_blocking).
    m_spares_on_duty.fetch_sub(1, std::memory_order_acq_rel);
    m_spares_cv.notify_all();
  }
}

// A retired spare: waits to be called again (true) or for its keep-alive to end (false).
bool executor_impl::park_spare() {
  std::unique_lock<std::mutex> lock(m_spares_lock);
  ++m_spares_parked;
  const bool called = m_spares_cv.wait_for(lock, k_spare_keep_alive,
                                           [this] { return m_spare_calls != 0 || stopping(); });
  --m_spares_parked;
  if (called && m_spare_calls != 0 && !stopping()) {
    --m_spare_calls;
    return true;
  }
  return false;
}

void executor_impl::spare_exited() noexcept {
  std::lock_guard<std::mutex> lock(m_spares_lock);
  --m_spare_threads;
  m_spares_cv.notify_all();
}

}  // namespace heist::detail
