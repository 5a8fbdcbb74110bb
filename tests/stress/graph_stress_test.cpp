// task_graph under load: large random DAGs checked against their edges on every run,
// many reruns, concurrent requests, failing runs followed by clean ones. Counts prove every
// node ran exactly once per run. HEIST_STRESS_SCALE scales the sizes.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {

// A random DAG whose nodes check, when they run, that every predecessor has already run in
// this run (its stamp equals the run number), then stamp themselves.
class checked_dag {
 public:
  checked_dag(std::size_t n, std::uint32_t seed) : m_stamp(n), m_runs(n) {
    std::mt19937 rng(seed);
    m_preds.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      m_nodes.push_back(m_graph.emplace([this, i] { visit(i); }));
    }
    for (std::size_t i = 1; i < n; ++i) {
      // Up to three edges from earlier nodes (a DAG by construction); some nodes have none
      // and start the run.
      const std::size_t edges = rng() % 4;
      for (std::size_t e = 0; e < edges; ++e) {
        const std::size_t from = rng() % i;
        m_nodes[from].precede(m_nodes[i]);
        m_preds[i].push_back(from);
      }
    }
  }

  heist::task_graph& graph() { return m_graph; }
  long violations() const { return m_violations.load(); }
  bool every_node_ran(long times) const {
    for (const auto& r : m_runs)
      if (r.load() != times) return false;
    return true;
  }

 private:
  void visit(std::size_t i) {
    // Which run this is: the node's own count of earlier visits plus one (every node runs
    // once per run, which every_node_ran checks). Predecessors must carry that stamp.
    const long run = m_runs[i].load(std::memory_order_relaxed) + 1;
    for (std::size_t p : m_preds[i]) {
      if (m_stamp[p].load(std::memory_order_relaxed) != run) m_violations.fetch_add(1);
    }
    m_stamp[i].store(run, std::memory_order_relaxed);
    m_runs[i].fetch_add(1, std::memory_order_relaxed);
  }

  heist::task_graph m_graph;
  std::vector<heist::graph_node> m_nodes;
  std::vector<std::vector<std::size_t>> m_preds;
  std::vector<std::atomic<long>> m_stamp;
  std::vector<std::atomic<long>> m_runs;
  std::atomic<long> m_violations{0};
};

}  // namespace

TEST(GraphStress, TenThousandNodeRandomDagsRespectEveryEdge) {
  heist::executor ex(2);
  const std::size_t n = heist_test::scaled(10000);
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    checked_dag dag(n, seed);
    dag.graph().run_n(ex, 3).get();
    EXPECT_EQ(dag.violations(), 0) << "seed " << seed;
    EXPECT_TRUE(dag.every_node_ran(3)) << "seed " << seed;
  }
}

TEST(GraphStress, AThousandRerunsOfOneGraph) {
  heist::executor ex(2);
  checked_dag dag(heist_test::scaled(1000), 42);
  const long reruns = static_cast<long>(heist_test::scaled(1000));
  for (long r = 0; r < reruns; ++r)
    dag.graph().run(ex).get();
  EXPECT_EQ(dag.violations(), 0);
  EXPECT_TRUE(dag.every_node_ran(reruns));
}

TEST(GraphStress, ConcurrentRequestsFromOutsideAndInsideTheExecutor) {
  heist::executor ex(2);
  checked_dag dag(heist_test::scaled(500), 7);
  const int per_thread = static_cast<int>(heist_test::scaled(100));
  std::vector<std::thread> outside;
  for (int t = 0; t < 3; ++t) {
    outside.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i)
        dag.graph().run(ex).get();
    });
  }
  // And from inside tasks, which help while they wait.
  heist::task_group g(ex);
  for (int i = 0; i < per_thread; ++i)
    g.run([&] { dag.graph().run().get(); });
  g.wait();
  for (auto& t : outside)
    t.join();
  EXPECT_EQ(dag.violations(), 0);
  EXPECT_TRUE(dag.every_node_ran(4L * per_thread));
}

TEST(GraphStress, FailingRunsLeaveNoTraceOnTheNextRun) {
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<long> ran{0};
  std::atomic<int> fail_at{-1};
  std::vector<heist::graph_node> nodes;
  const int width = 64;
  auto root = g.emplace([] {});
  auto sink = g.emplace([&] { ran.fetch_add(1000); });
  for (int i = 0; i < width; ++i) {
    nodes.push_back(g.emplace([&, i] {
      ran.fetch_add(1);
      if (fail_at.load() == i) throw std::runtime_error("fail");
    }));
    root.precede(nodes.back());
    nodes.back().precede(sink);
  }
  std::mt19937 rng(3);
  const int rounds = static_cast<int>(heist_test::scaled(400));
  for (int r = 0; r < rounds; ++r) {
    const bool fail = r % 2 == 0;
    fail_at = fail ? static_cast<int>(rng() % width) : -1;
    ran = 0;
    if (fail) {
      EXPECT_THROW(g.run(ex).get(), std::runtime_error);
      EXPECT_LT(ran.load(), 1000);  // the sink never runs
    } else {
      g.run(ex).get();
      EXPECT_EQ(ran.load(), width + 1000);  // every node once, the sink once
    }
  }
}

TEST(GraphStress, ConditionLoopsAndModulesNestedManyTimes) {
  heist::executor ex(2);
  heist::task_graph leaf;
  std::atomic<long> leaf_runs{0};
  auto l1 = leaf.emplace([&] { leaf_runs.fetch_add(1); });
  auto l2 = leaf.emplace([&] { leaf_runs.fetch_add(1); });
  l1.precede(l2);
  heist::task_graph mid;
  std::atomic<int> counter{0};
  auto init = mid.emplace([&] { counter = 0; });
  auto body = mid.emplace(leaf);
  auto cond = mid.emplace([&] { return counter.fetch_add(1) + 1 < 5 ? 0 : 1; });
  auto end = mid.emplace([] {});
  init.precede(body);
  body.precede(cond);
  cond.precede(body, end);
  heist::task_graph top;
  auto a = top.emplace(mid);
  auto b = top.emplace([] {});
  a.precede(b);
  const long runs = static_cast<long>(heist_test::scaled(200));
  top.run_n(ex, static_cast<std::size_t>(runs)).get();
  EXPECT_EQ(leaf_runs.load(), runs * 5 * 2);
}
