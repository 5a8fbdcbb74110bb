// The bare futex hand-off that bounds every wake-up latency (see service.hpp).
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "service.hpp"

namespace bench {

double futex_handoff_seconds(std::chrono::microseconds settle) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::int64_t> woke_at{0};
  std::thread sleeper([&] {
    while (word.load(std::memory_order_acquire) == 0) {
      syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, 0, nullptr,
              nullptr, 0);
    }
    woke_at.store(clock_type::now().time_since_epoch().count(), std::memory_order_release);
  });
  std::this_thread::sleep_for(settle);  // let it park
  const auto t0 = clock_type::now();
  word.store(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
  sleeper.join();
  return static_cast<double>(woke_at.load() - t0.time_since_epoch().count()) * 1e-9;
}

}  // namespace bench
