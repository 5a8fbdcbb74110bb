// Parallel loops (EPCC, vector add, reduction) with every partitioner and schedule.
#include <algorithm>
#include <bit>
#include <memory>
#include <string>
#include <vector>

#include "../backends/loop_backends.hpp"
#include "../workloads/loops.hpp"
#if HEIST_BENCH_HAVE_TBB
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

const register_family k_registered{
    {20, "loops", {"epcc1", "epcc2", "vecadd", "reduce"}, &loop_workloads}};

}  // namespace
}  // namespace bench
