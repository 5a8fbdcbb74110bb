// What heist-bench's workload families share: the run's configuration and results, the
// backends by key, the interleaved timing loop, and the registry of families. Adding a
// workload touches one file: its family's (families/*.cpp), which registers it here.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/central_queue.hpp"
#include "backends/heist_backend.hpp"
#include "backends/lock_pool.hpp"
#include "backends/serial_backend.hpp"
#include "backends/static_rr.hpp"
#include "config.hpp"
#include "measure.hpp"
#include "report.hpp"
#include "results.hpp"
#if HEIST_BENCH_HAVE_TBB
#include "backends/tbb_backend.hpp"
#endif
#if HEIST_BENCH_HAVE_OPENMP
#include "backends/omp_backend.hpp"
#endif

namespace bench {

struct context {
  config cfg;
  std::vector<result> results;

  // True if the run includes workload `key`; the first time, says so on stderr with the
  // run's progress ("[3/45] nqueens (fork-join), 1m40s so far"), so a long run shows where
  // it is. main() fills `planned` (every workload the run includes, in run order) first.
  bool wants(const std::string& key) {
    if (!cfg.wants_workload(key, true)) return false;
    if (m_started.insert(key).second) {
      const auto at = std::find(planned.begin(), planned.end(), key);
      const long secs = static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::steady_clock::now() - m_start)
                                              .count());
      std::fprintf(stderr, "[%zu/%zu] %s (%s), %ldm%02lds so far\n",
                   static_cast<std::size_t>(at - planned.begin()) + 1, planned.size(), key.c_str(),
                   family_of(key).c_str(), secs / 60, secs % 60);
    }
    return true;
  }
  std::vector<std::string> planned;
  std::vector<std::pair<std::string, std::string>> families_of;  // key, family name

 private:
  std::string family_of(const std::string& key) const {
    for (const auto& [k, f] : families_of)
      if (k == key) return f;
    return "?";
  }
  std::set<std::string> m_started;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

// --- the registry ---------------------------------------------------------------------------
// A family of workloads: run in `order`, listed by --list with its workload keys.
struct workload_family {
  int order;
  const char* name;
  std::vector<const char*> workloads;
  void (*run)(context&);
};
std::vector<workload_family>& families();  // main.cpp
struct register_family {
  explicit register_family(workload_family f) { families().push_back(std::move(f)); }
};

// --- backends by key ------------------------------------------------------------------------
struct backend_key {
  const char* key;
  bool quick;  // part of the quick default
};

// Constructs the backend `key` with `threads` threads and calls f(backend). Returns false if
// the backend is not available in this build.
template <class F>
inline bool with_backend(const std::string& key, int threads, F&& f) {
  if (key == "heist") {
    heist_backend b(threads);
    f(b);
  } else if (key == "heist-random") {
    heist_backend b(threads, heist::steal_policy::random);
    f(b);
  } else if (key == "heist-rr") {
    heist_backend b(threads, heist::steal_policy::round_robin);
    f(b);
  } else if (key == "heist-none") {
    heist_backend b(threads, heist::steal_policy::none);
    f(b);
  } else if (key == "serial") {
    serial_backend b(threads);
    f(b);
  } else if (key == "lockpool") {
    lock_pool b(threads);
    f(b);
  } else if (key == "central") {
    central_queue b(threads);
    f(b);
  } else if (key == "rr-dealing") {
    static_rr b(threads);
    f(b);
#if HEIST_BENCH_HAVE_TBB
  } else if (key == "tbb") {
    tbb_backend b(threads);
    f(b);
#endif
#if HEIST_BENCH_HAVE_OPENMP
  } else if (key == "omp") {
    omp_backend b(threads);
    f(b);
#endif
  } else {
    return false;
  }
  return true;
}

// Per worker, the tasks it has run so far, where the backend can say (heist's executors);
// empty for the others.
template <class B>
std::vector<std::uint64_t> worker_task_counts(B& b) {
  std::vector<std::uint64_t> counts;
  if constexpr (requires { b.exec().stats(); }) {
    for (const heist::worker_stats& w : b.exec().stats().workers)
      counts.push_back(w.executed);
  }
  return counts;
}

// What a timed sample's threads did, for note_slow_samples (results.hpp), on rows whose
// backend counts tasks per worker (heist's): the process's CPU time over threads x wall time
// (the calling thread only posts the root and waits), and the least busy worker's tasks over
// the workers' mean. Taken right around the timed call: a clock read and a copy of the
// counters, so that the sample still starts while the untimed run's workers are awake.
// Backends that do not count tasks per worker record nothing and pay nothing.
class sample_probe {
 public:
  template <class B>
  explicit sample_probe(B& b) : m_tasks(worker_task_counts(b)) {
    if (m_tasks.size() >= 2) m_cpu = process_cpu_seconds();
  }

  template <class B>
  void record(result& r, B& b, double wall) const {
    if (m_tasks.size() < 2 || wall <= 0) return;
    const double cpu = process_cpu_seconds() - m_cpu;
    const std::vector<std::uint64_t> tasks = worker_task_counts(b);
    if (tasks.size() != m_tasks.size()) return;
    double least = 0, total = 0;
    for (std::size_t w = 0; w < tasks.size(); ++w) {
      const auto ran = static_cast<double>(tasks[w] - m_tasks[w]);
      least = w == 0 ? ran : std::min(least, ran);
      total += ran;
    }
    if (total <= 0) return;
    r.busy.push_back(cpu / (wall * r.threads));
    r.least_share.push_back(least / (total / static_cast<double>(tasks.size())));
  }

 private:
  std::vector<std::uint64_t> m_tasks;
  double m_cpu = 0;
};

// Runs `body(backend)` (which returns a checksum) for `reps` timed repetitions on each
// selected backend and thread count. The machine is shared and noisy, so repetitions are
// interleaved: each round runs every (thread count, backend) pair once, in an order rotated
// every round (each runtime keeps its pool across rounds, as an application would), so that a
// slow spell or a neighbour's spinning threads hit all backends and thread counts alike. Each timed
// run comes right after an untimed run of the same row: after the pause between rows a backend's
// threads sleep, and on a VM the idle vCPUs under them halt; waking one took 80-200 us there (p90
// up to 400, growing with the pause) against 30 us after 1 ms, and a 2-thread sample paid it at its
// start, a few percent of heist's 9 ms fib(30) and a tenth of that of oneTBB's 70 ms
// (BENCHMARKS.md). The wakeup row measures that latency; these rows measure
// the work. Sample k of every row comes from round k, so ratios between rows (a backend's T1/T2)
// can be taken round by round (note_paired_scaling). `setup()` runs before each repetition,
// untimed. The checksum must equal `expected` (the serial result).
template <class WithBackend, class Body>
inline void timed_case_with(context& x, WithBackend&& with, const std::vector<int>& thread_counts,
                            const std::string& group, const std::string& key,
                            const std::string& workload, const std::vector<backend_key>& keys,
                            int reps, std::uint64_t expected, const std::function<void()>& setup,
                            Body&& body) {
  if (!x.wants(key)) return;
  std::vector<result> rows;
  std::vector<std::string> row_keys;
  for (int threads : thread_counts) {
    for (const backend_key& k : keys) {
      if (!x.cfg.wants_backend(k.key, k.quick)) continue;
      if (std::string(k.key) == "serial" && threads != 1) continue;  // serial is one thread
      result r;
      r.group = group;
      r.workload = workload;
      r.threads = threads;
      r.unit = "ms";
      rows.push_back(std::move(r));
      row_keys.push_back(k.key);
    }
  }
  std::vector<bool> available(rows.size(), true);
  for (int round = 0; round < reps; ++round) {
    for (std::size_t j = 0; j < rows.size(); ++j) {
      // Rotate the order every round, and let the previous runtime's idle threads settle
      // first: libgomp spins for milliseconds after a parallel region and would otherwise
      // slow down whichever backend always runs next.
      const std::size_t i = (j + static_cast<std::size_t>(round)) % rows.size();
      if (!available[i]) continue;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      result& r = rows[i];
      available[i] = with(row_keys[i], r.threads, [&](auto& b) {
        r.backend = b.name();
        for (int run = 0; run <= 1; ++run) {  // run 0: untimed, wakes the backend's threads
          if (setup) setup();
          std::uint64_t sum = 0;
          const sample_probe probe(b);
          const double s = time_once([&] { sum = body(b); });
          if (run == 1) probe.record(r, b, s);
          if (sum != expected) {
            std::fprintf(stderr, "heist-bench: %s on %s gave %llu, expected %llu\n",
                         workload.c_str(), r.backend.c_str(), static_cast<unsigned long long>(sum),
                         static_cast<unsigned long long>(expected));
            std::exit(1);
          }
          if (run == 1) r.samples.push_back(s * 1e3);
        }
      });
    }
  }
  std::vector<result> done;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!available[i]) continue;
    rows[i].stats = summarize(rows[i].samples);
    done.push_back(std::move(rows[i]));
  }
  note_paired_scaling(done);
  if (x.cfg.verbose) note_slow_samples(done);
  for (result& r : done) {
    print_progress(r);
    x.results.push_back(std::move(r));
  }
}

// timed_case_with over the fork-join backends and every configured thread count.
template <class Body>
inline void timed_case(context& x, const std::string& group, const std::string& key,
                       const std::string& workload, const std::vector<backend_key>& keys, int reps,
                       std::uint64_t expected, const std::function<void()>& setup, Body&& body) {
  timed_case_with(
      x, [](const std::string& k, int t, auto&& f) { return with_backend(k, t, f); }, x.cfg.threads,
      group, key, workload, keys, reps, expected, setup, std::forward<Body>(body));
}

}  // namespace bench
