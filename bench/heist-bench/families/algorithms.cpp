// The parallel algorithms oneTBB and Rayon users reach for: sort (ints and strings), scan,
// for_each with a feeder over a tree found as it is walked, and a histogram in per-thread
// bins (combinable). heist against oneTBB, libstdc++'s std::execution::par (sort, scan) and
// the serial algorithm.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../backends/algorithm_backends.hpp"
#include "../harness.hpp"
#include "../workloads/algorithms.hpp"

namespace bench {
namespace {

const std::vector<backend_key> k_algorithm_backends = {
    {"heist", true}, {"tbb", true}, {"std-par", true}, {"serial", true}};

template <class F>
bool with_algorithm_backend(const std::string& key, const std::string& workload, int threads,
                            F&& f) {
  if (key == "heist") {
    heist_algorithms b(threads);
    f(b);
  } else if (key == "serial") {
    serial_algorithms b(threads);
    f(b);
#if HEIST_BENCH_HAVE_TBB
  } else if (key == "tbb") {
    tbb_algorithms b(threads);
    f(b);
#if HEIST_BENCH_HAVE_STD_PAR
  } else if (key == "std-par" && std_par_algorithms::has(workload)) {
    std_par_algorithms b(threads);
    f(b);
#endif
#endif
  } else {
    return false;
  }
  return true;
}

void algorithm_workloads(context& x) {
  auto algorithm_case = [&](const std::string& key, const std::string& label, int reps,
                            std::uint64_t expected, const std::function<void()>& setup, auto body) {
    timed_case_with(
        x,
        [&](const std::string& k, int t, auto&& f) { return with_algorithm_backend(k, key, t, f); },
        x.cfg.threads, "algorithms", key, label, k_algorithm_backends, reps, expected, setup,
        [&](auto& b) {
          std::uint64_t v = 0;
          b.run([&](auto& a) { v = body(a); });
          return v;
        });
  };

  if (x.wants("sort-int")) {
    const auto input = std::make_shared<const std::vector<int>>(random_ints(10'000'000));
    auto v = std::make_shared<std::vector<int>>();
    std::vector<int> ref = *input;
    std::sort(ref.begin(), ref.end());
    algorithm_case(
        "sort-int", "sort 1e7 ints", x.cfg.reps_or(5, 11), sample_fingerprint(ref, hash_int),
        [input, v] { *v = *input; },
        [v](auto& a) {
          a.sort(*v);
          return sample_fingerprint(*v, hash_int);
        });
  }
  if (x.wants("sort-string")) {
    const auto input = std::make_shared<const std::vector<std::string>>(random_strings(1'000'000));
    auto v = std::make_shared<std::vector<std::string>>();
    std::vector<std::string> ref = *input;
    std::sort(ref.begin(), ref.end());
    algorithm_case(
        "sort-string", "sort 1e6 strings", x.cfg.reps_or(5, 11),
        sample_fingerprint(ref, hash_string), [input, v] { *v = *input; },
        [v](auto& a) {
          a.sort(*v);
          return sample_fingerprint(*v, hash_string);
        });
  }
  if (x.wants("scan")) {
    const std::size_t n = 100'000'000;
    const auto in = std::make_shared<const std::vector<std::uint32_t>>(scan_input(n));
    auto out = std::make_shared<std::vector<std::uint64_t>>(n);
    serial_algorithms ref(1);
    const std::uint64_t total = ref.scan(*in, *out);
    algorithm_case("scan", "inclusive scan of 1e8 ints", x.cfg.reps_or(5, 11),
                   scan_fingerprint(total, *out), nullptr, [in, out](auto& a) {
                     const std::uint64_t t = a.scan(*in, *out);
                     return scan_fingerprint(t, *out);
                   });
  }
  if (x.wants("feeder-tree")) {
    const tree_shape shape;
    algorithm_case("feeder-tree", "for_each + feeder, tree of 1.06e6 nodes", x.cfg.reps_or(5, 11),
                   tree_nodes_serial(shape), nullptr, [shape](auto& a) { return a.tree(shape); });
  }
  if (x.wants("histogram")) {
    const auto data =
        std::make_shared<const std::vector<std::uint8_t>>(histogram_input(50'000'000));
    serial_algorithms ref(1);
    algorithm_case("histogram", "histogram of 5e7 bytes, combinable bins", x.cfg.reps_or(5, 11),
                   histogram_fingerprint(ref.histogram(*data)), nullptr,
                   [data](auto& a) { return histogram_fingerprint(a.histogram(*data)); });
  }
}

const register_family k_registered{{25,
                                    "algorithms",
                                    {"sort-int", "sort-string", "scan", "feeder-tree", "histogram"},
                                    &algorithm_workloads}};

}  // namespace
}  // namespace bench
