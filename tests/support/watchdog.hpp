// watchdog: turns a hang into a test failure. A test that probes for lost wake-ups holds one
// for its duration; if the test is still running at the deadline, the watchdog prints what
// hung (and the perturbation seed, in that build) and every thread's backtrace, and ends the
// process with exit code 3, so that ctest reports a failure at once instead of waiting for its own
// timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "heist/detail/diagnostics/perturb.hpp"
#include "stack_dump.hpp"

namespace heist_test {

class watchdog {
 public:
  explicit watchdog(std::string what, std::chrono::seconds limit = std::chrono::seconds(60))
      : m_what(std::move(what)), m_thread([this, limit] { run(limit); }) {}
  ~watchdog() {
    {
      std::lock_guard<std::mutex> lock(m_lock);
      m_done = true;
    }
    m_cv.notify_all();
    m_thread.join();
  }
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

 private:
  void run(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(m_lock);
    if (m_cv.wait_for(lock, limit, [this] { return m_done; })) return;
#if HEIST_PERTURB
    std::fprintf(stderr, "HANG: %s did not finish within %llds (HEIST_PERTURB_SEED=%llu)\n",
                 m_what.c_str(), static_cast<long long>(limit.count()),
                 static_cast<unsigned long long>(heist::detail::perturb::seed()));
#else
    std::fprintf(stderr, "HANG: %s did not finish within %llds\n", m_what.c_str(),
                 static_cast<long long>(limit.count()));
#endif
    std::fflush(stderr);
    dump_stacks(getpid());
    std::_Exit(3);
  }

  std::string m_what;
  std::mutex m_lock;
  std::condition_variable m_cv;
  bool m_done = false;
  std::thread m_thread;
};

}  // namespace heist_test
