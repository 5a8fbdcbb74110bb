// SPEC section 3 (task_group, parallel_invoke) and its rows of section 8
// (kind: requirement, boundary).
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

#include "heist/detail/thread_context.hpp"
#include "heist/heist.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;

using heist_test::fork_join_fib;

TEST(TaskGroup, RunsEveryTaskBeforeWaitReturns) {
  heist::executor ex(3);
  heist::task_group g(ex);
  std::atomic<int> count{0};
  for (int i = 0; i < 10000; ++i)
    g.run([&] { count.fetch_add(1); });
  g.wait();
  EXPECT_EQ(count.load(), 10000);
}

TEST(TaskGroup, NestedForkJoinComputesFib) {
  heist::executor ex(2);
  EXPECT_EQ(ex.submit([] { return fork_join_fib(22); }).get(), 17711);
}

TEST(TaskGroup, NestedWaitsOnOneWorkerDoNotDeadlock) {
  heist::executor ex(1);
  EXPECT_EQ(ex.submit([] { return fork_join_fib(16); }).get(), 987);
}

TEST(TaskGroup, DefaultConstructedUsesTheExecutorOfTheRunningTask) {
  heist::executor_options o;
  o.num_workers = 2;
  o.name = "alpha";
  heist::executor ex(o);
  std::set<std::string> names;
  std::mutex m;
  ex.submit([&] {
      heist::task_group g;  // inside a task of ex: ex
      for (int i = 0; i < 200; ++i) {
        g.run([&] {
          std::lock_guard<std::mutex> lock(m);
          names.insert(heist_test::this_thread_name());
        });
      }
      g.wait();
    }).get();
  for (const auto& n : names) {
    // Tasks run on alpha's workers (or the helping main thread, which is not a heist one).
    EXPECT_TRUE(n.rfind("alpha-", 0) == 0 || n == heist_test::this_thread_name()) << n;
  }
}

TEST(TaskGroup, DefaultConstructedOutsideTasksUsesDefaultExecutor) {
  heist::task_group g;
  std::latch started(1);
  std::string name;
  g.run([&] {
    name = heist_test::this_thread_name();
    started.count_down();
  });
  g.wait();
  // Either a worker of the default executor ("heist-N") or this helping thread.
  EXPECT_TRUE(name.rfind("heist-", 0) == 0 || name == heist_test::this_thread_name()) << name;
}

TEST(TaskGroup, RunAndWaitRunsOnTheCaller) {
  heist::executor ex(2);
  heist::task_group g(ex);
  std::atomic<int> others{0};
  for (int i = 0; i < 10; ++i)
    g.run([&] { others.fetch_add(1); });
  std::thread::id ran_on;
  g.run_and_wait([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(others.load(), 10);
}

TEST(TaskGroup, FirstExceptionIsRethrownAndLaterOnesDropped) {
  heist::executor ex(2);
  heist::task_group g(ex);
  for (int i = 0; i < 100; ++i) {
    g.run([i] { throw std::runtime_error("task " + std::to_string(i)); });
  }
  try {
    g.wait();
    FAIL() << "wait() must rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("task ", 0), 0u);
  }
  // Reusable, and the old exception is gone.
  std::atomic<int> count{0};
  g.run([&] { count.fetch_add(1); });
  EXPECT_NO_THROW(g.wait());
  EXPECT_EQ(count.load(), 1);
}

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

TEST(TaskGroup, ExceptionsInNestedGroupsPropagateOutward) {
  heist::executor ex(2);
  heist::task_group outer(ex);
  outer.run([] {
    heist::task_group inner;
    inner.run([] { throw std::invalid_argument("deep"); });
    inner.wait();  // rethrows into the outer task, which the outer group captures
  });
  EXPECT_THROW(outer.wait(), std::invalid_argument);
}

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

// A wait pops its group's children back and runs them on the short path; a child of another
// group on top of the deque, or a child spawned under another group, goes the general way.
// Both orders, on one worker; the test thread blocks on a latch (a future's get() would lease
// a slot and steal), so everything runs on the waiting worker, in deque order.
TEST(TaskGroup, WaitRunsOtherGroupsTasksOnTopOfItsOwn) {
  heist::executor ex(1);
  std::vector<int> order;
  std::latch finished(1);
  ex.post([&] {
    heist::task_group h, g;
    h.run([&] { order.push_back(1); });
    g.run([&] { order.push_back(2); });  // on top of h's child
    h.wait();                            // runs g's child first (LIFO), then h's
    order.push_back(3);
    g.wait();
    heist::task_group outer;
    outer.run([&] {
      heist::task_group inner;
      inner.run([&] { order.push_back(4); });
      inner.wait();
    });
    outer.wait();
    finished.count_down();
  });
  finished.wait();
  EXPECT_EQ(order, (std::vector<int>{2, 1, 3, 4}));
}

TEST(TaskGroup, ConcurrentRunFromManyThreads) {
  heist::executor ex(2);
  heist::task_group g(ex);
  std::atomic<int> count{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        g.run([&] { count.fetch_add(1); });
    });
  }
  for (auto& t : threads)
    t.join();
  g.wait();
  EXPECT_EQ(count.load(), 4000);
}

TEST(TaskGroup, TasksRunTasksIntoTheirOwnGroup) {
  heist::executor ex(2);
  heist::task_group g(ex);
  std::atomic<int> count{0};
  std::function<void(int)> tree = [&](int depth) {
    count.fetch_add(1);
    if (depth > 0) {
      g.run([&, depth] { tree(depth - 1); });
      g.run([&, depth] { tree(depth - 1); });
    }
  };
  g.run([&] { tree(10); });
  g.wait();
  EXPECT_EQ(count.load(), 2047);
}

// The nesting a chain of run/wait levels counts (the headroom check's depth,
// stack_headroom.hpp). task_group::wait's inline first step (run_task.hpp) counts a level only
// where the depth is what guards the stack: under TSan (its shadow call stack is 256 levels
// deep), and on a stack of unknown bounds, where the step is left to the helping wait, which
// counts. Elsewhere the address check alone bounds it and the step counts nothing. One worker
// and no helper: every child is popped back, so the bottom of the chain sees the whole count.
namespace {
std::uint32_t nesting_counted_by_a_chain(heist::executor& ex, std::uint32_t levels,
                                         bool unknown_stack_bounds) {
  std::uint32_t at_start = 0;
  std::uint32_t at_bottom = 0;
  std::function<void(std::uint32_t)> rec = [&](std::uint32_t depth) {
    if (depth == levels) {
      at_bottom = heist::detail::t_context->m_help_depth;
      return;
    }
    heist::task_group g;
    g.run([&, depth] { rec(depth + 1); });
    g.wait();
  };
  // The main thread blocks on a latch and does not help: nobody can steal a level, so the
  // whole chain runs on the one worker.
  std::latch done(1);
  ex.post([&] {
    heist::detail::thread_context& c = *heist::detail::t_context;
    const std::uintptr_t limit = c.m_stack_limit;
    if (unknown_stack_bounds) c.m_stack_limit = 0;
    at_start = c.m_help_depth;
    rec(0);
    c.m_stack_limit = limit;
    done.count_down();
  });
  done.wait();
  return at_bottom - at_start;
}
}  // namespace

TEST(TaskGroup, AChainOfWaitsCountsItsNestingWhereTheDepthGuardsTheStack) {
  heist::executor ex(1);
  constexpr std::uint32_t levels = 50;
  EXPECT_EQ(nesting_counted_by_a_chain(ex, levels, false), HEIST_TSAN ? levels : 0u);
  EXPECT_EQ(nesting_counted_by_a_chain(ex, levels, true), levels);
}

// The wait's short path (run_task.hpp, try_run_own_child) leaves the thread's isolation region
// as it is: only for a child of the waiter's own region. A child spawned inside isolate() and
// joined outside it still runs in its region, and the waiter's region is back after it.
TEST(TaskGroup, AChildSpawnedInsideIsolateAndJoinedOutsideRunsInItsRegion) {
  heist::executor ex(1);
  std::uintptr_t before = 1, region = 0, seen = 0, after = 1;
  std::thread::id waiter, runner;
  // The main thread blocks on a latch and does not help: the one worker runs everything.
  std::latch done(1);
  ex.post([&] {
    before = heist::detail::t_context->m_isolation;
    heist::task_group g;
    heist::isolate([&] {
      region = heist::detail::t_context->m_isolation;
      g.run([&] {
        seen = heist::detail::t_context->m_isolation;
        runner = std::this_thread::get_id();
      });
    });
    g.wait();  // outside the region: it pops the child and runs it itself
    after = heist::detail::t_context->m_isolation;
    waiter = std::this_thread::get_id();
    done.count_down();
  });
  done.wait();
  EXPECT_EQ(runner, waiter);
  EXPECT_NE(region, 0u);
  EXPECT_EQ(seen, region);
  EXPECT_EQ(before, 0u);
  EXPECT_EQ(after, before);
}

// The short path also leaves the task depth as it is (only zero or not matters): only for a
// waiter that runs inside a task. An outsider's run_and_wait holds a leased slot at depth 0;
// the child its wait pops runs as a task, so the child's own spawns are a task's, not an
// outsider's (spawn.hpp: an outsider's spawn is refused once shutdown began).
TEST(TaskGroup, AChildJoinedByAnOutsidersRunAndWaitRunsAsATask) {
  heist::executor ex(1);
  // Keep the one worker busy, so that the child is not stolen: the wait pops it.
  std::latch busy(1), release(1);
  ex.post([&] {
    busy.count_down();
    release.wait();
  });
  busy.wait();
  heist::task_group g(ex);
  std::uint32_t outside_depth = 1, child_depth = 0;
  std::thread::id runner;
  g.run_and_wait([&] {
    outside_depth = heist::detail::t_context->m_task_depth;
    g.run([&] {
      child_depth = heist::detail::t_context->m_task_depth;
      runner = std::this_thread::get_id();
    });
  });
  release.count_down();
  EXPECT_EQ(runner, std::this_thread::get_id());
  EXPECT_EQ(outside_depth, 0u);
  EXPECT_GT(child_depth, 0u);
  EXPECT_EQ(heist::detail::t_context->m_task_depth, 0u);
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

TEST(ParallelInvoke, RunsEveryFunctionAndTheLastOnTheCaller) {
  heist::executor ex(2);
  ex.submit([] {
      std::atomic<int> a{0}, b{0}, c{0};
      std::thread::id last;
      heist::parallel_invoke([&] { a = 1; }, [&] { b = 2; },
                             [&] {
                               c = 3;
                               last = std::this_thread::get_id();
                             });
      EXPECT_EQ(a.load() + b.load() + c.load(), 6);
      EXPECT_EQ(last, std::this_thread::get_id());
    }).get();
}

TEST(ParallelInvoke, OneAndManyFunctions) {
  int one = 0;
  heist::parallel_invoke([&] { one = 1; });
  EXPECT_EQ(one, 1);
  std::atomic<int> sum{0};
  heist::parallel_invoke([&] { sum += 1; }, [&] { sum += 2; }, [&] { sum += 3; }, [&] { sum += 4; },
                         [&] { sum += 5; }, [&] { sum += 6; });
  EXPECT_EQ(sum.load(), 21);
}

TEST(ParallelInvoke, RethrowsAfterAllFinished) {
  std::atomic<int> finished{0};
  EXPECT_THROW(heist::parallel_invoke(
                   [&] {
                     std::this_thread::sleep_for(5ms);
                     finished.fetch_add(1);
                   },
                   [] { throw std::runtime_error("pi"); }),
               std::runtime_error);
  // The sleeping function either finished or was skipped; nothing runs after the call.
  const int seen = finished.load();
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(finished.load(), seen);
}

TEST(ParallelInvoke, RecursiveFib) {
  std::function<long(int)> pfib = [&](int n) -> long {
    if (n < 2) return n;
    long a = 0, b = 0;
    heist::parallel_invoke([&] { a = pfib(n - 1); }, [&] { b = pfib(n - 2); });
    return a + b;
  };
  EXPECT_EQ(pfib(20), 6765);
}
