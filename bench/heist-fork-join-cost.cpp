// fib(30) as task_group forks, timed on a worker: the median of 15 runs, in ms, on stdout.
// scripts/analysis-cost builds it with and without the scalability analysis' hooks
// (-DHEIST_ANALYSIS=OFF) and alternates the two processes.
#include <heist/heist.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <string>
#include <vector>

namespace {

long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  heist::task_group g;
  g.run([&] { a = fib(n - 1); });
  const long b = fib(n - 2);
  g.wait();
  return a + b;
}

}  // namespace

int main(int argc, char** argv) {
  const long workers = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1;
  if (workers < 1 || workers > 4096) {
    std::fprintf(stderr, "usage: heist-fork-join-cost [workers: 1..4096]\n");
    return 2;
  }
  heist::executor ex(static_cast<std::size_t>(workers));
  std::vector<double> ms;
  for (int k = 0; k < 15; ++k) {
    std::latch done(1);
    long value = 0;
    double t = 0;
    ex.post([&] {
      const auto start = std::chrono::steady_clock::now();
      value = fib(30);
      t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      done.count_down();
    });
    done.wait();
    if (value != 832040) return 1;
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%.3f\n", ms[ms.size() / 2]);
  return 0;
}
