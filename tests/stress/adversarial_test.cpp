// Adversarial scenarios (kind: stress): destruction with work pending, cancellation while
// tasks run, bounded memory under huge task counts. Counts scale with HEIST_STRESS_SCALE.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>

#include "heist/detail/core/task_pool.hpp"
#include "heist/heist.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;

TEST(Adversarial, DestructionWithAHundredThousandPendingTasks) {
  const std::size_t n = heist_test::scaled(100000);
  std::atomic<std::size_t> ran{0};
  {
    heist::executor ex(2);
    for (std::size_t i = 0; i < n; ++i)
      ex.post([&] { ran.fetch_add(1, std::memory_order_relaxed); });
  }  // ~executor: shutdown runs every accepted task
  EXPECT_EQ(ran.load(), n);
}

TEST(Adversarial, DestructionWhileTasksSpawnMore) {
  for (std::size_t round = 0; round < heist_test::scaled(50); ++round) {
    std::atomic<long> ran{0};
    heist::executor* pool = nullptr;
    // Declared before the executor: its destructor runs tasks that still call it.
    std::function<void(int)> grow = [&](int depth) {
      ran.fetch_add(1, std::memory_order_relaxed);
      if (depth > 0) {
        for (int k = 0; k < 3; ++k)
          pool->post([&, depth] { grow(depth - 1); });
      }
    };
    {
      heist::executor ex(2);
      pool = &ex;
      ex.post([&] { grow(8); });
    }
    ASSERT_EQ(ran.load(), (6561L * 3 - 1) / 2) << "round " << round;  // 1 + 3 + ... + 3^8
  }
}

TEST(Adversarial, CancellationMidFlightSkipsOnlyUnstartedTasks) {
  heist::executor ex(2);
  for (std::size_t round = 0; round < heist_test::scaled(100); ++round) {
    std::atomic<int> started{0}, finished{0};
    heist::task_group g(ex);
    for (int i = 0; i < 2000; ++i) {
      g.run([&] {
        started.fetch_add(1);
        std::this_thread::yield();
        finished.fetch_add(1);
      });
    }
    while (started.load() < 10)
      std::this_thread::yield();
    g.cancel();
    g.wait();
    // Every task that started also finished; the rest were skipped.
    ASSERT_EQ(started.load(), finished.load());
    ASSERT_LE(started.load(), 2000);
    // Reusable afterwards.
    std::atomic<int> after{0};
    g.run([&] { after.fetch_add(1); });
    g.wait();
    ASSERT_EQ(after.load(), 1);
  }
}

// A cancellation check reads no parent pointer while the epoch is unchanged: a group's validated
// epoch covers its own flag and its ancestors'. A task whose check read the epoch just before
// cancel()'s bump may still start (a moment late), but at most one per thread that runs tasks: once
// a thread has seen the cancel, its next check sees the new epoch, walks, and finds the flag, on
// the group itself or on an ancestor. A validation that hid a cancel would let every later task of
// the round start.
TEST(Adversarial, TasksThatStartAfterACancelReturnedAreSkipped) {
  heist::executor ex(2);
  for (std::size_t round = 0; round < heist_test::scaled(100); ++round) {
    std::atomic<bool> cancel_returned{false};
    std::atomic<int> started{0}, late{0};
    const auto body = [&] {
      // acquire: pairs with the release store after cancel(), so a task that reads true
      // started after the cancel's bump of the epoch.
      if (cancel_returned.load(std::memory_order_acquire)) late.fetch_add(1);
      started.fetch_add(1);
      std::this_thread::yield();
    };
    heist::task_group g(ex);
    for (int i = 0; i < 500; ++i)
      g.run(body);
    g.run([&] {  // a group nested in g's task: cancelled through its parent
      heist::task_group h;
      for (int i = 0; i < 500; ++i)
        h.run(body);
      h.wait();
    });
    while (started.load() < 10)
      std::this_thread::yield();
    g.cancel();
    cancel_returned.store(true, std::memory_order_release);
    g.wait();
    // Two workers run tasks; this thread's own checks in wait() come after its cancel.
    ASSERT_LE(late.load(), 2) << "round " << round;
  }
}

TEST(Adversarial, CancelFromInsideATaskWhileSiblingsRun) {
  heist::executor ex(3);
  for (std::size_t round = 0; round < heist_test::scaled(100); ++round) {
    std::atomic<int> ran{0};
    heist::task_group g(ex);
    for (int i = 0; i < 500; ++i) {
      g.run([&, i] {
        ran.fetch_add(1);
        if (i == 100) g.cancel();
      });
    }
    EXPECT_NO_THROW(g.wait());
    ASSERT_GE(ran.load(), 1);
  }
}

TEST(Adversarial, HugeCountsOfTinyTasksKeepMemoryBounded) {
  // Millions of spawns with few of them alive at once: task memory stays at the peak of
  // live tasks (plus per-thread caches), not the total.
  heist::executor ex(2);
  ex.submit([&] { return heist_test::fork_join_fib(20); }).get();
  const std::size_t before = heist::detail::task_memory().slab_bytes;
  const int n = heist_test::scaled(1) >= 1 && heist_test::scaled(100) >= 100 ? 30 : 25;
  EXPECT_GT(ex.submit([&] { return heist_test::fork_join_fib(n); }).get(),
            0);  // 1.3 million spawns at n = 30
  const std::size_t after = heist::detail::task_memory().slab_bytes;
  EXPECT_LE(after - before, std::size_t{4} << 20) << "task memory grew by " << (after - before);
  // Rounds of 100,000 live tasks reuse the same blocks.
  auto round = [&] {
    heist::task_group g(ex);
    std::atomic<int> c{0};
    for (int i = 0; i < 100000; ++i)
      g.run([&] { c.fetch_add(1, std::memory_order_relaxed); });
    g.wait();
    return c.load();
  };
  // At most 100,000 tasks are alive at once (how many depends on timing), so six rounds
  // may take at most one round's worth of blocks plus caches, never six.
  const std::size_t rounds_start = heist::detail::task_memory().slab_bytes;
  for (int r = 0; r < 6; ++r)
    EXPECT_EQ(round(), 100000);
  const std::size_t one_round = 100000 * heist::detail::k_task_block_size;
  EXPECT_LE(heist::detail::task_memory().slab_bytes,
            rounds_start + one_round + (std::size_t{2} << 20));
}

TEST(Adversarial, HundredThousandDeepHelpingRecursionFromSeveralThreadsAtOnce) {
  heist::executor ex(2);
  std::atomic<long> levels{0};
  const int depth = static_cast<int>(std::min<std::size_t>(100000, heist_test::scaled(100000)));
  std::thread a([&] { heist_test::chain_of_waits(ex, levels, depth); });
  std::thread b([&] { heist_test::chain_of_waits(ex, levels, depth); });
  a.join();
  b.join();
  EXPECT_EQ(levels.load(), 2L * depth);
}

TEST(Adversarial, ExternalThreadsWaitOnEachOthersGroups) {
  heist::executor ex(1);
  for (std::size_t round = 0; round < heist_test::scaled(200); ++round) {
    heist::task_group g1(ex), g2(ex);
    std::atomic<int> c{0};
    std::thread t1([&] {
      for (int i = 0; i < 50; ++i)
        g1.run([&] { c.fetch_add(1); });
      g2.wait();
    });
    std::thread t2([&] {
      for (int i = 0; i < 50; ++i)
        g2.run([&] { c.fetch_add(1); });
      g1.wait();
    });
    t1.join();
    t2.join();
    g1.wait();
    g2.wait();
    ASSERT_EQ(c.load(), 100);
  }
}
