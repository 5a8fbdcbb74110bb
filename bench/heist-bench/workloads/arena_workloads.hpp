// Section 7 workloads: a mix of tasks that wait (as if on I/O) and tasks that compute, run
// with and without heist::blocking(); and the cost of task_arena::execute and isolate.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>

#include "../measure.hpp"

namespace bench {

// `tasks` tasks spawned by one task: the odd ones sleep `wait` (a blocking call), the even
// ones compute for `work`. Block(f) wraps the sleep (heist::blocking, or a plain call).
template <class B, class Block>
std::uint64_t mixed_io_compute(std::size_t tasks, std::chrono::microseconds wait,
                               std::chrono::microseconds work, Block&& block) {
  std::atomic<std::uint64_t> done{0};
  B::fork_each(tasks, [&](std::size_t i) {
    if (i % 2 == 1) {
      block([&] { std::this_thread::sleep_for(wait); });
    } else {
      spin_for_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(work).count());
    }
    done.fetch_add(1, std::memory_order_relaxed);
  });
  return done.load();
}

// Nanoseconds per call of f(), over `calls` calls.
template <class F>
double ns_per_call(std::size_t calls, F&& f) {
  const auto t0 = clock_type::now();
  for (std::size_t i = 0; i < calls; ++i)
    f();
  return seconds_since(t0) * 1e9 / static_cast<double>(calls);
}

}  // namespace bench
