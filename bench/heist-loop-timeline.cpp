// heist-loop-timeline: where a parallel loop call's time goes, per backend.
//
// heist-bench times whole loop calls; this tool says what the threads did inside one. Each
// call of an EPCC loop (workloads/loops.hpp, the same rows and loop policies as heist-bench)
// runs with a stamped body: every piece a thread runs records its start and end (the
// processor's time-stamp counter on x86-64, steady_clock elsewhere) into that thread's
// padded slot, and after the call the stamps give, per thread that ran anything:
//
//   start      from the call's start to the thread's first piece (how fast work spreads),
//              the mean over threads, the last thread's, and the calling thread's own
//   mid idle   the gaps between its first piece's start and its last piece's end that it
//              did not spend in the body (between leaves: splitting, giving, stealing)
//   end idle   from its last piece's end to the call's return (the tail and the join)
//   spread     between the first and the last thread to finish its last piece
//   eff        body time summed over threads / (threads x the call's time)
//
// Each is the median over the calls of a round; rounds alternate the backends so that a
// noisy spell of the host hits all of them. Every call also checks that its pieces covered
// the rows once: the threads' counts of rows, sums of (row + 1) and sums of their squares
// must add up to N, N(N+1)/2 and N(N+1)(2N+1)/6; a row run twice or never fails the tool
// (exit status 1), so the stamps can be trusted to cover the whole loop. heist backends
// also print the executor's counters per call (tasks, steals, steal attempts, parks).
//
//   heist-loop-timeline [--threads N] [--rounds R] [--calls C] [--loops 12] [--quick]
//
// --quick runs heist auto against OpenMP dynamic,1 / dynamic,4 and oneTBB auto only.
// BENCHMARKS.md has what it found on 2 and 16 cores.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "heist-bench/backends/loop_backends.hpp"
#include "heist-bench/workloads/loops.hpp"
#if HEIST_BENCH_HAVE_TBB
#include "heist-bench/backends/tbb_loops.hpp"
#endif
#if HEIST_BENCH_HAVE_OPENMP
#include "heist-bench/backends/omp_loops.hpp"
#endif

namespace {

constexpr std::size_t k_rows = bench::epcc_data::N;
constexpr int k_slots = 256;  // threads of all backends together (checked in my_slot)

// --- the clock -----------------------------------------------------------------------------
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

double ns_per_tick() {
  const auto c0 = std::chrono::steady_clock::now();
  const std::uint64_t t0 = ticks();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto c1 = std::chrono::steady_clock::now();
  const std::uint64_t t1 = ticks();
  return std::chrono::duration<double, std::nano>(c1 - c0).count() / static_cast<double>(t1 - t0);
}

// --- per-thread stamps ---------------------------------------------------------------------
// Written only by the thread that owns the slot during a call, read by the caller after the
// loop returned: the loop's join orders the two.
struct alignas(64) thread_stamps {
  std::uint64_t first, last, busy, pieces;
  std::uint64_t rows, row_sum, row_squares;  // the coverage check
};
thread_stamps g_stamps[k_slots];
std::atomic<int> g_next_slot{0};
thread_local int t_slot = -1;

int my_slot() noexcept {
  if (t_slot < 0) {
    // relaxed: only distinct numbers are needed, nothing is published through the counter.
    t_slot = g_next_slot.fetch_add(1, std::memory_order_relaxed);
    // Two threads on one slot would write its plain stamps at once: refuse instead.
    if (t_slot >= k_slots) {
      std::fprintf(stderr, "heist-loop-timeline: more than %d threads stamped pieces\n", k_slots);
      std::exit(2);
    }
  }
  return t_slot;
}

struct call_figures {
  double wall, busy, eff, start, start_max, caller_start, mid, end, spread, pieces;
};

double g_ns = 1.0;
bool g_lost_or_doubled = false;

template <class Policy, class Row>
call_figures one_call(Policy& p, int threads, Row&& row) {
  std::memset(static_cast<void*>(g_stamps), 0, sizeof g_stamps);
  const int caller = my_slot();
  const std::uint64_t t0 = ticks();
  p.for_range(k_rows, [&](std::size_t lo, std::size_t hi) {
    const std::uint64_t a = ticks();
    for (std::size_t i = lo; i < hi; ++i)
      row(i);
    const std::uint64_t b = ticks();
    thread_stamps& s = g_stamps[my_slot()];
    for (std::size_t i = lo; i < hi; ++i) {
      ++s.rows;
      s.row_sum += i + 1;
      s.row_squares += (i + 1) * (i + 1);
    }
    if (s.pieces == 0) s.first = a;
    s.last = b;
    s.busy += b - a;
    ++s.pieces;
  });
  const std::uint64_t t1 = ticks();
  std::uint64_t rows = 0, sum = 0, squares = 0;
  for (const thread_stamps& s : g_stamps) {
    rows += s.rows;
    sum += s.row_sum;
    squares += s.row_squares;
  }
  constexpr std::uint64_t n = k_rows;
  if (rows != n || sum != n * (n + 1) / 2 || squares != n * (n + 1) * (2 * n + 1) / 6)
    g_lost_or_doubled = true;

  call_figures f{};
  f.wall = static_cast<double>(t1 - t0) * g_ns;
  std::uint64_t first_done = ~std::uint64_t{0}, last_done = 0;
  int ran = 0;
  for (const thread_stamps& s : g_stamps) {
    if (s.pieces == 0) continue;
    ++ran;
    f.busy += static_cast<double>(s.busy) * g_ns;
    const double start = static_cast<double>(s.first - t0) * g_ns;
    f.start += start;
    f.start_max = std::max(f.start_max, start);
    f.mid += static_cast<double>(s.last - s.first - s.busy) * g_ns;
    f.end += static_cast<double>(t1 - s.last) * g_ns;
    first_done = std::min(first_done, s.last);
    last_done = std::max(last_done, s.last);
    f.pieces += static_cast<double>(s.pieces);
  }
  f.eff = f.busy / (threads * f.wall);
  if (g_stamps[caller].pieces != 0)
    f.caller_start = static_cast<double>(g_stamps[caller].first - t0) * g_ns;
  if (ran > 0) {
    f.start /= ran;
    f.mid /= ran;
    f.end /= ran;
    f.spread = static_cast<double>(last_done - first_done) * g_ns;
  }
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct heist_counters {
  double tasks = 0, stolen = 0, attempts = 0, parks = 0;
};
heist_counters counters_of(int threads) {
  const heist::executor_stats s =
      bench::shared_executor(threads, heist::steal_policy::sticky_random).stats();
  heist_counters c;
  c.tasks = static_cast<double>(s.executed());
  c.stolen = static_cast<double>(s.stolen());
  for (const auto& w : s.workers) {
    c.attempts += static_cast<double>(w.steal_attempts);
    c.parks += static_cast<double>(w.sleeps);
  }
  return c;
}

template <class Backend>
void measure(Backend& backend, int loop, int threads, int calls, bench::epcc_data& d) {
  std::vector<call_figures> fs;
  const bool is_heist = backend.name().rfind("heist", 0) == 0;
  const heist_counters before = is_heist ? counters_of(threads) : heist_counters{};
  backend.run([&](auto& policy) {
    for (int k = 0; k < calls; ++k) {
      if (loop == 1)
        fs.push_back(one_call(policy, threads, [&](std::size_t i) { bench::epcc_row1(d, i); }));
      else
        fs.push_back(one_call(policy, threads, [&](std::size_t i) { bench::epcc_row2(d, i); }));
    }
  });
  auto med = [&](double call_figures::*m, double scale) {
    std::vector<double> v;
    for (const call_figures& f : fs)
      v.push_back(f.*m * scale);
    return median(v);
  };
  std::printf(
      "loop%d T=%d %-18s wall %9.1f us  busy/T %9.1f  eff %.3f  start %6.1f (max %6.1f, caller "
      "%5.1f)  "
      "mid idle %7.1f  end idle %7.1f  spread %8.1f  pieces %4.0f\n",
      loop, threads, backend.name().c_str(), med(&call_figures::wall, 1e-3),
      med(&call_figures::busy, 1e-3 / threads), med(&call_figures::eff, 1.0),
      med(&call_figures::start, 1e-3), med(&call_figures::start_max, 1e-3),
      med(&call_figures::caller_start, 1e-3), med(&call_figures::mid, 1e-3),
      med(&call_figures::end, 1e-3), med(&call_figures::spread, 1e-3),
      med(&call_figures::pieces, 1.0));
  if (is_heist) {
    const heist_counters after = counters_of(threads);
    std::printf("    per call: tasks %.1f, stolen %.1f, steal attempts %.1f, parks %.2f\n",
                (after.tasks - before.tasks) / calls, (after.stolen - before.stolen) / calls,
                (after.attempts - before.attempts) / calls, (after.parks - before.parks) / calls);
  }
  std::fflush(stdout);
}

int usage(const char* why) {
  std::fprintf(stderr,
               "heist-loop-timeline: %s\nusage: heist-loop-timeline [--threads N] [--rounds R] "
               "[--calls C] [--loops 12] [--quick]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int rounds = 3;
  int calls = 200;
  std::string loops = "12";
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto number = [&](int& out) {
      if (i + 1 >= argc) return false;
      out = std::atoi(argv[++i]);
      return out > 0;
    };
    if (arg == "--threads") {
      if (!number(threads)) return usage("--threads needs a positive number");
    } else if (arg == "--rounds") {
      if (!number(rounds)) return usage("--rounds needs a positive number");
    } else if (arg == "--calls") {
      if (!number(calls)) return usage("--calls needs a positive number");
    } else if (arg == "--loops") {
      if (i + 1 >= argc) return usage("--loops needs 1, 2 or 12");
      loops = argv[++i];
      if (loops.empty() || loops.find_first_not_of("12") != std::string::npos)
        return usage("--loops takes the digits 1 and 2 (EPCC loop 1, loop 2)");
    } else if (arg == "--quick") {
      quick = true;
    } else {
      return usage(("unknown argument " + arg).c_str());
    }
  }

  g_ns = ns_per_tick();
  std::printf(
      "heist-loop-timeline: %d threads (hardware %u), %d rounds of %d calls, %.4f ns per "
      "tick; medians over the calls\n",
      threads, std::thread::hardware_concurrency(), rounds, calls, g_ns);
  bench::epcc_data d;
  bench::heist_loops heist_auto(threads, bench::heist_loops::kind::automatic);
  bench::heist_loops heist_simple(threads, bench::heist_loops::kind::simple, 4);
  bench::heist_loops heist_static(threads, bench::heist_loops::kind::fixed);
#if HEIST_BENCH_HAVE_OPENMP
  bench::omp_loops omp_dynamic1(threads, omp_sched_dynamic, 1);
  bench::omp_loops omp_dynamic4(threads, omp_sched_dynamic, 4);
  bench::omp_loops omp_static(threads, omp_sched_static, 0);
#endif
#if HEIST_BENCH_HAVE_TBB
  bench::tbb_loops tbb_auto(threads, false);
#endif
  for (const char digit : loops) {
    const int loop = digit - '0';
    for (int r = 0; r < rounds; ++r) {
      measure(heist_auto, loop, threads, calls, d);
      if (!quick) {
        measure(heist_simple, loop, threads, calls, d);
        measure(heist_static, loop, threads, calls, d);
      }
#if HEIST_BENCH_HAVE_OPENMP
      measure(omp_dynamic1, loop, threads, calls, d);
      measure(omp_dynamic4, loop, threads, calls, d);
      if (!quick) measure(omp_static, loop, threads, calls, d);
#endif
#if HEIST_BENCH_HAVE_TBB
      measure(tbb_auto, loop, threads, calls, d);
#endif
    }
  }
  if (g_lost_or_doubled) {
    std::printf("heist-loop-timeline: a row ran twice or never in some call\n");
    return 1;
  }
  return 0;
}
