// task_graph and graph_node: a dependency graph built once and run many
// times on an executor. Strong edges (out of task and module nodes) order nodes; a
// condition node (an int() callable) picks one successor, which runs at once whatever its
// other predecessors, so graphs can branch and loop (Taskflow's condition tasks). A graph
// can be one node of another (composition). How runs are scheduled: src/compose/graph_runner.cpp.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heist/detail/compose/graph_node.hpp"
#include "heist/detail/config.hpp"
#include "heist/executor.hpp"
#include "heist/future.hpp"

namespace heist {

class task_arena;

// A cheap, copyable handle to a node of a task_graph. Default-constructed handles are empty;
// using one throws std::invalid_argument.
class HEIST_API graph_node {
 public:
  graph_node() noexcept = default;

  // Each successor runs after this node (a strong edge; a weak one if this is a condition).
  template <class... N>
  graph_node& precede(N... successors) {
    static_assert((std::is_same_v<N, graph_node> && ...), "precede() takes graph_nodes");
    (link(*this, successors), ...);
    return *this;
  }
  // This node runs after each predecessor.
  template <class... N>
  graph_node& succeed(N... predecessors) {
    static_assert((std::is_same_v<N, graph_node> && ...), "succeed() takes graph_nodes");
    (link(predecessors, *this), ...);
    return *this;
  }

  graph_node& name(std::string n);
  const std::string& name() const;
  std::size_t num_successors() const;
  std::size_t num_predecessors() const;
  bool is_condition() const;
  bool empty() const noexcept { return m_node == nullptr; }

  friend bool operator==(const graph_node& a, const graph_node& b) noexcept {
    return a.m_node == b.m_node;
  }

 private:
  friend class task_graph;
  explicit graph_node(detail::graph_node_data* n) noexcept : m_node(n) {}
  detail::graph_node_data& data() const;
  static void link(const graph_node& from, const graph_node& to);

  detail::graph_node_data* m_node = nullptr;
};

class HEIST_API task_graph {
 public:
  task_graph();
  // Waits for the runs in flight (helping, like future::get).
  ~task_graph();
  task_graph(const task_graph&) = delete;
  task_graph& operator=(const task_graph&) = delete;

  // f: void() makes a task node, a callable returning an integer a condition node.
  template <class F>
  graph_node emplace(F&& f) {
    using result = std::invoke_result_t<std::decay_t<F>&>;
    if constexpr (std::is_void_v<result>) {
      return add_work(std::function<int()>([g = std::decay_t<F>(std::forward<F>(f))]() mutable {
        g();
        return 0;
      }));
    } else {
      static_assert(std::is_integral_v<result>,
                    "task_graph::emplace: a node returns void (a task) or an integer (a "
                    "condition)");
      return add_condition(std::function<int()>(
          [g = std::decay_t<F>(std::forward<F>(f))]() mutable { return static_cast<int>(g()); }));
    }
  }
  // Composition: a node that runs `subgraph` (one run of it) and finishes when it has.
  // `subgraph` must outlive this graph's runs; it may not contain this graph.
  graph_node emplace(task_graph& subgraph);

  std::size_t num_nodes() const noexcept { return m_nodes.size(); }
  bool empty() const noexcept { return m_nodes.empty(); }
  // Removes every node (std::logic_error while a run is in flight).
  void clear();
  // GraphViz DOT: task nodes as boxes, conditions as diamonds (weak edges dashed, labelled
  // with their index), modules as 3-D boxes; labelled by name, else "n<index>".
  void write_dot(std::ostream& out) const;

  // Runs the graph once on the current executor (the one running the calling task, the
  // arena of an enclosing task_arena::execute, else default_executor()). Runs of one graph
  // are serialized in the order they were requested.
  future<void> run();
  future<void> run_n(std::size_t n);
  // Runs again and again until stop() returns true; stop() is called before each run.
  future<void> run_until(std::function<bool()> stop);
  future<void> run(executor& ex);
  future<void> run_n(executor& ex, std::size_t n);
  future<void> run_until(executor& ex, std::function<bool()> stop);

 private:
  friend class graph_node;
  friend class detail::graph_runner;

  graph_node add_work(std::function<int()> f);
  graph_node add_condition(std::function<int()> f);
  // std::logic_error if a run is in flight.
  detail::graph_node_data& add_node(detail::graph_node_kind kind, std::function<int()> f,
                                    task_graph* module);
  future<void> submit(detail::arena& a, std::size_t n, std::function<bool()> stop);

  detail::graph_node_store m_nodes;
  std::unique_ptr<detail::graph_runner> m_runner;
};

}  // namespace heist
