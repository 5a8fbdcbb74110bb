// Owner-counted joins (docs/design/protocols.md, "Owner-counted joins"): the thread that
// creates a task_group counts its own spawns and the children it runs itself without atomic
// RMWs. These tests are the cases where another thread is involved: a thief finishing an
// owner-counted child, a waiter that is not the owner (it claims the group), a coroutine that
// joins on another thread than the one that created its group. Each asserts that the wait
// returns only after every child ran, exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using heist_test::eventually;
using heist_test::watchdog;

TEST(OwnerCountedJoins, AvailableOnLinux) {
#if defined(__linux__)
  heist::executor ex(1);  // the first executor turns it on
  if (!heist::detail::g_owner_counting.load()) {
    GTEST_SKIP() << "membarrier(PRIVATE_EXPEDITED) refused here: every group counts with "
                    "atomic RMWs (the other tests still check that path)";
  }
  SUCCEED();
#else
  GTEST_SKIP() << "owner counting needs Linux's membarrier";
#endif
}

// A group made inside a task is owned by that worker; its children block until released.
// A thread outside the pool waits on it (a foreign waiter: it claims the group) while the
// owner's local count still holds them: the wait must not return before they finish.
TEST(OwnerCountedJoins, ForeignWaiterWaitsForChildrenTheOwnerCounted) {
  watchdog dog("ForeignWaiterWaitsForChildrenTheOwnerCounted", 60s);
  heist::executor ex(2);
  constexpr int k_children = 64;
  std::atomic<bool> go{false};
  std::atomic<int> finished{0};
  std::unique_ptr<heist::task_group> g =
      heist_test::group_owned_by_a_worker(ex, k_children, go, finished);
  std::atomic<bool> returned{false};
  int seen_at_return = -1;
  std::thread waiter([&] {
    g->wait();
    seen_at_return = finished.load();
    returned = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(returned.load()) << "wait() returned while every child was still blocked";
  go = true;
  waiter.join();
  EXPECT_EQ(seen_at_return, k_children);
  g.reset();
}

// The owner's task ends right after its spawns; an outside thread waits. Repeated, so that
// the claim meets the owner while it is still popping and running its own children.
TEST(OwnerCountedJoins, ForeignWaitAfterTheOwnersTaskEnded) {
  watchdog dog("ForeignWaitAfterTheOwnersTaskEnded", 120s);
  heist::executor ex(2);
  const std::size_t rounds = heist_test::scaled(300);
  for (std::size_t round = 0; round < rounds; ++round) {
    constexpr int k_children = 500;
    std::vector<std::atomic<int>> ran(k_children);
    std::unique_ptr<heist::task_group> g;
    ex.submit([&] {
        g = std::make_unique<heist::task_group>();
        for (int i = 0; i < k_children; ++i)
          g->run([&ran, i] { ran[i].fetch_add(1); });
      }).get();
    g->wait();
    for (int i = 0; i < k_children; ++i)
      ASSERT_EQ(ran[i].load(), 1) << "round " << round << " child " << i;
  }
}

// A task of the pool waits on a group another task created (and counted) on another worker.
TEST(OwnerCountedJoins, WaitFromAnotherTaskOfThePool) {
  watchdog dog("WaitFromAnotherTaskOfThePool", 60s);
  heist::executor ex(3);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> finished{0};
    std::atomic<heist::task_group*> shared{nullptr};
    std::atomic<bool> owner_may_leave{false};
    auto owner = ex.submit([&] {
      heist::task_group g;
      for (int i = 0; i < 200; ++i)
        g.run([&] { finished.fetch_add(1); });
      shared = &g;
      // Keep g alive until the other task has waited on it; the owner then waits too.
      while (!owner_may_leave.load())
        std::this_thread::yield();
      g.wait();
      return finished.load();
    });
    auto other = ex.submit([&] {
      heist::task_group* g = nullptr;
      while ((g = shared.load()) == nullptr)
        std::this_thread::yield();
      g->wait();
      const int seen = finished.load();
      owner_may_leave = true;
      return seen;
    });
    EXPECT_EQ(other.get(), 200);
    EXPECT_EQ(owner.get(), 200);
  }
}

heist::task<int> join_elsewhere(heist::executor& second, std::atomic<int>& ran) {
  heist::task_group g;  // created (and counted) on a worker of the first executor
  for (int i = 0; i < 1000; ++i)
    g.run([&ran] { ran.fetch_add(1); });
  co_await heist::schedule(second);  // continues on a worker of `second`
  co_await g.join();                 // a join by a thread that does not own g
  co_return ran.load();
}

TEST(OwnerCountedJoins, CoroutineJoinsOnAnotherThreadThanItsGroupsOwner) {
  watchdog dog("CoroutineJoinsOnAnotherThreadThanItsGroupsOwner", 60s);
  heist::executor first(2), second(1);
  for (int round = 0; round < 100; ++round) {
    std::atomic<int> ran{0};
    EXPECT_EQ(heist::start(first, join_elsewhere(second, ran)).get(), 1000);
    EXPECT_EQ(ran.load(), 1000);
  }
}

// The owner joins in a coroutine (it gives the group up to shared counting) and then, on the
// same thread, runs the children it had counted: the join must still be resumed exactly once.
TEST(OwnerCountedJoins, OwnerJoinsThenRunsItsOwnChildren) {
  watchdog dog("OwnerJoinsThenRunsItsOwnChildren", 60s);
  heist::executor ex(1);  // one worker: the owner itself runs every child after suspending
  std::atomic<int> resumed{0}, ran{0};
  auto joiner = [&]() -> heist::task<void> {
    heist::task_group g;
    for (int i = 0; i < 100; ++i)
      g.run([&] { ran.fetch_add(1); });
    co_await g.join();
    resumed.fetch_add(1);
    EXPECT_EQ(ran.load() % 100, 0);
  };
  for (int round = 0; round < 200; ++round)
    heist::start(ex, joiner()).get();
  EXPECT_EQ(resumed.load(), 200);
  EXPECT_EQ(ran.load(), 200 * 100);
}

// A group reused across waits, with children stolen in some rounds and not in others: the
// owner's count and the thieves' finishes add up every time (values, not just termination).
TEST(OwnerCountedJoins, ReusedGroupCountsEveryRound) {
  watchdog dog("ReusedGroupCountsEveryRound", 60s);
  heist::executor ex(2);
  ex.submit([&] {
      heist::task_group g;
      for (int round = 0; round < 2000; ++round) {
        std::atomic<int> ran{0};
        const int n = 1 + round % 17;
        for (int i = 0; i < n; ++i) {
          g.run([&ran, round] {
            if (round % 3 == 0) std::this_thread::yield();  // let the other worker steal
            ran.fetch_add(1);
          });
        }
        g.wait();
        ASSERT_EQ(ran.load(), n) << "round " << round;
      }
    }).get();
}

// Exceptions and cancellation of owner-counted children still reach the waiter.
TEST(OwnerCountedJoins, ExceptionFromAnOwnerCountedChildIsRethrown) {
  heist::executor ex(2);
  ex.submit([&] {
      for (int round = 0; round < 200; ++round) {
        heist::task_group g;
        std::atomic<int> ran{0};
        for (int i = 0; i < 10; ++i) {
          g.run([&ran, i] {
            ran.fetch_add(1);
            if (i == 3) throw std::runtime_error("child 3");
          });
        }
        EXPECT_THROW(g.wait(), std::runtime_error);
        EXPECT_GE(ran.load(), 1);
        EXPECT_LE(ran.load(), 10);
      }
    }).get();
}

// A wait whose group is done returns without running unrelated work. Here the group's only
// child was stolen and has finished, and another group's task X lies on top of the owner's
// deque: the wait must return without running X (a wait that popped first would have to put X
// back). The other worker is held busy meanwhile, so X
// can only run on the owner: after the wait. Only the two workers run tasks (the test thread
// blocks without helping), so the worker that ran the child has also counted it out before it
// takes the holder: when the holder starts, the group is done.
TEST(OwnerCountedJoins, AFinishedWaitPutsBackTheForeignTaskItPopped) {
  watchdog dog("AFinishedWaitPutsBackTheForeignTaskItPopped", 60s);
  heist::executor ex(2);
  for (int round = 0; round < 50; ++round) {
    std::atomic<bool> child_done{false}, holder_started{false}, release_holder{false};
    std::atomic<bool> in_wait{false}, x_ran_inside_wait{false};
    std::atomic<int> x_runs{0};
    std::latch finished(1);
    ex.post([&] {
      heist::task_group outer, holders, g;
      g.run([&] { child_done = true; });
      // The other worker steals the child (the owner only spins).
      EXPECT_TRUE(eventually([&] { return child_done.load(); }));
      holders.run([&] {
        holder_started = true;
        while (!release_holder.load())
          std::this_thread::yield();
      });
      EXPECT_TRUE(eventually([&] { return holder_started.load(); }));
      outer.run([&] {
        if (in_wait.load()) x_ran_inside_wait = true;
        x_runs.fetch_add(1);
      });
      in_wait = true;
      g.wait();
      in_wait = false;
      release_holder = true;
      outer.wait();
      holders.wait();
      finished.count_down();
    });
    finished.wait();
    EXPECT_FALSE(x_ran_inside_wait.load()) << "round " << round;
    EXPECT_EQ(x_runs.load(), 1) << "round " << round;
  }
}

}  // namespace
