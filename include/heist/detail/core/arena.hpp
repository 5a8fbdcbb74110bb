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
//
// This class is the part of an arena that the inline paths of a spawn and a wait read (its
// slots, its flags, its executor, whether polled completions are pending). Every arena is
// the first part of an arena_record (arena_record.hpp), which adds its injection queue, its
// idle state and its lifetime: a header with a spawn in it does not carry those.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/core/slot.hpp"

namespace heist::detail {

class executor_impl;
class arena_record;     // core/arena_record.hpp: the whole arena
class injection_queue;  // core/injection_queue.hpp
class idle_state;       // sleep/idle_state.hpp
class arena_ref;        // core/arena_lifetime.hpp
class poller;           // compose/poller.hpp

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

  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;

  // The arena's other parts (arena_record.hpp defines these).
  arena_record& record() noexcept;
  const arena_record& record() const noexcept;
  // What futures, continuations and suspended coroutines hold instead of a pointer to this
  // arena (arena_lifetime.hpp).
  arena_ref lifetime() const noexcept;
  bool is(const arena_ref& r) const noexcept;
  // Refuses new pins and waits for those held. The owner calls it before it destroys what
  // the arena's users reach through it (the executor, the slots).
  void close_lifetime() noexcept;
  injection_queue& inject() noexcept;
  const injection_queue& inject() const noexcept;
  idle_state& idle() noexcept;
  void begin_injection(std::size_t hint) noexcept;
  void end_injection(std::size_t hint) noexcept;
  void wait_for_injectors() const noexcept;  // src/core/arena_visit.cpp
  bool has_queued_work() const noexcept;
  bool has_work_for_visitor(bool can_steal) const noexcept;

  executor_impl& exec() const noexcept { return m_exec; }
  // Polled completions of the executor are pending (poller.hpp): a helping wait between
  // tasks asks this, inline, with two loads from the arena it already holds.
  HEIST_ALWAYS_INLINE bool poll_pending() const noexcept {
    // acquire (both): the first pairs with set_poller's release (the poller is fully built
    // when seen), the second is poller::pending()'s.
    const std::atomic<std::size_t>* n = m_polls_pending.load(std::memory_order_acquire);
    return n != nullptr && n->load(std::memory_order_acquire) != 0;
  }
  // The executor's poller, copied into each of its arenas under the executor's arena lock:
  // when it is installed (into every registered arena) and when an arena registers.
  // arena_record.hpp defines it.
  void set_poller(poller* p) noexcept;
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
  friend class arena_record;  // the only way to make one
  arena(executor_impl& exec, slot* slots, const layout& l) noexcept
      : m_exec(exec),
        m_slots(slots),
        m_num_slots(l.num_slots),
        m_first_leasable(l.first_leasable),
        m_first_spare(l.first_spare),
        m_strict(l.strict),
        m_slotless_wait(l.strict || l.slotless_wait),
        m_high_water(l.first_leasable) {}
  ~arena() = default;

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
  slot* m_slots;
  std::size_t m_num_slots;
  std::size_t m_first_leasable;
  std::size_t m_first_spare;
  bool m_strict;
  bool m_slotless_wait;
  int m_level = k_normal;
  // The executor's poller's count of pending items, once installed (set_poller).
  std::atomic<const std::atomic<std::size_t>*> m_polls_pending{nullptr};
  std::atomic<std::size_t> m_high_water;
  std::atomic<std::size_t> m_occupants{0};
  std::atomic<std::uint64_t> m_injected{0};
  alignas(k_cache_line) std::atomic<std::uint32_t> m_loops{0};
};

}  // namespace heist::detail
