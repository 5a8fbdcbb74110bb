// The first program of docs/guide/getting-started.md and the README: a parallel loop, a
// parallel reduction and a task_group, on the default executor. Built and run by the tests.
#include <heist/heist.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

// Fork-join: the group's task may be stolen by an idle worker; wait() helps meanwhile.
long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  heist::task_group g;
  g.run([&] { a = fib(n - 1); });
  const long b = fib(n - 2);
  g.wait();
  return a + b;
}

int main() {
  // A loop over indices: each i once, in parallel.
  std::vector<double> v(1'000'000);
  heist::parallel_for(std::size_t{0}, v.size(),
                      [&](std::size_t i) { v[i] = std::sqrt(double(i)); });

  // A reduction over a range: each piece sums its part, join adds the parts in order.
  const double sum = heist::parallel_reduce(
      heist::blocked_range<std::size_t>(0, v.size()), 0.0,
      [&](const heist::blocked_range<std::size_t>& r, double s) {
        for (std::size_t i = r.begin(); i != r.end(); ++i)
          s += v[i];
        return s;
      },
      [](double a, double b) { return a + b; });

  const long f = fib(25);
  std::printf("sum of square roots: %.0f, fib(25) = %ld\n", sum, f);
  return f == 75025 && sum > 6.6e8 && sum < 6.7e8 ? 0 : 1;
}
