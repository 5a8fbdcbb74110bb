// How long a task_group lives and how deep its waits go: the destructor's
// wait, waits from several threads at once, and chains of 100,000 run/wait levels (kind:
// requirement, boundary).
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

TEST(TaskGroup, DestructorWaitsForOutstandingTasks) {
  heist::executor ex(2);
  std::atomic<int> done{0};
  {
    heist::task_group g(ex);
    for (int i = 0; i < 50; ++i) {
      g.run([&] {
        std::this_thread::sleep_for(1ms);
        done.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(done.load(), 50);
}

// The destructor skips its wait when both parts of the group's count read zero (after a
// wait() with no run() since); a run() after the wait, on the owner or on another thread,
// must still be waited for.
TEST(TaskGroup, DestructorWaitsForTasksRunAfterAWait) {
  heist::executor ex(2);
  std::atomic<int> done{0};
  {
    heist::task_group g(ex);
    g.run([&] { done.fetch_add(1); });
    g.wait();
    EXPECT_EQ(done.load(), 1);
    for (int i = 0; i < 8; ++i) {
      g.run([&] {
        std::this_thread::sleep_for(2ms);
        done.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(done.load(), 9);
  {
    heist::task_group g(ex);
    g.run([&] { done.fetch_add(1); });
    g.wait();
    std::thread other([&] {
      g.run([&] {
        std::this_thread::sleep_for(5ms);
        done.fetch_add(1);
      });
    });
    other.join();  // the run() happens-before the destructor
  }
  EXPECT_EQ(done.load(), 11);
}

// The same inside a task, where the group is owner-counted: the owner's own part of the
// count and the thieves' part. Children left unwaited, some stolen and some run by the owner,
// are waited for by the destructor; after a wait in which thieves finished some children the
// two parts only add up to zero, and the destructor must not mistake that for work left.
TEST(TaskGroup, DestructorInsideATaskWaitsForStolenAndOwnChildren) {
  heist::executor ex(2);
  std::atomic<int> done{0};
  std::atomic<int> after_scope{-1};
  ex.submit([&] {
      {
        heist::task_group g;
        for (int i = 0; i < 40; ++i) {
          g.run([&] {
            std::this_thread::sleep_for(200us);
            done.fetch_add(1);
          });
        }
        std::this_thread::sleep_for(2ms);  // the other worker steals some meanwhile
      }
      after_scope = done.load();
      {
        heist::task_group g;
        for (int i = 0; i < 40; ++i) {
          g.run([&] {
            std::this_thread::sleep_for(100us);
            done.fetch_add(1);
          });
        }
        g.wait();
        g.run([&] {
          std::this_thread::sleep_for(3ms);
          done.fetch_add(1);
        });
      }
    }).get();
  EXPECT_EQ(after_scope.load(), 40);
  EXPECT_EQ(done.load(), 81);
}

// An exception thrown by a task run after a wait() that took an earlier one is waited for
// and dropped by the destructor: nothing escapes, nothing leaks (the exception object is
// destroyed with the group).
TEST(TaskGroup, DestructorDropsTheExceptionOfATaskRunAfterAWait) {
  struct counted_error {
    std::atomic<int>* destroyed;
    counted_error(std::atomic<int>* d) : destroyed(d) {}
    counted_error(const counted_error& o) : destroyed(o.destroyed) { destroyed->fetch_sub(1); }
    ~counted_error() { destroyed->fetch_add(1); }
  };
  heist::executor ex(2);
  std::atomic<int> destroyed{0};
  std::atomic<int> second_ran{0};
  {
    heist::task_group g(ex);
    g.run([] { throw std::runtime_error("first"); });
    EXPECT_THROW(g.wait(), std::runtime_error);
    g.run([&] {
      second_ran.fetch_add(1);
      throw counted_error(&destroyed);
    });
  }
  EXPECT_EQ(second_ran.load(), 1);
  // Every copy of the thrown object was destroyed: net one destruction per object thrown.
  EXPECT_EQ(destroyed.load(), 1);
}

// The nesting a chain of run/wait levels counts (the headroom check's depth,
// stack_headroom.hpp). task_group::wait's inline first step (run_task.hpp) counts a level only
// where the depth is what guards the stack: under TSan (its shadow call stack is 256 levels
// deep), and on a stack of unknown bounds, where the step is left to the helping wait, which
// counts. Elsewhere the address check alone bounds it and the step counts nothing. One worker
// and no helper: every child is popped back, so the bottom of the chain sees the whole count.
namespace {
enum class chain_step { run_then_wait, run_and_wait };

std::uint32_t nesting_counted_by_a_chain(heist::executor& ex, std::uint32_t levels,
                                         bool unknown_stack_bounds,
                                         chain_step step = chain_step::run_then_wait) {
  std::uint32_t at_start = 0;
  std::uint32_t at_bottom = 0;
  std::function<void(std::uint32_t)> rec = [&](std::uint32_t depth) {
    if (depth == levels) {
      at_bottom = heist::detail::t_context->help_depth();
      return;
    }
    heist::task_group g;
    if (step == chain_step::run_and_wait) {
      g.run_and_wait([&, depth] { rec(depth + 1); });
    } else {
      g.run([&, depth] { rec(depth + 1); });
      g.wait();
    }
  };
  // The main thread blocks on a latch and does not help: nobody can steal a level, so the
  // whole chain runs on the one worker.
  std::latch done(1);
  ex.post([&] {
    heist::detail::thread_context& c = *heist::detail::t_context;
    const std::uintptr_t limit = c.stack_limit();
    if (unknown_stack_bounds) c.set_stack_bounds(0, c.await_stack_mark());
    at_start = c.help_depth();
    rec(0);
    c.set_stack_bounds(limit, c.await_stack_mark());
    done.count_down();
  });
  done.wait();
  return at_bottom - at_start;
}
}  // namespace

// Several threads may wait on one group at once (docs/reference/api.md: wait() may run on any
// thread). One waiter sleeps armed on the group; the others find it taken (wait_context::arm: busy)
// and search again every 50 us (park.cpp, arm_waiter), or, for a coroutine's co_await join(), help
// until the group is done (join_awaiter). All of them return once its last task ends.
// A task of `g` that counts itself in `ran` once `release` opens: the group stays pending.
void run_held(heist::task_group& g, std::latch& release, std::atomic<int>& ran) {
  g.run([&] {
    release.wait();
    ran.fetch_add(1);
  });
}

TEST(TaskGroup, ThreadsWaitingOnOneGroupAtOnceAllReturnWhenItIsDone) {
  heist::executor ex(1);
  heist::task_group g(ex);
  std::latch release(1);
  std::atomic<int> ran{0};
  run_held(g, release, ran);
  for (int i = 0; i < 200; ++i)
    g.run([&] { ran.fetch_add(1); });
  std::atomic<int> returned{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&] {
      g.wait();
      // Returned only after every task ran, whichever waiter saw the end first.
      if (ran.load() == 201) returned.fetch_add(1);
    });
  }
  std::this_thread::sleep_for(50ms);  // the waiters help, then arm or poll
  EXPECT_EQ(returned.load(), 0);
  release.count_down();
  for (auto& t : waiters)
    t.join();
  EXPECT_EQ(returned.load(), 3);
}

heist::task<int> joins(heist::task_group& g) {
  co_await g.join();
  co_return 7;
}
TEST(TaskGroup, ACoroutineJoiningAGroupAnotherThreadWaitsOnResumesWhenItIsDone) {
  heist::executor ex(2);
  heist::task_group g(ex);
  std::latch release(1);
  std::atomic<int> ran{0};
  run_held(g, release, ran);
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    g.wait();
    waited = ran.load() == 1;
  });
  std::this_thread::sleep_for(20ms);  // the waiter has armed the group
  heist::future<int> joined = heist::start(ex, joins(g));
  std::this_thread::sleep_for(20ms);  // the join finds it armed: it helps until done
  EXPECT_FALSE(joined.is_ready());
  release.count_down();
  EXPECT_EQ(joined.get(), 7);
  waiter.join();
  EXPECT_TRUE(waited.load());
}

TEST(TaskGroup, AChainOfWaitsCountsItsNestingWhereTheDepthGuardsTheStack) {
  heist::executor ex(1);
  constexpr std::uint32_t levels = 50;
  EXPECT_EQ(nesting_counted_by_a_chain(ex, levels, false), HEIST_TSAN ? levels : 0u);
  EXPECT_EQ(nesting_counted_by_a_chain(ex, levels, true), levels);
}

// run_and_wait (and so parallel_invoke's last function, and a loop's root) runs its function
// directly on this stack while the stack has room (call_inline_with_stack_headroom) and counts
// a level by the same rule as the wait's inline step: under TSan, and on a stack of unknown
// bounds (where it goes out of line to call_with_stack_headroom, and that count is all that
// moves a deep chain onto a stack extension). Elsewhere the address check bounds it.
TEST(TaskGroup, AChainOfRunAndWaitCountsItsNestingWhereTheDepthGuardsTheStack) {
  heist::executor ex(1);
  constexpr std::uint32_t levels = 50;
  EXPECT_EQ(nesting_counted_by_a_chain(ex, levels, false, chain_step::run_and_wait),
            HEIST_TSAN ? levels : 0u);
  EXPECT_EQ(nesting_counted_by_a_chain(ex, levels, true, chain_step::run_and_wait), levels);
}

// The 8 MiB tests: 100,000 levels of run/wait, one child per level.
TEST(TaskGroup, HundredThousandLevelsOfRunWaitOnOneWorker) {
  heist::executor ex(1);
  std::atomic<long> levels{0};
  ex.submit([&] { heist_test::chain_of_waits(ex, levels, 100000); }).get();
  EXPECT_EQ(levels.load(), 100000);
}

TEST(TaskGroup, HundredThousandLevelsFromTheMainThread) {
  heist::executor ex(1);
  std::atomic<long> levels{0};
  heist_test::chain_of_waits(ex, levels, 100000);
  EXPECT_EQ(levels.load(), 100000);
}

TEST(TaskGroup, HundredThousandLevelsOfRunAndWait) {
  heist::executor ex(2);
  std::atomic<int> levels{0};
  std::function<void(int)> rec = [&](int depth) {
    if (depth == 0) return;
    levels.fetch_add(1, std::memory_order_relaxed);
    heist::task_group g;
    g.run_and_wait([&, depth] { rec(depth - 1); });
  };
  ex.submit([&] { rec(100000); }).get();
  EXPECT_EQ(levels.load(), 100000);
}
