// Service-level measurements: what a pool costs while idle, how fast it wakes up, how many
// outside submissions it absorbs, and how much CPU a trickle of small tasks burns.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "../measure.hpp"

namespace bench {

// CPU time (seconds) the pool burns while idle for `idle`, after one warm-up task.
template <class B>
double idle_cpu_seconds(B& b, std::chrono::milliseconds idle) {
  std::atomic<int> done{0};
  b.post([&] {
    done.store(1, std::memory_order_release);
    done.notify_one();
  });
  done.wait(0, std::memory_order_acquire);
  const thread_cpu_snapshot cpu0 = other_threads_cpu();
  std::this_thread::sleep_for(idle);
  return cpu_seconds_since(cpu0);
}

// Latency from post() into a sleeping pool to the task's first instruction, in seconds, one
// sample per call. The pool is given `settle` to fall asleep first; this thread blocks (no
// spinning) while it waits, so it does not compete with the woken worker for a core.
template <class B>
double wake_latency_seconds(B& b, std::chrono::microseconds settle) {
  std::this_thread::sleep_for(settle);
  std::atomic<int> done{0};
  clock_type::time_point started;
  const auto t0 = clock_type::now();
  b.post([&] {
    started = clock_type::now();
    done.store(1, std::memory_order_release);
    done.notify_one();
  });
  done.wait(0, std::memory_order_acquire);
  return std::chrono::duration<double>(started - t0).count();
}

// The floor under any wake-up: one thread parked on a futex, another sets the word and
// wakes it; the time from before the wake call to the sleeper's first instruction. No
// runtime that parks its threads can wake faster on this machine.
double futex_handoff_seconds(std::chrono::microseconds settle);

// Tasks per second when `producers` outside threads each post `per_producer` empty tasks.
template <class B>
double submission_rate(B& b, int producers, std::size_t per_producer) {
  const std::size_t total = per_producer * static_cast<std::size_t>(producers);
  std::atomic<std::size_t> done{0};
  const auto t0 = clock_type::now();
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&] {
      for (std::size_t i = 0; i < per_producer; ++i) {
        b.post([&] {
          if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == total) done.notify_one();
        });
      }
    });
  }
  for (auto& t : threads)
    t.join();
  for (std::size_t seen = done.load(); seen != total; seen = done.load())
    done.wait(seen);
  return static_cast<double>(total) / seconds_since(t0);
}

struct trickle_result {
  double pool_cores;    // CPU the pool burned, in cores (CPU seconds per wall second)
  double useful_cores;  // CPU the tasks themselves needed, in cores
};

// A task of `task_us` every `period_us` for `duration`, posted from this thread.
template <class B>
trickle_result trickle(B& b, std::chrono::microseconds task_us, std::chrono::microseconds period_us,
                       std::chrono::milliseconds duration) {
  std::atomic<std::size_t> done{0};
  std::size_t posted = 0;
  const thread_cpu_snapshot cpu0 = other_threads_cpu();
  const auto t0 = clock_type::now();
  auto next = t0;
  while (clock_type::now() - t0 < duration) {
    b.post([&, task_us] {
      spin_for_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(task_us).count());
      done.fetch_add(1, std::memory_order_release);
    });
    ++posted;
    next += period_us;
    std::this_thread::sleep_until(next);
  }
  while (done.load(std::memory_order_acquire) != posted)
    std::this_thread::sleep_for(period_us);
  const double wall = seconds_since(t0);
  const double pool_cpu = cpu_seconds_since(cpu0);
  const double useful =
      static_cast<double>(posted) * std::chrono::duration<double>(task_us).count();
  return {pool_cpu / wall, useful / wall};
}

}  // namespace bench
