// cpu: the processor and OS primitives a waiting thread is built from. cpu_relax is one pause
// instruction of a spin; os_yield and os_sleep_microseconds give the CPU away (defined in
// src/platform/cpu.cpp, so no header pulls in <thread>). Only sleep/ decides when a thread
// yields or sleeps (sleep/backoff.hpp); the spin lock beside this file is the one other user.
#pragma once

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

}  // namespace heist::detail
