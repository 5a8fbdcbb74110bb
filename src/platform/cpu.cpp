// The OS half of platform/cpu.hpp.
#include "heist/detail/platform/cpu.hpp"

#include <chrono>
#include <thread>

namespace heist::detail {

void os_yield() noexcept {
  std::this_thread::yield();
}

void os_sleep_microseconds(unsigned microseconds) noexcept {
  std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
}

}  // namespace heist::detail
