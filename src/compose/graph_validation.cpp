// graph_runner's validation of a task_graph before a run: strong-predecessor counts, the
// sources, the flat successor array, strong cycles (Kahn's algorithm) and module cycles.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compose/graph_runner.hpp"

namespace heist::detail {

std::string node_label(const graph_node_data& n) {
  if (!n.m_name.empty()) return n.m_name;
  std::string id = std::to_string(n.m_index);  // (not "n" + ...: GCC 12's -Wrestrict)
  id.insert(id.begin(), 'n');
  return id;
}

void graph_runner::check_composition(std::vector<const task_graph*>& path) {
  std::vector<std::pair<const graph_node_data*, task_graph*>> modules;
  {
    std::lock_guard<std::mutex> lock(m_lock);
    if (!m_validated) validate_topology();
    modules.reserve(m_modules.size());
    for (const graph_node_data* n : m_modules)
      modules.emplace_back(n, n->m_module);
  }
  path.push_back(&m_graph);
  for (const auto& [n, sub] : modules) {
    if (std::find(path.begin(), path.end(), sub) != path.end()) {
      throw std::invalid_argument("heist::task_graph::run: module node \"" + node_label(*n) +
                                  "\" contains a graph that contains it");
    }
    sub->m_runner->check_composition(path);
  }
  path.pop_back();
}

void graph_runner::refuse_if_running_locked(const char* what) const {
  // Under m_lock, where every run request is counted in flight (append_locked) before it
  // starts. acquire: pairs with complete()'s release decrement, so an edit made after the
  // last run ended also orders after everything that run did.
  if (m_in_flight.load(std::memory_order_acquire) != 0) {
    throw std::logic_error(std::string("heist::task_graph::") + what +
                           ": the graph is running; change it between runs");
  }
}

void graph_runner::validate_topology() {
  const auto& nodes = m_graph.m_nodes;
  m_sources.clear();
  m_modules.clear();
  m_has_conditions = false;
  std::size_t edges = 0;
  for (graph_node_data* n : nodes) {
    n->m_strong_preds = 0;
    edges += n->m_successors.size();
  }
  // The flat successor array (CSR): each node's successors, nodes in creation order.
  m_flat_successors.clear();
  m_flat_successors.reserve(edges);
  for (graph_node_data* n : nodes) {
    n->m_num_succ = static_cast<std::uint32_t>(n->m_successors.size());
    m_flat_successors.insert(m_flat_successors.end(), n->m_successors.begin(),
                             n->m_successors.end());
  }
  std::size_t at = 0;
  for (graph_node_data* n : nodes) {
    n->m_succ = m_flat_successors.data() + at;
    at += n->m_num_succ;
    if (n->m_predecessors.empty()) m_sources.push_back(n);
    if (n->m_kind == graph_node_kind::module) m_modules.push_back(n);
    if (n->m_kind == graph_node_kind::condition) {
      m_has_conditions = true;
      continue;
    }
    for (graph_node_data* s : n->m_successors)
      ++s->m_strong_preds;
  }
  m_counters_ready = false;
  check_strong_cycles();
  m_validated = true;
}

void graph_runner::check_strong_cycles() const {
  const auto& nodes = m_graph.m_nodes;
  std::vector<std::uint32_t> indegree(nodes.size());
  std::vector<const graph_node_data*> ready;
  for (graph_node_data* n : nodes) {
    indegree[n->m_index] = n->m_strong_preds;
    if (n->m_strong_preds == 0) ready.push_back(n);
  }
  std::size_t seen = 0;
  while (!ready.empty()) {
    const graph_node_data* n = ready.back();
    ready.pop_back();
    ++seen;
    if (n->m_kind == graph_node_kind::condition) continue;
    for (const graph_node_data* s : n->m_successors) {
      if (--indegree[s->m_index] == 0) ready.push_back(s);
    }
  }
  if (seen == nodes.size()) return;
  const graph_node_data* at = nullptr;
  for (graph_node_data* n : nodes) {
    if (indegree[n->m_index] != 0) {
      at = n;
      break;
    }
  }
  std::vector<bool> visited(nodes.size(), false);
  while (!visited[at->m_index]) {
    visited[at->m_index] = true;
    for (const graph_node_data* p : at->m_predecessors) {
      if (p->m_kind != graph_node_kind::condition && indegree[p->m_index] != 0) {
        at = p;
        break;
      }
    }
  }
  throw std::invalid_argument(
      "heist::task_graph::run: a cycle of strong edges runs through "
      "node \"" +
      node_label(*at) + "\"");
}

}  // namespace heist::detail
