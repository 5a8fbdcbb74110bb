// slot: a place in an arena that one thread at a time occupies. It holds that thread's
// Chase-Lev deque and its load-monitor counters. Workers occupy their slot for life;
// external threads lease a slot while they help (arena_lease.hpp).
//
// Layout: the deque keeps its thief-written top and owner-written bottom on separate cache
// lines; the counters, written only by one thread at a time and read by stats(), get their
// own lines so that a stats() reader or a thief never shares a line with the owner's hot
// path.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "heist/detail/config.hpp"
#include "heist/detail/core/chase_lev_deque.hpp"
#include "heist/detail/core/task.hpp"

namespace heist::detail {

class trace_buffer;

// A counter with one writer (the occupant): a plain load and store, no RMW.
class owner_counter {
 public:
  HEIST_ALWAYS_INLINE void bump() noexcept {
    // relaxed: statistics; readers tolerate a value that is a moment old.
    m_value.store(m_value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // For the in-flight accounting (executor_impl::in_flight): release pairs with the
  // reader's acquire load, so a reader that sees a task counted as finished also sees the
  // creation counts that happened before it.
  HEIST_ALWAYS_INLINE void bump_release() noexcept {
    m_value.store(m_value.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  // seq_cst: for admissions from a leased slot, one half of a Dekker pair with shutdown()
  // (executor_impl::admit_leased).
  void bump_seq_cst() noexcept {
    m_value.store(m_value.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
  }
  std::uint64_t load(std::memory_order order = std::memory_order_relaxed) const noexcept {
    return m_value.load(order);
  }

 private:
  std::atomic<std::uint64_t> m_value{0};
};

struct slot_counters {
  // Flow, by location: tasks spawned into this slot's deque, and tasks that finished (ran
  // or were skipped) on this slot. executor_impl::in_flight and task_arena's destructor add
  // these up (finished_total).
  owner_counter created;
  owner_counter finished;
  // Load-monitor statistics, by thread: a worker counts here (its own slot) even while it
  // runs tasks of a task_arena on another slot (executed_total).
  owner_counter executed;  // task bodies run
  // The common case of both at once: a task whose body ran on this slot, run by the thread
  // whose statistics this slot holds, is one bump here, in neither counter above (one store
  // per task fewer). finish_counter (run_task.hpp) picks.
  owner_counter finished_executed;
  owner_counter stolen;
  owner_counter steal_attempts;
  owner_counter failed_steals;
  owner_counter sleeps;

  // Tasks that finished on this slot, run or skipped. Read before the created counters (the
  // in-flight sums' order; acquire pairs with the bumps' release).
  std::uint64_t finished_total(std::memory_order order) const noexcept {
    return finished.load(order) + finished_executed.load(order);
  }
  // Task bodies that the thread whose statistics this slot holds ran, on any slot.
  std::uint64_t executed_total() const noexcept {
    return executed.load() + finished_executed.load();
  }
};

// 32 entries to start (fork-join rarely goes deeper; rings double on demand): an executor
// has a slot per worker plus leasable and stand-in slots, most of them never used.
inline constexpr std::int64_t k_slot_deque_first_capacity = 32;

struct alignas(k_cache_line) slot {
  chase_lev_deque<task*> m_deque{k_slot_deque_first_capacity};

  // Sets up slot `index` of an arena on an executor of `executor_workers` workers: victim
  // selection starts at the slot itself, `rng_seed` seeds it, and the deque's pops go
  // fence-free while nobody steals from it where fence_free_retry_pops allows.
  void prepare(std::uint32_t index, std::uint64_t rng_seed, std::size_t executor_workers) noexcept {
    m_index = index;
    m_last_victim = index;  // none yet
    m_rng = rng_seed;
    const std::uint32_t retry = fence_free_retry_pops(executor_workers);
    m_deque.enable_fence_free_pops(retry, retry * k_fence_free_max_retry_factor);
  }

  alignas(k_cache_line) slot_counters m_counters;
  // Leasable slots (external helpers, task_arena visitors): taken by a CAS false -> true
  // (acquire) and given back by a release store, so that one occupant's owner-only deque
  // operations happen-before the next occupant's.
  std::atomic<bool> m_occupied{false};
  // Occupant-private victim-selection state.
  std::uint32_t m_index = 0;
  std::uint32_t m_last_victim = 0;
  std::uint64_t m_rng = 0;
  std::uint32_t m_tick = 0;         // tasks run since the injection queue was last checked
  std::uint32_t m_idle_rounds = 6;  // adaptive search budget before parking (search.cpp)
  // The cache domain the occupant last searched from (topology.hpp; 0 with one domain).
  // relaxed: a placement hint written by the occupant, read by thieves.
  std::atomic<std::uint32_t> m_domain{0};
  // Task spans of the occupant when tracing is on (trace.hpp); null otherwise.
  trace_buffer* m_trace = nullptr;
};

}  // namespace heist::detail
