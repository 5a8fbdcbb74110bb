// graph_runner: the run machinery behind a task_graph (private to the library): the queue
// of run requests, validation of the graph, and the node tasks. How runs are scheduled is
// explained in src/compose/graph_runner.cpp; validation is in src/compose/graph_validation.cpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "heist/detail/compose/graph_node.hpp"
#include "heist/detail/compose/termination_weight.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/wait/wait_context.hpp"
#include "heist/task_graph.hpp"

namespace heist::detail {

inline constexpr std::size_t k_run_until = ~std::size_t{0};

// A node's name, or "n<index>" (for messages and DOT output).
std::string node_label(const graph_node_data& n);

// One request: run() (n = 1), run_n(n), run_until(stop), or a module node's run of its
// subgraph. Completion: the exception (if any) goes to *error, then the run's future state
// completes (owner), or for a module's run, done->finish_one().
struct run_request {
  run_request* next = nullptr;
  arena* where = nullptr;
  std::size_t remaining = 0;  // runs still to start, or k_run_until
  std::function<bool()> stop;
  wait_context* done = nullptr;  // a module's run only
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

  // Validates (if the graph changed), queues a request, and starts it if it is first.
  void enqueue(run_request& r);

  run_request& make_request();
  void recycle(run_request& r) noexcept;

  // The destructor's wait: helps until the last queued request completed, then until the
  // thread that completed it has let go of the graph.
  void wait_for_runs() noexcept;

  // A module node's body: one run of this graph on `a`, waited for by helping.
  void run_as_module(arena& a);

  // --- the node tasks -----------------------------------------------------------------
  // A node task: invokes `n` and the chain of successors it keeps, holding `weight`.
  void run_from(graph_node_data* n, std::uint64_t weight) noexcept;

  // The task that starts a run from outside the arena holds the whole weight.
  void start_from_task() noexcept;

 private:
  // Task closures (constructors: see pipeline.cpp's input_job).
  struct node_job {
    node_job(graph_runner* r, graph_node_data* n, std::uint64_t w) noexcept
        : runner(r), node(n), weight(w) {}
    graph_runner* runner;
    graph_node_data* node;
    std::uint64_t weight;
    void operator()(task*) noexcept { runner->run_from(node, weight); }
  };
  struct start_job {
    explicit start_job(graph_runner* r) noexcept : runner(r) {}
    graph_runner* runner;
    void operator()(task*) noexcept { runner->start_from_task(); }
  };

  // Invokes `n`; returns the successor this task runs next (or null).
  graph_node_data* invoke(graph_node_data& n, std::uint64_t& weight) noexcept;

  // Spawns a node task, giving it half of the spawner's weight (no shared write). A
  // spawner down to weight 1 first borrows k_borrow_weight from m_pending: it still holds
  // its own weight, so the count cannot reach zero meanwhile (relaxed: the push that
  // publishes the child, and this task's final release RMW, order it).
  void spawn_node(graph_node_data& n, std::uint64_t& weight) noexcept;

  // A node task ends and returns its weight.
  void node_task_done(std::uint64_t weight) noexcept;

  std::exception_ptr end_run() noexcept;

  // The driver: starts runs of `r` until it is complete, then completes it and serves the
  // next request. Returns as soon as a run is under way (its last task comes back here).
  void drive(run_request& first, std::exception_ptr e) noexcept;

  bool wants_another_run(run_request& r, std::exception_ptr& e) noexcept;

  // Starts one run of the graph on r.where. Returns false if the run already ended.
  bool start_run(run_request& r) noexcept;

  // Completes `r` and returns the next queued request (null: the queue is empty, and the
  // graph may be destroyed as soon as this returns).
  run_request* complete(run_request& r, std::exception_ptr e) noexcept;

  // Returns whether `r` is the only request (its enqueuer must drive it).
  bool append_locked(run_request& r) noexcept;

 public:
  // Validates this graph (strong-predecessor counts, sources, strong cycles) if it changed
  // since the last run, under its lock, then each module's graph the same way, and rejects
  // a module whose graph is on `path` (a composition cycle). Never holds two graphs' locks.
  void check_composition(std::vector<const task_graph*>& path);

  // Edits of the node store: under m_lock, and refused (std::logic_error naming `what`)
  // while a run is in flight, so that an edit racing a first run() from another thread is
  // either before the run or refused.
  template <class Edit>
  decltype(auto) edit(const char* what, Edit&& e) {
    std::lock_guard<std::mutex> lock(m_lock);
    refuse_if_running_locked(what);
    m_validated = false;
    return e();
  }

 private:
  void refuse_if_running_locked(const char* what) const;
  // Recomputes strong-predecessor counts and sources, and rejects strong cycles. Under
  // m_lock.
  void validate_topology();

  // Kahn's algorithm over strong edges; a node left over lies on or after a strong cycle.
  // From one, walking back along strong edges to left-over predecessors must come back to a
  // node already seen: that node lies on a cycle and is named.
  void check_strong_cycles() const;

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
  termination_weight m_pending;
  run_request* m_current = nullptr;
  arena* m_arena = nullptr;
  alignas(64) wait_context m_run_group;
};

}  // namespace heist::detail
