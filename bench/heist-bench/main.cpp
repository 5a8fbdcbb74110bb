// heist-bench: heist's main job. Runs each workload on each backend at each thread count,
// side by side in one run, and reports medians, spreads and ratios.
//
//   heist-bench                      the default run
//   heist-bench --full               bigger inputs, every backend, more repetitions
//   heist-bench --workloads fib,uts --backends heist,tbb --threads 1,2 --reps 7 --out DIR
//   heist-bench --trace              also write one heist trace per workload (JSON + SVG)
//   heist-bench --list               print the workloads (what each measures) and backends
//   heist-bench --help               every option with its default
//
// This file is the runner: it parses the command line, runs the registered workload
// families (families/*.cpp and flow_workloads.cpp, each registering itself in harness.hpp's
// registry) in their order, and writes the table and the report.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "harness.hpp"
#include "report.hpp"

namespace bench {

std::vector<workload_family>& families() {
  static std::vector<workload_family> registered;
  return registered;
}

namespace {
// The families in their run order (registration order across files is unspecified).
std::vector<workload_family> sorted_families() {
  std::vector<workload_family> f = families();
  std::sort(f.begin(), f.end(),
            [](const workload_family& a, const workload_family& b) { return a.order < b.order; });
  return f;
}

const std::vector<std::string> k_all_backends = {
    "heist",        "heist-random",   "heist-rr",   "heist-none",   "tbb",          "omp",
    "serial",       "lockpool",       "central",    "rr-dealing",   "heist-auto",   "heist-simple",
    "heist-static", "heist-affinity", "omp-static", "omp-dynamic1", "omp-dynamic4", "omp-dynamic16",
    "omp-guided",   "tbb-auto",       "tbb-simple"};
}  // namespace
}  // namespace bench

namespace bench {
int probe_memory_main(int argc, char** argv);  // families/memory.cpp
}

int main(int argc, char** argv) {
  using namespace bench;
  // A child of the memory family: one workload on one backend, then its peak RSS.
  if (argc > 1 && std::string(argv[1]) == "--probe-memory") return probe_memory_main(argc, argv);
  std::vector<std::string> all_workloads;
  context x;
  for (const workload_family& f : sorted_families()) {
    all_workloads.insert(all_workloads.end(), f.workloads.begin(), f.workloads.end());
    for (const char* w : f.workloads)
      x.families_of.emplace_back(w, f.name);
  }
  try {
    x.cfg = parse_config(argc, argv);
    if (x.cfg.help) {
      std::fputs(k_help, stdout);
      return 0;
    }
    check_names(x.cfg, all_workloads, k_all_backends);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heist-bench: %s\n", e.what());
    return 2;
  }
  if (x.cfg.list) {
    for (const workload_family& f : sorted_families()) {
      if (f.workloads.empty()) continue;
      std::printf("%s\n  backends: %s\n", f.name, backends_of_family(f.name));
      for (const char* w : f.workloads)
        std::printf("  %-15s %s\n", w, what_it_measures(w));
    }
    std::printf("\nevery backend key:");
    for (const auto& b : k_all_backends)
      std::printf(" %s", b.c_str());
    std::printf("\n");
    return 0;
  }
  for (const std::string& w : all_workloads) {
    if (x.cfg.wants_workload(w, true)) x.planned.push_back(w);
  }
  set_verbose(x.cfg.verbose);
  std::filesystem::create_directories(x.cfg.out);
  machine_info m = read_machine_info();
  m.cpu_speeds_start = measure_cpu_speeds();
  m.atomic_costs = measure_atomic_costs();
  print_header(m, x.cfg);
  for (const workload_family& f : sorted_families())
    f.run(x);
  m.cpu_speeds_end = measure_cpu_speeds();
  print_table(x.results);
  std::printf("\nCPU speeds at the start: %s\nCPU speeds at the end: %s\n",
              m.cpu_speeds_start.c_str(), m.cpu_speeds_end.c_str());
  write_report(x.cfg, m, x.results);
  return 0;
}
