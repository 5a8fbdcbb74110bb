// What heist-bench measures and reports.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "measure.hpp"

namespace bench {

struct result {
  std::string group;     // the family: "fork-join", "uneven loads", "service", "loops", ...
  std::string workload;  // e.g. "fib(30)"
  std::string backend;   // e.g. "heist", "oneTBB"
  int threads = 0;
  std::string unit;  // "ms", "us", "Mtasks/s", "cpu ms", "cores"
  bool lower_is_better = true;
  std::vector<double> samples;
  summary stats;
  std::string note;  // extra figures (p99, useful cores, ...)
  // Per sample, where recorded (timed_case_with, backends that count tasks per worker): the
  // process's CPU time over threads x wall time, and the least busy worker's tasks over the
  // workers' mean. Either empty, or one entry per sample.
  std::vector<double> busy;
  std::vector<double> least_share;
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
// of medians does not when the machine slows for stretches of a run (BENCHMARKS.md's method).
// The median and p10..p90 of those ratios; n = 0
// when the rows' sample counts differ (not timed together).
inline summary ratio_by_round(const result& a, const result& b) {
  std::vector<double> ratios;
  if (a.samples.size() != b.samples.size()) return {};
  for (std::size_t k = 0; k < a.samples.size(); ++k) {
    if (b.samples[k] > 0) ratios.push_back(a.samples[k] / b.samples[k]);
  }
  return summarize(ratios);
}

// What the threads did in a sample, from its result::busy and least_share.
enum class sample_shape {
  worker_idle,        // busy below 0.9: a worker parked, or its thread was preempted
  uneven_cores,       // all busy, the least busy under 0.85x the mean tasks: a slower vCPU
                      // whose share the others stole
  every_core_slower,  // all busy, even shares: the whole machine ran slower
};
inline sample_shape shape_of(double busy, double least_share) {
  if (busy < 0.9) return sample_shape::worker_idle;
  return least_share < 0.85 ? sample_shape::uneven_cores : sample_shape::every_core_slower;
}

// On rows at 2+ threads that recorded each sample's shape and whose median sample kept its
// workers busy (compute-bound rows, the fork-join family's): how many samples took over 1.1x
// the row's median and what their threads did, so that a slow sample says whether the
// scheduler left a worker idle or a core ran slow (--verbose).
inline void note_slow_samples(std::vector<result>& rows) {
  struct shape_count {
    const char* label;
    int n = 0;
    double busy_lo = 0, busy_hi = 0, share_lo = 0, share_hi = 0;
  };
  for (result& r : rows) {
    const std::size_t n = r.samples.size();
    if (r.threads <= 1 || n < 3 || r.busy.size() != n || r.least_share.size() != n) continue;
    // Only rows whose typical sample keeps every worker busy: in one whose workers wait by
    // design (sleeping tasks, trickled work), an idle worker says nothing about the sample.
    if (quantile(r.busy, 0.5) < 0.9) continue;
    shape_count counts[] = {
        {"a worker idle"}, {"cores at different speeds"}, {"every core slower"}};
    int slow = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (r.samples[k] <= 1.1 * r.stats.median) continue;
      ++slow;
      shape_count& c = counts[static_cast<int>(shape_of(r.busy[k], r.least_share[k]))];
      const bool first = c.n++ == 0;
      c.busy_lo = first ? r.busy[k] : std::min(c.busy_lo, r.busy[k]);
      c.busy_hi = first ? r.busy[k] : std::max(c.busy_hi, r.busy[k]);
      c.share_lo = first ? r.least_share[k] : std::min(c.share_lo, r.least_share[k]);
      c.share_hi = first ? r.least_share[k] : std::max(c.share_hi, r.least_share[k]);
    }
    if (slow == 0) continue;
    std::string text =
        std::to_string(slow) + " of " + std::to_string(n) + " samples over 1.1x the median:";
    const char* sep = " ";
    for (const shape_count& c : counts) {
      if (c.n == 0) continue;
      char b[160];
      std::snprintf(b, sizeof b,
                    "%s%s %d (busy %.2f..%.2f, least busy worker %.2f..%.2fx the mean tasks)", sep,
                    c.label, c.n, c.busy_lo, c.busy_hi, c.share_lo, c.share_hi);
      text += b;
      sep = ", ";
    }
    add_note(r, text);
  }
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
// worth depends on the CPU, so the report says it.
std::string measure_atomic_costs();

}  // namespace bench
