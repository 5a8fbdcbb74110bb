// blocked_range and parallel_for with every partitioner
// (kind: requirement, boundary).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/detail/loops/partition_affinity.hpp"
#include "heist/heist.hpp"
#include "test_support.hpp"

using heist::blocked_range;

// --- blocked_range ------------------------------------------------------------------------
TEST(BlockedRange, Basics) {
  blocked_range<int> r(3, 13, 4);
  EXPECT_EQ(r.begin(), 3);
  EXPECT_EQ(r.end(), 13);
  EXPECT_EQ(r.size(), 10u);
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.grainsize(), 4u);
  EXPECT_TRUE(r.is_divisible());
  blocked_range<int> right(r, heist::split{});
  EXPECT_EQ(r.begin(), 3);
  EXPECT_EQ(r.end(), 8);
  EXPECT_EQ(right.begin(), 8);
  EXPECT_EQ(right.end(), 13);
  EXPECT_TRUE(blocked_range<int>(0, 4, 4).is_divisible() == false);
}

TEST(BlockedRange, GrainsizeZeroIsRejectedNamingTheArgument) {
  try {
    blocked_range<int> r(0, 10, 0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("grainsize"), std::string::npos) << e.what();
  }
}

TEST(BlockedRange, ReversedIsEmpty) {
  blocked_range<int> r(10, 3);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.size(), 0u);
  EXPECT_FALSE(r.is_divisible());
}

TEST(BlockedRange, WideSignedRangesDoNotOverflow) {
  blocked_range<std::int32_t> r(INT32_MIN, INT32_MAX);
  EXPECT_EQ(r.size(), 4294967295u);
  blocked_range<std::int32_t> right(r, heist::split{});
  EXPECT_EQ(r.size() + right.size(), 4294967295u);
  EXPECT_EQ(r.end(), right.begin());
}

TEST(BlockedRange, IteratorRanges) {
  std::vector<int> v(100);
  blocked_range<std::vector<int>::iterator> r(v.begin(), v.end(), 10);
  EXPECT_EQ(r.size(), 100u);
  blocked_range<std::vector<int>::iterator> right(r, heist::split{});
  EXPECT_EQ(r.end() - v.begin(), 50);
  EXPECT_EQ(right.end(), v.end());
}

// --- parallel_for ---------------------------------------------------------------------------
namespace {

using hit_counter = heist_test::exactly_once;

const std::size_t k_sizes[] = {0, 1, 2, 3, 7, 97, 1009, 10007, 1000003};

template <class Partitioner>
void every_index_once(heist::executor& ex, Partitioner&& p, std::size_t grain) {
  for (std::size_t n : k_sizes) {
    hit_counter c(n);
    heist::parallel_for(
        ex, blocked_range<std::size_t>(0, n, grain),
        [&](const blocked_range<std::size_t>& r) {
          for (std::size_t i = r.begin(); i != r.end(); ++i)
            c.hit(i);
        },
        p);
    EXPECT_EQ(c.wrong(), 0u) << "n = " << n;
  }
}

}  // namespace

TEST(ParallelFor, IndexFormVisitsEveryIndexOnce) {
  heist::executor ex(3);
  for (std::size_t n : k_sizes) {
    hit_counter c(n);
    heist::parallel_for(ex, std::size_t{0}, n, [&](std::size_t i) { c.hit(i); });
    EXPECT_EQ(c.wrong(), 0u) << "n = " << n;
  }
}

TEST(ParallelFor, IndexFormOnTheDefaultExecutorAndOtherIndexTypes) {
  std::atomic<long> sum{0};
  heist::parallel_for(-50, 51, [&](int i) { sum += i; });
  EXPECT_EQ(sum.load(), 0);
  std::atomic<int> count{0};
  heist::parallel_for(std::int8_t{0}, std::int8_t{100}, [&](std::int8_t) { ++count; });
  EXPECT_EQ(count.load(), 100);
  count = 0;
  heist::parallel_for(std::uint64_t{5}, std::uint64_t{5}, [&](std::uint64_t) { ++count; });
  EXPECT_EQ(count.load(), 0);
}

TEST(ParallelFor, FirstAfterLastRunsNothing) {
  heist::executor ex(2);
  std::atomic<int> count{0};
  heist::parallel_for(ex, 10, 3, [&](int) { ++count; });
  heist::parallel_for(ex, blocked_range<int>(10, 3), [&](const blocked_range<int>&) { ++count; });
  EXPECT_EQ(count.load(), 0);
}

TEST(ParallelFor, AutoPartitionerVisitsEveryIndexOnce) {
  heist::executor ex(3);
  every_index_once(ex, heist::auto_partitioner{}, 1);
  every_index_once(ex, heist::auto_partitioner{}, 100);
}

TEST(ParallelFor, AutoGivesEveryIdleThreadAPieceBeforeALongFirstLeaf) {
  // The caller holds [0, 8) with four idle workers. Before its first leaf it gives a piece for
  // each idle thread: [4, 8), then [2, 4) (it keeps [0, 2), too small to halve at grain 1).
  // Its first leaf, index 0, waits for indices 2 and 4 to start elsewhere: with one piece
  // given per leaf boundary, [2, 4) would stay in the caller's range behind that leaf.
  heist::executor ex(4);
  // The workers park once they find nothing: then all four count as idle.
  ASSERT_TRUE(heist_test::eventually([&] {
    const heist::executor_stats s = ex.stats();
    for (const heist::worker_stats& w : s.workers)
      if (w.sleeps == 0) return false;
    return true;
  }));
  std::atomic<bool> started[8] = {};
  bool others_started = false;
  heist::parallel_for(
      ex, blocked_range<int>(0, 8, 1),
      [&](const blocked_range<int>& r) {
        for (int i = r.begin(); i < r.end(); ++i) {
          started[i].store(true);
          if (i == 0) {
            others_started = heist_test::eventually(
                [&] { return started[2].load() && started[4].load(); }, std::chrono::seconds(10));
          }
        }
      },
      heist::auto_partitioner{});
  EXPECT_TRUE(others_started);
  for (int i = 0; i < 8; ++i)
    EXPECT_TRUE(started[i].load()) << i;
}

TEST(ParallelFor, SimplePartitionerVisitsEveryIndexOnce) {
  heist::executor ex(3);
  every_index_once(ex, heist::simple_partitioner{}, 64);
  every_index_once(ex, heist::simple_partitioner{}, 1000);
}

TEST(ParallelFor, StaticPartitionerVisitsEveryIndexOnce) {
  heist::executor ex(3);
  every_index_once(ex, heist::static_partitioner{}, 1);
}

TEST(ParallelFor, AffinityPartitionerVisitsEveryIndexOnceAcrossReuse) {
  heist::executor ex(3);
  heist::affinity_partitioner ap;
  every_index_once(ex, ap, 1);
  every_index_once(ex, ap, 10);
}

// An affinity_partitioner is movable (not copyable), like oneTBB's: the moved-to one carries
// the shares on, and a moved-from one starts afresh (no history: last_steals() 0) and stays
// usable. Every index once throughout.
TEST(ParallelFor, AffinityPartitionerMovesWithItsHistory) {
  heist::executor ex(3);
  heist::affinity_partitioner ap;
  every_index_once(ex, ap, 1);
  heist::affinity_partitioner moved(std::move(ap));
  EXPECT_EQ(ap.last_steals(), 0u);  // NOLINT(bugprone-use-after-move): specified empty
  every_index_once(ex, moved, 1);
  every_index_once(ex, ap, 1);  // the moved-from one, afresh
  heist::affinity_partitioner other;
  other = std::move(moved);
  EXPECT_EQ(moved.last_steals(), 0u);  // NOLINT(bugprone-use-after-move)
  every_index_once(ex, other, 10);
  every_index_once(ex, moved, 10);
}

TEST(ParallelFor, SimplePartitionerSplitsDownToTheGrainsize) {
  heist::executor ex(2);
  std::atomic<std::size_t> biggest{0}, pieces{0};
  heist::parallel_for(
      ex, blocked_range<int>(0, 10000, 100),
      [&](const blocked_range<int>& r) {
        pieces.fetch_add(1);
        std::size_t seen = biggest.load();
        while (r.size() > seen && !biggest.compare_exchange_weak(seen, r.size())) {
        }
      },
      heist::simple_partitioner{});
  EXPECT_LE(biggest.load(), 100u);
  EXPECT_GE(pieces.load(), 100u);
}

TEST(ParallelFor, StaticPartitionerCutsOneBlockPerThread) {
  heist::executor ex(3);
  std::mutex m;
  std::vector<std::pair<int, int>> blocks;
  auto body = [&](const blocked_range<int>& r) {
    std::lock_guard<std::mutex> lock(m);
    blocks.emplace_back(r.begin(), r.end());
  };
  // From a worker: its 3 workers take part, 3 blocks.
  std::latch done(1);
  ex.post([&] {
    heist::parallel_for(blocked_range<int>(0, 30001), body, heist::static_partitioner{});
    done.count_down();
  });
  done.wait();
  ASSERT_EQ(blocks.size(), 3u);
  std::sort(blocks.begin(), blocks.end());
  EXPECT_EQ(blocks[0], std::make_pair(0, 10001));
  EXPECT_EQ(blocks[1], std::make_pair(10001, 20001));
  EXPECT_EQ(blocks[2], std::make_pair(20001, 30001));
  // From a thread outside the pool: the workers plus the caller, 4 blocks.
  blocks.clear();
  heist::parallel_for(ex, blocked_range<int>(0, 40000), body, heist::static_partitioner{});
  ASSERT_EQ(blocks.size(), 4u);
  std::sort(blocks.begin(), blocks.end());
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(blocks[k], std::make_pair(10000 * k, 10000 * (k + 1)));
}

TEST(ParallelFor, CallingThreadTakesPart) {
  // The only worker is blocked: the loop can only finish if the calling thread runs it.
  heist::executor ex(1);
  std::latch started(1), release(1);
  ex.post([&] {
    started.count_down();
    release.wait();
  });
  started.wait();
  hit_counter c(10000);
  heist::parallel_for(ex, std::size_t{0}, std::size_t{10000}, [&](std::size_t i) { c.hit(i); });
  EXPECT_EQ(c.wrong(), 0u);
  release.count_down();
}

TEST(ParallelFor, ExceptionCancelsTheRestAndIsRethrown) {
  heist::executor ex(2);
  for (unsigned kind : {0u, 1u, 2u, 3u}) {
    std::atomic<long> ran{0};
    heist::affinity_partitioner ap;
    auto body = [&](const blocked_range<long>& r) {
      for (long i = r.begin(); i != r.end(); ++i) {
        if (i == 0) throw std::runtime_error("index 0");
        ran.fetch_add(1, std::memory_order_relaxed);
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
        while (std::chrono::steady_clock::now() < until) {
        }
      }
    };
    const blocked_range<long> range(0, 200000);
    try {
      heist_test::parallel_for_with_partitioner(kind, ex, range, body, ap);
      FAIL() << "no exception, partitioner " << kind;
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "index 0");
    }
    EXPECT_LT(ran.load(), 200000 - 1) << "partitioner " << kind;
  }
}

TEST(ParallelFor, NestedThreeDeepCountsEveryIteration) {
  heist::executor ex(3);
  std::atomic<long> count{0};
  heist::parallel_for(ex, 0, 20, [&](int) {
    heist::parallel_for(0, 30, [&](int) {
      heist::parallel_for(0, 40, [&](int) { count.fetch_add(1, std::memory_order_relaxed); });
    });
  });
  EXPECT_EQ(count.load(), 20 * 30 * 40);
}

TEST(ParallelFor, NestedLoopsKeepEveryWorkerBusy) {
  heist::executor ex(2);
  std::mutex m;
  std::set<std::string> threads;
  heist::parallel_for(ex, 0, 4, [&](int) {
    heist::parallel_for(0, 200, [&](int) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
      while (std::chrono::steady_clock::now() < until) {
      }
      std::lock_guard<std::mutex> lock(m);
      threads.insert(heist_test::this_thread_name());
    });
  });
  EXPECT_TRUE(threads.count("heist-0") && threads.count("heist-1"));
}

TEST(ParallelFor, RunsOnTheGivenExecutor) {
  heist::executor_options o;
  o.num_workers = 2;
  o.name = "loopx";
  heist::executor ex(o);
  std::mutex m;
  std::set<std::string> names;
  ex.submit([&] {
      heist::parallel_for(0, 1000, [&](int) {  // current executor: loopx
        std::lock_guard<std::mutex> lock(m);
        names.insert(heist_test::this_thread_name());
      });
    }).get();
  for (const auto& n : names) {
    EXPECT_TRUE(n.rfind("loopx-", 0) == 0 || n == heist_test::this_thread_name()) << n;
  }
}

TEST(ParallelFor, AnAutoLoopOfTwoLongIterationsRunsThemOnTwoThreads) {
  // Two big items and an idle worker: each item on its own thread, as oneTBB's auto does. The
  // loop task used to halve a lone piece only above two leaves, and ran both items itself.
  // Each iteration waits (up to 10 s) for the other to start: on one thread the first waits
  // in vain and the threads seen are one.
  heist::executor ex(2);
  std::atomic<int> started{0};
  std::mutex lock;
  std::set<std::thread::id> threads;
  ex.submit([&] {
      // The other worker idle first (searching or asleep, not still starting): the loop
      // gives to idle threads only, and a piece kept ready waits for leaves known to be long.
      heist::detail::arena& a = heist::detail::current_arena();
      const auto idle_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (a.idle().snapshot() == 0 && std::chrono::steady_clock::now() < idle_by)
        std::this_thread::yield();
      heist::parallel_for(blocked_range<int>(0, 2), [&](const blocked_range<int>& r) {
        for (int i = r.begin(); i != r.end(); ++i) {
          started.fetch_add(1);
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (started.load() < 2 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::microseconds(100));
          const std::lock_guard<std::mutex> g(lock);
          threads.insert(std::this_thread::get_id());
        }
      });
    }).get();
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(threads.size(), 2u);
}
