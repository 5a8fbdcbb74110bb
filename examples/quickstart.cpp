// The README's example: a pool, a future, a fork-join group and parallel_invoke.
#include <heist/heist.hpp>

#include <cstdio>
#include <stdexcept>
#include <vector>

long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  heist::task_group g;             // on the executor running this task
  g.run([&] { a = fib(n - 1); });  // may be stolen by an idle worker
  const long b = fib(n - 2);       // meanwhile, this thread goes on
  g.wait();                        // helps until the child is done
  return a + b;
}

int main() {
  heist::executor pool(4);  // or heist::default_executor()

  heist::future<long> f = pool.submit([] { return fib(25); });
  std::printf("fib(25) = %ld\n", f.get());

  std::vector<int> squares(8);
  heist::task_group group(pool);
  for (int i = 0; i < 8; ++i)
    group.run([&squares, i] { squares[i] = i * i; });
  group.wait();
  std::printf("squares[7] = %d\n", squares[7]);

  try {
    heist::parallel_invoke([] { /* fine */ }, [] { throw std::runtime_error("one failed"); });
  } catch (const std::exception& e) {
    std::printf("caught: %s\n", e.what());
  }

  const heist::executor_stats s = pool.stats();
  std::printf("tasks run: %llu, stolen: %llu\n", static_cast<unsigned long long>(s.executed()),
              static_cast<unsigned long long>(s.stolen()));
  return squares[7] == 49 && s.executed() > 0 ? 0 : 1;
}
