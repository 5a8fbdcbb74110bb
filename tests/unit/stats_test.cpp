// The load monitor (kind: requirement).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <optional>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {
// The executed counts of every worker and of the threads outside the pool, added up.
std::uint64_t executed_per_worker(const heist::executor_stats& s) {
  std::uint64_t n = s.external.executed;
  for (const auto& w : s.workers)
    n += w.executed;
  return n;
}
}  // namespace

TEST(Stats, OneEntryPerWorker) {
  heist::executor ex(3);
  const heist::executor_stats s = ex.stats();
  EXPECT_EQ(s.workers.size(), 3u);
}

TEST(Stats, ATaskArenasTasksAreCountedWhileItLives) {
  // The calling thread runs most of them in its slot of the task arena, whose counters the
  // statistics read while the arena exists (load_monitor.cpp: every task arena's slots
  // go to `external`), and fold in when it goes away.
  heist::executor ex(1);
  std::atomic<int> ran{0};
  {
    heist::task_arena ta(2, ex);
    ta.execute([&] {
      heist::task_group g;
      for (int i = 0; i < 300; ++i)
        g.run([&] { ran.fetch_add(1); });
      g.wait();
    });
    ex.wait_idle();
    EXPECT_EQ(ran.load(), 300);
    EXPECT_EQ(ex.stats().executed(), 300u);
  }
  EXPECT_EQ(ex.stats().executed(), 300u);
}

TEST(Stats, ExecutedCountsEveryTask) {
  heist::executor ex(2);
  for (int i = 0; i < 1000; ++i)
    ex.post([] {});
  ex.wait_idle();
  EXPECT_EQ(ex.stats().executed(), 1000u);
  std::atomic<int> n{0};
  heist::task_group g(ex);
  for (int i = 0; i < 500; ++i)
    g.run([&] { n.fetch_add(1); });
  g.wait();  // the main thread may help: its share is counted in `external`
  ex.wait_idle();
  const auto s = ex.stats();
  EXPECT_EQ(s.executed(), 1500u);
  EXPECT_EQ(executed_per_worker(s), 1500u);
}

// Every path that finishes a task counts it once, and only if its body ran: fork-join
// children popped back and run inside the wait, members of a cancelled group (skipped: not
// executed), and tasks that the executor's workers run inside a task_arena (counted for the
// worker, wherever the arena's slot is).
TEST(Stats, ExecutedCountsRunBodiesOnEveryPathAndNoSkippedOne) {
  heist::executor ex(2);
  long fib = 0;
  ex.submit([&] { fib = heist_test::fork_join_fib(15); }).get();
  ex.wait_idle();
  EXPECT_EQ(fib, 610);
  // The submitted task, and one spawn per call with n >= 2: fib(16) - 1 of them.
  EXPECT_EQ(ex.stats().executed(), 1u + 986u);

  ex.reset_stats();
  std::atomic<int> ran{0};
  ex.submit([&] {
      heist::task_group g;
      for (int i = 0; i < 100; ++i)
        g.run([&] { ran.fetch_add(1); });
      g.cancel();  // none has started: the owner is still here, the other worker may steal
      g.wait();
    }).get();
  ex.wait_idle();
  const auto skipped = ex.stats();
  EXPECT_EQ(skipped.executed(), 1u + static_cast<std::uint64_t>(ran.load()));

  ex.reset_stats();
  std::atomic<int> in_arena{0};
  {
    heist::task_arena arena(2, ex);
    for (int i = 0; i < 200; ++i)
      arena.enqueue([&] { in_arena.fetch_add(1); });
  }  // waits for the arena's tasks
  ex.wait_idle();
  EXPECT_EQ(in_arena.load(), 200);
  const auto visited = ex.stats();
  EXPECT_EQ(visited.executed(), 200u);
  EXPECT_EQ(executed_per_worker(visited), 200u);
}

TEST(Stats, ResetStatsZeroesCounters) {
  heist::executor ex(2);
  for (int i = 0; i < 100; ++i)
    ex.post([] {});
  ex.wait_idle();
  // Idle workers keep trying to steal until they park: wait until the counters stand still
  // (both parked), then reset.
  ASSERT_TRUE(heist_test::eventually([&] {
    const auto a = ex.stats();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto b = ex.stats();
    return a.workers[0].steal_attempts == b.workers[0].steal_attempts &&
           a.workers[1].steal_attempts == b.workers[1].steal_attempts;
  }));
  ex.reset_stats();
  auto s = ex.stats();
  EXPECT_EQ(s.executed(), 0u);
  for (const auto& w : s.workers) {
    EXPECT_EQ(w.executed, 0u);
    EXPECT_EQ(w.stolen, 0u);
    EXPECT_EQ(w.steal_attempts, 0u);
    EXPECT_EQ(w.failed_steals, 0u);
  }
  for (int i = 0; i < 10; ++i)
    ex.post([] {});
  ex.wait_idle();
  EXPECT_EQ(ex.stats().executed(), 10u);
}

TEST(Stats, QueueLengthsAreSnapshots) {
  heist::executor_options o;
  o.num_workers = 2;
  o.policy = heist::steal_policy::none;  // keep the queued tasks where they are
  heist::executor ex(o);
  std::latch queued(1), release(1);
  ex.post([&] {
    heist::task_group g;
    for (int i = 0; i < 10; ++i)
      g.run([] {});
    queued.count_down();
    release.wait();
    g.wait();
  });
  queued.wait();
  const auto s = ex.stats();
  EXPECT_EQ(s.max_queue, 10u);
  EXPECT_EQ(s.min_queue, 0u);
  EXPECT_DOUBLE_EQ(s.mean_queue, 5.0);
  std::size_t total = 0;
  for (const auto& w : s.workers)
    total += w.queue_length;
  EXPECT_EQ(total, 10u);
  release.count_down();
  ex.wait_idle();
  EXPECT_EQ(ex.stats().max_queue, 0u);
}

TEST(Stats, StealCountersAreConsistent) {
  heist::executor ex(2);
  std::atomic<long> sink{0};
  for (int round = 0; round < 20; ++round) {
    ex.submit([&] {
        heist::task_group g;
        for (int i = 0; i < 200; ++i) {
          g.run([&] {
            // ~20 us of work that the optimizer cannot remove, so both threads get some.
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
            long x = 0;
            while (std::chrono::steady_clock::now() < until)
              ++x;
            sink += x;
          });
        }
        g.wait();
      }).get();
  }
  const auto s = ex.stats();
  for (const auto& w : s.workers) {
    EXPECT_EQ(w.steal_attempts, w.stolen + w.failed_steals);
  }
  EXPECT_EQ(s.external.steal_attempts, s.external.stolen + s.external.failed_steals);
  EXPECT_GT(s.stolen(), 0u);
}

// A thread outside the pool that waits while every leasable slot is taken helps without a
// slot, and what it steals from a worker's deque is counted in `external`: the one worker
// spawns 50 tasks into its own deque and then blocks, the four leasable slots are held by
// run_and_wait calls that block, and the outside thread waits on a future of the worker's
// (its promise made in the worker's task, so the future helps in that executor) that the
// 50th task completes: only it can run them, each a steal (search.cpp, count_steal).
TEST(Stats, AHelperWithoutASlotCountsWhatItStealsAsExternal) {
  heist::executor ex(1);
  constexpr int k_tasks = 50;
  std::latch occupied(heist_test::k_leasable_slots + 1), release(1);
  std::atomic<int> ran{0};
  std::optional<heist::promise<void>> all_ran;
  std::optional<heist::future<void>> all_ran_future;
  const heist::executor_stats before = ex.stats();
  ex.post([&] {
    all_ran.emplace();  // made on the worker: its future helps in ex's arena
    all_ran_future.emplace(all_ran->get_future());
    heist::task_group g;
    for (int i = 0; i < k_tasks; ++i) {
      g.run([&] {
        if (ran.fetch_add(1) + 1 == k_tasks) all_ran->set_value();
      });
    }
    occupied.count_down();
    release.wait();  // the worker blocks with its deque full
    g.wait();
  });
  heist_test::leasable_slots_held held(ex, occupied, release);
  occupied.wait();
  std::thread helper([&] { all_ran_future->get(); });  // no slot free: helps without one
  helper.join();
  EXPECT_EQ(ran.load(), k_tasks);
  held.open_and_join();  // and the worker's blocking task
  ex.wait_idle();
  const heist::executor_stats s = ex.stats();
  EXPECT_EQ(s.external.stolen - before.external.stolen, static_cast<std::uint64_t>(k_tasks));
  EXPECT_EQ(s.external.steal_attempts, s.external.stolen + s.external.failed_steals);
  EXPECT_EQ(s.workers[0].executed - before.workers[0].executed, 1u);  // the blocking task
}
