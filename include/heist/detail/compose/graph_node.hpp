// graph_node_data: one node of a task_graph (task_graph.hpp), and the graph's run
// machinery (graph_runner, src/compose/graph_runner.cpp). A node is built once and run many times:
// everything a run needs per node (the join counter) lives in the node and is reset in
// place, so a rerun allocates nothing per node.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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

// Hot fields first: a run reads m_fn, the successor range and the counters of each node.
struct graph_node_data {
  // The body: a condition's returns the successor's index; a task's is wrapped to return 0
  // (one callable per node keeps nodes small: graphs of millions of nodes are built).
  std::function<int()> m_fn;
  // Set by validation: the successors as a range of the graph's flat successor array (so a
  // run walks one contiguous array instead of one heap block per node).
  graph_node_data* const* m_succ = nullptr;
  std::uint32_t m_num_succ = 0;
  // Set by validation: how many predecessors are not conditions (strong edges in).
  std::uint32_t m_strong_preds = 0;
  // Strong predecessors still to finish in this run. Reset to m_strong_preds at the start
  // of a run that needs it, and by the node itself each time it is invoked (a condition may
  // loop back to it within the run). Not padded to a cache line: that would double the
  // size of a node, and only nodes with several predecessors finishing at once contend.
  std::atomic<std::uint32_t> m_join{0};
  graph_node_kind m_kind = graph_node_kind::work;
  task_graph* m_module = nullptr;
  // Cold: building, validation, DOT and messages.
  task_graph* m_graph = nullptr;  // the owner: edges never cross graphs
  std::size_t m_index = 0;        // position in the owner
  std::string m_name;
  std::vector<graph_node_data*> m_successors;    // in precede() order
  std::vector<graph_node_data*> m_predecessors;  // every kind of edge
};

// A graph's nodes, in chunks that never move (handles point into them) and grow from 16 to
// 1,024 nodes, so a big graph's nodes lie side by side in memory in the order they were
// made: runs of chains, trees and grids walk them nearly sequentially.
class graph_node_store {
 public:
  graph_node_data& emplace_back() {
    if (m_chunks.empty() || m_used == m_chunks.back().size) {
      const std::size_t n = std::size_t{16} << std::min<std::size_t>(m_chunks.size(), 6);
      m_chunks.push_back({std::make_unique<graph_node_data[]>(n), n});
      m_used = 0;
    }
    ++m_size;
    return m_chunks.back().nodes[m_used++];
  }
  std::size_t size() const noexcept { return m_size; }
  bool empty() const noexcept { return m_size == 0; }
  void clear() noexcept {
    m_chunks.clear();
    m_size = m_used = 0;
  }

  class iterator {
   public:
    iterator(const graph_node_store* s, std::size_t chunk, std::size_t at) noexcept
        : m_store(s), m_chunk(chunk), m_at(at) {}
    graph_node_data* operator*() const noexcept { return &m_store->m_chunks[m_chunk].nodes[m_at]; }
    iterator& operator++() noexcept {
      if (++m_at == m_store->m_chunks[m_chunk].size) {
        ++m_chunk;
        m_at = 0;
      }
      return *this;
    }
    bool operator!=(const iterator& o) const noexcept {
      return m_chunk != o.m_chunk || m_at != o.m_at;
    }

   private:
    const graph_node_store* m_store;
    std::size_t m_chunk, m_at;
  };
  iterator begin() const noexcept { return {this, 0, 0}; }
  iterator end() const noexcept {
    if (m_chunks.empty()) return {this, 0, 0};
    if (m_used == m_chunks.back().size) return {this, m_chunks.size(), 0};
    return {this, m_chunks.size() - 1, m_used};
  }

 private:
  struct chunk {
    std::unique_ptr<graph_node_data[]> nodes;
    std::size_t size;
  };
  std::vector<chunk> m_chunks;
  std::size_t m_used = 0;  // nodes used in the last chunk
  std::size_t m_size = 0;
};

class graph_runner;

}  // namespace heist::detail
