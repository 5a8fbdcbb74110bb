// task_graph, its shape: order of strong edges, conditions (branches, loops,
// weak edges), cycles, composition, bad handles, DOT output, how nodes become tasks. Runs
// (run_n, run_until, serialization, exceptions, changes while running): task_graph_run_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
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

TEST(TaskGraph, AnEditRacingAFirstRunFromAnotherThreadIsBeforeItOrRefused) {
  heist::executor ex(2);
  for (int round = 0; round < 100; ++round) {
    heist::task_graph g;
    std::atomic<int> ran{0};
    g.emplace([&] { ran.fetch_add(1); });
    std::atomic<int> ready{0};
    int added = 0;
    std::thread editor([&] {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      try {
        g.emplace([&] { ran.fetch_add(1); });
        added = 1;
      } catch (const std::logic_error&) {
      }
    });
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    g.run(ex).get();
    editor.join();
    EXPECT_EQ(g.num_nodes(), 1u + added);
    EXPECT_GE(ran.load(), 1);
    EXPECT_LE(ran.load(), 1 + added);
  }
}

TEST(TaskGraph, ACompositionCycleRunFromTwoThreadsAtOnceThrowsOnBoth) {
  // Validation never holds two graphs' locks: each thread walks the cycle from its own end.
  heist::executor ex(2);
  for (int round = 0; round < 200; ++round) {
    heist::task_graph g, h;
    g.emplace([] {});
    h.emplace([] {});
    g.emplace(h);
    h.emplace(g);
    std::atomic<int> ready{0}, thrown{0};
    auto run = [&](heist::task_graph& x) {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      try {
        x.run(ex).get();
      } catch (const std::invalid_argument&) {
        thrown.fetch_add(1);
      }
    };
    std::thread a(run, std::ref(g));
    std::thread b(run, std::ref(h));
    a.join();
    b.join();
    ASSERT_EQ(thrown.load(), 2) << "round " << round;
  }
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
