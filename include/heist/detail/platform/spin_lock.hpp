// spin_lock: a test-and-test-and-set lock for critical sections of a few instructions (the
// injection queue's list operations). std::mutex parks in the kernel at the first contended
// acquire, which costs microseconds for a section that lasts nanoseconds; this spins with
// pause, then yields the CPU so a preempted holder can finish.
#pragma once

#include <atomic>

#include "heist/detail/platform/cpu.hpp"

namespace heist::detail {

class spin_lock {
 public:
  bool try_lock() noexcept {
    // acquire: pairs with unlock's release; the previous holder's writes are visible.
    return !m_locked.load(std::memory_order_relaxed) &&
           !m_locked.exchange(true, std::memory_order_acquire);
  }
  void lock() noexcept {
    for (unsigned spins = 0; !try_lock(); ++spins) {
      if (spins < 64) {
        cpu_relax();
      } else {
        os_yield();
      }
    }
  }
  void unlock() noexcept {
    // release: publishes the critical section to the next acquirer.
    m_locked.store(false, std::memory_order_release);
  }

  // Unlocks, at the end of its scope, a lock the caller already holds (after try_lock).
  class adopted {
   public:
    explicit adopted(spin_lock& held) noexcept : m_held(held) {}
    ~adopted() { m_held.unlock(); }
    adopted(const adopted&) = delete;
    adopted& operator=(const adopted&) = delete;

   private:
    spin_lock& m_held;
  };

 private:
  std::atomic<bool> m_locked{false};
};

}  // namespace heist::detail
