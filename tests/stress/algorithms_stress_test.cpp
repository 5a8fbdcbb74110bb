// The parallel algorithms under races, repeated (kind: stress): feeder trees fed from every
// thread at once, sorts and scans started from several threads on one executor, combinable
// from several arenas at once. Counts prove every item ran exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

using heist_test::exactly_once;
using heist_test::scaled;

TEST(AlgorithmsStress, FeederTreesRunEveryNodeExactlyOnce) {
  // A random tree of up to 4 children per node, ids handed out by a counter: every id the
  // feeder made must run once.
  heist::executor ex(3);
  for (std::size_t round = 0; round < scaled(150); ++round) {
    const std::size_t limit = 20'000;
    exactly_once seen(limit);
    std::atomic<std::size_t> next_id{1};
    std::list<std::size_t> roots{0};
    heist::parallel_for_each(ex, roots, [&](std::size_t id, heist::feeder<std::size_t>& feed) {
      seen.hit(id);
      const std::size_t kids = (id * 2654435761u + round) % 5;
      for (std::size_t k = 0; k < kids; ++k) {
        const std::size_t child = next_id.fetch_add(1);
        if (child >= limit) return;
        feed.add(child);
      }
    });
    const std::size_t made = std::min(next_id.load(), limit);
    for (std::size_t i = 0; i < limit; ++i)
      ASSERT_EQ(seen.hits(i), i < made ? 1 : 0) << "id " << i << " round " << round;
  }
}

TEST(AlgorithmsStress, SortsAndScansFromSeveralThreadsAtOnce) {
  heist::executor ex(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (std::size_t round = 0; round < scaled(20); ++round) {
        std::vector<int> v(50'000 + rng() % 50'000);
        for (int& x : v)
          x = static_cast<int>(rng() % 1000);
        std::vector<int> expected = v;
        std::sort(expected.begin(), expected.end());
        heist::parallel_sort(ex, v.begin(), v.end());
        if (v != expected) failures++;
        std::vector<long> out(v.size());
        const long total = heist::parallel_scan(
            ex, heist::blocked_range<std::size_t>(0, v.size(), 256), 0L,
            [&](const heist::blocked_range<std::size_t>& r, long running, bool is_final) {
              for (std::size_t i = r.begin(); i != r.end(); ++i) {
                running += v[i];
                if (is_final) out[i] = running;
              }
              return running;
            },
            std::plus<>{});
        long running = 0;
        for (std::size_t i = 0; i < v.size(); ++i) {
          running += v[i];
          if (out[i] != running) {
            failures++;
            break;
          }
        }
        if (total != running) failures++;
      }
    });
  }
  for (auto& c : callers)
    c.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(AlgorithmsStress, CombinableFromSeveralArenasAtOnce) {
  heist::executor ex(3);
  heist::task_arena a(2, ex), b(2, ex);
  for (std::size_t round = 0; round < scaled(20); ++round) {
    heist::combinable<std::uint64_t> sum;
    std::thread other([&] {
      heist::parallel_for(b, std::uint64_t{0}, std::uint64_t{100'000},
                          [&](std::uint64_t i) { sum.local() += i; });
    });
    heist::parallel_for(a, std::uint64_t{0}, std::uint64_t{100'000},
                        [&](std::uint64_t i) { sum.local() += i; });
    heist::parallel_for(ex, std::uint64_t{0}, std::uint64_t{100'000},
                        [&](std::uint64_t i) { sum.local() += i; });
    other.join();
    ASSERT_EQ(sum.combine(std::plus<>{}), 3 * (100'000ull * 99'999 / 2)) << "round " << round;
  }
}

TEST(AlgorithmsStress, AFedItemThrowingOnAnyThreadCancelsTheWalkAndIsRethrown) {
  // Trees fed from four threads; one node deep inside throws. The call rethrows it, runs no
  // node twice, and the executor runs the next walk in full.
  heist::executor ex(3);
  for (std::size_t round = 0; round < scaled(100); ++round) {
    const std::size_t limit = 20'000;
    exactly_once seen(limit);
    std::atomic<std::size_t> next_id{1};
    const std::size_t thrower = 1000 + round * 97 % 5000;
    std::vector<std::size_t> roots{0};
    EXPECT_THROW(heist::parallel_for_each(ex, roots.begin(), roots.end(),
                                          [&](std::size_t id, heist::feeder<std::size_t>& feed) {
                                            seen.hit(id);
                                            if (id == thrower) throw std::runtime_error("node");
                                            for (int k = 0; k < 3; ++k) {
                                              const std::size_t child = next_id.fetch_add(1);
                                              if (child >= limit) return;
                                              feed.add(child);
                                            }
                                          }),
                 std::runtime_error)
        << "round " << round;
    ASSERT_EQ(seen.repeated(), 0u) << "round " << round;
  }
  std::atomic<int> after{0};
  std::vector<int> one{0};
  heist::parallel_for_each(ex, one.begin(), one.end(), [&](int depth, heist::feeder<int>& feed) {
    after.fetch_add(1);
    if (depth < 10) {
      feed.add(depth + 1);
      feed.add(depth + 1);
    }
  });
  EXPECT_EQ(after.load(), 2047);
}
