// The executor and its errors (kind: requirement).
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <latch>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;

TEST(Executor, NumWorkersAsRequested) {
  for (std::size_t n : {1u, 2u, 3u, 7u}) {
    heist::executor ex(n);
    EXPECT_EQ(ex.num_workers(), n);
  }
}

TEST(Executor, DefaultsToHardwareConcurrency) {
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  heist::executor a;
  EXPECT_EQ(a.num_workers(), hw);
  heist::executor b(heist::executor_options{});
  EXPECT_EQ(b.num_workers(), hw);
}

TEST(Executor, RejectsZeroAndTooManyWorkersNamingTheArgument) {
  auto expect_invalid = [](auto make) {
    try {
      make();
      FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("num_workers"), std::string::npos) << what;
      EXPECT_NE(what.find("4096"), std::string::npos) << what;
    }
  };
  expect_invalid([] { heist::executor ex(0); });
  expect_invalid([] { heist::executor ex(4097); });
  expect_invalid([] {
    heist::executor_options o;
    o.num_workers = 100000;
    heist::executor ex(o);
  });
}

TEST(Executor, SubmitReturnsValuesAndRunsEverything) {
  heist::executor ex(2);
  std::vector<heist::future<int>> futures;
  for (int i = 0; i < 1000; ++i)
    futures.push_back(ex.submit([i] { return i * i; }));
  long sum = 0;
  for (auto& f : futures)
    sum += f.get();
  long expected = 0;
  for (long i = 0; i < 1000; ++i)
    expected += i * i;
  EXPECT_EQ(sum, expected);
}

TEST(Executor, PostRunsFireAndForget) {
  heist::executor ex(3);
  std::atomic<int> count{0};
  for (int i = 0; i < 5000; ++i)
    ex.post([&] { count.fetch_add(1); });
  ex.wait_idle();
  EXPECT_EQ(count.load(), 5000);
}

// A lone worker takes posts queued behind it in batches (search_once): it runs the oldest and
// keeps the rest in its deque, from which it pops them oldest first, so it still runs them
// in the order they were posted.
TEST(Executor, OneWorkerRunsPostsQueuedBehindItInTheirOrder) {
  heist::executor ex(1);
  for (int round = 0; round < 3; ++round) {
    heist_test::occupied_workers busy(ex, 1);
    std::vector<int> order;  // written by the one worker only
    for (int i = 0; i < 100; ++i)
      ex.post([&order, i] { order.push_back(i); });
    busy.release();
    ex.wait_idle();
    std::vector<int> expected(100);
    for (int i = 0; i < 100; ++i)
      expected[i] = i;
    EXPECT_EQ(order, expected);
  }
}

TEST(Executor, WaitIdleIncludesSpawnedChildren) {
  heist::executor ex(2);
  std::atomic<int> count{0};
  std::function<void(int)> spread = [&](int depth) {
    count.fetch_add(1);
    if (depth == 0) return;
    for (int i = 0; i < 3; ++i)
      ex.post([&, depth] { spread(depth - 1); });
  };
  ex.post([&] { spread(6); });
  ex.wait_idle();
  // 1 + 3 + 9 + ... + 3^6
  EXPECT_EQ(count.load(), (729 * 3 - 1) / 2);
}

TEST(Executor, ShutdownRunsEverythingAcceptedIncludingSpawns) {
  std::atomic<int> count{0};
  heist::executor ex(2);
  std::latch gate(1);
  // A chain: each task spawns the next, also after shutdown began.
  std::function<void(int)> chain = [&](int left) {
    count.fetch_add(1);
    if (left > 0) ex.post([&, left] { chain(left - 1); });
  };
  ex.post([&] {
    gate.wait();
    chain(100);
  });
  for (int i = 0; i < 1000; ++i)
    ex.post([&] { count.fetch_add(1); });
  std::thread releaser([&] {
    std::this_thread::sleep_for(20ms);
    gate.count_down();
  });
  ex.shutdown();
  releaser.join();
  EXPECT_EQ(count.load(), 1000 + 101);
}

TEST(Executor, SubmitAfterShutdownThrowsExecutorClosed) {
  heist::executor ex(2);
  ex.shutdown();
  EXPECT_THROW(ex.submit([] { return 1; }), heist::executor_closed);
  EXPECT_THROW(ex.post([] {}), heist::executor_closed);
  heist::task_group g(ex);
  EXPECT_THROW(g.run([] {}), heist::executor_closed);
  // executor_closed is a std::runtime_error.
  try {
    ex.post([] {});
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).size(), 0u);
  }
}

TEST(Executor, ShutdownIsIdempotentAndConcurrentCallsAgree) {
  heist::executor ex(2);
  std::atomic<int> count{0};
  for (int i = 0; i < 1000; ++i)
    ex.post([&] { count.fetch_add(1); });
  std::vector<std::thread> closers;
  for (int i = 0; i < 4; ++i)
    closers.emplace_back([&] { ex.shutdown(); });
  for (auto& t : closers)
    t.join();
  EXPECT_EQ(count.load(), 1000);
  ex.shutdown();
  ex.shutdown();
}

// Whether f() throws std::logic_error (and nothing else).
template <class F>
bool throws_logic_error(F f) {
  try {
    f();
  } catch (const std::logic_error&) {
    return true;
  }
  return false;
}

TEST(Executor, ShutdownFromOwnWorkerThrowsLogicError) {
  heist::executor ex(2);
  EXPECT_TRUE(ex.submit([&] { return throws_logic_error([&] { ex.shutdown(); }); }).get());
}

TEST(Executor, WaitIdleFromOwnTaskThrowsLogicError) {
  heist::executor ex(1);
  EXPECT_TRUE(ex.submit([&] { return throws_logic_error([&] { ex.wait_idle(); }); }).get());
}

TEST(ExecutorDeathTest, DestroyingFromOwnWorkerTerminatesWithAMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto* ex = new heist::executor(1);
        std::latch done(1);
        ex->post([&] {
          delete ex;
          done.count_down();
        });
        done.wait();
      },
      "destroyed from one of its own workers");
}

TEST(Executor, SubmitsFromManyExternalThreadsAllRun) {
  heist::executor ex(2);
  std::atomic<int> count{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i)
        ex.post([&] { count.fetch_add(1); });
    });
  }
  for (auto& t : producers)
    t.join();
  ex.wait_idle();
  EXPECT_EQ(count.load(), 8000);
}

TEST(Executor, EveryStealPolicyRunsNestedWork) {
  for (auto policy : {heist::steal_policy::sticky_random, heist::steal_policy::random,
                      heist::steal_policy::round_robin, heist::steal_policy::none}) {
    heist::executor_options o;
    o.num_workers = 3;
    o.policy = policy;
    heist::executor ex(o);
    EXPECT_EQ(ex.submit([] { return heist_test::fork_join_fib(18); }).get(), 2584);
  }
}

// A task spawns children and then waits until other threads have run them: only possible
// if idle workers steal from its deque.
TEST(Executor, IdleWorkersStealUnlessPolicyIsNone) {
  for (auto policy : {heist::steal_policy::sticky_random, heist::steal_policy::random,
                      heist::steal_policy::round_robin}) {
    heist::executor_options o;
    o.num_workers = 2;
    o.policy = policy;
    heist::executor ex(o);
    std::atomic<int> done{0};
    ex.submit([&] {
        heist::task_group g;
        for (int i = 0; i < 20; ++i)
          g.run([&] { done.fetch_add(1); });
        // Do not help: the children can only run if the other worker steals them.
        EXPECT_TRUE(heist_test::eventually([&] { return done.load() == 20; }));
        g.wait();
      }).get();
    EXPECT_GT(ex.stats().stolen(), 0u);
  }
  heist::executor_options o;
  o.num_workers = 2;
  o.policy = heist::steal_policy::none;
  heist::executor ex(o);
  std::atomic<int> done{0};
  ex.submit([&] {
      heist::task_group g;
      for (int i = 0; i < 20; ++i)
        g.run([&] { done.fetch_add(1); });
      std::this_thread::sleep_for(20ms);
      EXPECT_EQ(done.load(), 0);  // nobody steals
      g.wait();
      EXPECT_EQ(done.load(), 20);
    }).get();
  EXPECT_EQ(ex.stats().stolen(), 0u);
}

// A burst of spawns onto one deque reaches every sleeping worker. Only the first push finds
// the deque empty and wakes a worker; the pushes after it wake nobody (idle_state.hpp), so
// the others must be woken by the chain of thieves that leave searching with work in sight
// (L2 in include/heist/detail/sleep/README.md). Each task holds its thread until four distinct
// threads hold one: the spawner (helping in its wait) and all three sleepers.
TEST(Executor, SleepingWorkersWakeOneAnotherForABurstOnOneDeque) {
  heist::executor ex(4);
  // Each worker's park count when it was last seen busy (all zero before the first round).
  std::vector<std::uint64_t> busy_mark(4, 0);
  for (int round = 0; round < 20; ++round) {
    // Every worker parked since it was last busy: nobody searches when the burst starts.
    const bool all_parked = heist_test::eventually([&] {
      const auto s = ex.stats();
      for (std::size_t w = 0; w < s.workers.size(); ++w) {
        if (s.workers[w].sleeps == busy_mark[w]) return false;
      }
      return true;
    });
    ASSERT_TRUE(all_parked) << "round " << round;
    std::mutex lock;
    std::set<std::thread::id> holders;
    bool marked = false;
    std::atomic<int> timed_out{0};
    std::latch done(1);  // not future::get(): this thread must not help
    ex.post([&] {
      {
        heist::task_group g;
        for (int i = 0; i < 16; ++i) {
          g.run([&] {
            {
              const std::lock_guard<std::mutex> guard(lock);
              holders.insert(std::this_thread::get_id());
            }
            const bool all = heist_test::eventually(
                [&] {
                  const std::lock_guard<std::mutex> guard(lock);
                  return holders.size() == 4;
                },
                10s);
            if (!all) {
              timed_out.fetch_add(1);
              return;
            }
            // All four are busy now: each parks again after this point.
            const std::lock_guard<std::mutex> guard(lock);
            if (!std::exchange(marked, true)) {
              const auto s = ex.stats();
              for (std::size_t w = 0; w < s.workers.size(); ++w)
                busy_mark[w] = s.workers[w].sleeps;
            }
          });
        }
        g.wait();
      }
      done.count_down();
    });
    done.wait();
    ASSERT_EQ(timed_out.load(), 0) << "round " << round;
    EXPECT_EQ(holders.size(), 4u) << "round " << round;
  }
}

TEST(Executor, DefaultExecutorIsOneInstanceWithHardwareMinusOneWorkers) {
  heist::executor& a = heist::default_executor();
  heist::executor& b = heist::default_executor();
  EXPECT_EQ(&a, &b);
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(a.num_workers(), std::max<std::size_t>(1, hw - 1));
  EXPECT_EQ(a.submit([] { return 5; }).get(), 5);
}

TEST(Executor, IdlePoolSleeps) {
  heist::executor ex(2);
  ex.submit([] {}).get();
  EXPECT_TRUE(heist_test::eventually([&] {
    auto s = ex.stats();
    return s.workers[0].sleeps > 0 && s.workers[1].sleeps > 0;
  }));
}

// wait_idle() sleeps until some thread finds the pool quiescent. Here the last task ends on
// a thread outside the pool that helps in task_group::wait, after the worker has gone idle:
// that thread must wake the wait_idle() caller when it stops helping.
TEST(Executor, WaitIdleWakesWhenAnOutsideHelperRunsTheLastTask) {
  heist::executor ex(1);
  std::atomic<bool> helper_took_it{false};
  std::atomic<bool> release{false};
  // Busy until the outside helper has taken the group's task, so the worker cannot take it.
  ex.post([&] {
    while (!helper_took_it.load())
      std::this_thread::yield();
  });
  heist::task_group g(ex);
  g.run([&] {
    helper_took_it = true;
    while (!release.load())
      std::this_thread::sleep_for(1ms);
  });
  std::thread helper([&] { g.wait(); });
  EXPECT_TRUE(heist_test::wait_idle_returns_after(
      ex, [&] { return helper_took_it.load(); }, [&] { release = true; }));
  helper.join();
}

// A thread_local destructor that runs after heist's own (its object was made before the
// thread first used heist, so it is destroyed after) may still use heist: it gets a context of
// its own for the rest of the thread's exit, which goes away with the thread.
namespace {
struct submits_at_thread_exit {
  heist::executor* ex = nullptr;
  std::atomic<int>* ran = nullptr;
  ~submits_at_thread_exit() {
    if (ex != nullptr) ran->fetch_add(ex->submit([] { return 1; }).get());
  }
};
}  // namespace

TEST(Executor, AThreadLocalDestructorAfterHeistsOwnMayStillUseIt) {
  heist::executor ex(1);
  std::atomic<int> ran{0};
  for (int i = 0; i < 3; ++i) {
    std::thread t([&] {
      thread_local submits_at_thread_exit late;  // made first: destroyed after heist's
      late.ex = &ex;
      late.ran = &ran;
      ex.submit([] {}).get();  // the thread's heist context, made now
    });
    t.join();
  }
  EXPECT_EQ(ran.load(), 3);
}
