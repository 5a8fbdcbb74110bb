// A task_group's cancellation, by cancel() and by a task's exception, and how
// it reaches nested groups (kind: requirement, boundary).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <latch>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/detail/core/thread_context.hpp"
#include "heist/heist.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;

using heist_test::fork_join_fib;

TEST(TaskGroup, ExceptionCancelsUnstartedTasks) {
  // One worker and no helper (the main thread waits on a latch): the thrower is pushed
  // last, so the worker pops it first (LIFO), and the 1000 tasks below it are skipped.
  heist::executor ex(1);
  std::atomic<int> ran{0};
  std::atomic<bool> threw{false};
  std::latch done(1);
  ex.post([&] {
    heist::task_group g;
    for (int i = 0; i < 1000; ++i)
      g.run([&] { ran.fetch_add(1); });
    g.run([] { throw std::logic_error("last pushed, first run"); });
    try {
      g.wait();
    } catch (const std::logic_error&) {
      threw = true;
    }
    done.count_down();
  });
  done.wait();
  EXPECT_TRUE(threw.load());
  EXPECT_EQ(ran.load(), 0);
}

TEST(TaskGroup, CancelSkipsUnstartedTasksAndWaitReturnsNormally) {
  heist::executor ex(1);
  heist::task_group g(ex);
  std::atomic<int> ran{0};
  std::latch started(1), hold(1);
  ex.post([&] {
    started.count_down();
    hold.wait();
  });  // keep the only worker busy
  started.wait();
  for (int i = 0; i < 100; ++i)
    g.run([&] { ran.fetch_add(1); });
  g.cancel();
  EXPECT_TRUE(g.is_canceling());
  hold.count_down();
  EXPECT_NO_THROW(g.wait());
  EXPECT_EQ(ran.load(), 0);
  EXPECT_FALSE(g.is_canceling());  // wait() resets the group
  g.run([&] { ran.fetch_add(1); });
  g.wait();
  EXPECT_EQ(ran.load(), 1);
}

TEST(TaskGroup, RunOnACancellingGroupIsSkipped) {
  heist::executor ex(2);
  heist::task_group g(ex);
  std::atomic<int> ran{0};
  g.cancel();
  for (int i = 0; i < 10; ++i)
    g.run([&] { ran.fetch_add(1); });
  g.wait();
  EXPECT_EQ(ran.load(), 0);
}

TEST(TaskGroup, CancelAfterAnExceptionStillRethrows) {
  heist::executor ex(2);
  heist::task_group g(ex);
  g.run([] { throw std::runtime_error("x"); });
  // The exception cancels the group; an explicit cancel() afterwards changes nothing.
  ASSERT_TRUE(heist_test::eventually([&] { return g.is_canceling(); }));
  g.cancel();
  EXPECT_THROW(g.wait(), std::runtime_error);
}

TEST(TaskGroup, CancelBeforeATaskStartsSkipsItsException) {
  heist::executor ex(1);
  std::latch started(1), hold(1);
  ex.post([&] {
    started.count_down();
    hold.wait();
  });
  started.wait();
  heist::task_group g(ex);
  g.run([] { throw std::runtime_error("never thrown"); });
  g.cancel();
  hold.count_down();
  EXPECT_NO_THROW(g.wait());
}

TEST(TaskGroup, CancellationReachesGroupsNestedInItsTasks) {
  heist::executor ex(2);
  heist::task_group outer(ex);
  std::atomic<int> inner_ran{0};
  std::atomic<bool> inner_saw_cancel{false};
  std::latch inner_ready(1);
  outer.run([&] {
    heist::task_group inner;  // bound to `outer`
    inner_ready.count_down();
    EXPECT_TRUE(heist_test::eventually([&] { return inner.is_canceling(); }));
    inner_saw_cancel = inner.is_canceling();
    for (int i = 0; i < 100; ++i)
      inner.run([&] { inner_ran.fetch_add(1); });
    inner.wait();
  });
  inner_ready.wait();
  outer.cancel();
  outer.wait();
  EXPECT_TRUE(inner_saw_cancel.load());
  EXPECT_EQ(inner_ran.load(), 0);
}

// wait() keeps a nested group's check of its ancestors when the group was not cancelled; a
// cancel of an ancestor that lands while the group's last task runs (after that task's
// check) must still reach the group's next round of tasks.
TEST(TaskGroup, ANestedGroupReusedAfterItsParentIsCancelledSkipsItsTasks) {
  heist::executor ex(2);
  heist::task_group outer(ex);
  std::atomic<int> first_round{0}, second_round{0};
  std::latch first_started(1), cancelled(1);
  outer.run([&] {
    heist::task_group inner;  // bound to `outer`
    inner.run([&] {
      first_round.fetch_add(1);  // started: checked `outer` while it was not cancelled
      first_started.count_down();
      cancelled.wait();
    });
    inner.wait();  // ends after the cancel; the group was not cancelled itself
    for (int i = 0; i < 10; ++i)
      inner.run([&] { second_round.fetch_add(1); });
    inner.wait();
  });
  first_started.wait();
  outer.cancel();
  cancelled.count_down();
  outer.wait();
  EXPECT_EQ(first_round.load(), 1);
  EXPECT_EQ(second_round.load(), 0);
}
