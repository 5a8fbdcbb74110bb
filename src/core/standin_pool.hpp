// standin_pool: the stand-ins of heist::blocking(). One stand-in (a spare thread on a spare
// slot) is on duty per thread of the executor inside blocking(), up to max_blocking_threads,
// so that the pool keeps its compute concurrency while a thread blocks. A spare retires at a
// task boundary once fewer threads block than spares stand in; a retired spare waits a
// keep-alive to be called again, then its thread exits. The spare's own loop is spare_main
// (worker_loop.cpp).
//
// The duty count changes only by CAS against the blocked count, so two spares cannot retire
// for one leaving thread and no call is lost: enter_blocking and leave_blocking change the
// blocked count (acq_rel), then re-read the duty count in a CAS loop; a parking spare
// re-checks surplus() after prepare_sleep (the idle lock orders it against leave_blocking's
// wake_stand_ins).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "heist/detail/config.hpp"

namespace heist::detail {

class executor_impl;

class standin_pool {
 public:
  standin_pool(executor_impl& exec, std::size_t max_on_duty) noexcept
      : m_exec(exec), m_max_on_duty(max_on_duty) {}
  standin_pool(const standin_pool&) = delete;
  standin_pool& operator=(const standin_pool&) = delete;

  // A thread of the executor is about to block / has stopped blocking.
  void enter_blocking() noexcept;
  void leave_blocking() noexcept;
  // Called by a spare at each task boundary: true if it should stop (the thread it stood in
  // for is back). Claims the retirement atomically.
  bool should_retire() noexcept;
  // Whether more spares stand in than threads block (one of them should retire); a parking
  // spare re-checks it after prepare_sleep. Pairs with leave_blocking through the idle lock:
  // either the spare is listed when leave_blocking's wake runs, or it listed itself after,
  // and then this read sees leave_blocking's decrement.
  bool surplus() const noexcept {
    return m_on_duty.load(std::memory_order_acquire) > m_blocked.load(std::memory_order_acquire);
  }
  std::size_t on_duty() const noexcept {
    // relaxed: a figure for stats() and the tests, not a decision.
    return m_on_duty.load(std::memory_order_relaxed);
  }

  // A retired spare: waits to be called again (true) or for its keep-alive to end (false).
  bool park();
  // The spare's thread is about to end.
  void exited() noexcept;
  // Shutdown, after the workers' wake-up: tells parked spares, then waits until every spare
  // thread (detached) is gone.
  void wait_all_exited();

 private:
  void start();

  executor_impl& m_exec;
  const std::size_t m_max_on_duty;
  alignas(k_cache_line) std::atomic<std::size_t> m_blocked{0};  // threads inside blocking()
  std::atomic<std::size_t> m_on_duty{0};                        // spares standing in now
  std::mutex m_lock;
  std::condition_variable m_cv;
  std::size_t m_threads = 0;  // spare threads alive (guarded by m_lock)
  std::size_t m_parked = 0;   // retired, waiting to be called again (same lock)
  std::size_t m_calls = 0;    // calls not yet taken by a parked spare (same lock)
};

}  // namespace heist::detail
