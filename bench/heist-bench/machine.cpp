// What heist-bench records about the machine it ran on.
#include <sys/utsname.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

#include <heist/detail/cpu_limits.hpp>

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

}  // namespace bench
