// The dangerous interleavings of the executor, repeated (kind: stress). Counts prove that
// every task ran exactly once; timeouts turn a lost wake-up into a failure, not a hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;

using heist_test::exactly_once;
using heist_test::split_leaves;

TEST(ExecutorStress, PoolFallingAsleepJustAsWorkArrives) {
  // One submission at a time into a pool that is going to sleep or asleep; the submitter
  // waits without helping, so only a worker can run it: a lost wake-up hangs the round.
  heist::executor ex(2);
  const std::size_t rounds = heist_test::scaled(100000);
  std::atomic<std::size_t> done{0};
  for (std::size_t r = 1; r <= rounds; ++r) {
    // Vary the gap since the previous task so that this submission lands in every phase of
    // the workers' idle loop: still spinning (no gap), yielding, parking (up to ~50 us of
    // spinning here), or fully asleep (sleeping up to ~100 us).
    switch (r % 4) {
      case 0:
        break;
      case 1: {
        const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(r % 50000);
        while (std::chrono::steady_clock::now() < until) {
        }
        break;
      }
      case 2:
        std::this_thread::yield();
        break;
      default:
        std::this_thread::sleep_for(std::chrono::microseconds(r % 100));
    }
    ex.post([&] { done.fetch_add(1, std::memory_order_release); });
    ASSERT_TRUE(
        heist_test::eventually([&] { return done.load(std::memory_order_acquire) == r; }, 10s))
        << "round " << r << " never ran";
  }
}

TEST(ExecutorStress, ManyExternalProducersWhileThePoolGoesIdleAndBusy) {
  heist::executor ex(2);
  const std::size_t per_producer = heist_test::scaled(20000);
  const int producers = 4;
  exactly_once once(per_producer * producers);
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (std::size_t i = 0; i < per_producer; ++i) {
        ex.post([&once, idx = p * per_producer + i] { once.hit(idx); });
        if (i % 512 == 0) std::this_thread::sleep_for(50us);  // idle gaps
      }
    });
  }
  for (auto& t : threads)
    t.join();
  ex.wait_idle();
  EXPECT_EQ(once.wrong(), 0u);
}

TEST(ExecutorStress, ShutdownWithWorkInFlight) {
  const std::size_t rounds = heist_test::scaled(300);
  for (std::size_t r = 0; r < rounds; ++r) {
    std::atomic<int> count{0};
    {
      heist::executor ex(2);
      for (int i = 0; i < 50; ++i) {
        ex.post([&] {
          heist::task_group g;
          for (int k = 0; k < 10; ++k)
            g.run([&] { count.fetch_add(1); });
          g.wait();
          count.fetch_add(1);
        });
      }
      // Destroyed at once: everything accepted must still run.
    }
    ASSERT_EQ(count.load(), 50 * 11) << "round " << r;
  }
}

TEST(ExecutorStress, SubmissionsRacingShutdownRunOrThrow) {
  const std::size_t rounds = heist_test::scaled(200);
  for (std::size_t r = 0; r < rounds; ++r) {
    std::atomic<int> accepted{0}, ran{0};
    auto ex = std::make_unique<heist::executor>(2);
    std::thread producer([&] {
      for (int i = 0; i < 2000; ++i) {
        try {
          ex->post([&] { ran.fetch_add(1); });
          accepted.fetch_add(1);
        } catch (const heist::executor_closed&) {
          break;
        }
      }
    });
    std::this_thread::sleep_for(std::chrono::microseconds(r % 200));
    ex->shutdown();
    producer.join();
    // No lost work: every accepted task ran; nothing refused ran.
    ASSERT_EQ(ran.load(), accepted.load()) << "round " << r;
  }
}

TEST(ExecutorStress, ExceptionsFromThousandsOfTasksAtOnce) {
  heist::executor ex(2);
  const std::size_t rounds = heist_test::scaled(50);
  for (std::size_t r = 0; r < rounds; ++r) {
    heist::task_group g(ex);
    std::atomic<int> ran{0};
    for (int i = 0; i < 5000; ++i) {
      g.run([&] {
        ran.fetch_add(1);
        throw std::runtime_error("many");
      });
    }
    EXPECT_THROW(g.wait(), std::runtime_error);
    EXPECT_GE(ran.load(), 1);
    // Reusable afterwards, nothing left over.
    std::atomic<int> after{0};
    g.run([&] { after.fetch_add(1); });
    EXPECT_NO_THROW(g.wait());
    EXPECT_EQ(after.load(), 1);
  }
}

TEST(ExecutorStress, NestedGroupsThrowingAtEveryLevel) {
  heist::executor ex(2);
  std::function<void(int)> nest = [&](int depth) {
    heist::task_group g;
    for (int i = 0; i < 4; ++i) {
      g.run([&, depth] {
        if (depth == 0) throw std::runtime_error("leaf");
        nest(depth - 1);
      });
    }
    g.wait();
  };
  for (std::size_t r = 0; r < heist_test::scaled(50); ++r) {
    EXPECT_THROW(ex.submit([&] { nest(4); }).get(), std::runtime_error);
  }
}

TEST(ExecutorStress, ForkJoinTreesCountEveryTaskOnce) {
  heist::executor ex(3);
  const std::size_t rounds = heist_test::scaled(20);
  for (std::size_t r = 0; r < rounds; ++r) {
    const std::size_t leaves = 1 << 14;
    exactly_once once(leaves);
    ex.submit([&] { split_leaves(once, 0, leaves); }).get();
    EXPECT_EQ(once.wrong(), 0u);
  }
}

TEST(ExecutorStress, WaitingInsideATaskOnWorkQueuedBehindIt) {
  // Each task waits for a future of a task submitted after it (so queued behind it) on a
  // one-worker pool: only helping waits make progress.
  heist::executor ex(1);
  std::function<int(int)> chain = [&](int n) -> int {
    if (n == 0) return 0;
    auto f = ex.submit([&, n] { return chain(n - 1); });
    return f.get() + 1;
  };
  EXPECT_EQ(ex.submit([&] { return chain(2000); }).get(), 2000);
}

TEST(ExecutorStress, SpawnsWakingParkedWorkersRunEveryTaskOnce) {
  // A worker spawns into a pool whose other workers are spinning, parking or asleep, so its
  // spawns wake them; where the process may use two CPUs the waker then yields and a woken
  // worker that landed on the waker's CPU steps off it (wake_placement.hpp). Every child runs
  // exactly once, and every round ends (a lost wake-up would leave the group to its owner,
  // which still finishes it: the count is what proves the wake path lost nothing).
  const std::size_t workers = std::max<unsigned>(2, std::thread::hardware_concurrency());
  heist::executor ex(workers);
  const std::size_t rounds = heist_test::scaled(3000);
  constexpr std::size_t k = 8;
  exactly_once once(rounds * k);
  for (std::size_t r = 0; r < rounds; ++r) {
    if (r % 3 == 1) std::this_thread::sleep_for(std::chrono::microseconds(r % 200));
    ex.submit([&once, r] {
        heist::task_group g;
        for (std::size_t i = 0; i < k; ++i)
          g.run([&once, r, i] { once.hit(r * k + i); });
        g.wait();
      }).get();
  }
  EXPECT_EQ(once.wrong(), 0u);
}

// Executors built and torn down from several threads at once, each placing its initial
// workers on CPUs of its creator's mask (wake_placement.hpp, start placement) while work is
// already posted: every task runs once, and no worker ends narrowed to the one CPU it started
// on (the perturbation build delays creators between creating a worker and placing it).
TEST(ExecutorStress, ExecutorsStartedFromSeveralThreadsAtOnceRunEveryTaskOnce) {
  const cpu_set_t creator = heist_test::this_thread_mask();
  ASSERT_NE(CPU_COUNT(&creator), 0);
  const std::size_t rounds = heist_test::scaled(300);
  constexpr int k_creators = 3;
  constexpr std::size_t k_tasks = 64;
  std::atomic<int> narrowed{0}, failures{0};
  std::vector<std::thread> creators;
  for (int t = 0; t < k_creators; ++t) {
    creators.emplace_back([&] {
      for (std::size_t r = 0; r < rounds; ++r) {
        exactly_once ran(k_tasks);
        {
          heist::executor_options o;
          o.num_workers = 2;
          o.on_worker_stop = [&](std::size_t) {
            if (!heist_test::same_mask(heist_test::this_thread_mask(), creator)) {
              narrowed.fetch_add(1);
            }
          };
          heist::executor ex(o);
          ex.post([&] {
            heist::task_group g;
            for (std::size_t i = 0; i < k_tasks; ++i)
              g.run([&ran, i] { ran.hit(i); });
            g.wait();
          });
        }  // destroyed at once: what was accepted still runs
        if (ran.wrong() != 0) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& c : creators)
    c.join();
  EXPECT_EQ(failures.load(), 0) << "rounds with a task not run exactly once";
  EXPECT_EQ(narrowed.load(), 0) << "workers that ended with a mask other than their creator's";
}

// More outside threads than the executor's four leasable slots wait on its work at once:
// those that find every slot taken help without a slot, taking queued tasks (and stealing,
// when they find a deque's tasks first) while the workers and the leased slots fork and join.
// Twelve threads, each waiting on the fork-join tree it submitted, fresh rounds with fresh
// threads; every leaf runs once. (A steal by a helper that has run no task yet is
// the riskiest; Stats.AHelperWithoutASlotCountsWhatIt
// StealsAsExternal sets that up deterministically.)
TEST(ExecutorStress, TwelveOutsideThreadsWaitAtOnceSomeWithoutASlot) {
  heist::executor ex(2);
  constexpr std::size_t k_threads = 12, k_leaves = 1 << 10;
  const std::size_t rounds = heist_test::scaled(20);
  for (std::size_t r = 0; r < rounds; ++r) {
    std::vector<std::unique_ptr<exactly_once>> once;
    for (std::size_t t = 0; t < k_threads; ++t)
      once.push_back(std::make_unique<exactly_once>(k_leaves));
    std::vector<std::thread> outside;
    for (std::size_t t = 0; t < k_threads; ++t) {
      outside.emplace_back([&, t] {
        heist::task_group root(ex);
        root.run([&] { split_leaves(*once[t], 0, k_leaves); });
        root.wait();  // helps: on a leased slot, or without one when all four are taken
      });
    }
    for (auto& t : outside)
      t.join();
    for (std::size_t t = 0; t < k_threads; ++t)
      EXPECT_EQ(once[t]->wrong(), 0u) << "round " << r << ", thread " << t;
  }
  const heist::executor_stats s = ex.stats();
  EXPECT_EQ(s.external.steal_attempts, s.external.stolen + s.external.failed_steals);
}

namespace {
// Calls mark_all(once), which hits each of n indices as it runs them: true if it returned
// and hit each exactly once; if it threw executor_closed, false when an index ran twice, else
// the exception passes on.
template <class MarkAll>
bool each_index_once(std::size_t n, MarkAll mark_all) {
  exactly_once once(n);
  try {
    mark_all(once);
  } catch (const heist::executor_closed&) {
    if (once.repeated() != 0) return false;
    throw;
  }
  return once.wrong() == 0;
}
}  // namespace

// Algorithms called from outside while the executor shuts down: a loop, a pipeline and a graph
// run, each called again and again on a thread of its own until one throws executor_closed.
// Whatever the moment the shutdown lands (before a call: refused before it runs anything;
// during one: its next give or spawn is refused and the call ends with the error), every call
// returns, no index, item or node runs twice, and a call that returns normally ran everything.
TEST(ExecutorStress, ShutdownRacingOutsideLoopsPipelinesAndGraphsEndsEveryCall) {
  const std::size_t rounds = heist_test::scaled(60);
  for (std::size_t r = 0; r < rounds; ++r) {
    auto ex = std::make_unique<heist::executor>(2);
    std::atomic<bool> failed{false};
    auto until_closed = [&](auto call) {
      return std::thread([&failed, call] {
        try {
          for (;;) {
            if (!call()) {
              failed = true;
              return;
            }
          }
        } catch (const heist::executor_closed&) {
        }
      });
    };
    const int n = 4000;
    std::thread loops = until_closed([&] {
      return each_index_once(n, [&](exactly_once& once) {
        heist::parallel_for(*ex, 0, n, [&](int i) { once.hit(i); });
      });
    });
    std::thread pipelines = until_closed([&] {
      return each_index_once(n, [&](exactly_once& once) {
        int next = 0;
        heist::parallel_pipeline(*ex, 4,
                                 heist_test::numbers_below(n, next) &
                                     heist::make_filter<int, void>(heist::filter_mode::parallel,
                                                                   [&](int i) { once.hit(i); }));
      });
    });
    std::thread graphs = until_closed([&] {
      heist::task_graph g;
      std::atomic<int> first{0}, second{0};
      g.emplace([&] { first.fetch_add(1); }).precede(g.emplace([&] { second.fetch_add(1); }));
      try {
        g.run_n(*ex, 20).get();
      } catch (const heist::executor_closed&) {
        if (second.load() > first.load() || first.load() > 20) return false;
        throw;
      }
      return first.load() == 20 && second.load() == 20;
    });
    std::this_thread::sleep_for(std::chrono::microseconds(100 + 100 * (r % 30)));
    ex->shutdown();
    loops.join();
    pipelines.join();
    graphs.join();
    ASSERT_FALSE(failed.load()) << "round " << r;
  }
}
