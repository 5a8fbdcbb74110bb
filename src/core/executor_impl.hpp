// executor_impl: the state behind heist::executor, private to the library (the headers reach
// it through executor_seam.hpp). It owns the slots and the default arena, and one object per
// role, each with its own fields and file:
//   admission_control  which tasks enter, and when the executor is quiescent
//   arena_registry     the task arenas sharing the threads, the priority hint, the poller
//   standin_pool       blocking()'s stand-in threads
//   load_monitor       statistics and traces
//   worker_threads     the worker threads, their retirement and restart
// What is left here is the lifecycle (construction, shutdown, wait_idle), the sums over the
// roles (in_flight) and the calls that combine them (priorities, polling, the user's hooks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <iosfwd>
#include <memory>
#include <mutex>

#include "core/admission_control.hpp"
#include "core/arena_registry.hpp"
#include "core/standin_pool.hpp"
#include "diagnostics/load_monitor.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/detail/core/slot.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/sleep/idle_state.hpp"
#include "heist/executor_options.hpp"
#include "heist/stats.hpp"
#include "sleep/worker_threads.hpp"

namespace heist::detail {

struct pending_leave;

class executor_impl {
 public:
  // How many threads outside the pool may take part in its work at once (each on a leased
  // slot), and whether one that finds no free slot only waits (arena::slotless_threads_wait).
  struct callers {
    std::size_t seats = 4;
    bool others_wait = false;
  };
  // Validates the options (std::invalid_argument) and starts the workers.
  explicit executor_impl(executor_options options) : executor_impl(std::move(options), {}) {}
  executor_impl(executor_options options, callers c);
  ~executor_impl();

  std::size_t num_workers() const noexcept { return m_num_workers; }
  // Every slot: the workers' [0, num_workers), then the leasable ones, then the stand-ins'.
  std::size_t num_slots() const noexcept { return m_num_slots; }
  slot& slot_at(std::size_t i) const noexcept { return m_slots[i]; }
  arena& default_arena() noexcept { return *m_arena; }
  // The default arena's idle state: where the workers sleep when no arena has work.
  idle_state& idle() noexcept { return m_arena->idle(); }
  steal_policy policy() const noexcept { return m_options.policy; }
  bool tracing() const noexcept { return m_options.trace; }
  const executor_options& options() const noexcept { return m_options; }

  // --- the roles -------------------------------------------------------------------------
  admission_control& admission() noexcept { return m_admission; }
  arena_registry& registry() noexcept { return m_registry; }
  const arena_registry& registry() const noexcept { return m_registry; }
  standin_pool& standins() noexcept { return m_standins; }
  const standin_pool& standins() const noexcept { return m_standins; }
  load_monitor& monitor() noexcept { return m_monitor; }
  const load_monitor& monitor() const noexcept { return m_monitor; }
  worker_threads& threads() noexcept { return m_threads; }

  // Tasks created and not yet finished, in every arena, from a snapshot that never reports
  // zero while a task admitted before the call is unfinished (see in_flight in executor.cpp).
  std::uint64_t in_flight() const noexcept;

  // --- priorities (priority.cpp) ---------------------------------------------------------
  // At a task boundary of work of level `level`: visits the highest-priority arena above it
  // that wants a thread, if any (and clears the hint when none does). Returns whether it ran
  // anything. `leaving`: a searcher's pending leave (scheduler_internal.hpp), done by the
  // first visit.
  bool serve_higher_priority(thread_context& c, int level, std::size_t start,
                             pending_leave* leaving = nullptr);
  // Should a thread visiting strict arena `x` go back (higher-priority work waits: a higher
  // task arena, or, for a low arena, the default arena's queued work)?
  bool visit_preempted(const arena& x) noexcept;

  // --- polled completions (poller.hpp; polling.cpp) --------------------------------------
  HEIST_ALWAYS_INLINE bool poll_pending() const noexcept {
    const poller* p = m_registry.installed_poller();
    return p != nullptr && p->pending() != 0;
  }
  // Polls once if anything is pending; true if something completed.
  bool poll_once() noexcept {
    poller* p = m_registry.installed_poller();
    return p != nullptr && p->pending() != 0 && p->poll();
  }
  // After a registrant raised pending(): P2-P4 for roamers (only they poll).
  void notify_poll_pending() noexcept;

  // --- lifecycle -------------------------------------------------------------------------
  void shutdown();
  void wait_idle();
  bool closed() const noexcept { return m_admission.closed(); }
  // acquire: pairs with the seq_cst stores of shutdown and of a failed start (a worker that
  // reads m_stop set also sees what they did before it).
  bool stopping() const noexcept { return m_stop.load(std::memory_order_acquire); }
  // A loop, pipeline or graph run started after shutdown began by a thread that runs no task
  // of this executor is refused before any of it runs, as submit() and run() are:
  // executor_closed, naming `where`. A task of this executor may still start one. Only a
  // first check: a shutdown that begins during the call refuses its spawns (admit_external,
  // admit_leased), and the call ends with that exception.
  void refuse_if_closed(const char* where) const {
    if (HEIST_UNLIKELY(closed())) refuse_outsider(where);
  }
  // Whether the calling thread's context runs a task of this executor.
  bool runs_task_of_this(const thread_context& c) const noexcept {
    return c.exec() == this && c.task_depth() > 0;
  }
  // Stops the workers (seq_cst store of the stop flag, then a wake-up of every sleeper under
  // the idle lock: a worker either sees the flag in its re-check after prepare_sleep, or is
  // listed and woken) and joins their threads.
  void stop_workers() noexcept;

  // --- the user's hooks ------------------------------------------------------------------
  void report_unhandled(std::exception_ptr e) noexcept;
  // Run on each worker thread: names it, calls on_worker_start / on_worker_stop.
  void worker_started(std::size_t index) noexcept;
  void worker_stopping(std::size_t index) noexcept;

 private:
  [[gnu::cold]] void refuse_outsider(const char* where) const;
  // std::logic_error if the caller is a worker or a running task of this executor.
  void refuse_self_wait(const char* what) const;

  executor_options m_options;
  // Slots leasable by outside threads while they help (arena_lease.hpp): callers::seats.
  std::size_t m_leasable_slots;
  std::size_t m_num_workers;
  std::size_t m_num_slots;  // workers' + leasable + stand-ins'
  std::unique_ptr<slot[]> m_slots;
  std::unique_ptr<arena_record> m_arena;

  admission_control m_admission;
  arena_registry m_registry;
  standin_pool m_standins;
  load_monitor m_monitor;

  alignas(k_cache_line) std::atomic<bool> m_stop{false};  // workers exit when idle
  std::mutex m_lifecycle_lock;
  bool m_joined = false;     // guarded by m_lifecycle_lock
  worker_threads m_threads;  // last: its threads use every part above
};

}  // namespace heist::detail
