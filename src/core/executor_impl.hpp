// executor_impl: the state behind heist::executor. Header-visible so that the inline spawn
// path can reach the arena, the idle state and the admission counters; everything that is
// not on that path is defined in src/core/executor.cpp and the scheduler files (listed in
// src/core/scheduler_internal.hpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "heist/detail/compose/poller.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/detail/core/slot.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/diagnostics/trace.hpp"
#include "heist/detail/sleep/idle_state.hpp"
#include "heist/executor_options.hpp"
#include "heist/stats.hpp"

namespace heist::detail {

struct pending_leave;
class start_placement;  // wake_placement.hpp

class HEIST_API executor_impl {
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
  arena& default_arena() noexcept { return *m_arena; }
  // The default arena's idle state: where the workers sleep when no arena has work.
  idle_state& idle() noexcept { return m_arena->idle(); }
  steal_policy policy() const noexcept { return m_options.policy; }
  bool tracing() const noexcept { return m_options.trace; }

  // --- admission and in-flight accounting -------------------------------------------------
  // A task is entering from a thread that holds no slot of the target arena. Counts it as in
  // flight, then throws executor_closed if shutdown began, unless the caller is running a
  // task of this executor (spawns from inside a running task are always accepted).
  void admit_external(const thread_context& c);
  // Undoes admit_external when building the task failed.
  void cancel_admission(const thread_context& c) noexcept;
  // A task is entering through leased slot `s` from a thread that runs no task of this
  // executor (spawn.hpp): counts it as created on `s`, then throws executor_closed if
  // shutdown began. And its undo.
  void admit_leased(slot& s);
  void cancel_leased_admission(slot& s) noexcept;
  // A thread without a slot finished (ran or skipped) a task.
  void count_external_finished(const thread_context& c, bool executed) noexcept;
  void count_external_steal(bool success) noexcept;
  void count_external_executed() noexcept {
    // relaxed: a statistic.
    m_external_executed.fetch_add(1, std::memory_order_relaxed);
  }

  // Tasks created and not yet finished, in every arena, from a snapshot that never reports
  // zero while a task admitted before the call is unfinished (see in_flight in executor.cpp).
  std::uint64_t in_flight() const noexcept;
  // Called when a thread runs out of work: wakes wait_idle()/shutdown() callers if the
  // executor became quiescent. `fenced`: the caller ran a seq_cst fence after its last write
  // (and only read since), which serves as this one.
  void note_idle(bool fenced = false) noexcept {
    HEIST_PERTURB_POINT(quiescence_check);
    // seq_cst fence between this thread's last "finished" count and its read of the
    // waiter count; pairs with the fence in wait_quiescent (a Dekker pair).
    if (!fenced) std::atomic_thread_fence(std::memory_order_seq_cst);
    if (HEIST_UNLIKELY(m_quiescence_waiters.load(std::memory_order_relaxed) != 0)) {
      check_quiescent();
    }
  }

  // --- task arenas ---------------------------------------------------------------------------
  void register_arena(arena& a);
  // Called once the arena has no task in flight; waits for visiting workers to leave.
  void unregister_arena(arena& a);
  bool has_task_arenas() const noexcept {
    // acquire: pairs with register_arena's release; a hint (the list is read under its lock).
    return m_task_arena_count.load(std::memory_order_acquire) != 0;
  }
  // A task arena with work a visitor can take and a free slot, now counted as visited by the
  // caller (arena::m_visitors), or nullptr. `start` rotates the scan for fairness. A hint
  // taken with try_lock (nullptr when the list is busy): the re-check before sleeping,
  // task_arena_needs_thread, is the one that must not miss an arena.
  // Arenas are scanned by priority, highest first; `min_level` skips lower ones.
  arena* arena_to_visit(std::size_t start, int min_level = arena::k_low) noexcept;
  // Is any task arena waiting for a thread? (the sleep protocol's re-check)
  bool task_arena_needs_thread(int min_level = arena::k_low) noexcept;

  // --- priorities (src/core/priority.cpp) ----------------------------------------
  // m_wanted has bit L set while a task arena of level L > low may have work and a free slot
  // (a hint kept by attract_visitor and priority_visit). Threads running lower-level work
  // read it at every task boundary: one relaxed load of a line written only when the set of
  // wanted levels changes.
  bool wants_above(int level) const noexcept {
    return (m_wanted.load(std::memory_order_relaxed) >> (level + 1)) != 0;
  }
  // New work in (or a free slot of) strict arena `a`; the caller fenced after publishing.
  void note_wanted(const arena& a) noexcept;
  // At a task boundary of work of level `level`: visits the highest-priority arena above it
  // that wants a thread, if any (and clears the hint when none does). Returns whether it ran
  // anything.
  // `leaving`: a searcher's pending leave (scheduler_internal.hpp), done by the first visit.
  bool serve_higher_priority(thread_context& c, int level, std::size_t start,
                             pending_leave* leaving = nullptr);
  // Should a thread visiting strict arena `x` go back (higher-priority work waits: a higher
  // task arena, or, for a low arena, the default arena's queued work)?
  bool visit_preempted(const arena& x) noexcept;

  // --- polled completions (poller.hpp; src/compose/polling.cpp)
  // ------------------------------------------ The executor's poller, created by `make` on first
  // use (one per executor, owned by it).
  poller& poller_or_install(std::unique_ptr<poller> (*make)(executor_impl&));
  // acquire: pairs with poller_or_install's release store (the poller is fully built).
  poller* installed_poller() const noexcept { return m_poller.load(std::memory_order_acquire); }
  HEIST_ALWAYS_INLINE bool poll_pending() const noexcept {
    // acquire: pairs with the release publication of the poller in poller_or_install.
    const poller* p = m_poller.load(std::memory_order_acquire);
    return p != nullptr && p->pending() != 0;
  }
  // Polls once if anything is pending; true if something completed.
  bool poll_once() noexcept {
    poller* p = m_poller.load(std::memory_order_acquire);
    return p != nullptr && p->pending() != 0 && p->poll();
  }
  // After a registrant raised pending(): P2-P4 for roamers (only they poll).
  void notify_poll_pending() noexcept;

  // --- blocking() stand-ins -------------------------------------------------------------------
  // A thread of this executor is about to block / has stopped blocking.
  void enter_blocking() noexcept;
  void leave_blocking() noexcept;
  // Called by a spare at each task boundary: true if it should stop (the thread it stood in
  // for is back). Claims the retirement atomically.
  bool spare_should_retire() noexcept;
  // Whether more spares stand in than threads block (one of them should retire); a parking
  // spare re-checks it after prepare_sleep. Pairs with leave_blocking through the idle lock:
  // either the spare is listed when leave_blocking's wake_all runs, or it listed itself
  // after, and then this read sees leave_blocking's decrement.
  bool spares_surplus() const noexcept {
    return m_spares_on_duty.load(std::memory_order_acquire) >
           m_blocked.load(std::memory_order_acquire);
  }
  std::size_t active_spares() const noexcept {
    // relaxed: a figure for stats() and the tests, not a decision.
    return m_spares_on_duty.load(std::memory_order_relaxed);
  }

  // --- lifecycle --------------------------------------------------------------------------
  void shutdown();
  void wait_idle();
  // acquire: pair with shutdown()'s seq_cst stores (admit_external has closed's Dekker pair;
  // a worker that reads m_stop set also sees what shutdown did before it).
  bool closed() const noexcept { return m_closed.load(std::memory_order_acquire); }
  bool stopping() const noexcept { return m_stop.load(std::memory_order_acquire); }
  // A loop, pipeline or graph run started after shutdown began by a thread that runs no task
  // of this executor is refused before any of it runs, as submit() and run() are:
  // executor_closed, naming `where`. A task of this executor may still start one. Only a
  // first check: a shutdown that begins during the call refuses its spawns (admit_external,
  // admit_leased), and the call ends with that exception.
  void refuse_if_closed(const char* where) const {
    if (HEIST_UNLIKELY(closed())) refuse_outsider(where);
  }

  // --- monitoring ---------------------------------------------------------------------------
  executor_stats stats() const;
  void reset_stats();
  void write_trace(std::ostream& out) const;
  void report_unhandled(std::exception_ptr e) noexcept;
  // refuse_if_closed's throw, unless the calling thread runs a task of this executor.
  [[gnu::cold]] void refuse_outsider(const char* where) const;
  void record_external_span(std::uint64_t start, std::uint64_t end, bool stolen) noexcept;

  // Run on each worker thread: names it, calls on_worker_start / on_worker_stop.
  void worker_started(std::size_t index) noexcept;
  void worker_stopping(std::size_t index) noexcept;

  // --- idle workers retire (executor_options::idle_timeout; src/sleep/worker_threads.cpp)
  // --------- 0: workers never retire.
  std::int64_t idle_timeout_ns() const noexcept { return m_idle_timeout_ns; }
  // The parker-less entry that stands in the sleeper list for worker `index` while its
  // thread is gone (idle_state::retire); waking it starts a thread for the worker again.
  sleeper& retired_placeholder(std::size_t index) noexcept { return m_placeholders[index]; }
  // Worker threads alive now (retired ones excluded), for the tests and the monitor.
  std::size_t live_workers() const noexcept {
    // relaxed: a count for the tests and the monitor; nothing is decided on it.
    return m_live_workers.load(std::memory_order_relaxed);
  }

  const executor_options& options() const noexcept { return m_options; }

 private:
  friend void spare_main(executor_impl& exec);  // worker_loop.cpp

  struct alignas(k_cache_line) external_shard {
    std::atomic<std::uint64_t> created{0};
    std::atomic<std::uint64_t> finished{0};
  };
  static constexpr std::size_t k_external_shards = 8;
  external_shard& shard_for(const thread_context& c) const noexcept {
    return m_external[(reinterpret_cast<std::uintptr_t>(&c) / sizeof(thread_context)) %
                      k_external_shards];
  }

  worker_stats raw_external_stats() const;
  arena* find_arena_locked(std::size_t start, int min_level) noexcept;
  void check_quiescent() noexcept;
  void wait_quiescent();
  // std::logic_error if the caller is a worker or a running task of this executor.
  void refuse_self_wait(const char* what) const;
  void start_spare();
  bool park_spare();
  void spare_exited() noexcept;
  // Worker threads (src/sleep/worker_threads.cpp).
  void start_workers();
  void join_workers() noexcept;
  struct worker_thread;
  // `placement`: the initial workers' CPUs (wake_placement.hpp), null for restarts.
  worker_thread launch_worker(std::size_t index, bool restarted,
                              std::shared_ptr<start_placement> placement = nullptr);
  static void restart_worker(sleeper& placeholder) noexcept;
  void worker_thread_main(std::size_t index, bool restarted,
                          const std::shared_ptr<std::atomic<bool>>& finished,
                          start_placement* placement) noexcept;

  executor_options m_options;
  // Slots leasable by outside threads while they help (arena_lease.hpp): callers::seats.
  std::size_t m_leasable_slots;
  std::size_t m_num_workers;
  std::size_t m_num_slots;  // workers' + leasable + stand-ins'
  std::unique_ptr<slot[]> m_slots;
  std::unique_ptr<arena_record> m_arena;

  alignas(k_cache_line) std::atomic<bool> m_closed{false};  // external submissions refused
  std::atomic<bool> m_stop{false};                          // workers exit when idle
  mutable external_shard m_external[k_external_shards];

  // Stats of threads that hold no slot (RMW counters: several threads may help at once).
  alignas(k_cache_line) std::atomic<std::uint64_t> m_external_executed{0};
  std::atomic<std::uint64_t> m_external_stolen{0};
  std::atomic<std::uint64_t> m_external_attempts{0};
  std::atomic<std::uint64_t> m_external_failed{0};
  // reset_stats() baselines (counters themselves are monotonic).
  mutable std::mutex m_stats_lock;
  std::vector<worker_stats> m_baseline;
  worker_stats m_external_baseline;

  // Task arenas sharing these threads, and the counters of destroyed ones (their flow
  // counts stay in in_flight's sums, their statistics in `external`).
  mutable std::mutex m_arenas_lock;
  std::vector<arena*> m_task_arenas;
  std::atomic<std::size_t> m_task_arena_count{0};
  alignas(k_cache_line) std::atomic<std::uint32_t> m_wanted{0};  // see wants_above
  std::atomic<poller*> m_poller{nullptr};
  std::unique_ptr<poller> m_poller_owner;  // guarded by m_arenas_lock until published
  std::uint64_t m_retired_created = 0;     // guarded by m_arenas_lock
  std::uint64_t m_retired_finished = 0;    // guarded by m_arenas_lock
  worker_stats m_retired_stats;            // guarded by m_arenas_lock

  // blocking() stand-ins.
  alignas(k_cache_line) std::atomic<std::size_t> m_blocked{0};  // threads inside blocking()
  std::atomic<std::size_t> m_spares_on_duty{0};                 // spares standing in now
  mutable std::mutex m_spares_lock;
  std::condition_variable m_spares_cv;
  std::size_t m_spare_threads = 0;  // spare threads alive (guarded by m_spares_lock)
  std::size_t m_spares_parked = 0;  // retired, waiting to be called again (same lock)
  std::size_t m_spare_calls = 0;    // calls not yet taken by a parked spare (same lock)

  // wait_idle()/shutdown() sleepers.
  alignas(k_cache_line) std::atomic<std::uint32_t> m_quiescence_waiters{0};
  std::mutex m_quiescence_lock;
  std::condition_variable m_quiescence_cv;

  std::mutex m_lifecycle_lock;
  bool m_joined = false;  // guarded by m_lifecycle_lock

  // Worker threads. m_threads[i] runs (or ran) worker i; a retired worker's old thread moves
  // to m_exited when a new one starts, and is joined once it says it finished (or at
  // shutdown). Both guarded by m_threads_lock, which restart_worker takes from wake paths:
  // nothing that holds it waits for another heist lock.
  struct worker_thread {  // declared above
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;  // set by the thread as its last step
  };
  struct retired_worker : sleeper {
    executor_impl* exec = nullptr;
    std::size_t index = 0;
  };
  std::int64_t m_idle_timeout_ns = 0;
  std::unique_ptr<retired_worker[]> m_placeholders;
  std::atomic<std::size_t> m_live_workers{0};
  std::mutex m_threads_lock;
  bool m_threads_closed = false;  // shutdown took the threads; no restart (m_threads_lock)
  std::vector<worker_thread> m_threads;
  std::vector<worker_thread> m_exited;
  std::vector<std::unique_ptr<trace_buffer>> m_traces;  // one per slot
  std::uint64_t m_trace_origin = 0;
  mutable std::mutex m_external_trace_lock;
  trace_buffer m_external_trace;  // spans of helpers without a slot, guarded by the lock
};

}  // namespace heist::detail
