// Helpers shared by heist's tests.
#pragma once

#include <pthread.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <thread>

namespace heist_test {

// One knob scales the iteration counts of stress tests: HEIST_STRESS_SCALE=0.1 for a quick
// run (sanitizers), =10 for a soak. Never below 1 iteration.
inline std::size_t scaled(std::size_t n) {
  static const double factor = [] {
    const char* s = std::getenv("HEIST_STRESS_SCALE");
    return s != nullptr ? std::atof(s) : 1.0;
  }();
  const double v = static_cast<double>(n) * factor;
  return v < 1.0 ? 1 : static_cast<std::size_t>(v);
}

inline std::string this_thread_name() {
  char buf[32] = {};
  pthread_getname_np(pthread_self(), buf, sizeof buf);
  return buf;
}

// Spins (yielding) until pred() holds or the timeout passes; returns pred().
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return pred();
    std::this_thread::yield();
  }
  return true;
}

}  // namespace heist_test
