// task_graph (SPEC section 9): order of strong edges, conditions (branches, loops, weak
// edges), composition, run_n/run_until, serialized runs, cycles, exceptions, changes while
// running, DOT output, dynamic tasking, task_arena limits.
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

namespace {

// A thread-safe log of node names, in the order they ran.
class run_log {
 public:
  void add(const std::string& s) {
    std::lock_guard<std::mutex> lock(m_lock);
    m_entries.push_back(s);
  }
  std::vector<std::string> entries() const {
    std::lock_guard<std::mutex> lock(m_lock);
    return m_entries;
  }
  std::string joined() const {
    std::string out;
    for (const auto& e : entries())
      out += e;
    return out;
  }
  std::size_t position(const std::string& s) const {
    const auto e = entries();
    for (std::size_t i = 0; i < e.size(); ++i)
      if (e[i] == s) return i;
    return e.size();
  }

 private:
  mutable std::mutex m_lock;
  std::vector<std::string> m_entries;
};

}  // namespace

TEST(TaskGraph, StrongEdgesOrderNodesAndEachRunsOnce) {
  heist::executor ex(2);
  heist::task_graph g;
  run_log log;
  auto a = g.emplace([&] { log.add("A"); }).name("A");
  auto b = g.emplace([&] { log.add("B"); }).name("B");
  auto c = g.emplace([&] { log.add("C"); }).name("C");
  auto d = g.emplace([&] { log.add("D"); }).name("D");
  a.precede(b, c);
  d.succeed(b, c);
  EXPECT_EQ(a.num_successors(), 2u);
  EXPECT_EQ(d.num_predecessors(), 2u);
  EXPECT_EQ(g.num_nodes(), 4u);
  g.run(ex).get();
  ASSERT_EQ(log.entries().size(), 4u);
  EXPECT_EQ(log.position("A"), 0u);
  EXPECT_EQ(log.position("D"), 3u);
}

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

TEST(TaskGraph, OnlyNodesWithoutPredecessorsStartARun) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<int> ran_b{0};
  // B's only predecessor is a condition that picks nothing: B never runs.
  auto cond = g.emplace([] { return 5; });
  auto b = g.emplace([&] { ran_b.fetch_add(1); });
  cond.precede(b);
  EXPECT_TRUE(cond.is_condition());
  g.run(ex).get();
  EXPECT_EQ(ran_b.load(), 0);
}

TEST(TaskGraph, ConditionPicksTheSuccessorWithItsIndex) {
  heist::executor ex(2);
  for (int pick = -1; pick <= 3; ++pick) {
    heist::task_graph g;
    std::atomic<int> ran[3] = {0, 0, 0};
    auto cond = g.emplace([pick] { return pick; });
    auto s0 = g.emplace([&] { ran[0].fetch_add(1); });
    auto s1 = g.emplace([&] { ran[1].fetch_add(1); });
    auto s2 = g.emplace([&] { ran[2].fetch_add(1); });
    cond.precede(s0, s1, s2);
    g.run(ex).get();
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(ran[i].load(), i == pick ? 1 : 0) << "pick " << pick;
  }
}

TEST(TaskGraph, ConditionLoopsBackThroughAWeakEdge) {
  // init -> body -> cond; cond 0 -> body (loop), cond 1 -> done. A cycle through a
  // condition is allowed.
  heist::executor ex(2);
  heist::task_graph g;
  int i = 0;
  int body_runs = 0;
  bool done_ran = false;
  auto init = g.emplace([&] { i = 0; });
  auto body = g.emplace([&] { ++body_runs; });
  auto cond = g.emplace([&] { return ++i < 10 ? 0 : 1; });
  auto done = g.emplace([&] { done_ran = true; });
  init.precede(body);
  body.precede(cond);
  cond.precede(body, done);
  g.run(ex).get();
  EXPECT_EQ(body_runs, 10);
  EXPECT_TRUE(done_ran);
  g.run(ex).get();  // the join counters were reset: the loop runs again in full
  EXPECT_EQ(body_runs, 20);
}

TEST(TaskGraph, AConditionSchedulesItsPickAtOnceWhateverItsStrongPredecessors) {
  // X has a strong predecessor Y that cannot finish before X has run once: the
  // condition's pick does not wait for Y. When Y finishes, X's counter reaches zero again
  // and X runs a second time.
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<bool> x_ran{false};
  std::atomic<int> x_runs{0};
  std::atomic<bool> y_saw_x{false};
  auto cond = g.emplace([] { return 0; });
  auto y = g.emplace([&] { y_saw_x = heist_test::eventually([&] { return x_ran.load(); }); });
  auto x = g.emplace([&] {
    x_runs.fetch_add(1);
    x_ran = true;
  });
  cond.precede(x);
  y.precede(x);
  g.run(ex).get();
  EXPECT_TRUE(y_saw_x.load());
  EXPECT_EQ(x_runs.load(), 2);
}

TEST(TaskGraph, AStrongCycleIsReportedBeforeAnythingRuns) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<int> ran{0};
  auto a = g.emplace([&] { ran.fetch_add(1); }).name("start");
  auto b = g.emplace([&] { ran.fetch_add(1); }).name("loop-b");
  auto c = g.emplace([&] { ran.fetch_add(1); }).name("loop-c");
  auto d = g.emplace([&] { ran.fetch_add(1); }).name("after");
  a.precede(b);
  b.precede(c);
  c.precede(b, d);
  try {
    g.run(ex);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find("loop-b") != std::string::npos ||
                what.find("loop-c") != std::string::npos)
        << what;
  }
  EXPECT_EQ(ran.load(), 0);
  // A self-loop too; and the graph is usable again once the cycle is gone.
  heist::task_graph h;
  auto s = h.emplace([] {}).name("self");
  s.precede(s);
  EXPECT_THROW(h.run_n(ex, 3), std::invalid_argument);
  EXPECT_THROW(h.run_until(ex, [] { return false; }), std::invalid_argument);
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

TEST(TaskGraph, AGraphRunsAsANodeOfAnother) {
  heist::executor ex(2);
  heist::task_graph sub;
  run_log log;
  auto sa = sub.emplace([&] { log.add("a"); });
  auto sb = sub.emplace([&] { log.add("b"); });
  sa.precede(sb);
  heist::task_graph top;
  auto x = top.emplace([&] { log.add("X"); });
  auto m = top.emplace(sub).name("module");
  auto y = top.emplace([&] { log.add("Y"); });
  x.precede(m);
  m.precede(y);
  top.run_n(ex, 3).get();
  EXPECT_EQ(log.joined(), "XabYXabYXabY");
  // The subgraph can still run on its own.
  sub.run(ex).get();
  EXPECT_EQ(log.entries().size(), 14u);
}

TEST(TaskGraph, CompositionCyclesAreRefused) {
  heist::executor ex(2);
  heist::task_graph a, b;
  EXPECT_THROW(a.emplace(a), std::invalid_argument);
  a.emplace(b).name("b-in-a");
  b.emplace(a).name("a-in-b");
  EXPECT_THROW(a.run(ex), std::invalid_argument);
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

TEST(TaskGraph, EmptyGraphsCompleteAtOnce) {
  heist::executor ex(2);
  heist::task_graph g;
  bool asked = false;
  g.run(ex).get();
  g.run_n(ex, 10).get();
  g.run_until(ex, [&] { return asked = true; }).get();
  EXPECT_FALSE(asked);
  EXPECT_TRUE(g.empty());
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

TEST(TaskGraph, BadHandlesAndForeignNodesAreRefused) {
  heist::task_graph g, h;
  heist::graph_node empty;
  EXPECT_TRUE(empty.empty());
  auto a = g.emplace([] {});
  auto b = h.emplace([] {});
  EXPECT_THROW(a.precede(empty), std::invalid_argument);
  EXPECT_THROW(empty.name(), std::invalid_argument);
  try {
    a.precede(b);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("different graphs"), std::string::npos);
  }
  EXPECT_EQ(a.num_successors(), 0u);
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

TEST(TaskGraph, WriteDotNamesNodesAndMarksConditionsAndModules) {
  heist::task_graph sub;
  sub.emplace([] {});
  heist::task_graph g;
  auto a = g.emplace([] {}).name("load \"input\"");
  auto c = g.emplace([] { return 1; }).name("check");
  auto m = g.emplace(sub).name("stage");
  auto unnamed = g.emplace([] {});
  a.precede(c);
  c.precede(m, unnamed);
  std::ostringstream out;
  g.write_dot(out);
  const std::string dot = out.str();
  EXPECT_EQ(dot.rfind("digraph", 0), 0u);
  EXPECT_NE(dot.find("label=\"load \\\"input\\\"\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"check\" shape=diamond"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"stage\" shape=box3d"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"n3\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 -> n1;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1 -> n2 [style=dashed label=\"0\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1 -> n3 [style=dashed label=\"1\"]"), std::string::npos) << dot;
}

TEST(TaskGraph, AChainRunsAsOneTaskAndAFanOutAsOneTaskPerBranch) {
  // A finished node keeps its first ready successor on the same thread: a chain of 10,000
  // nodes is one task, not 10,000; a fan-out of 8 chains is 8 tasks (plus the start).
  heist::executor ex(2);
  heist::task_graph chain;
  std::atomic<int> ran{0};
  heist::graph_node prev;
  for (int i = 0; i < 10000; ++i) {
    auto n = chain.emplace([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    if (!prev.empty()) prev.precede(n);
    prev = n;
  }
  chain.run(ex).get();  // warm-up
  ex.wait_idle();
  ex.reset_stats();
  chain.run(ex).get();
  ex.wait_idle();
  EXPECT_EQ(ran.load(), 20000);
  EXPECT_LE(ex.stats().executed(), 2u);  // the start task and the chain

  heist::task_graph fan;
  auto root = fan.emplace([] {});
  for (int b = 0; b < 8; ++b) {
    heist::graph_node at = root;
    for (int i = 0; i < 100; ++i) {
      auto n = fan.emplace([&] { ran.fetch_add(1, std::memory_order_relaxed); });
      at.precede(n);
      at = n;
    }
  }
  fan.run(ex).get();
  ex.wait_idle();
  ex.reset_stats();
  fan.run(ex).get();
  ex.wait_idle();
  EXPECT_EQ(ran.load(), 20000 + 1600);
  EXPECT_LE(ex.stats().executed(), 9u);  // the start task (with root and one branch), 7 more
}
