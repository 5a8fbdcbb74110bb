// Micro-benchmarks of the runtime: spawn+wait on one worker, nested fork-join, and the
// wake path (post into a sleeping pool until the task starts).
#include <benchmark/benchmark.h>

#include <heist/heist.hpp>

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>

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

// One spawn and one wait per iteration, on a worker (the spawn fast path).
void BM_SpawnWait(benchmark::State& state) {
  heist::executor ex(1);
  ex.submit([&] {
      for (auto _ : state) {
        heist::task_group g;
        int x = 0;
        g.run([&] { x = 1; });
        g.wait();
        benchmark::DoNotOptimize(x);
      }
    }).get();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SpawnWait)->UseRealTime();

// fib(n) with one spawn per call: time per spawn = time / (fib(n+1) - 1).
void BM_Fib(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto threads = static_cast<std::size_t>(state.range(1));
  heist::executor ex(threads);
  for (auto _ : state) {
    std::latch done(1);
    long r = 0;
    ex.post([&] {
      r = fib(n);
      done.count_down();
    });
    done.wait();
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Fib)->Args({20, 1})->Args({20, 2})->Unit(benchmark::kMicrosecond)->UseRealTime();

// Posting into a pool that has fallen asleep, until the task's first instruction.
void BM_WakeSleepingPool(benchmark::State& state) {
  heist::executor ex(2);
  for (auto _ : state) {
    state.PauseTiming();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::atomic<int> started{0};
    state.ResumeTiming();
    ex.post([&] {
      started.store(1, std::memory_order_release);
      started.notify_one();
    });
    started.wait(0, std::memory_order_acquire);
  }
}
BENCHMARK(BM_WakeSleepingPool)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Posting from outside while the pool is busy (the injection path, no wake-ups).
void BM_PostBusyPool(benchmark::State& state) {
  heist::executor ex(1);
  std::atomic<long> done{0};
  for (auto _ : state)
    ex.post([&] { done.fetch_add(1, std::memory_order_relaxed); });
  ex.wait_idle();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PostBusyPool)->UseRealTime();

}  // namespace
