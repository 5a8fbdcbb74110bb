// Will it scale? heist::analyze on a program whose parallelism is too low (a parallel loop,
// then a serial pass over its results), and on the same program with the pass made a
// parallel reduction. Built and run by the tests (ctest example.scalability).
#include <heist/heist.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

namespace {

double work_on(std::size_t i) {  // some arithmetic per element
  double x = static_cast<double>(i);
  for (int k = 0; k < 200; ++k)
    x = std::sqrt(x + k);
  return x;
}

}  // namespace

int main() {
  const std::size_t n = 200'000;
  std::vector<double> v(n);
  heist::executor ex(2);

  // [serial-tail]
  const heist::scalability_report before = heist::analyze(ex, [&] {
    heist::parallel_for(std::size_t{0}, n, [&](std::size_t i) { v[i] = work_on(i); });
    double total = 0;
    for (std::size_t i = 0; i < n; ++i)  // serial: every element again, on one thread
      total += work_on(static_cast<std::size_t>(v[i]));
    std::printf("total %.1f\n", total);
  });
  // [serial-tail]

  // [fixed]
  // simple_partitioner: pieces of 2,000 whatever the machine, so the report shows the loops'
  // parallelism on a big one (the auto partitioner splits only as far as this run's threads
  // needed, and its span is that of the pieces it made).
  using range = heist::blocked_range<std::size_t>;
  const heist::scalability_report after = heist::analyze(ex, [&] {
    heist::parallel_for(
        range(0, n, 2000),
        [&](const range& r) {
          for (std::size_t i = r.begin(); i != r.end(); ++i)
            v[i] = work_on(i);
        },
        heist::simple_partitioner{});
    const double total = heist::parallel_reduce(
        range(0, n, 2000), 0.0,
        [&](const range& r, double s) {
          for (std::size_t i = r.begin(); i != r.end(); ++i)
            s += work_on(static_cast<std::size_t>(v[i]));
          return s;
        },
        std::plus<>(), heist::simple_partitioner{});
    std::printf("total %.1f\n", total);
  });
  // [fixed]

  for (const auto* r : {&before, &after}) {
    std::printf(
        "work %.1f ms, span %.1f ms: parallelism %.1f; predicted speedup on 16 threads "
        "%.1f, on 64 %.1f\n",
        static_cast<double>(r->work.count()) * 1e-6, static_cast<double>(r->span.count()) * 1e-6,
        r->parallelism(), r->predicted_speedup(16), r->predicted_speedup(64));
  }
  std::ofstream("scalability.svg") << [&] {
    std::ostringstream svg;
    after.write_svg(svg);
    return svg.str();
  }();
  // The serial pass is half the work: the parallelism is below 2 before, and well above after.
  const bool ok = before.parallelism() < 2.2 && after.parallelism() > 2.0 * before.parallelism();
  std::printf("%s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
