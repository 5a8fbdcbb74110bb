// Races on the Chase-Lev deque on real hardware, after crossbeam-deque's tests/lifo.rs:
// every item is taken exactly once (kind: stress).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "heist/detail/core/chase_lev_deque.hpp"
#include "heist/detail/platform/cpu_limits.hpp"
#include "heist/detail/wait/wait_context.hpp"
#include "test_support.hpp"

using heist::detail::chase_lev_deque;
using heist::detail::steal_status;

namespace {

struct tally {
  explicit tally(std::size_t n) : taken(std::make_unique<std::atomic<std::uint8_t>[]>(n)), size(n) {
    for (std::size_t i = 0; i < n; ++i)
      taken[i].store(0, std::memory_order_relaxed);
  }
  void take(std::size_t* p, std::size_t* base) {
    taken[static_cast<std::size_t>(p - base)].fetch_add(1, std::memory_order_relaxed);
  }
  void expect_each_once() const {
    std::size_t missing = 0, duplicated = 0;
    for (std::size_t i = 0; i < size; ++i) {
      const auto v = taken[i].load();
      if (v == 0) ++missing;
      if (v > 1) ++duplicated;
    }
    EXPECT_EQ(missing, 0u);
    EXPECT_EQ(duplicated, 0u);
  }
  std::unique_ptr<std::atomic<std::uint8_t>[]> taken;
  std::size_t size;
};

void spin_ns(std::int64_t ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Fence-free pops (chase_lev_deque.hpp) need the process-wide barrier, which the first
// executor registers.
bool fence_free_pops_available() {
  heist::detail::enable_owner_counting();
  return heist::detail::g_owner_counting.load();
}

// The short-deque races need the owner and the thief running at once: on one CPU the thief
// only runs once the owner has popped every element, and no race happens.
bool two_cpus_to_race_on() {
  const auto cpus = heist::detail::affinity_cpu_count();
  return !cpus || *cpus >= 2;
}

// retry_pops != 0: the deque's fence-free mode, with the owner trying to go back to it after
// that many fenced pops, never waiting longer (so the mode switches all the time).
void run_owner_vs_thieves(std::size_t items, int thieves, std::int64_t initial_capacity,
                          bool owner_pops, std::uint32_t retry_pops = 0) {
  std::vector<std::size_t> storage(items);
  chase_lev_deque<std::size_t*> d(initial_capacity);
  d.enable_fence_free_pops(retry_pops, retry_pops);
  tally t(items);
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int k = 0; k < thieves; ++k) {
    threads.emplace_back([&] {
      for (;;) {
        auto r = d.steal();
        if (r.status == steal_status::success) {
          t.take(r.value, storage.data());
        } else if (r.status == steal_status::empty && done.load(std::memory_order_acquire)) {
          if (d.empty()) break;
        }
      }
    });
  }
  for (std::size_t i = 0; i < items; ++i) {
    d.push(&storage[i]);
    if (owner_pops && i % 3 == 0) {
      if (std::size_t* p = d.pop()) t.take(p, storage.data());
    }
  }
  if (owner_pops) {
    while (std::size_t* p = d.pop())
      t.take(p, storage.data());
  }
  done.store(true, std::memory_order_release);
  for (auto& th : threads)
    th.join();
  t.expect_each_once();
}

// One owner, one thief, deques of one to three elements per round; the owner's pops start
// after a random delay below `late_ns` (every other round; below 300 ns otherwise) and are
// spaced below `gap_ns` (or 100 ns), so that the thief's switch and steal land before,
// between and after them. Every pushed element is taken exactly once. The owner ends early
// (at a multiple of 4096 rounds) once 60 s have passed, so that a slow machine bounds the
// test's length rather than its timeout; it prints how many rounds ran.
// `ack_spins` as in enable_fence_free_pops: 0 makes every switch take the barrier path.
// Returns how many elements the thief took.
std::size_t race_a_thief_once(std::size_t rounds, std::uint64_t late_ns, std::uint64_t gap_ns,
                              std::uint32_t ack_spins) {
  chase_lev_deque<std::size_t*> d(4);
  d.enable_fence_free_pops(1, 1, ack_spins);
  std::vector<std::size_t> storage(rounds * 3);
  tally t(storage.size());
  std::atomic<std::size_t> round_started{0};
  std::atomic<std::size_t> thief_done{0};
  std::atomic<std::size_t> stolen{0};
  // relaxed: written before, and read after, the round_started store and load that pair.
  std::atomic<std::size_t> last_round{rounds};
  std::thread thief([&] {
    for (std::size_t r = 1; r <= rounds; ++r) {
      heist_test::spin_then_yield_until(
          [&] { return round_started.load(std::memory_order_acquire) >= r; });
      if (r > last_round.load(std::memory_order_relaxed)) break;
      for (int tries = 0; tries < 4; ++tries) {
        auto s = d.steal();
        if (s.status == steal_status::success) {
          t.take(s.value, storage.data());
          stolen.fetch_add(1, std::memory_order_relaxed);
        } else if (s.status == steal_status::empty) {
          break;
        }
      }
      thief_done.store(r, std::memory_order_release);
    }
  });
  std::uint64_t rng = 88172645463325252ULL;
  const std::uint64_t barriers_before = heist::detail::process_wide_barriers_run();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (std::size_t r = 1; r <= rounds; ++r) {
    if (r % 4096 == 0 && std::chrono::steady_clock::now() > deadline) {
      last_round.store(r - 1, std::memory_order_relaxed);
      round_started.store(r, std::memory_order_release);  // wakes the thief to leave
      break;
    }
    const std::size_t n = 1 + r % 3;
    for (std::size_t i = 0; i < n; ++i)
      d.push(&storage[(r - 1) * 3 + i]);
    round_started.store(r, std::memory_order_release);
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    spin_ns(static_cast<std::int64_t>((rng & 1) != 0 ? rng % late_ns : rng % 300));
    while (std::size_t* p = d.pop()) {
      t.take(p, storage.data());
      spin_ns(static_cast<std::int64_t>((rng & 2) != 0 ? (rng >> 16) % gap_ns : (rng >> 16) % 100));
    }
    heist_test::spin_then_yield_until(
        [&] { return thief_done.load(std::memory_order_acquire) >= r; });
    EXPECT_TRUE(d.empty());
  }
  thief.join();
  // Only the pushed slots count: 1 + r % 3 per round.
  const std::size_t rounds_run = last_round.load();
  std::size_t missing = 0, duplicated = 0, pushed_total = 0;
  for (std::size_t r = 1; r <= rounds_run; ++r) {
    for (std::size_t i = 0; i < 3; ++i) {
      const auto v = t.taken[(r - 1) * 3 + i].load();
      const bool pushed = i < 1 + r % 3;
      pushed_total += pushed ? 1 : 0;
      if (pushed && v == 0) ++missing;
      if (v > (pushed ? 1 : 0)) ++duplicated;
    }
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(duplicated, 0u);
  // The thief's switches took the owner's acknowledgement or, when no pop came in time, a
  // barrier: how many of the latter, to show that both paths ran.
  std::printf("the thief took %zu of %zu elements in %zu of %zu rounds; %llu barriers\n",
              stolen.load(), pushed_total, rounds_run, rounds,
              static_cast<unsigned long long>(heist::detail::process_wide_barriers_run() -
                                              barriers_before));
  return stolen.load();
}

// race_a_thief_once, again (up to three times) while the thief got no element: on a machine
// loaded by other processes the owner can pop every round's elements before the thief's
// thread gets a CPU, and such a run raced nothing (each run still checks exactly-once).
void race_a_thief_on_short_deques(std::size_t rounds, std::uint64_t late_ns, std::uint64_t gap_ns,
                                  std::uint32_t ack_spins) {
  std::size_t stolen = 0;
  for (int attempt = 0; attempt < 3 && stolen == 0; ++attempt)
    stolen = race_a_thief_once(rounds, late_ns, gap_ns, ack_spins);
  EXPECT_GT(stolen, 0u) << "the thief never got an element in three runs: no race was run";
}

}  // namespace

TEST(DequeStress, OwnerAgainstSeveralThievesMillionItems) {
  run_owner_vs_thieves(heist_test::scaled(1000000), 3, 256, true);
}

TEST(DequeStress, OnlyThievesDrainAMillionItems) {
  run_owner_vs_thieves(heist_test::scaled(1000000), 3, 256, false);
}

TEST(DequeStress, GrowthUnderContentionWithTwoThieves) {
  // Capacity 2: the ring grows many times while thieves read it (the grow publication
  // race, R3/S4, and the stale-array bug, P4).
  for (int round = 0; round < 20; ++round) {
    run_owner_vs_thieves(heist_test::scaled(50000), 2, 2, true);
  }
}

TEST(DequeStress, LastElementRaceBetweenPopAndSteal) {
  // One element, the owner pops while a thief steals: exactly one of them gets it
  // (bug 1 of naive versions: both take it when the T4/S2 fences are missing).
  const std::size_t rounds = heist_test::scaled(100000);
  chase_lev_deque<std::size_t*> d(2);
  std::vector<std::size_t> storage(rounds);
  std::atomic<std::size_t> round_started{0};
  std::atomic<std::size_t> thief_done{0};
  std::atomic<std::size_t> owner_wins{0}, thief_wins{0}, both{0};
  std::thread thief([&] {
    for (std::size_t r = 1; r <= rounds; ++r) {
      heist_test::spin_then_yield_until(
          [&] { return round_started.load(std::memory_order_acquire) >= r; });
      bool got = false;
      for (int tries = 0; tries < 4 && !got; ++tries) {
        auto s = d.steal();
        if (s.status == steal_status::success) {
          got = true;
          if (s.value != &storage[r - 1]) both.fetch_add(1);  // an old element: a duplicate
          thief_wins.fetch_add(1);
        } else if (s.status == steal_status::empty) {
          break;
        }
      }
      thief_done.store(r, std::memory_order_release);
    }
  });
  for (std::size_t r = 1; r <= rounds; ++r) {
    d.push(&storage[r - 1]);
    round_started.store(r, std::memory_order_release);
    std::size_t* p = d.pop();
    if (p != nullptr) owner_wins.fetch_add(1);
    heist_test::spin_then_yield_until(
        [&] { return thief_done.load(std::memory_order_acquire) >= r; });
    if (p == nullptr) EXPECT_TRUE(d.empty());
  }
  thief.join();
  EXPECT_EQ(both.load(), 0u);
  EXPECT_EQ(owner_wins.load() + thief_wins.load(), rounds);
}

// Fence-free pops: the same races while the mode switches all the time (the owner goes back
// to fence_free after one fenced pop; every thief that would take an element from it ends
// the spell with a barrier).
TEST(DequeStress, FenceFreePopsOwnerAgainstSeveralThieves) {
  if (!fence_free_pops_available()) GTEST_SKIP() << "membarrier is not available";
  run_owner_vs_thieves(heist_test::scaled(300000), 3, 256, true, 1);
}

TEST(DequeStress, FenceFreePopsWithGrowthUnderContention) {
  if (!fence_free_pops_available()) GTEST_SKIP() << "membarrier is not available";
  for (int round = 0; round < 10; ++round) {
    run_owner_vs_thieves(heist_test::scaled(30000), 2, 2, true, 1);
  }
}

TEST(DequeStress, FenceFreePopsRaceAThiefOnShortDeques) {
  // The case the fence exists for: the thief takes elements from the top while the owner
  // pops from the bottom, so they meet at the owner's slot (deque [A, B]: the thief has taken
  // A, the owner pops B without a fence, the thief reads a bottom that still says two). A
  // thief's barrier takes microseconds: pops start up to 20 us late, spaced up to 5 us.
  if (!fence_free_pops_available()) GTEST_SKIP() << "membarrier is not available";
  if (!two_cpus_to_race_on()) GTEST_SKIP() << "needs two CPUs to race on";
  race_a_thief_on_short_deques(heist_test::scaled(20000), 20000, 5000,
                               heist::detail::k_default_ack_spins);
}

TEST(DequeStress, FenceFreePopsRaceAThiefOnShortDequesTightly) {
  // The same with every pop within a few hundred nanoseconds of the thief's switch, where a
  // thief that skipped its barrier would read a bottom still in the owner's store buffer.
  // The thief never waits for the owner's acknowledgement here, so every switch races the
  // barrier path. Checked with the barrier removed: duplicates in 8 and 10 of 10 runs on one
  // 2-vCPU VM, 4 of 10 on another (where the code before the acknowledgement caught it in 0
  // of 10); the model check, tests/model, catches that mutant
  // every time.
  if (!fence_free_pops_available()) GTEST_SKIP() << "membarrier is not available";
  if (!two_cpus_to_race_on()) GTEST_SKIP() << "needs two CPUs to race on";
  race_a_thief_on_short_deques(heist_test::scaled(1000000), 300, 100, 0);
}

TEST(DequeStress, FenceFreePopsRaceAThiefOnShortDequesTightlyWithAcknowledgements) {
  // The same races with the thief waiting for the owner's acknowledgement, as in executors:
  // most switches go ahead on a pop that read switching, the others on a barrier.
  if (!fence_free_pops_available()) GTEST_SKIP() << "membarrier is not available";
  if (!two_cpus_to_race_on()) GTEST_SKIP() << "needs two CPUs to race on";
  race_a_thief_on_short_deques(heist_test::scaled(1000000), 300, 100,
                               heist::detail::k_default_ack_spins);
}
