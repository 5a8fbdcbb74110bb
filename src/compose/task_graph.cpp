// task_graph and graph_node: building a graph, and GraphViz output. Runs are the
// graph_runner's (src/compose/graph_runner.cpp).
#include "heist/task_graph.hpp"

#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

#include "compose/graph_runner.hpp"
#include "core/executor_impl.hpp"
#include "heist/detail/core/executor_seam.hpp"
#include "heist/detail/core/spawn.hpp"

namespace heist {

using detail::graph_node_data;
using detail::graph_node_kind;

// --- graph_node -------------------------------------------------------------------------------
graph_node_data& graph_node::data() const {
  if (m_node == nullptr) throw std::invalid_argument("heist::graph_node: the node handle is empty");
  return *m_node;
}

void graph_node::link(const graph_node& from, const graph_node& to) {
  graph_node_data& a = from.data();
  graph_node_data& b = to.data();
  if (a.m_graph != b.m_graph) {
    throw std::invalid_argument("heist::graph_node::precede: nodes \"" + detail::node_label(a) +
                                "\" and \"" + detail::node_label(b) +
                                "\" belong to different graphs");
  }
  a.m_graph->m_runner->edit("precede", [&] {
    a.m_successors.push_back(&b);
    try {
      b.m_predecessors.push_back(&a);
    } catch (...) {
      a.m_successors.pop_back();
      throw;
    }
  });
}

graph_node& graph_node::name(std::string n) {
  data().m_name = std::move(n);
  return *this;
}
const std::string& graph_node::name() const {
  return data().m_name;
}
std::size_t graph_node::num_successors() const {
  return data().m_successors.size();
}
std::size_t graph_node::num_predecessors() const {
  return data().m_predecessors.size();
}
bool graph_node::is_condition() const {
  return data().m_kind == graph_node_kind::condition;
}

// --- task_graph -------------------------------------------------------------------------------
task_graph::task_graph() : m_runner(std::make_unique<detail::graph_runner>(*this)) {}

task_graph::~task_graph() {
  m_runner->wait_for_runs();
}

graph_node_data& task_graph::add_node(graph_node_kind kind, std::function<int()> f,
                                      task_graph* module) {
  return m_runner->edit("emplace", [&]() -> graph_node_data& {
    const std::size_t index = m_nodes.size();
    graph_node_data& n = m_nodes.emplace_back();
    n.m_graph = this;
    n.m_kind = kind;
    n.m_index = index;
    n.m_fn = std::move(f);
    n.m_module = module;
    return n;
  });
}

graph_node task_graph::add_work(std::function<int()> f) {
  return graph_node(&add_node(graph_node_kind::work, std::move(f), nullptr));
}

graph_node task_graph::add_condition(std::function<int()> f) {
  return graph_node(&add_node(graph_node_kind::condition, std::move(f), nullptr));
}

graph_node task_graph::emplace(task_graph& subgraph) {
  if (&subgraph == this) {
    throw std::invalid_argument("heist::task_graph::emplace: a graph cannot be a node of itself");
  }
  return graph_node(&add_node(graph_node_kind::module, nullptr, &subgraph));
}

void task_graph::clear() {
  m_runner->edit("clear", [&] { m_nodes.clear(); });
}

namespace {
void write_dot_string(std::ostream& out, const std::string& s) {
  out << '"';
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out << '\\';
    out << ch;
  }
  out << '"';
}
}  // namespace

void task_graph::write_dot(std::ostream& out) const {
  out << "digraph heist_task_graph {\n";
  for (const graph_node_data* n : m_nodes) {
    out << "  n" << n->m_index << " [label=";
    write_dot_string(out, detail::node_label(*n));
    if (n->m_kind == graph_node_kind::condition) out << " shape=diamond";
    if (n->m_kind == graph_node_kind::module) out << " shape=box3d";
    if (n->m_kind == graph_node_kind::work) out << " shape=box";
    out << "];\n";
  }
  for (const graph_node_data* n : m_nodes) {
    for (std::size_t i = 0; i < n->m_successors.size(); ++i) {
      out << "  n" << n->m_index << " -> n" << n->m_successors[i]->m_index;
      if (n->m_kind == graph_node_kind::condition) out << " [style=dashed label=\"" << i << "\"]";
      out << ";\n";
    }
  }
  out << "}\n";
}

future<void> task_graph::submit(detail::arena& a, std::size_t n, std::function<bool()> stop) {
  refuse_if_closed(a.exec(), "heist::task_graph::run");
  auto* state = new detail::future_state<void>(&a);
  future<void> result(state);  // owns one reference
  detail::run_request& r = m_runner->make_request();
  r.where = &a;
  r.remaining = stop ? detail::k_run_until : n;
  r.stop = std::move(stop);
  r.error = &state->m_error;
  r.owner = state;
  r.pooled = true;
  state->add_ref();  // the request's
  try {
    m_runner->enqueue(r);
  } catch (...) {  // validation refused the graph: nothing was queued
    state->release();
    m_runner->recycle(r);
    throw;
  }
  return result;
}

future<void> task_graph::run() {
  return submit(detail::current_arena(), 1, nullptr);
}
future<void> task_graph::run_n(std::size_t n) {
  return submit(detail::current_arena(), n, nullptr);
}
future<void> task_graph::run_until(std::function<bool()> stop) {
  if (!stop) throw std::invalid_argument("heist::task_graph::run_until: stop is empty");
  return submit(detail::current_arena(), 0, std::move(stop));
}
future<void> task_graph::run(executor& ex) {
  return submit(detail::default_arena_of(ex), 1, nullptr);
}
future<void> task_graph::run_n(executor& ex, std::size_t n) {
  return submit(detail::default_arena_of(ex), n, nullptr);
}
future<void> task_graph::run_until(executor& ex, std::function<bool()> stop) {
  if (!stop) throw std::invalid_argument("heist::task_graph::run_until: stop is empty");
  return submit(detail::default_arena_of(ex), 0, std::move(stop));
}

}  // namespace heist
