// What heist-bench measures and reports.
#pragma once

#include <string>
#include <vector>

#include "measure.hpp"

namespace bench {

struct result {
  std::string group;     // "fork-join", "seed-001", "service", "loops"
  std::string workload;  // e.g. "fib(30)"
  std::string backend;   // e.g. "heist", "oneTBB"
  int threads = 0;
  std::string unit;  // "ms", "us", "Mtasks/s", "cpu ms", "cores"
  bool lower_is_better = true;
  std::vector<double> samples;
  summary stats;
  std::string note;  // extra figures (p99, useful cores, ...)
};

struct machine_info {
  std::string cpu_model;
  unsigned cores = 0;
  std::string compiler;
  std::string os;
  std::string tbb_version;
  std::string openmp_version;
  std::string date;
  // What available_parallelism() chose and why (affinity mask, cgroup quota,
  // HEIST_NUM_THREADS): the default thread counts come from it.
  std::size_t parallelism = 1;
  std::string sizing;
};

machine_info read_machine_info();

}  // namespace bench
