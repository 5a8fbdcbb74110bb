// graph_runner: how the runs of a task_graph are scheduled.
//
// A run of a graph is a set of heist tasks, one per *chain* of nodes: a task invokes a node,
// then decrements the join counter of each strong successor; of those that reach zero, it
// keeps the first for itself (a bypass: no queue between a node and its
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
#include "compose/graph_runner.hpp"

#include <exception>
#include <mutex>
#include <utility>

#include "heist/detail/compose/resume.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/diagnostics/perturb.hpp"
#include "heist/detail/sleep/backoff.hpp"

namespace heist::detail {

void graph_runner::enqueue(run_request& r) {
  // Composition cycles first, holding one graph's lock at a time (graph_validation.cpp): two
  // graphs that contain each other, run from two threads at once, must both throw.
  std::vector<const task_graph*> path;
  check_composition(path);
  bool first;
  {
    std::lock_guard<std::mutex> lock(m_lock);
    if (!m_validated) validate_topology();  // changed since: the topology is checked again
    first = append_locked(r);
  }
  HEIST_PERTURB_POINT(graph_request_queued);
  // The queue was empty: nobody drives, this thread does. Otherwise the driver of the
  // request ahead gets to this one when it completes that one (under m_lock).
  if (first) drive(r, nullptr);
}

run_request& graph_runner::make_request() {
  std::lock_guard<std::mutex> lock(m_lock);
  if (m_free != nullptr) return *std::exchange(m_free, m_free->next);
  return *new run_request();
}

void graph_runner::recycle(run_request& r) noexcept {
  r.stop = nullptr;
  std::lock_guard<std::mutex> lock(m_lock);
  r.next = m_free;
  m_free = &r;
}

void graph_runner::wait_for_runs() noexcept {
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
      // Helps until the run's future is ready; if the caller's future of that run is being
      // awaited (its consumer's callback registered), the loop below waits instead.
      (void)wait_until_ready(*last);
    } catch (...) {  // the runs finish either way
    }
    last->release();
  }
  for (spin_backoff b; in_flight();)
    b.pause();
}

void graph_runner::run_as_module(arena& a) {
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

void graph_runner::run_from(graph_node_data* n, std::uint64_t weight) noexcept {
  // Groups created in node bodies are children of the run: cancelled with it.
  current_context().exchange_group(&m_run_group);
  while (n != nullptr)
    n = invoke(*n, weight);
  node_task_done(weight);
}

void graph_runner::start_from_task() noexcept {
  std::uint64_t weight = termination_weight::k_initial;
  for (std::size_t i = 1; i < m_sources.size(); ++i)
    spawn_node(*m_sources[i], weight);
  run_from(m_sources[0], weight);
}

graph_node_data* graph_runner::invoke(graph_node_data& n, std::uint64_t& weight) noexcept {
  // relaxed: every later decrement of n's counter (a loop back to n) happens after this
  // store through the task chain that leads from n to its predecessor. Nodes with at most
  // one strong predecessor never use their counter (see below).
  if (n.m_strong_preds > 1) n.m_join.store(n.m_strong_preds, std::memory_order_relaxed);
  if (m_run_group.is_cancelled()) return nullptr;
  // A running analysis: n starts after the latest of the predecessors that released it.
  if (analysing()) analysis_joined(&n);
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
  // A running analysis: n's end, for the run's join and for each successor it releases.
  const bool analysed = analysing();
  if (analysed) analysis_completed(&m_run_group);
  for (std::uint32_t i = 0; i < n.m_num_succ; ++i) {
    graph_node_data* const s = n.m_succ[i];
    if (analysed) analysis_completed(s);
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

void graph_runner::spawn_node(graph_node_data& n, std::uint64_t& weight) noexcept {
  const std::uint64_t child = m_pending.split(weight);
  try {
    spawn<node_job>(*m_arena, nullptr, this, &n, child);
  } catch (...) {  // out of memory growing a deque: the child's weight comes back
    m_run_group.capture_exception(std::current_exception());
    weight += child;
  }
}

void graph_runner::node_task_done(std::uint64_t weight) noexcept {
  HEIST_PERTURB_POINT(graph_node_done);
  // The last one has seen every node's effects (termination_weight::release).
  if (m_pending.release(weight)) drive(*m_current, end_run());
}

std::exception_ptr graph_runner::end_run() noexcept {
  std::exception_ptr e = m_run_group.take_exception();
  // A clean run of a graph without conditions invoked every node once, and each node
  // reset its own counter when invoked, after which no predecessor touched it: every
  // counter is ready for the next run, and start_run can skip the O(nodes) reset (which
  // on a graph of a million nodes costs more than the run's own memory traffic).
  m_counters_ready = !e && !m_has_conditions && !m_run_group.is_cancelled();
  if (analysing()) analysis_joined(&m_run_group);
  m_run_group.reset();
  return e;
}

void graph_runner::drive(run_request& first, std::exception_ptr e) noexcept {
  run_request* r = &first;
  for (;;) {
    m_current = r;
    if (!e && !m_sources.empty() && wants_another_run(*r, e)) {
      if (start_run(*r)) return;
      e = end_run();  // the run ended before start_run returned
      continue;
    }
    // Moved: once the future is complete, its caller may rethrow the error and drop it, and
    // a reference still held here would make this thread the one that destroys the
    // exception. That is safe (the count is atomic) but ordered only by libstdc++'s own
    // uninstrumented count, which ThreadSanitizer cannot see: it reported the caller's
    // what() racing with the delete.
    r = complete(*r, std::move(e));
    if (r == nullptr) return;
    e = nullptr;
  }
}

bool graph_runner::wants_another_run(run_request& r, std::exception_ptr& e) noexcept {
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

bool graph_runner::start_run(run_request& r) noexcept {
  m_arena = r.where;
  if (!m_counters_ready) {
    for (graph_node_data* n : m_graph.m_nodes)
      n->m_join.store(n->m_strong_preds, std::memory_order_relaxed);  // published by spawn
    m_counters_ready = true;  // until end_run says otherwise
  }
  const thread_context* c = t_context;
  const bool in_arena = c != nullptr && c->current_arena() == m_arena &&
                        c->current_slot() != nullptr && c->task_depth() > 0;
  m_pending.start();
  if (in_arena) {
    // Spawn every source from here, holding back some weight until all are queued.
    std::uint64_t weight = termination_weight::k_initial;
    for (graph_node_data* s : m_sources)
      spawn_node(*s, weight);
    return !m_pending.release(weight);
  }
  // From outside the arena: one task starts the run inside it (one injection, however
  // many sources).
  try {
    spawn<start_job>(*m_arena, nullptr, this);
    return true;
  } catch (...) {  // the executor shut down meanwhile, or out of memory
    m_run_group.capture_exception(std::current_exception());
    m_pending.abandon();
    return false;
  }
}

run_request* graph_runner::complete(run_request& r, std::exception_ptr e) noexcept {
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
  if (owner != nullptr) {
    owner->m_value.emplace('\0');
    owner->complete();  // publishes the error (release) and fires a then()/co_await callback
    owner->release();
  } else {
    done->finish_one();  // a module's run: publishes the error (release)
  }
  HEIST_PERTURB_POINT(graph_run_completed);
  return next;
}

bool graph_runner::append_locked(run_request& r) noexcept {
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

}  // namespace heist::detail
