// task_graph: validation, GraphViz output, and how runs are scheduled.
//
// A run of a graph is a set of heist tasks, one per *chain* of nodes: a task invokes a node,
// then decrements the join counter of each strong successor; of those that reach zero, it
// keeps the first for itself (the bypass of note 003: no queue between a node and its
// first ready successor, which stays hot in this core's cache) and spawns the others into
// its own deque, where idle workers steal them. A condition node hands the successor it
// picks to the same task at once. So a chain of nodes costs one task, and a run wakes only
// as many workers as there are ready nodes to steal.
//
// The end of a run: weighted termination (credit recovery). A run starts with weight W in
// m_pending, held by whoever starts it; every live node task holds a part, and the parts of
// the live tasks always add up to m_pending. A task that spawns gives the child half of its
// weight, with no shared write; when it ends it subtracts what it holds, as the very last
// thing it does. So a node task costs one RMW on the shared word instead of two (a counter
// bumped per spawn and per end), which on a tree of small nodes was most of their cost.
// Whoever takes m_pending to zero has seen every node's effects (the RMWs form one release
// sequence) and ends the run: it starts the next run of
// the same request (run_n, run_until), or completes the request and starts the next queued
// one. Requests are served in order, one at a time (m_lock guards the queue); starting and
// completing them is done by whichever thread ends a run (the "driver"), so no thread ever
// blocks to serialize runs.
//
// Exceptions: the first node that throws captures its exception in m_run_group (a
// wait_context used for its first-exception slot and its cancel flag); nodes not yet
// started then skip their bodies, and the run ends as usual with the exception going to
// the request. Task groups created inside a node body are children of m_run_group, so
// they are cancelled with the run.
//
// Reruns allocate nothing per node: join counters are reset in place, node tasks come from
// the threads' task pools, and request records are recycled (one future state per run()).
#include "heist/task_graph.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "heist/detail/spawn.hpp"
#include "heist/detail/thread_context.hpp"
#include "heist/detail/wait_context.hpp"

namespace heist::detail {

namespace {
constexpr std::size_t k_run_until = ~std::size_t{0};
// Termination weights (see the file comment): a run starts with k_run_weight; a task that
// has only 1 left borrows k_borrow_weight more.
constexpr std::uint64_t k_run_weight = std::uint64_t{1} << 62;
constexpr std::uint64_t k_borrow_weight = std::uint64_t{1} << 32;

std::string node_label(const graph_node_data& n) {
  if (!n.m_name.empty()) return n.m_name;
  std::string id = std::to_string(n.m_index);  // (not "n" + ...: GCC 12's -Wrestrict)
  id.insert(id.begin(), 'n');
  return id;
}

// Is the calling thread running a task of `exec` (so that it may submit after shutdown)?
bool inside_tasks_of(const executor_impl& exec) noexcept {
  const thread_context* c = t_context;
  return c != nullptr && c->m_exec == &exec && c->m_task_depth > 0;
}
}  // namespace

// One request: run() (n = 1), run_n(n), run_until(stop), or a module node's run of its
// subgraph. Completion: the exception (if any) goes to *error, then done->finish_one().
struct run_request {
  run_request* next = nullptr;
  arena* where = nullptr;
  std::size_t remaining = 0;  // runs still to start, or k_run_until
  std::function<bool()> stop;
  wait_context* done = nullptr;
  std::exception_ptr* error = nullptr;
  future_state<void>* owner = nullptr;  // a reference dropped after completion
  bool pooled = true;                   // recycled in the runner's free list
};

class graph_runner {
 public:
  explicit graph_runner(task_graph& g) noexcept : m_graph(g) {}
  ~graph_runner() {
    while (m_free != nullptr)
      delete std::exchange(m_free, m_free->next);
  }

  bool in_flight() const noexcept {
    // acquire: pairs with the release decrement in complete(), so a caller that saw the
    // last run end also sees everything that run did.
    return m_in_flight.load(std::memory_order_acquire) != 0;
  }
  void invalidate() noexcept { m_validated = false; }

  // Validates (if the graph changed), queues a request, and starts it if it is first.
  void enqueue(run_request& r) {
    bool first;
    {
      std::lock_guard<std::mutex> lock(m_lock);
      std::vector<const task_graph*> path;
      validate_locked(path);
      first = append_locked(r);
    }
    HEIST_PERTURB_POINT(graph_request_queued);
    // The queue was empty: nobody drives, this thread does. Otherwise the driver of the
    // request ahead gets to this one when it completes that one (under m_lock).
    if (first) drive(r, nullptr);
  }

  run_request& make_request() {
    std::lock_guard<std::mutex> lock(m_lock);
    if (m_free != nullptr) return *std::exchange(m_free, m_free->next);
    return *new run_request();
  }
  void recycle(run_request& r) noexcept {
    r.stop = nullptr;
    std::lock_guard<std::mutex> lock(m_lock);
    r.next = m_free;
    m_free = &r;
  }

  // The destructor's wait: helps until the last queued request completed, then until the
  // thread that completed it has let go of the graph.
  void wait_for_runs() noexcept {
    if (!in_flight()) return;
    future_state<void>* last = nullptr;
    {
      std::lock_guard<std::mutex> lock(m_lock);
      if (m_tail != nullptr && m_tail->owner != nullptr) {
        last = m_tail->owner;
        last->add_ref();
      }
    }
    if (last != nullptr) {
      try {
        if (!last->done()) help_until(*last->m_arena, *last);
      } catch (...) {  // the runs finish either way
      }
      last->release();
    }
    while (in_flight())
      std::this_thread::yield();
  }

  // A module node's body: one run of this graph on `a`, waited for by helping.
  void run_as_module(arena& a) {
    wait_context done(nullptr, 1);
    std::exception_ptr error;
    run_request r;
    r.where = &a;
    r.remaining = 1;
    r.done = &done;
    r.error = &error;
    r.pooled = false;
    enqueue(r);
    help_until(a, done);
    if (error) std::rethrow_exception(error);
  }

  // --- the node tasks -----------------------------------------------------------------
  // A node task: invokes `n` and the chain of successors it keeps, holding `weight`.
  void run_from(graph_node_data* n, std::uint64_t weight) noexcept {
    // Groups created in node bodies are children of the run: cancelled with it.
    current_context().m_group = &m_run_group;
    while (n != nullptr)
      n = invoke(*n, weight);
    node_task_done(weight);
  }

  // The task that starts a run from outside the arena holds the whole weight.
  void start_from_task() noexcept {
    std::uint64_t weight = k_run_weight;
    for (std::size_t i = 1; i < m_sources.size(); ++i)
      spawn_node(*m_sources[i], weight);
    run_from(m_sources[0], weight);
  }

 private:
  struct node_job {
    graph_runner* runner;
    graph_node_data* node;
    std::uint64_t weight;
    void operator()(task*) noexcept { runner->run_from(node, weight); }
  };
  struct start_job {
    graph_runner* runner;
    void operator()(task*) noexcept { runner->start_from_task(); }
  };

  // Invokes `n`; returns the successor this task runs next (or null).
  graph_node_data* invoke(graph_node_data& n, std::uint64_t& weight) noexcept {
    // relaxed: every later decrement of n's counter (a loop back to n) happens after this
    // store through the task chain that leads from n to its predecessor. Nodes with at most
    // one strong predecessor never use their counter (see below).
    if (n.m_strong_preds > 1) n.m_join.store(n.m_strong_preds, std::memory_order_relaxed);
    if (m_run_group.is_cancelled()) return nullptr;
    try {
      switch (n.m_kind) {
        case graph_node_kind::condition: {
          const int k = n.m_fn();
          if (k < 0 || static_cast<std::uint32_t>(k) >= n.m_num_succ) return nullptr;
          return n.m_succ[k];
        }
        case graph_node_kind::work:
          (void)n.m_fn();
          break;
        case graph_node_kind::module:
          n.m_module->m_runner->run_as_module(*m_arena);
          break;
      }
    } catch (...) {
      m_run_group.capture_exception(std::current_exception());
      return nullptr;
    }
    graph_node_data* next = nullptr;
    for (std::uint32_t i = 0; i < n.m_num_succ; ++i) {
      graph_node_data* const s = n.m_succ[i];
      // A successor with one strong predecessor is ready now: no counter, no atomic RMW
      // (on a chain or a tree, that RMW on a cold node was nearly all of a node's cost).
      // Otherwise acq_rel: the release half publishes this node's effects to whoever runs
      // s; the acquire half lets the last predecessor see every other predecessor's.
      if (s->m_strong_preds > 1 && s->m_join.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        continue;
      }
      if (next == nullptr) {
        next = s;
      } else {
        spawn_node(*s, weight);
      }
    }
    return next;
  }

  // Spawns a node task, giving it half of the spawner's weight (no shared write). A
  // spawner down to weight 1 first borrows k_borrow_weight from m_pending: it still holds
  // its own weight, so the count cannot reach zero meanwhile (relaxed: the push that
  // publishes the child, and this task's final release RMW, order it).
  void spawn_node(graph_node_data& n, std::uint64_t& weight) noexcept {
    if (weight == 1) {
      m_pending.fetch_add(k_borrow_weight, std::memory_order_relaxed);
      weight += k_borrow_weight;
    }
    const std::uint64_t child = weight / 2;
    weight -= child;
    try {
      spawn<node_job>(*m_arena, nullptr, this, &n, child);
    } catch (...) {  // out of memory growing a deque: the child's weight comes back
      m_run_group.capture_exception(std::current_exception());
      weight += child;
    }
  }

  // A node task ends and returns its weight.
  void node_task_done(std::uint64_t weight) noexcept {
    HEIST_PERTURB_POINT(graph_node_done);
    // acq_rel: release publishes this task's node effects; the acquire of the thread that
    // takes the count to zero sees every task's (one release sequence of RMWs).
    if (m_pending.fetch_sub(weight, std::memory_order_acq_rel) == weight) {
      drive(*m_current, end_run());
    }
  }

  std::exception_ptr end_run() noexcept {
    std::exception_ptr e = m_run_group.take_exception();
    // A clean run of a graph without conditions invoked every node once, and each node
    // reset its own counter when invoked, after which no predecessor touched it: every
    // counter is ready for the next run, and start_run can skip the O(nodes) reset (which
    // on a graph of a million nodes costs more than the run's own memory traffic).
    m_counters_ready = !e && !m_has_conditions && !m_run_group.is_cancelled();
    m_run_group.reset();
    return e;
  }

  // The driver: starts runs of `r` until it is complete, then completes it and serves the
  // next request. Returns as soon as a run is under way (its last task comes back here).
  void drive(run_request& first, std::exception_ptr e) noexcept {
    run_request* r = &first;
    for (;;) {
      m_current = r;
      if (!e && !m_sources.empty() && wants_another_run(*r, e)) {
        if (start_run(*r)) return;
        e = end_run();  // the run ended before start_run returned
        continue;
      }
      r = complete(*r, e);
      if (r == nullptr) return;
      e = nullptr;
    }
  }

  bool wants_another_run(run_request& r, std::exception_ptr& e) noexcept {
    if (r.remaining != k_run_until) {
      if (r.remaining == 0) return false;
      --r.remaining;
      return true;
    }
    try {
      return !r.stop();
    } catch (...) {
      e = std::current_exception();
      return false;
    }
  }

  // Starts one run of the graph on r.where. Returns false if the run already ended.
  bool start_run(run_request& r) noexcept {
    m_arena = r.where;
    if (!m_counters_ready) {
      for (graph_node_data* n : m_graph.m_nodes)
        n->m_join.store(n->m_strong_preds, std::memory_order_relaxed);  // published by spawn
      m_counters_ready = true;  // until end_run says otherwise
    }
    const thread_context* c = t_context;
    const bool in_arena =
        c != nullptr && c->m_arena == m_arena && c->m_slot != nullptr && c->m_task_depth > 0;
    // relaxed: published to the node tasks by the spawns' pushes.
    m_pending.store(k_run_weight, std::memory_order_relaxed);
    if (in_arena) {
      // Spawn every source from here, holding back some weight until all are queued.
      std::uint64_t weight = k_run_weight;
      for (graph_node_data* s : m_sources)
        spawn_node(*s, weight);
      return m_pending.fetch_sub(weight, std::memory_order_acq_rel) != weight;
    }
    // From outside the arena: one task starts the run inside it (one injection, however
    // many sources).
    try {
      spawn<start_job>(*m_arena, nullptr, this);
      return true;
    } catch (...) {  // the executor shut down meanwhile, or out of memory
      m_run_group.capture_exception(std::current_exception());
      m_pending.store(0, std::memory_order_relaxed);
      return false;
    }
  }

  // Completes `r` and returns the next queued request (null: the queue is empty, and the
  // graph may be destroyed as soon as this returns).
  run_request* complete(run_request& r, std::exception_ptr e) noexcept {
    if (e) *r.error = std::move(e);
    wait_context* const done = r.done;
    future_state<void>* const owner = r.owner;
    run_request* next;
    {
      std::lock_guard<std::mutex> lock(m_lock);
      m_head = r.next;
      if (m_head == nullptr) m_tail = nullptr;  // the next enqueuer drives its own request
      next = m_head;
      if (r.pooled) {
        r.stop = nullptr;
        r.next = m_free;
        m_free = &r;
      }
    }
    HEIST_PERTURB_POINT(graph_run_completing);
    // release: pairs with in_flight()'s acquire (the destructor, and changes to the graph
    // after the caller's get()). The last touch of the graph when next is null.
    m_in_flight.fetch_sub(1, std::memory_order_release);
    if (owner != nullptr) owner->m_value.emplace('\0');
    done->finish_one();  // publishes the error (release)
    if (owner != nullptr) owner->release();
    return next;
  }

  // Returns whether `r` is the only request (its enqueuer must drive it).
  bool append_locked(run_request& r) noexcept {
    r.next = nullptr;
    const bool first = m_tail == nullptr;
    if (first) {
      m_head = &r;
    } else {
      m_tail->next = &r;
    }
    m_tail = &r;
    // relaxed: under m_lock; in_flight()'s readers pair with complete()'s release.
    m_in_flight.fetch_add(1, std::memory_order_relaxed);
    return first;
  }

 public:
  // Recomputes strong-predecessor counts and sources, and rejects strong cycles and
  // composition cycles, if the graph changed since the last run. Under m_lock.
  void validate_locked(std::vector<const task_graph*>& path) {
    if (!m_validated) validate_topology();
    path.push_back(&m_graph);
    for (graph_node_data* n : m_modules) {
      task_graph& sub = *n->m_module;
      if (std::find(path.begin(), path.end(), &sub) != path.end()) {
        throw std::invalid_argument("heist::task_graph::run: module node \"" + node_label(*n) +
                                    "\" contains a graph that contains it");
      }
      std::lock_guard<std::mutex> lock(sub.m_runner->m_lock);
      sub.m_runner->validate_locked(path);
    }
    path.pop_back();
  }

 private:
  void validate_topology() {
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

  // Kahn's algorithm over strong edges; a node left over lies on or after a strong cycle.
  // From one, walking back along strong edges to left-over predecessors must come back to a
  // node already seen: that node lies on a cycle and is named.
  void check_strong_cycles() const {
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

  task_graph& m_graph;
  // The queue of requests and the free list; m_validated and the sources too (written by
  // validation under the lock, read by the driver of a run, which the enqueue published).
  std::mutex m_lock;
  run_request* m_head = nullptr;
  run_request* m_tail = nullptr;
  run_request* m_free = nullptr;
  bool m_validated = false;
  std::vector<graph_node_data*> m_sources;
  std::vector<graph_node_data*> m_modules;
  std::vector<graph_node_data*> m_flat_successors;
  bool m_has_conditions = false;
  // Every join counter equals its strong-predecessor count (see end_run). Driver-owned,
  // like the run state below; cleared by validation.
  bool m_counters_ready = false;
  alignas(k_cache_line) std::atomic<std::size_t> m_in_flight{0};
  // The run under way: written by its driver only.
  // The weight of the run's live node tasks (see the file comment).
  alignas(k_cache_line) std::atomic<std::uint64_t> m_pending{0};
  run_request* m_current = nullptr;
  arena* m_arena = nullptr;
  wait_context m_run_group;
};

}  // namespace heist::detail

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
  a.m_graph->check_not_running("precede");
  a.m_successors.push_back(&b);
  b.m_predecessors.push_back(&a);
  a.m_graph->m_runner->invalidate();
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

void task_graph::check_not_running(const char* what) const {
  if (m_runner->in_flight()) {
    throw std::logic_error(std::string("heist::task_graph::") + what +
                           ": the graph is running; change it between runs");
  }
}

graph_node_data& task_graph::add_node(graph_node_kind kind) {
  check_not_running("emplace");
  const std::size_t index = m_nodes.size();
  graph_node_data& n = m_nodes.emplace_back();
  n.m_graph = this;
  n.m_kind = kind;
  n.m_index = index;
  m_runner->invalidate();
  return n;
}

graph_node task_graph::add_work(std::function<int()> f) {
  graph_node_data& n = add_node(graph_node_kind::work);
  n.m_fn = std::move(f);
  return graph_node(&n);
}

graph_node task_graph::add_condition(std::function<int()> f) {
  graph_node_data& n = add_node(graph_node_kind::condition);
  n.m_fn = std::move(f);
  return graph_node(&n);
}

graph_node task_graph::emplace(task_graph& subgraph) {
  if (&subgraph == this) {
    throw std::invalid_argument("heist::task_graph::emplace: a graph cannot be a node of itself");
  }
  graph_node_data& n = add_node(graph_node_kind::module);
  n.m_module = &subgraph;
  return graph_node(&n);
}

void task_graph::clear() {
  check_not_running("clear");
  m_nodes.clear();
  m_runner->invalidate();
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
  if (a.exec().closed() && !detail::inside_tasks_of(a.exec())) {
    throw executor_closed("heist::task_graph::run: the executor is shut down");
  }
  auto* state = new detail::future_state<void>(a);
  future<void> result(state);  // owns one reference
  detail::run_request& r = m_runner->make_request();
  r.where = &a;
  r.remaining = stop ? detail::k_run_until : n;
  r.stop = std::move(stop);
  r.done = state;
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
  return submit(detail_impl(ex).default_arena(), 1, nullptr);
}
future<void> task_graph::run_n(executor& ex, std::size_t n) {
  return submit(detail_impl(ex).default_arena(), n, nullptr);
}
future<void> task_graph::run_until(executor& ex, std::function<bool()> stop) {
  if (!stop) throw std::invalid_argument("heist::task_graph::run_until: stop is empty");
  return submit(detail_impl(ex).default_arena(), 0, std::move(stop));
}

}  // namespace heist
