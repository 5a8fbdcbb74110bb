// Micro-benchmarks of the Chase-Lev deque: owner push/pop, steals under contention, and a
// steal that ends a fence-free spell (barrier or the owner's acknowledgement).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "heist/detail/core/chase_lev_deque.hpp"
#include "heist/detail/wait/wait_context.hpp"

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

// A steal that ends a fence-free spell (chase_lev_deque.hpp): the owner pops without pause and
// goes back to fence-free pops after one fenced pop, so every steal first switches the mode.
// Arg: the deque's ack_spins; 0 makes every switch run the process-wide barrier, the default
// lets the popping owner acknowledge it. Time per steal (only the steal is timed).
void BM_StealEndingAFenceFreeSpell(benchmark::State& state) {
  heist::detail::enable_owner_counting();
  if (!heist::detail::g_owner_counting.load()) {
    state.SkipWithError("membarrier(PRIVATE_EXPEDITED) is not available");
    return;
  }
  chase_lev_deque<int*> d(1024);
  d.enable_fence_free_pops(1, 1, static_cast<std::uint32_t>(state.range(0)));
  std::atomic<bool> stop{false};
  std::thread owner([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      d.push(&g_items[0]);
      d.push(&g_items[1]);
      benchmark::DoNotOptimize(d.pop());
      if (d.size() > 512) {
        while (d.size() > 256)
          benchmark::DoNotOptimize(d.pop());
      }
    }
  });
  std::int64_t taken = 0;
  const std::uint64_t barriers = heist::detail::process_wide_barriers_run();
  for (auto _ : state) {
    // Untimed: 5 us for the owner to go fence-free again (one fenced pop, then a try that
    // sees no thief counted), so that the timed steal below switches the mode.
    const auto quiet_until = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
    while (std::chrono::steady_clock::now() < quiet_until) {
    }
    const auto start = std::chrono::steady_clock::now();
    auto r = d.steal();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r.status == steal_status::success) ++taken;
    benchmark::DoNotOptimize(r.value);
  }
  const auto ran = heist::detail::process_wide_barriers_run() - barriers;
  stop = true;
  owner.join();
  const auto steals = static_cast<double>(state.iterations());
  state.counters["success_rate"] = benchmark::Counter(static_cast<double>(taken) / steals);
  state.counters["barriers_per_steal"] = benchmark::Counter(static_cast<double>(ran) / steals);
}
BENCHMARK(BM_StealEndingAFenceFreeSpell)
    ->Arg(0)
    ->Arg(heist::detail::k_default_ack_spins)
    ->UseManualTime();
}  // namespace
