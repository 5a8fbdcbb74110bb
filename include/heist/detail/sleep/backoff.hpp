// backoff: how a thread with nothing to run waits for a step another thread is taking (an
// owner inside its count update, a producer leaving the injection queue, visitors leaving an
// arena, tasks draining before a destructor goes on). Every such wait above platform/ goes
// through here, so the choice between spinning, yielding and sleeping is made in one place.
// (platform/spin_lock.hpp, below this layer, takes spin_backoff's steps itself.)
// - spin_backoff: for steps of a few instructions. Pauses first, then yields the CPU on every
//   step, so a holder preempted mid-step gets the CPU back.
// - sleep_backoff: for waits that may last milliseconds. Sleeps, doubling from a first pause
//   up to 1 ms, so a long wait costs no CPU.
// A thread out of *work* does not back off: it searches and parks (search.cpp with
// idle_budget, park.cpp); a thread waiting for a task group helps (wait/).
#pragma once

#include "heist/detail/platform/cpu.hpp"

namespace heist::detail {

class spin_backoff {
 public:
  // Steps that only pause before the first yield.
  static constexpr unsigned k_spins = 64;

  void pause() noexcept {
    if (m_spins < k_spins) {
      ++m_spins;
      cpu_relax();
    } else {
      os_yield();
    }
  }

 private:
  unsigned m_spins = 0;
};

class sleep_backoff {
 public:
  static constexpr unsigned k_longest_us = 1000;

  explicit sleep_backoff(unsigned first_us) noexcept : m_us(first_us) {}
  void pause() noexcept {
    os_sleep_microseconds(m_us);
    m_us = m_us * 2 < k_longest_us ? m_us * 2 : k_longest_us;
  }

 private:
  unsigned m_us;
};

// Gives the CPU away once: to any runnable thread (microseconds == 0) or for at least
// `microseconds`. For the diagnostics' deliberate delays (perturbation points, the
// analyzer's calibration), which must stall a thread the way the OS would.
inline void stall(unsigned microseconds) noexcept {
  if (microseconds == 0) {
    os_yield();
  } else {
    os_sleep_microseconds(microseconds);
  }
}

}  // namespace heist::detail
