// arena: a scheduling domain. Its slots hold the deques of the threads that run its tasks,
// its injection queue receives tasks from threads that hold none of its slots, and its idle
// state lets the threads inside it sleep until it has work again.
//
// Every executor has a default arena:
//   [0, workers)                        slots its workers occupy for life
//   [workers, +k_external)              leased by outside threads while they help
//   [.., +max_blocking_threads)         leased by blocking() stand-ins (spares)
// A task_arena is a *strict* arena: every slot is leasable, their number is the arena's
// max_concurrency, and only threads holding one of them may run its tasks, which is how the
// concurrency limit is kept. Workers of the executor visit strict arenas that have work and a
// free slot; the arena's idle state is separate so that threads waiting inside it sleep on
// its work only.
//
// Thieves look only at slots below the high-water mark of leased slots.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heist/detail/compose/poller.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/core/arena_lifetime.hpp"
#include "heist/detail/core/injection_queue.hpp"
#include "heist/detail/core/slot.hpp"
#include "heist/detail/sleep/idle_state.hpp"

namespace heist::detail {

class executor_impl;

class HEIST_API arena {
 public:
  struct layout {
    std::size_t num_slots;       // all slots
    std::size_t first_leasable;  // slots below belong to workers for life
    std::size_t first_spare;     // leasable slots from here on are for blocking() stand-ins
    std::size_t inject_buckets;
    bool strict;        // a task_arena: only slot holders run its tasks
    bool spread_wakes;  // see idle_state::set_spread_wakes
    // A thread without a slot only waits (the default executor's: its callers count in its
    // concurrency, so one that finds no free slot hands its work to the pool).
    bool slotless_wait = false;
  };

  arena(executor_impl& exec, slot* slots, const layout& l)
      : m_exec(exec),
        m_slots(slots),
        m_num_slots(l.num_slots),
        m_first_leasable(l.first_leasable),
        m_first_spare(l.first_spare),
        m_strict(l.strict),
        m_slotless_wait(l.strict || l.slotless_wait),
        m_inject(l.inject_buckets),
        m_high_water(l.first_leasable) {
    m_idle.set_spread_wakes(l.spread_wakes);
  }
  // The owner closes the lifetime first (close_lifetime), once nothing runs in the arena.
  ~arena() {
    m_lifetime->close();
    m_lifetime->release();
  }
  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;

  // What futures, continuations and suspended coroutines hold instead of a pointer to this
  // arena (arena_lifetime.hpp).
  arena_ref lifetime() const noexcept { return arena_ref(m_lifetime); }
  bool is(const arena_ref& r) const noexcept { return r.get() == m_lifetime; }
  // Refuses new pins and waits for those held. The owner calls it before it destroys what
  // the arena's users reach through it (the executor, the slots).
  void close_lifetime() noexcept { m_lifetime->close(); }

  executor_impl& exec() const noexcept { return m_exec; }
  // Polled completions of the executor are pending (poller.hpp): a helping wait between
  // tasks asks this, inline, with one load from the arena it already holds.
  HEIST_ALWAYS_INLINE bool poll_pending() const noexcept {
    // acquire: pairs with set_poller's release (the poller is fully built when seen).
    const poller* p = m_poller.load(std::memory_order_acquire);
    return p != nullptr && p->pending() != 0;
  }
  // The executor's poller, copied into each of its arenas under the executor's arena lock:
  // when it is installed (into every registered arena) and when an arena registers.
  void set_poller(poller* p) noexcept {
    // release: pairs with poll_pending's acquire.
    m_poller.store(p, std::memory_order_release);
  }
  // Priority level (heist::priority as a number: 0 low, 1 normal, 2 high). The default arena
  // is normal; a task_arena's is set before it registers with its executor.
  static constexpr int k_low = 0, k_normal = 1, k_high = 2;
  int level() const noexcept { return m_level; }
  void set_level(int level) noexcept { m_level = level; }
  slot& slot_at(std::size_t i) const noexcept { return m_slots[i]; }
  std::size_t num_slots() const noexcept { return m_num_slots; }
  std::size_t first_leasable() const noexcept { return m_first_leasable; }
  bool strict() const noexcept { return m_strict; }
  // A thread holding none of the slots never runs this arena's work itself: a task_arena (its
  // concurrency limit), and the default executor's arena (available_parallelism() threads at
  // most, callers included). Such a thread queues its work and waits.
  bool slotless_threads_wait() const noexcept { return m_slotless_wait; }
  // Injections under way (inject(): from before the push until after its wake-up). The task
  // an outside thread injects may run and finish, and the arena's owner see nothing left in
  // flight and destroy the arena, while that thread is still in inject() after the push:
  // whoever destroys an arena first waits for these counts to reach zero. They are counted
  // in the injection queue's buckets (injection_queue::enter), on each bucket's producer
  // line: one shared counter cost every post a cache miss on a line that all producers, and
  // the searchers reading the queue beside it, kept taking away.
  void begin_injection(std::size_t hint) noexcept { m_inject.enter(hint); }
  void end_injection(std::size_t hint) noexcept { m_inject.leave(hint); }
  void wait_for_injectors() const noexcept;  // src/core/arena_visit.cpp
  injection_queue& inject() noexcept { return m_inject; }
  const injection_queue& inject() const noexcept { return m_inject; }
  idle_state& idle() noexcept { return m_idle; }

  // Slots that may hold tasks: workers' and every slot ever leased.
  std::size_t active_slots() const noexcept {
    // acquire: pairs with the release in try_lease; a thief that sees the new bound may
    // look at the slot's deque.
    return m_high_water.load(std::memory_order_acquire);
  }

  // A free slot for a thread joining for a while (not a stand-in), now occupied by the
  // caller, or nullptr.
  slot* try_lease() noexcept { return try_lease_in(m_first_leasable, m_first_spare); }
  // A free stand-in slot, or nullptr.
  slot* try_lease_spare() noexcept { return try_lease_in(m_first_spare, m_num_slots); }

  void give_back(slot& s) noexcept {
    // release: pairs with the acquire CAS of the next occupant.
    s.m_occupied.store(false, std::memory_order_release);
    // release: pairs with has_free_slot's acquire (a hint; try_lease's CAS decides).
    m_occupants.fetch_sub(1, std::memory_order_release);
  }

  // A strict arena can take one more thread (a hint: try_lease decides).
  bool has_free_slot() const noexcept {
    // acquire: pairs with give_back's release decrement.
    return m_occupants.load(std::memory_order_acquire) < m_first_spare - m_first_leasable;
  }
  // acquire: as in has_free_slot.
  std::size_t occupants() const noexcept { return m_occupants.load(std::memory_order_acquire); }

  // Any task queued in this arena (a hint; the sleep protocol reads it after its fence).
  bool has_queued_work() const noexcept {
    if (m_inject.size() != 0) return true;
    const std::size_t n = active_slots();
    for (std::size_t i = 0; i < n; ++i) {
      if (!m_slots[i].m_deque.empty()) return true;
    }
    return false;
  }

  // Work a visiting thread could take: queued tasks, but with steal_policy::none only the
  // injection queue's (a visitor that cannot steal would find the deques' tasks out of reach
  // and come back for them forever).
  bool has_work_for_visitor(bool can_steal) const noexcept {
    return can_steal ? has_queued_work() : m_inject.size() != 0;
  }

  // Counts of a strict arena's tasks, for task_arena's destructor (its tasks run only on
  // its slots, so the slots' counters plus injections cover them).
  // release/acquire: as the slots' counters (owner_counter::bump_release and
  // executor_impl::in_flight: finished counts first, then created ones).
  void count_injected() noexcept { m_injected.fetch_add(1, std::memory_order_release); }
  std::uint64_t in_flight() const noexcept {
    std::uint64_t finished = 0, created = 0;
    for (std::size_t i = 0; i < m_num_slots; ++i) {
      finished += m_slots[i].m_counters.finished_total(std::memory_order_acquire);
    }
    created += m_injected.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < m_num_slots; ++i) {
      created += m_slots[i].m_counters.created.load(std::memory_order_acquire);
    }
    return created - finished;
  }

  // Parallel loops running in this arena. While one runs, searchers linger (keep yielding a
  // while) before parking: loop tasks hand pieces out at leaf boundaries and back-to-back
  // loops start microseconds apart, both far below a park/wake round trip (search.cpp,
  // search). A hint only, never a correctness decision: relaxed.
  void loop_started() noexcept { m_loops.fetch_add(1, std::memory_order_relaxed); }
  void loop_finished() noexcept { m_loops.fetch_sub(1, std::memory_order_relaxed); }
  bool loops_running() const noexcept { return m_loops.load(std::memory_order_relaxed) != 0; }

  // Workers visiting this arena (task_arena's destructor waits for them to leave).
  std::atomic<int> m_visitors{0};

 private:
  slot* try_lease_in(std::size_t from, std::size_t to) noexcept {
    for (std::size_t i = from; i < to; ++i) {
      slot& s = m_slots[i];
      bool expected = false;
      // acquire: pairs with the release in give_back; the previous occupant's deque
      // operations happen-before ours.
      if (!s.m_occupied.load(std::memory_order_relaxed) &&
          s.m_occupied.compare_exchange_strong(expected, true, std::memory_order_acquire,
                                               std::memory_order_relaxed)) {
        // relaxed: a hint's count (has_free_slot); the CAS above took the slot.
        m_occupants.fetch_add(1, std::memory_order_relaxed);
        // release CAS: pairs with active_slots' acquire (the loads only find the value).
        std::size_t hw = m_high_water.load(std::memory_order_relaxed);
        while (hw < i + 1 && !m_high_water.compare_exchange_weak(
                                 hw, i + 1, std::memory_order_release, std::memory_order_relaxed)) {
        }
        return &s;
      }
    }
    return nullptr;
  }

  executor_impl& m_exec;
  arena_lifetime* const m_lifetime = new arena_lifetime(*this);
  slot* m_slots;
  std::size_t m_num_slots;
  std::size_t m_first_leasable;
  std::size_t m_first_spare;
  bool m_strict;
  bool m_slotless_wait;
  int m_level = k_normal;
  std::atomic<poller*> m_poller{nullptr};  // the executor's, once installed (set_poller)
  injection_queue m_inject;
  idle_state m_idle;
  std::atomic<std::size_t> m_high_water;
  std::atomic<std::size_t> m_occupants{0};
  std::atomic<std::uint64_t> m_injected{0};
  alignas(k_cache_line) std::atomic<std::uint32_t> m_loops{0};
};

}  // namespace heist::detail
