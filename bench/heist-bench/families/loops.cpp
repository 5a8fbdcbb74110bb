// Parallel loops (EPCC, vector add, reduction) with every partitioner and schedule.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../backends/loop_backends.hpp"
#include "../workloads/loops.hpp"
#if HEIST_BENCH_HAVE_TBB
#include <tbb/global_control.h>

#include "../backends/tbb_loops.hpp"
#endif
#if HEIST_BENCH_HAVE_OPENMP
#include "../backends/omp_loops.hpp"
#endif
#include "../harness.hpp"

namespace bench {
namespace {

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

// EPCC loop 2's rows cannot be split and its heavy rows (jmax = N) all cost the same, while
// every other row costs next to nothing. So no partitioner can give a thread fewer than
// ceil(heavy / threads) heavy rows, and the best it can do against heist static is that
// over the heavy rows of static's busiest block (block_of in partition_static.hpp): 34 / 55
// = 0.618 at two threads, 5 / 34 = 0.147 at sixteen.
double epcc2_best_split_over_static(const epcc_data& d, int threads) {
  constexpr std::size_t N = epcc_data::N;
  const auto parts = static_cast<std::size_t>(threads);
  std::size_t heavy = 0, busiest = 0;
  for (std::size_t k = 0; k < parts; ++k) {
    const std::size_t lo = N / parts * k + std::min(k, N % parts);
    const std::size_t hi = N / parts * (k + 1) + std::min(k + 1, N % parts);
    std::size_t in_block = 0;
    for (std::size_t i = lo; i < hi; ++i)
      in_block += d.jmax[i] == static_cast<int>(N) ? 1 : 0;
    heavy += in_block;
    busiest = std::max(busiest, in_block);
  }
  if (busiest == 0) return 1.0;
  return static_cast<double>((heavy + parts - 1) / parts) / static_cast<double>(busiest);
}

// Notes a's median over b's, "0.986x <what>", and when the two rows were timed in the same
// rounds their ratio round by round, "(round by round 0.988, p10..p90 0.95..1.02)".
void note_loop_ratio(result& a, const result& b, const std::string& what) {
  char s[160];
  const int n =
      std::snprintf(s, sizeof s, "%.3fx %s", a.stats.median / b.stats.median, what.c_str());
  const summary k = ratio_by_round(a, b);
  if (k.n > 0 && n > 0 && static_cast<std::size_t>(n) < sizeof s) {
    std::snprintf(s + n, sizeof s - static_cast<std::size_t>(n),
                  " (round by round %.3f, p10..p90 %.2f..%.2f)", k.median, k.p10, k.p90);
  }
  add_note(a, s);
}

// The figures the loops are judged by, on the rows they concern: heist auto against the
// best OpenMP schedule of the same run (the one of lowest median), and on loop 2 heist affinity
// against heist static, next to the best any partition of its rows can reach. Each as a ratio of
// medians and round by round.
void note_loop_ratios(context& x, const std::string& workload, const epcc_data* loop2) {
  for (result& r : x.results) {
    if (r.workload != workload || r.threads < 2) continue;
    if (r.backend == "heist auto") {
      const result* best = nullptr;
      for (const result& o : x.results) {
        if (o.workload == workload && o.threads == r.threads && o.backend.rfind("OpenMP", 0) == 0 &&
            (!best || o.stats.median < best->stats.median)) {
          best = &o;
        }
      }
      if (best == nullptr || best->stats.median <= 0) continue;
      note_loop_ratio(r, *best, "best OpenMP (" + best->backend + ")");
    } else if (r.backend == "heist affinity" && loop2 != nullptr) {
      const result* fixed = find_result(x.results, workload, "heist static", r.threads);
      if (fixed == nullptr || fixed->stats.median <= 0) continue;
      char b[64];
      std::snprintf(b, sizeof b, "heist static (a perfect split of the rows: %.3fx)",
                    epcc2_best_split_over_static(*loop2, r.threads));
      note_loop_ratio(r, *fixed, b);
    }
  }
}

// A sleep's real length on this machine (timer slack and wake-up included): the unit the
// sleeping-row workload reports its calls in.
double measured_sleep_ms(std::chrono::microseconds d) {
  std::vector<double> t;
  for (int k = 0; k < 15; ++k)
    t.push_back(time_once([d] { std::this_thread::sleep_for(d); }) * 1e3);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// EPCC loop 2's split at 16 threads (and the most configured) on any machine: its rows as
// sleeps (workloads/loops.hpp). Each row's note gives the time per call in heavy rows
// against the best any split can do, ceil(67 / threads).
template <class LoopCase>
void epcc2_split_workload(context& x, int most, LoopCase& loop_case) {
  std::vector<int> at = x.cfg.full ? std::vector<int>{2, 4, 8, 16} : std::vector<int>{most, 16};
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
#if HEIST_BENCH_HAVE_TBB
  // oneTBB caps its workers at the core count unless told otherwise.
  const tbb::global_control allow(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(at.back()));
#endif
  auto data = std::make_shared<epcc_data>();
  constexpr auto row = std::chrono::microseconds(400);
  constexpr int calls = 3;
  const std::string label = "EPCC loop 2, rows as 400 us sleeps (x3)";
  loop_case(
      "epcc2split", label, 1, x.cfg.reps_or(7, 11), nullptr,
      [data, row](auto& l) {
        return static_cast<double>(epcc2_sleeping_rows(l, *data, row, calls));
      },
      at);
  const double row_ms = measured_sleep_ms(row);
  std::size_t heavy = 0;
  for (int j : data->jmax)
    heavy += j == static_cast<int>(epcc_data::N) ? 1 : 0;
  for (result& r : x.results) {
    if (r.workload != label || r.threads < 1) continue;
    const std::size_t best =
        (heavy + static_cast<std::size_t>(r.threads) - 1) / static_cast<std::size_t>(r.threads);
    char b[96];
    std::snprintf(b, sizeof b, "%.2f rows per call (a perfect split: %zu)",
                  r.stats.median / calls / row_ms, best);
    add_note(r, b);
  }
}

void loop_workloads(context& x) {
  // Quick mode compares the schedules at the most threads only (plus serial); --full, or an
  // explicit --threads, sweeps every count.
  const int most = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  const bool sweep = x.cfg.full || x.cfg.threads_given;
  const std::vector<int> counts = sweep ? x.cfg.threads : std::vector<int>{1, most};
  // Serial runs at 1 thread only; in quick mode the schedules run at the most threads only,
  // and the balanced loops skip OpenMP dynamic,1 and dynamic,4 (a shared counter bumped per 1
  // or 4 elements of a 1e7 or 1e8 array, or of 2,000 small loops: 5 to 30 times slower than
  // any other schedule, and seconds of the quick run's budget better spent on more samples
  // of the EPCC loops).
  auto runs_at = [&](const std::string& workload, const std::string& k, int t) {
    if (k == "serial") return t == 1;
    if (!x.cfg.full && (workload == "vecadd" || workload == "smallloops" || workload == "reduce") &&
        (k == "omp-dynamic1" || k == "omp-dynamic4")) {
      return false;
    }
    return sweep || t == most;
  };
  auto loop_case = [&](const std::string& key, const std::string& label, std::size_t grain,
                       int reps, const std::function<void()>& setup, auto body,
                       const std::vector<int>& at = {}) {
    // The serial run gives the checksum every backend must reproduce exactly.
    double expected = 0;
    serial_loops ref(1);
    if (setup) setup();
    ref.run([&](serial_loops& l) { expected = body(l); });
    timed_case_with(
        x,
        [&](const std::string& k, int t, auto&& f) {
          return (at.empty() ? runs_at(key, k, t) : k != "serial") &&
                 with_loop_backend(k, t, grain, f);
        },
        at.empty() ? counts : at, "loops", key, label, k_loop_backends, reps,
        std::bit_cast<std::uint64_t>(expected), setup,
        [&](auto& b) {
          double v = 0;
          b.run([&](auto& l) { v = body(l); });
          return std::bit_cast<std::uint64_t>(v);
        });
  };

  if (x.wants("epcc1") || x.wants("epcc2")) {
    auto data = std::make_shared<epcc_data>();
    const int reps1 = 100;
    const int reps2 = x.cfg.full ? 100 : 3;
    // 11 samples even in quick mode: with 7, one slowed sample in a row of clustered heavy
    // rows (1.2 ms each, indivisible) moved a median by 5%, the margin the loops are judged
    // by.
    loop_case(
        "epcc1", "EPCC loop 1 (x" + std::to_string(reps1) + ")", 4, x.cfg.reps_or(11, 11),
        [data] { data->reset(); },
        [data, reps1](auto& l) {
          epcc_loop1(l, *data, reps1);
          return checksum(data->a);
        });
    loop_case(
        "epcc2", "EPCC loop 2 (x" + std::to_string(reps2) + ")", 4, x.cfg.reps_or(11, 9),
        [data] { data->reset(); },
        [data, reps2](auto& l) {
          epcc_loop2(l, *data, reps2);
          return checksum(data->c);
        });
    note_loop_ratios(x, "EPCC loop 1 (x" + std::to_string(reps1) + ")", nullptr);
    note_loop_ratios(x, "EPCC loop 2 (x" + std::to_string(reps2) + ")", data.get());
  }
  if (x.wants("epcc2split")) epcc2_split_workload(x, most, loop_case);
  if (x.wants("vecadd")) {
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
  if (x.wants("smallloops")) {
    // 2,000 loops of 2,048 iterations of a 1-2 ns body: what one loop call costs when there
    // is little to share (the median / 2,000 is the cost per call).
    const int calls = 2000;
    auto a = std::make_shared<std::vector<double>>(2048);
    loop_case(
        "smallloops", "2,000 loops of 2,048 x 1 ns", 1, x.cfg.reps_or(11, 15),
        [a] {
          for (std::size_t i = 0; i < a->size(); ++i)
            (*a)[i] = static_cast<double>(i);
        },
        [a, calls](auto& l) {
          small_loops(l, *a, calls);
          return checksum(*a);
        });
  }
  if (x.wants("reduce")) {
    const std::size_t n = 100'000'000;
    auto xs = std::make_shared<std::vector<double>>(n);
    // Multiples of 1/4 below 256: every partial sum is exact, so any order gives the same bits.
    for (std::size_t i = 0; i < n; ++i)
      (*xs)[i] = 0.25 * static_cast<double>(i % 1024);
    loop_case("reduce", "sum of 1e8 doubles", 100000, x.cfg.reps_or(5, 11), nullptr,
              [xs](auto& l) { return sum_doubles(l, *xs); });
  }
}

const register_family k_registered{
    {20,
     "loops",
     {"epcc1", "epcc2", "epcc2split", "vecadd", "smallloops", "reduce"},
     &loop_workloads}};

}  // namespace
}  // namespace bench
