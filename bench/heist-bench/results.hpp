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

// The row of `workload` on `backend` at `threads`, or nullptr.
inline const result* find_result(const std::vector<result>& rs, const std::string& workload,
                                 const std::string& backend, int threads) {
  for (const result& r : rs) {
    if (r.workload == workload && r.backend == backend && r.threads == threads) return &r;
  }
  return nullptr;
}

// Appends `text` to a row's note column, "; " between entries.
inline void add_note(result& r, const std::string& text) {
  if (!r.note.empty()) r.note += "; ";
  r.note += text;
}

// a's time over b's, round by round: rows timed in the same rounds (timed_case_with) have
// sample k from round k, so a/b of the same k saw the same state of a shared machine; a ratio
// of medians does not when the machine slows for stretches of a run (BENCHMARKS.md's method;
// docs/bench-history/issue-13-round-39.md). The median and p10..p90 of those ratios; n = 0
// when the rows' sample counts differ (not timed together).
inline summary ratio_by_round(const result& a, const result& b) {
  std::vector<double> ratios;
  if (a.samples.size() != b.samples.size()) return {};
  for (std::size_t k = 0; k < a.samples.size(); ++k) {
    if (b.samples[k] > 0) ratios.push_back(a.samples[k] / b.samples[k]);
  }
  return summarize(ratios);
}

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
  // The speed of each CPU the run may use, at its start and its end (measure_cpu_speeds).
  std::string cpu_speeds_start;
  std::string cpu_speeds_end;
  // What a locked read-modify-write and a seq_cst fence cost here (measure_atomic_costs).
  std::string atomic_costs;
};

machine_info read_machine_info();

// Times a fixed serial loop (recursive fib(33), about 10 ms) pinned to each CPU of
// the affinity mask in turn, the fastest of 5 runs each, and says what speedup they allow: on
// a virtual machine one vCPU can run at 80% of another's speed for minutes, and then a
// perfect 2-thread run is 1.8 times one on the fast CPU, not 2. Restores the affinity mask.
std::string measure_cpu_speeds();

// Times, on the calling thread, a loop of uncontended locked read-modify-writes and one of
// store + seq_cst fence + load, against plain stores, fastest of 5. heist's spawn path trades
// these instructions for plain ones (owner-counted joins, fence-free pops); what the trade is
// worth depends on the CPU (BENCHMARKS.md, issue 13's tenth round), so the report says it.
std::string measure_atomic_costs();

}  // namespace bench
