// task_graph, its runs: run_n/run_until, serialized and concurrent requests,
// exceptions and cancellation, changes while running, the destructor, dynamic tasking,
// executors and task_arena limits.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

using heist_test::run_log;

TEST(TaskGraph, RunNRunsTheWholeGraphNTimes) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<int> first{0}, last{0};
  std::atomic<bool> order_broken{false};
  auto a = g.emplace([&] { first.fetch_add(1); });
  std::vector<heist::graph_node> mids;
  for (int i = 0; i < 20; ++i)
    mids.push_back(g.emplace([] {}));
  auto z = g.emplace([&] {
    if (last.load() + 1 != first.load()) order_broken = true;
    last.fetch_add(1);
  });
  for (auto& m : mids) {
    a.precede(m);
    m.precede(z);
  }
  g.run_n(ex, 50).get();
  EXPECT_EQ(first.load(), 50);
  EXPECT_EQ(last.load(), 50);
  EXPECT_FALSE(order_broken.load());
  g.run_n(ex, 0).get();
  EXPECT_EQ(first.load(), 50);
}

TEST(TaskGraph, TheFirstExceptionCancelsTheRunAndReachesTheFuture) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<int> sources{0}, after{0};
  auto a = g.emplace([&] { sources.fetch_add(1); });
  auto bad = g.emplace([] { throw std::runtime_error("node failed"); });
  auto c = g.emplace([&] { after.fetch_add(1); });
  a.precede(bad);
  bad.precede(c);
  auto f = g.run_n(ex, 5);
  try {
    f.get();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "node failed");
  }
  EXPECT_EQ(sources.load(), 1);  // run_n stopped at the failing run
  EXPECT_EQ(after.load(), 0);    // the successor never started
  // The next run starts clean.
  heist::task_graph ok;
  std::atomic<int> n{0};
  ok.emplace([&] { n.fetch_add(1); });
  ok.run(ex).get();
  EXPECT_EQ(n.load(), 1);
}

TEST(TaskGraph, AnExceptionCancelsTaskGroupsInsideOtherNodes) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<int> started{0};
  g.emplace([&] {
    heist::task_group inner;
    for (int i = 0; i < 2000; ++i) {
      inner.run([&] {
        started.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      });
    }
    inner.wait();
  });
  g.emplace([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    throw std::logic_error("stop");
  });
  EXPECT_THROW(g.run(ex).get(), std::logic_error);
  EXPECT_LT(started.load(), 2000);
}

TEST(TaskGraph, RunsAreSerializedInTheOrderRequested) {
  heist::executor ex(2);
  heist::task_graph g;
  run_log log;
  std::atomic<int> active{0};
  std::atomic<bool> overlapped{false};
  auto a = g.emplace([&] {
    if (active.fetch_add(1) != 0) overlapped = true;
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    log.add("N");
  });
  auto b = g.emplace([&] { active.fetch_sub(1); });
  a.precede(b);
  int checks = 0;
  auto f1 = g.run_n(ex, 3);
  auto f2 = g.run_until(ex, [&] {
    log.add("P");
    return ++checks == 3;
  });
  auto f3 = g.run(ex);
  f3.get();
  EXPECT_TRUE(f1.is_ready());
  EXPECT_TRUE(f2.is_ready());
  f1.get();
  f2.get();
  EXPECT_EQ(log.joined(), "NNNPNPNPN");
  EXPECT_FALSE(overlapped.load());
}

TEST(TaskGraph, ConcurrentRequestsFromManyThreadsAllRunOnceEach) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<int> runs{0}, active{0};
  std::atomic<bool> overlapped{false};
  auto a = g.emplace([&] {
    if (active.fetch_add(1) != 0) overlapped = true;
  });
  auto b = g.emplace([&] {
    active.fetch_sub(1);
    runs.fetch_add(1);
  });
  a.precede(b);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        g.run(ex).get();
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(runs.load(), 200);
  EXPECT_FALSE(overlapped.load());
}

TEST(TaskGraph, ChangingAGraphWhileItRunsThrowsLogicError) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<bool> inside{false}, release{false};
  auto a = g.emplace([&] {
    inside = true;
    heist_test::eventually([&] { return release.load(); });
  });
  auto f = g.run(ex);
  ASSERT_TRUE(heist_test::eventually([&] { return inside.load(); }));
  EXPECT_THROW(g.emplace([] {}), std::logic_error);
  EXPECT_THROW(a.precede(a), std::logic_error);
  EXPECT_THROW(g.clear(), std::logic_error);
  release = true;
  f.get();
  EXPECT_NO_THROW(g.emplace([] {}));  // between runs: allowed
  g.clear();
  EXPECT_EQ(g.num_nodes(), 0u);
}

TEST(TaskGraph, AModuleExceptionReachesTheOuterFuture) {
  heist::executor ex(2);
  heist::task_graph sub;
  sub.emplace([] { throw std::out_of_range("inner"); });
  heist::task_graph top;
  std::atomic<int> after{0};
  auto m = top.emplace(sub);
  auto y = top.emplace([&] { after.fetch_add(1); });
  m.precede(y);
  EXPECT_THROW(top.run(ex).get(), std::out_of_range);
  EXPECT_EQ(after.load(), 0);
}

TEST(TaskGraph, NodesMayUseTaskGroupsLoopsAndOtherGraphs) {
  heist::executor ex(2);
  heist::task_graph inner;
  std::atomic<long> total{0};
  inner.emplace([&] { total.fetch_add(1000); });
  heist::task_graph g;
  auto a = g.emplace([&] { heist::parallel_for(0, 1000, [&](int) { total.fetch_add(1); }); });
  auto b = g.emplace([&] {
    heist::task_group tg;
    for (int i = 0; i < 100; ++i)
      tg.run([&] { total.fetch_add(10); });
    tg.wait();
  });
  auto c = g.emplace([&] { inner.run().get(); });
  a.precede(b);
  b.precede(c);
  g.run(ex).get();
  EXPECT_EQ(total.load(), 3000);
}

TEST(TaskGraph, RunUntilAsksBeforeEveryRunAndItsExceptionReachesTheFuture) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<int> runs{0};
  g.emplace([&] { runs.fetch_add(1); });
  g.run_until(ex, [] { return true; }).get();
  EXPECT_EQ(runs.load(), 0);
  int asked = 0;
  g.run_until(ex, [&] { return ++asked > 4; }).get();
  EXPECT_EQ(runs.load(), 4);
  EXPECT_EQ(asked, 5);
  EXPECT_THROW(g.run_until(ex, []() -> bool { throw std::domain_error("stop failed"); }).get(),
               std::domain_error);
  EXPECT_THROW(g.run_until(ex, nullptr), std::invalid_argument);
}

TEST(TaskGraph, DestructorWaitsForRunsInFlight) {
  heist::executor ex(2);
  std::atomic<int> runs{0};
  {
    auto g = std::make_unique<heist::task_graph>();
    g->emplace([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      runs.fetch_add(1);
    });
    (void)g->run_n(ex, 20);
    (void)g->run(ex);
  }  // destroyed with 21 runs requested
  EXPECT_EQ(runs.load(), 21);
}

TEST(TaskGraph, RunAfterShutdownThrowsExecutorClosed) {
  heist::executor ex(2);
  heist::task_graph g;
  g.emplace([] {});
  ex.shutdown();
  EXPECT_THROW(g.run(ex), heist::executor_closed);
}

TEST(TaskGraph, RunsOnTheCurrentExecutorAndObeysTaskArenaLimits) {
  heist::executor ex(4);
  heist::task_arena arena(1, ex);
  heist::task_graph g;
  std::atomic<int> active{0}, peak{0}, ran{0};
  for (int i = 0; i < 64; ++i) {
    g.emplace([&] {
      const int now = active.fetch_add(1) + 1;
      int p = peak.load();
      while (now > p && !peak.compare_exchange_weak(p, now)) {
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      active.fetch_sub(1);
      ran.fetch_add(1);
    });
  }
  arena.execute([&] { g.run().get(); });
  EXPECT_EQ(ran.load(), 64);
  EXPECT_EQ(peak.load(), 1);
}

// run_n(n) and run_until(stop) without an executor run on the current one, like run(): inside
// a task_arena::execute, in that arena (its limit of one thread holds), n times or until
// stop says so, asked before every run; an empty stop is refused as with an executor.
TEST(TaskGraph, RunNAndRunUntilWithoutAnExecutorRunOnTheCurrentOne) {
  heist::executor ex(4);
  heist::task_arena arena(1, ex);
  heist::task_graph g;
  std::atomic<int> active{0}, peak{0}, ran{0};
  for (int i = 0; i < 8; ++i) {
    g.emplace([&] {
      const int now = active.fetch_add(1) + 1;
      int p = peak.load();
      while (now > p && !peak.compare_exchange_weak(p, now)) {
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      active.fetch_sub(1);
      ran.fetch_add(1);
    });
  }
  arena.execute([&] { g.run_n(5).get(); });
  EXPECT_EQ(ran.load(), 5 * 8);
  int asked = 0;
  arena.execute([&] { g.run_until([&] { return ++asked > 3; }).get(); });
  EXPECT_EQ(asked, 4);
  EXPECT_EQ(ran.load(), 8 * 8);
  EXPECT_EQ(peak.load(), 1);
  // Outside any executor: the default one.
  g.run_n(2).get();
  EXPECT_EQ(ran.load(), 10 * 8);
  EXPECT_THROW((void)g.run_until(nullptr), std::invalid_argument);
}
