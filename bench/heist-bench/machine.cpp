// What heist-bench records about the machine it ran on.
#include <pthread.h>
#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <heist/detail/platform/cpu_limits.hpp>

#include "results.hpp"
#if HEIST_BENCH_HAVE_TBB
#include <oneapi/tbb/version.h>
#endif
#if HEIST_BENCH_HAVE_OPENMP
#include <omp.h>
#endif

namespace bench {

machine_info read_machine_info() {
  machine_info m;
  m.cores = std::thread::hardware_concurrency();
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      m.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
  }
  if (m.cpu_model.empty()) m.cpu_model = "unknown CPU";
#if defined(__clang__)
  m.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  m.compiler = std::string("g++ ") + __VERSION__;
#else
  m.compiler = "unknown compiler";
#endif
  utsname u{};
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
#if HEIST_BENCH_HAVE_TBB
  m.tbb_version = TBB_VERSION_STRING;
#else
  m.tbb_version = "not installed";
#endif
#if HEIST_BENCH_HAVE_OPENMP
  m.openmp_version = std::to_string(_OPENMP);
#else
  m.openmp_version = "not available";
#endif
  const heist::detail::parallelism_report p = heist::detail::explain_parallelism();
  m.parallelism = p.chosen;
  char sizing[256];
  std::snprintf(sizing, sizeof sizing,
                "available_parallelism %zu (set by: %s; HEIST_NUM_THREADS %s, affinity mask %s, "
                "cgroup CPU quota %s, hardware_concurrency %zu)",
                p.chosen, p.reason, p.env ? std::to_string(*p.env).c_str() : "unset",
                p.affinity ? (std::to_string(*p.affinity) + " CPUs").c_str() : "unknown",
                p.quota ? (std::to_string(*p.quota) + " CPUs").c_str() : "none", p.hardware);
  m.sizing = sizing;
  const std::time_t now = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  m.date = buf;
  return m;
}

namespace {

__attribute__((noinline)) long serial_fib(int n) {
  return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

double time_serial_fib_ms() {
  volatile int n = 33;  // volatile: not folded at compile time
  const auto start = std::chrono::steady_clock::now();
  volatile long sink = serial_fib(n);
  (void)sink;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

std::string measure_cpu_speeds() {
  cpu_set_t original;
  CPU_ZERO(&original);
  if (pthread_getaffinity_np(pthread_self(), sizeof original, &original) != 0)
    return "unknown (pthread_getaffinity_np failed)";
  std::string text = "fib(33) pinned to each CPU, fastest of 5:";
  std::vector<double> ms;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &original)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) continue;
    double best = time_serial_fib_ms();
    for (int rep = 1; rep < 5; ++rep)
      best = std::min(best, time_serial_fib_ms());
    ms.push_back(best);
    char b[48];
    std::snprintf(b, sizeof b, " cpu%d %.1f ms", cpu, best);
    text += b;
  }
  pthread_setaffinity_np(pthread_self(), sizeof original, &original);
  if (ms.size() < 2) return text;
  // A perfect run on all of them does the fastest CPU's work per ms times sum(fastest / t_i).
  const double fastest = *std::min_element(ms.begin(), ms.end());
  double together = 0;
  for (double t : ms)
    together += fastest / t;
  char b[160];
  std::snprintf(b, sizeof b, "; a perfect %zu-thread run is %.2fx one on the fastest CPU",
                ms.size(), together);
  return text + b;
}

namespace {

std::atomic<long> g_probe{0};
std::atomic<long> g_probe_other{0};

// Nanoseconds per iteration of `step`, the fastest of 5 loops of 2^20 iterations.
template <class Step>
double ns_per_step(Step step) {
  constexpr long k_iterations = 1 << 20;
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < k_iterations; ++i)
      step(i);
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, ns / k_iterations);
  }
  return best;
}

}  // namespace

std::string measure_atomic_costs() {
  // No other thread touches the probes, so nothing pairs with these operations: relaxed
  // where only the instruction is timed (a plain store, a locked add), and the seq_cst fence
  // because the fence is what is timed.
  const double plain = ns_per_step([](long i) { g_probe.store(i, std::memory_order_relaxed); });
  const double rmw = ns_per_step([](long i) { g_probe.fetch_add(i, std::memory_order_relaxed); });
  const double fence = ns_per_step([](long i) {
    g_probe.store(i, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    (void)g_probe_other.load(std::memory_order_relaxed);
  });
  char b[200];
  std::snprintf(b, sizeof b,
                "one thread, fastest of 5: locked add %.1f ns, store + seq_cst fence + load "
                "%.1f ns, plain store %.1f ns",
                rmw, fence, plain);
  return b;
}

}  // namespace bench
