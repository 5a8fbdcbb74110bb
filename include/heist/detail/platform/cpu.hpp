// cpu: the processor and OS primitives that waiting and ordering are built from. cpu_relax is
// one pause instruction of a spin; os_yield and os_sleep_microseconds give the CPU away
// (defined in src/platform/cpu.cpp, so no header pulls in <thread>). Only sleep/ decides when
// a thread yields or sleeps (sleep/backoff.hpp); the spin lock beside this file is the one
// other user. process_wide_barrier is membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), for the
// asymmetric protocols that let a hot path run without a fence while a rare path pays for both
// sides (owner-counted joins, wait_context.hpp; fence-free pops, chase_lev_deque.hpp); defined
// in src/wait/owner_counting.cpp, which registers it once when the first executor starts.
#pragma once

#include <cstdint>

#include "heist/detail/config.hpp"

namespace heist::detail {

// One pause of a spin-wait: tells the CPU this thread is spinning (x86 pause, Arm yield).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Lets another runnable thread have this CPU (sched_yield).
HEIST_API void os_yield() noexcept;
// Blocks the calling thread for at least `microseconds`.
HEIST_API void os_sleep_microseconds(unsigned microseconds) noexcept;

// Executes a full memory barrier on every CPU that is running a thread of this process. Only
// called once enable_owner_counting() found it available (g_owner_counting, wait_context.hpp).
HEIST_API void process_wide_barrier() noexcept;
// How many times process_wide_barrier() ran in this process (for tests and statistics).
HEIST_API std::uint64_t process_wide_barriers_run() noexcept;

}  // namespace heist::detail
