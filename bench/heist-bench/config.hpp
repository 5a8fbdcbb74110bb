// heist-bench command line.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace bench {

struct config {
  std::set<std::string> workloads;  // empty: the default set of the mode
  std::set<std::string> backends;   // empty: every backend each workload supports
  std::vector<int> threads;         // default: 1 .. cores
  bool threads_given = false;       // --threads was on the command line
  int reps = 0;                     // 0: the workload's default for the mode
  bool full = false;                // --full: bigger inputs, every backend, more repetitions
  bool trace = false;               // --trace: one traced heist run per workload
  bool analyze = false;             // --analyze: heist::analyze reports (families/analysis.cpp)
  std::string out = "bench-out";
  bool list = false;
  bool help = false;     // --help: the options, then exit 0
  bool verbose = false;  // --verbose: rows as they are measured, slow-sample diagnostics

  bool wants_workload(const std::string& name, bool in_quick_default) const {
    if (!workloads.empty()) return workloads.count(name) != 0;
    return full || in_quick_default;
  }
  bool wants_backend(const std::string& name, bool in_quick_default) const {
    if (!backends.empty()) return backends.count(name) != 0;
    return full || in_quick_default;
  }
  int reps_or(int quick, int full_reps) const {
    return reps > 0 ? reps : (full ? full_reps : quick);
  }
};

// Every option with its default, for --help.
extern const char* const k_help;

// Throws std::invalid_argument naming the option and the value: an unknown option, a missing
// value, a count that is not a whole number of at least 1 (--threads: at most 4,096).
config parse_config(int argc, char** argv);
// Throws std::invalid_argument naming the first workload or backend of `c` that is not in
// `workloads` or `backends` (a misspelt name would otherwise run nothing, silently).
void check_names(const config& c, const std::vector<std::string>& workloads,
                 const std::vector<std::string>& backends);

}  // namespace bench
