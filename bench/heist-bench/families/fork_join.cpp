// Fork-join workloads (fib, nqueens, skynet, integrate, uts, uts-deep, matmul, quicksort) on
// every fork-join backend.
#include <algorithm>
#include <bit>
#include <random>
#include <string>
#include <vector>

#include "../harness.hpp"
#include "../workloads/fork_join.hpp"

namespace bench {
namespace {

const std::vector<backend_key> k_fork_join_backends = {
    {"heist", true},    {"heist-random", true}, {"heist-rr", true}, {"heist-none", false},
    {"tbb", true},      {"omp", true},          {"serial", true},   {"lockpool", false},
    {"central", false}, {"rr-dealing", false}};

void fork_join_workloads(context& x) {
  // A serial reference (and an input) is made only for a workload that runs: the quicksort's
  // alone took 0.6 s of every heist-bench run. timed_case skips the others.
  auto wants = [&](const char* key) { return x.wants(key); };
  const int fib_n = x.cfg.full ? 32 : 30;
  const auto fib_expected = wants("fib") || wants("fib-invoke") || wants("fib-plain")
                                ? static_cast<std::uint64_t>(fib<serial_backend>(fib_n))
                                : 0;
  timed_case(x, "fork-join", "fib", "fib(" + std::to_string(fib_n) + ")", k_fork_join_backends,
             x.cfg.reps_or(7, 15), fib_expected, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               long v = 0;
               b.run([&] { v = fib<B>(fib_n); });
               return static_cast<std::uint64_t>(v);
             });

  // The same fib through parallel_invoke (heist's and oneTBB's; the other backends fork as in
  // fib): the call a oneTBB user writes first.
  const std::vector<backend_key> invoke_backends = {
      {"heist", true}, {"tbb", true}, {"serial", true}};
  timed_case(x, "fork-join", "fib-invoke", "fib(" + std::to_string(fib_n) + ") via parallel_invoke",
             invoke_backends, x.cfg.reps_or(7, 15), fib_expected, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               long v = 0;
               b.run([&] { v = fib_invoke<B>(fib_n); });
               return static_cast<std::uint64_t>(v);
             });

  // The same fib written the plain way (the group in the recursive function itself): what
  // a user writes from oneTBB's documentation. heist's and oneTBB's task_group; serial recurses.
  const std::vector<backend_key> plain_backends = {
      {"heist", true}, {"tbb", true}, {"serial", true}};
  timed_case(x, "fork-join", "fib-plain", "fib(" + std::to_string(fib_n) + ") written plain",
             plain_backends, x.cfg.reps_or(7, 15), fib_expected, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               long v = 0;
               b.run([&] { v = fib_plain<B>(fib_n); });
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

  const std::uint64_t sky_leaves = 1'000'000;
  timed_case(x, "fork-join", "skynet", "skynet(1e6)", k_fork_join_backends, x.cfg.reps_or(5, 11),
             sky_leaves * (sky_leaves - 1) / 2, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = skynet<B>(0, sky_leaves); });
               return v;
             });

  // 779,923 intervals over [0, 100], 3,345,223 over [0, 300]. The checksum is the result's bits.
  const double span = x.cfg.full ? 300.0 : 100.0;
  const auto area_bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  const std::uint64_t area_expected =
      wants("integrate")
          ? area_bits(integrate<serial_backend>(0, integrand(0), span, integrand(span), 0))
          : 0;
  timed_case(x, "fork-join", "integrate",
             "integrate(0.." + std::to_string(static_cast<int>(span)) + ")", k_fork_join_backends,
             x.cfg.reps_or(5, 11), area_expected, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               double v = 0;
               b.run([&] { v = integrate<B>(0, integrand(0), span, integrand(span), 0); });
               return area_bits(v);
             });

  uts_params up;
  up.max_depth = x.cfg.full ? 12 : 10;
  const std::uint64_t uts_expected = wants("uts") ? uts<serial_backend>(up.seed, 0, up) : 0;
  timed_case(x, "fork-join", "uts", "uts(geo,d=" + std::to_string(up.max_depth) + ")",
             k_fork_join_backends, x.cfg.reps_or(5, 11), uts_expected, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = uts<B>(up.seed, 0, up); });
               return v;
             });

  const binomial_params bp;
  const std::uint64_t deep_expected =
      wants("uts-deep") ? uts_binomial<serial_backend>(bp.seed, 0, bp) : 0;
  timed_case(x, "fork-join", "uts-deep", "uts(binomial,1e7)", k_fork_join_backends,
             x.cfg.reps_or(3, 7), deep_expected, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = uts_binomial<B>(bp.seed, 0, bp); });
               return v;
             });

  if (wants("matmul")) {
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
  }
  if (wants("quicksort")) {
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
}

const register_family k_registered{{10,
                                    "fork-join",
                                    {"fib", "fib-invoke", "fib-plain", "nqueens", "skynet",
                                     "integrate", "uts", "uts-deep", "matmul", "quicksort"},
                                    &fork_join_workloads}};

}  // namespace
}  // namespace bench
