// Micro-benchmarks of the Chase-Lev deque: owner push/pop, and steals under contention.
#include <benchmark/benchmark.h>

#include <atomic>
#include <thread>
#include <vector>

#include "heist/detail/chase_lev_deque.hpp"

using heist::detail::chase_lev_deque;
using heist::detail::steal_status;

namespace {
int g_items[1024];

void BM_OwnerPushPop(benchmark::State& state) {
  chase_lev_deque<int*> d;
  for (auto _ : state) {
    d.push(&g_items[0]);
    benchmark::DoNotOptimize(d.pop());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_OwnerPushPop);

void BM_OwnerPushPopBurst(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  chase_lev_deque<int*> d;
  for (auto _ : state) {
    for (int i = 0; i < n; ++i)
      d.push(&g_items[i & 1023]);
    for (int i = 0; i < n; ++i)
      benchmark::DoNotOptimize(d.pop());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_OwnerPushPopBurst)->Arg(64)->Arg(4096);

// One owner keeps the deque stocked; `thieves` threads steal from it.
void BM_StealUnderContention(benchmark::State& state) {
  static chase_lev_deque<int*>* shared = nullptr;
  static std::atomic<bool> stop{false};
  static std::thread owner;
  if (state.thread_index() == 0) {
    shared = new chase_lev_deque<int*>();
    stop = false;
    owner = std::thread([] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (shared->size() < 512) {
          for (int i = 0; i < 64; ++i)
            shared->push(&g_items[i]);
        }
      }
    });
  }
  std::int64_t taken = 0;
  for (auto _ : state) {
    auto r = shared->steal();
    if (r.status == steal_status::success) ++taken;
    benchmark::DoNotOptimize(r.value);
  }
  state.counters["success_rate"] =
      benchmark::Counter(static_cast<double>(taken) / static_cast<double>(state.iterations()));
  if (state.thread_index() == 0) {
    stop = true;
    owner.join();
    delete shared;
  }
}
BENCHMARK(BM_StealUnderContention)->Threads(1)->Threads(2)->UseRealTime();
}  // namespace
