// graph_node_data: one node of a task_graph (task_graph.hpp), and the graph's run
// machinery (graph_runner, src/task_graph.cpp). A node is built once and run many times:
// everything a run needs per node (the join counter) lives in the node and is reset in
// place, so a rerun allocates nothing per node.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "heist/detail/config.hpp"

namespace heist {
class task_graph;
}

namespace heist::detail {

enum class graph_node_kind : std::uint8_t {
  work,       // void(): its successors are strong
  condition,  // int(): picks one successor (a weak edge) by index
  module,     // runs another graph as one node: its successors are strong
};

struct graph_node_data {
  task_graph* m_graph = nullptr;  // the owner: edges never cross graphs
  graph_node_kind m_kind = graph_node_kind::work;
  std::size_t m_index = 0;  // position in the owner, for DOT ids and messages
  std::function<void()> m_work;
  std::function<int()> m_condition;
  task_graph* m_module = nullptr;
  std::string m_name;
  std::vector<graph_node_data*> m_successors;    // in precede() order
  std::vector<graph_node_data*> m_predecessors;  // every kind of edge
  // Set by validation: how many predecessors are not conditions (strong edges in).
  std::uint32_t m_strong_preds = 0;
  // Strong predecessors still to finish in this run. Reset to m_strong_preds at the start
  // of each run, and by the node itself each time it is invoked (a condition may loop
  // back to it within the run).
  alignas(k_cache_line) std::atomic<std::uint32_t> m_join{0};
};

class graph_runner;

}  // namespace heist::detail
