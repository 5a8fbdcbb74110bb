// heist-bench: heist's main job. Runs each workload on each backend at each thread count,
// side by side in one run, and reports medians, spreads and ratios.
//
//   heist-bench                      quick default (about 3 minutes on 2 cores)
//   heist-bench --full               bigger inputs, every backend, more repetitions
//   heist-bench --workloads fib,uts --backends heist,tbb --threads 1,2 --reps 7 --out DIR
//   heist-bench --trace              also write one heist trace per workload (JSON + SVG)
//   heist-bench --list               print the workloads and backends
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.hpp"
#include "backends/central_queue.hpp"
#include "backends/heist_backend.hpp"
#include "backends/lock_pool.hpp"
#include "backends/loop_backends.hpp"
#include "backends/serial_backend.hpp"
#include "backends/static_rr.hpp"
#include "config.hpp"
#include "harness.hpp"
#include "measure.hpp"
#include "report.hpp"
#include "results.hpp"
#include "workloads/arena_workloads.hpp"
#include "workloads/fork_join.hpp"
#include "workloads/loops.hpp"
#include "workloads/seed_table.hpp"
#include "workloads/service.hpp"
#if HEIST_BENCH_HAVE_TBB
#include <tbb/task_arena.h>

#include "backends/tbb_backend.hpp"
#include "backends/tbb_loops.hpp"
#endif
#if HEIST_BENCH_HAVE_OPENMP
#include "backends/omp_backend.hpp"
#include "backends/omp_loops.hpp"
#endif
#include <bit>
#include <map>

namespace bench {
namespace {

// --- backends by key ------------------------------------------------------------------------
struct backend_key {
  const char* key;
  bool quick;  // part of the quick default
};

// Constructs the backend `key` with `threads` threads and calls f(backend). Returns false if
// the backend is not available in this build.
template <class F>
bool with_backend(const std::string& key, int threads, F&& f) {
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

const std::vector<std::string> k_all_backends = {
    "heist",        "heist-random",   "heist-rr",   "heist-none",   "tbb",          "omp",
    "serial",       "lockpool",       "central",    "rr-dealing",   "heist-auto",   "heist-simple",
    "heist-static", "heist-affinity", "omp-static", "omp-dynamic1", "omp-dynamic4", "omp-dynamic16",
    "omp-guided",   "tbb-auto",       "tbb-simple"};

// Runs `body(backend)` (which returns a checksum) for `reps` timed repetitions on each
// selected backend and thread count. The machine is shared and noisy, so repetitions are
// interleaved: each round runs every backend once, in an order rotated every round (a fresh
// pool each time; the first round adds one untimed warm-up run), so that a slow spell or a
// neighbour's spinning threads hit all backends alike. `setup()` runs
// before each repetition, untimed. The checksum must equal `expected` (the serial result).
template <class WithBackend, class Body>
void timed_case_with(context& x, WithBackend&& with, const std::vector<int>& thread_counts,
                     const std::string& group, const std::string& key, const std::string& workload,
                     const std::vector<backend_key>& keys, int reps, std::uint64_t expected,
                     const std::function<void()>& setup, Body&& body) {
  if (!x.cfg.wants_workload(key, true)) return;
  for (int threads : thread_counts) {
    std::vector<result> rows;
    std::vector<std::string> row_keys;
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
        available[i] = with(row_keys[i], threads, [&](auto& b) {
          r.backend = b.name();
          for (int run = round == 0 ? 0 : 1; run <= 1; ++run) {  // run 0: warm-up
            if (setup) setup();
            std::uint64_t sum = 0;
            const double s = time_once([&] { sum = body(b); });
            if (sum != expected) {
              std::fprintf(stderr, "heist-bench: %s on %s gave %llu, expected %llu\n",
                           workload.c_str(), r.backend.c_str(),
                           static_cast<unsigned long long>(sum),
                           static_cast<unsigned long long>(expected));
              std::exit(1);
            }
            if (run == 1) r.samples.push_back(s * 1e3);
          }
        });
      }
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!available[i]) continue;
      rows[i].stats = summarize(rows[i].samples);
      print_progress(rows[i]);
      x.results.push_back(std::move(rows[i]));
    }
  }
}

// timed_case_with over the fork-join backends and every configured thread count.
template <class Body>
void timed_case(context& x, const std::string& group, const std::string& key,
                const std::string& workload, const std::vector<backend_key>& keys, int reps,
                std::uint64_t expected, const std::function<void()>& setup, Body&& body) {
  timed_case_with(
      x, [](const std::string& k, int t, auto&& f) { return with_backend(k, t, f); }, x.cfg.threads,
      group, key, workload, keys, reps, expected, setup, std::forward<Body>(body));
}

// --- workloads ----------------------------------------------------------------------------
const std::vector<backend_key> k_fork_join_backends = {
    {"heist", true},    {"heist-random", true}, {"heist-rr", true}, {"heist-none", false},
    {"tbb", true},      {"omp", true},          {"serial", true},   {"lockpool", false},
    {"central", false}, {"rr-dealing", false}};

void fork_join_workloads(context& x) {
  const int fib_n = x.cfg.full ? 32 : 30;
  const auto fib_expected = static_cast<std::uint64_t>(fib<serial_backend>(fib_n));
  timed_case(x, "fork-join", "fib", "fib(" + std::to_string(fib_n) + ")", k_fork_join_backends,
             x.cfg.reps_or(7, 15), fib_expected, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               long v = 0;
               b.run([&] { v = fib<B>(fib_n); });
               return static_cast<std::uint64_t>(v);
             });

  const int queens = 12;
  timed_case(x, "fork-join", "nqueens", "nqueens(12)", k_fork_join_backends, x.cfg.reps_or(5, 11),
             14200, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               long v = 0;
               b.run([&] { v = nqueens<B>(queens, 0, 0, 0, 0); });
               return static_cast<std::uint64_t>(v);
             });

  uts_params up;
  up.max_depth = x.cfg.full ? 12 : 10;
  const std::uint64_t uts_expected = uts<serial_backend>(up.seed, 0, up);
  timed_case(x, "fork-join", "uts", "uts(geo,d=" + std::to_string(up.max_depth) + ")",
             k_fork_join_backends, x.cfg.reps_or(5, 11), uts_expected, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = uts<B>(up.seed, 0, up); });
               return v;
             });

  const std::size_t mm = x.cfg.full ? 1024 : 512;
  std::vector<double> ma(mm * mm), mb(mm * mm), mc(mm * mm);
  for (std::size_t i = 0; i < mm * mm; ++i) {
    ma[i] = static_cast<double>(i % 7) - 3;
    mb[i] = static_cast<double>(i % 5) - 2;
  }
  auto checksum = [&] {
    double s = 0;
    for (double v : mc)
      s += v;
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(s));
  };
  std::fill(mc.begin(), mc.end(), 0.0);
  matmul<serial_backend>({mc.data(), mm}, {ma.data(), mm}, {mb.data(), mm}, mm);
  const std::uint64_t mm_expected = checksum();
  timed_case(
      x, "fork-join", "matmul", "matmul(" + std::to_string(mm) + ")", k_fork_join_backends,
      x.cfg.reps_or(3, 7), mm_expected, [&] { std::fill(mc.begin(), mc.end(), 0.0); },
      [&](auto& b) {
        using B = std::decay_t<decltype(b)>;
        b.run([&] { matmul<B>({mc.data(), mm}, {ma.data(), mm}, {mb.data(), mm}, mm); });
        return checksum();
      });

  const std::size_t qn = 10'000'000;
  std::vector<int> source(qn), work(qn);
  std::mt19937 rng(1);
  for (auto& v : source)
    v = static_cast<int>(rng());
  std::vector<int> sorted = source;
  std::sort(sorted.begin(), sorted.end());
  const std::uint64_t q_expected = 1;
  timed_case(
      x, "fork-join", "quicksort", "quicksort(1e7)", k_fork_join_backends, x.cfg.reps_or(3, 7),
      q_expected, [&] { work = source; },
      [&](auto& b) {
        using B = std::decay_t<decltype(b)>;
        b.run([&] { quicksort<B>(work.data(), work.data() + work.size()); });
        return static_cast<std::uint64_t>(work == sorted);
      });
}

// --- loops ---------------------------------------------------------------------------------
// Loop backends by key; `grain` is the grain size of the simple partitioners.
template <class F>
bool with_loop_backend(const std::string& key, int threads, std::size_t grain, F&& f) {
  using k = heist_loops::kind;
  if (key == "heist-auto") {
    heist_loops b(threads, k::automatic);
    f(b);
  } else if (key == "heist-simple") {
    heist_loops b(threads, k::simple, grain);
    f(b);
  } else if (key == "heist-static") {
    heist_loops b(threads, k::fixed);
    f(b);
  } else if (key == "heist-affinity") {
    heist_loops b(threads, k::affinity);
    f(b);
  } else if (key == "serial") {
    serial_loops b(threads);
    f(b);
#if HEIST_BENCH_HAVE_OPENMP
  } else if (key == "omp-static") {
    omp_loops b(threads, omp_sched_static, 0);
    f(b);
  } else if (key == "omp-dynamic1" || key == "omp-dynamic4" || key == "omp-dynamic16") {
    omp_loops b(threads, omp_sched_dynamic, std::stoi(key.substr(11)));
    f(b);
  } else if (key == "omp-guided") {
    omp_loops b(threads, omp_sched_guided, 0);
    f(b);
#endif
#if HEIST_BENCH_HAVE_TBB
  } else if (key == "tbb-auto") {
    tbb_loops b(threads, false);
    f(b);
  } else if (key == "tbb-simple") {
    tbb_loops b(threads, true, grain);
    f(b);
#endif
  } else {
    return false;
  }
  return true;
}

const std::vector<backend_key> k_loop_backends = {
    {"heist-auto", true}, {"heist-simple", true}, {"heist-static", true}, {"heist-affinity", true},
    {"omp-static", true}, {"omp-dynamic1", true}, {"omp-dynamic4", true}, {"omp-dynamic16", true},
    {"omp-guided", true}, {"tbb-auto", true},     {"tbb-simple", true},   {"serial", true}};

void loop_workloads(context& x) {
  // Quick mode compares the schedules at the most threads only (plus serial); --full, or an
  // explicit --threads, sweeps every count.
  const int most = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  const bool sweep = x.cfg.full || x.cfg.threads_given;
  const std::vector<int> counts = sweep ? x.cfg.threads : std::vector<int>{1, most};
  // Serial runs at 1 thread only; in quick mode the schedules run at the most threads only,
  // and the balanced loops skip OpenMP dynamic,1 and dynamic,4 (a shared counter bumped per 1
  // or 4 elements of a 1e7 or 1e8 array: 5 to 30 times slower than any other schedule, and
  // seconds of the quick run's budget better spent on more samples of the EPCC loops).
  auto runs_at = [&](const std::string& workload, const std::string& k, int t) {
    if (k == "serial") return t == 1;
    if (!x.cfg.full && (workload == "vecadd" || workload == "reduce") &&
        (k == "omp-dynamic1" || k == "omp-dynamic4")) {
      return false;
    }
    return sweep || t == most;
  };
  auto loop_case = [&](const std::string& key, const std::string& label, std::size_t grain,
                       int reps, const std::function<void()>& setup, auto body) {
    // The serial run gives the checksum every backend must reproduce exactly.
    double expected = 0;
    serial_loops ref(1);
    if (setup) setup();
    ref.run([&](serial_loops& l) { expected = body(l); });
    timed_case_with(
        x,
        [&](const std::string& k, int t, auto&& f) {
          return runs_at(key, k, t) && with_loop_backend(k, t, grain, f);
        },
        counts, "loops", key, label, k_loop_backends, reps, std::bit_cast<std::uint64_t>(expected),
        setup,
        [&](auto& b) {
          double v = 0;
          b.run([&](auto& l) { v = body(l); });
          return std::bit_cast<std::uint64_t>(v);
        });
  };

  if (x.cfg.wants_workload("epcc1", true) || x.cfg.wants_workload("epcc2", true)) {
    auto data = std::make_shared<epcc_data>();
    const int reps1 = 100;
    const int reps2 = x.cfg.full ? 100 : 3;
    loop_case(
        "epcc1", "EPCC loop 1 (x" + std::to_string(reps1) + ")", 4, x.cfg.reps_or(7, 11),
        [data] { data->reset(); },
        [data, reps1](auto& l) {
          epcc_loop1(l, *data, reps1);
          return checksum(data->a);
        });
    loop_case(
        "epcc2", "EPCC loop 2 (x" + std::to_string(reps2) + ")", 4, x.cfg.reps_or(7, 9),
        [data] { data->reset(); },
        [data, reps2](auto& l) {
          epcc_loop2(l, *data, reps2);
          return checksum(data->c);
        });
  }
  if (x.cfg.wants_workload("vecadd", true)) {
    const std::size_t n = 10'000'000;
    auto xs = std::make_shared<std::vector<double>>(n),
         ys = std::make_shared<std::vector<double>>(n),
         out = std::make_shared<std::vector<double>>(n);
    for (std::size_t i = 0; i < n; ++i) {
      (*xs)[i] = static_cast<double>(i % 1000);
      (*ys)[i] = 0.5 * static_cast<double>(i % 7);
    }
    loop_case("vecadd", "vector add (1e7)", 10000, x.cfg.reps_or(7, 15), nullptr,
              [xs, ys, out](auto& l) {
                vector_add(l, *xs, *ys, *out);
                return checksum(*out);
              });
  }
  if (x.cfg.wants_workload("reduce", true)) {
    const std::size_t n = 100'000'000;
    auto xs = std::make_shared<std::vector<double>>(n);
    // Multiples of 1/4 below 256: every partial sum is exact, so any order gives the same bits.
    for (std::size_t i = 0; i < n; ++i)
      (*xs)[i] = 0.25 * static_cast<double>(i % 1024);
    loop_case("reduce", "sum of 1e8 doubles", 100000, x.cfg.reps_or(5, 11), nullptr,
              [xs](auto& l) { return sum_doubles(l, *xs); });
  }
}

const std::vector<backend_key> k_seed_backends = {{"heist", true},      {"heist-none", true},
                                                  {"rr-dealing", true}, {"central", true},
                                                  {"lockpool", false},  {"tbb", false}};

void seed_table_workloads(context& x) {
  const std::vector<std::int64_t> costs = heavy_tailed_costs(10000, 20000.0);
  timed_case(x, "seed-001", "uneven", "uneven load", k_seed_backends, x.cfg.reps_or(5, 11),
             costs.size(), nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = uneven_load<B>(costs); });
               return v;
             });
  const std::size_t burst = 2000;
  timed_case(x, "seed-001", "hotspot", "hotspot", k_seed_backends, x.cfg.reps_or(5, 11), burst + 64,
             nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = hotspot<B>(burst, 50000); });
               return v;
             });
  const std::size_t trickled = 2000;
  timed_case(x, "seed-001", "idle-stealing", "idle stealing", k_seed_backends, x.cfg.reps_or(5, 11),
             trickled, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = idle_stealing<B>(trickled, 20000, 20000); });
               return v;
             });
}

// --- section 7: blocking calls, execute and isolate ---------------------------------------
void arena_workloads(context& x) {
  const int most = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  if (x.cfg.wants_workload("mixed", true)) {
    // Keys: "heist" wraps the waits in heist::blocking, "heist-noblock" does not, "tbb" has
    // no equivalent (a waiting task holds its thread).
    const std::vector<backend_key> keys = {{"heist", true}, {"heist-noblock", true}, {"tbb", true}};
    const std::size_t tasks = x.cfg.full ? 400 : 200;
    timed_case_with(
        x,
        [](const std::string& k, int t, auto&& f) {
          if (k == "heist-noblock") {
            heist_backend b(t);
            b.set_blocking(false);
            f(b);
            return true;
          }
          return with_backend(k, t, f);
        },
        std::vector<int>{most}, "arenas", "mixed",
        "mixed: " + std::to_string(tasks / 2) + " x 1 ms wait + " + std::to_string(tasks / 2) +
            " x 1 ms compute",
        keys, x.cfg.reps_or(5, 9), tasks, nullptr,
        [&](auto& b) {
          using B = std::decay_t<decltype(b)>;
          std::uint64_t v = 0;
          bool use_blocking = false;
          if constexpr (std::is_same_v<B, heist_backend>) use_blocking = b.blocking_enabled();
          b.run([&] {
            v = mixed_io_compute<B>(tasks, std::chrono::milliseconds(1),
                                    std::chrono::milliseconds(1), [&](auto&& wait) {
                                      if (use_blocking) {
                                        heist::blocking(wait);
                                      } else {
                                        wait();
                                      }
                                    });
          });
          return v;
        });
  }
  if (x.cfg.wants_workload("arena-cost", true)) {
    auto add = [&](const std::string& workload, const std::string& backend, double ns) {
      result r{"arenas", workload, backend, most, "ns", true};
      r.samples.push_back(ns);
      r.stats = summarize(r.samples);
      print_progress(r);
      x.results.push_back(std::move(r));
    };
    const std::size_t calls = x.cfg.full ? 1'000'000 : 200'000;
    for (int rep = 0; rep < 3; ++rep) {
      heist::executor ex(static_cast<std::size_t>(most));
      heist::task_arena arena(static_cast<std::size_t>(most), ex);
      const double exec_ns = ns_per_call(calls, [&] { arena.execute([] {}); });
      const double iso_ns = ns_per_call(calls, [&] { heist::isolate([] {}); });
      const double iso_worker_ns =
          ex.submit([&] { return ns_per_call(calls, [] { heist::isolate([] {}); }); }).get();
      if (rep == 2) {
        add("task_arena::execute per call", "heist", exec_ns);
        add("isolate per call", "heist", iso_ns);
        add("isolate per call (on a worker)", "heist", iso_worker_ns);
      }
    }
#if HEIST_BENCH_HAVE_TBB
    for (int rep = 0; rep < 3; ++rep) {
      tbb::task_arena arena(most);
      const double exec_ns = ns_per_call(calls, [&] { arena.execute([] {}); });
      const double iso_ns = ns_per_call(calls, [&] { tbb::this_task_arena::isolate([] {}); });
      if (rep == 2) {
        add("task_arena::execute per call", "oneTBB", exec_ns);
        add("isolate per call", "oneTBB", iso_ns);
      }
    }
#endif
  }
}

const std::vector<backend_key> k_service_backends = {
    {"heist", true}, {"tbb", true}, {"lockpool", true}, {"central", true}, {"rr-dealing", false}};

void service_workloads(context& x) {
  const int max_threads = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  auto add = [&](result r) {
    r.stats = summarize(r.samples);
    print_progress(r);
    x.results.push_back(std::move(r));
  };
  if (x.cfg.wants_workload("idle", true)) {
    for (const backend_key& k : k_service_backends) {
      if (!x.cfg.wants_backend(k.key, k.quick)) continue;
      with_backend(k.key, max_threads, [&](auto& b) {
        if constexpr (service_backend<std::decay_t<decltype(b)>>) {
          result r{"service", "idle cost (2 s)", b.name(), max_threads, "cpu ms", true};
          for (int i = 0; i < (x.cfg.full ? 3 : 1); ++i) {
            r.samples.push_back(idle_cpu_seconds(b, std::chrono::seconds(2)) * 1e3);
          }
          add(std::move(r));
        }
      });
    }
  }
  if (x.cfg.wants_workload("wakeup", true)) {
    for (const backend_key& k : k_service_backends) {
      if (!x.cfg.wants_backend(k.key, k.quick)) continue;
      with_backend(k.key, max_threads, [&](auto& b) {
        if constexpr (service_backend<std::decay_t<decltype(b)>>) {
          result r{"service", "wake-up latency", b.name(), max_threads, "us", true};
          for (int i = 0; i < 5; ++i)
            wake_latency_seconds(b, std::chrono::microseconds(500));
          const int n = x.cfg.full ? 1000 : 300;
          for (int i = 0; i < n; ++i) {
            r.samples.push_back(wake_latency_seconds(b, std::chrono::milliseconds(2)) * 1e6);
          }
          char note[64];
          std::snprintf(note, sizeof note, "p99 %.1f us", quantile(r.samples, 0.99));
          r.note = note;
          add(std::move(r));
        }
      });
    }
  }
  if (x.cfg.wants_workload("wakeup", true)) {
    result r{"service", "wake-up latency", "futex hand-off (floor)", max_threads, "us", true};
    const int n = x.cfg.full ? 1000 : 300;
    for (int i = 0; i < n; ++i) {
      r.samples.push_back(futex_handoff_seconds(std::chrono::milliseconds(2)) * 1e6);
    }
    char note[64];
    std::snprintf(note, sizeof note, "p99 %.1f us", quantile(r.samples, 0.99));
    r.note = note;
    add(std::move(r));
  }
  if (x.cfg.wants_workload("submit", true)) {
    for (int producers : {1, 2, 4}) {
      for (const backend_key& k : k_service_backends) {
        if (!x.cfg.wants_backend(k.key, k.quick)) continue;
        with_backend(k.key, max_threads, [&](auto& b) {
          if constexpr (service_backend<std::decay_t<decltype(b)>>) {
            result r{
                "service",
                "submit from " + std::to_string(producers) + " thread" + (producers > 1 ? "s" : ""),
                b.name(),
                max_threads,
                "Mtasks/s",
                false};
            const std::size_t total = x.cfg.full ? 1'000'000 : 200'000;
            submission_rate(b, producers, 1000);  // warm-up
            for (int i = 0; i < x.cfg.reps_or(3, 7); ++i) {
              r.samples.push_back(submission_rate(b, producers, total / producers) / 1e6);
            }
            add(std::move(r));
          }
        });
      }
    }
  }
  if (x.cfg.wants_workload("trickle", true)) {
    for (const backend_key& k : k_service_backends) {
      if (!x.cfg.wants_backend(k.key, k.quick)) continue;
      with_backend(k.key, max_threads, [&](auto& b) {
        if constexpr (service_backend<std::decay_t<decltype(b)>>) {
          result r{"service", "trickle 20us/200us", b.name(), max_threads, "cores", true};
          const trickle_result t =
              trickle(b, std::chrono::microseconds(20), std::chrono::microseconds(200),
                      std::chrono::milliseconds(x.cfg.full ? 5000 : 2000));
          r.samples.push_back(t.pool_cores);
          char note[64];
          std::snprintf(note, sizeof note, "useful %.3f cores", t.useful_cores);
          r.note = note;
          add(std::move(r));
        }
      });
    }
  }
}

void write_traces(context& x) {
  if (!x.cfg.trace) return;
  const int threads = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  struct traced {
    const char* name;
    std::function<void(heist_backend&)> run;
  };
  const std::vector<std::int64_t> costs = heavy_tailed_costs(2000, 20000.0);
  const std::vector<traced> runs = {
      {"fib", [](heist_backend& b) { b.run([] { do_not_optimize(fib<heist_backend>(20)); }); }},
      {"uneven", [&](heist_backend& b) { b.run([&] { uneven_load<heist_backend>(costs); }); }},
      {"hotspot", [](heist_backend& b) { b.run([] { hotspot<heist_backend>(500, 50000); }); }},
      {"nqueens",
       [](heist_backend& b) {
         b.run([] { do_not_optimize(nqueens<heist_backend>(9, 0, 0, 0, 0)); });
       }},
  };
  for (const traced& t : runs) {
    heist_backend b(threads, heist::steal_policy::sticky_random, true);
    t.run(b);
    b.exec().wait_idle();
    const std::string base = x.cfg.out + "/trace-" + t.name;
    {
      std::ofstream json(base + ".json");
      b.exec().write_trace(json);
    }
    std::ifstream in(base + ".json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream svg(base + ".svg");
    svg << render_trace_svg(
        text, std::string("heist trace: ") + t.name + ", " + std::to_string(threads) + " workers");
    std::printf("trace: %s.json, %s.svg\n", base.c_str(), base.c_str());
  }
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  using namespace bench;
  context x;
  try {
    x.cfg = parse_config(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heist-bench: %s\n", e.what());
    return 2;
  }
  if (x.cfg.list) {
    std::printf(
        "workloads: fib nqueens uts matmul quicksort epcc1 epcc2 vecadd reduce uneven hotspot "
        "idle-stealing mixed arena-cost wavefront wavefront0 chain tree rerun pipeline "
        "pipeline-1us pipeline-heavy idle wakeup submit trickle\nbackends:");
    for (const auto& b : k_all_backends)
      std::printf(" %s", b.c_str());
    std::printf("\n");
    return 0;
  }
  std::filesystem::create_directories(x.cfg.out);
  const machine_info m = read_machine_info();
  print_header(m, x.cfg);
  fork_join_workloads(x);
  loop_workloads(x);
  seed_table_workloads(x);
  arena_workloads(x);
  flow_workloads(x);
  service_workloads(x);
  write_traces(x);
  print_table(x.results);
  write_report(x.cfg, m, x.results);
  return 0;
}
