// Blocking primitives under parker: a raw futex on Linux, std::atomic::wait elsewhere.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "heist/detail/sleep/parker.hpp"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

namespace heist::detail {

#if defined(__linux__)
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
  // Returns on a wake, on EAGAIN (the word already changed) or on EINTR; callers re-check.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}
void futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                    std::int64_t timeout_ns) noexcept {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000),
              static_cast<long>(timeout_ns % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &ts,
          nullptr, 0);
}
void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}
#else
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
  // relaxed, as the futex call above: the callers (parker.hpp) order their own accesses to
  // the word; this only blocks while it holds `expected`.
  word.wait(expected, std::memory_order_relaxed);
}
void futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                    std::int64_t timeout_ns) noexcept {
  // No portable timed atomic wait: poll with short sleeps until the word changes or time is up.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  // relaxed: as futex_wait.
  while (word.load(std::memory_order_relaxed) == expected &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}
void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
  word.notify_one();
}
#endif

}  // namespace heist::detail
