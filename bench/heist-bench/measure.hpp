// Timing and statistics helpers for heist-bench.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <utility>
#include <vector>

namespace bench {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Times one call of f, in seconds.
template <class F>
double time_once(F&& f) {
  const auto t0 = clock_type::now();
  f();
  return seconds_since(t0);
}

struct summary {
  double median = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  std::size_t n = 0;
};

inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

inline summary summarize(const std::vector<double>& v) {
  summary s;
  if (v.empty()) return s;
  s.n = v.size();
  s.median = quantile(v, 0.5);
  s.p10 = quantile(v, 0.1);
  s.p90 = quantile(v, 0.9);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

// CPU time of the process's threads other than the caller, from /proc/self/task/*/schedstat:
// take a snapshot before a span and pass it to cpu_seconds_since() after. Per thread, so a
// thread that exits in between (another runtime's retired helper) neither counts nor makes
// the figure negative; one born in between counts in full. Unlike CLOCK_PROCESS_CPUTIME_ID,
// no cross-thread accounting lag (which made idle figures come out slightly negative).
struct thread_cpu_snapshot {
  std::vector<std::pair<long, std::uint64_t>> ns_by_tid;  // sorted by tid
};
thread_cpu_snapshot other_threads_cpu();
double cpu_seconds_since(const thread_cpu_snapshot& before);

// CPU time of the whole process so far, in seconds: one clock read, cheap enough to take right
// around a timed sample (other_threads_cpu reads a file per thread).
inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Busy work the optimizer cannot remove: about `ns` nanoseconds of spinning on the clock.
inline void spin_for_ns(std::int64_t ns) {
  const auto until = clock_type::now() + std::chrono::nanoseconds(ns);
  while (clock_type::now() < until) {
  }
}

// Keeps a value alive for the optimizer.
template <class T>
inline void do_not_optimize(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

}  // namespace bench
