// arena: a scheduling domain. Its slots hold the deques of the threads that run its tasks,
// and its injection queue receives tasks from threads that hold none of its slots. Every
// executor has one arena covering its workers; task_arena adds more over the same threads.
//
// Slots [0, first_leasable) belong to workers for life. The others are leased by threads
// that join for a while (an external thread inside a helping wait or a parallel
// algorithm), so that they spawn into a deque like a worker instead of through the
// injection queue. Thieves only look at slots below the high-water mark of leased slots.
#pragma once

#include <atomic>
#include <cstddef>

#include "heist/detail/injection_queue.hpp"
#include "heist/detail/slot.hpp"

namespace heist::detail {

class executor_impl;

class arena {
 public:
  arena(executor_impl& exec, slot* slots, std::size_t num_slots, std::size_t first_leasable,
        std::size_t inject_buckets)
      : m_exec(exec),
        m_slots(slots),
        m_num_slots(num_slots),
        m_first_leasable(first_leasable),
        m_inject(inject_buckets),
        m_high_water(first_leasable) {}
  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;

  executor_impl& exec() const noexcept { return m_exec; }
  slot& slot_at(std::size_t i) const noexcept { return m_slots[i]; }
  std::size_t num_slots() const noexcept { return m_num_slots; }
  std::size_t first_leasable() const noexcept { return m_first_leasable; }
  injection_queue& inject() noexcept { return m_inject; }
  const injection_queue& inject() const noexcept { return m_inject; }

  // Slots that may hold tasks: workers' and every slot ever leased.
  std::size_t active_slots() const noexcept {
    // acquire: pairs with the release in try_lease; a thief that sees the new bound may
    // look at the slot's deque.
    return m_high_water.load(std::memory_order_acquire);
  }

  // A free leasable slot, now occupied by the caller, or nullptr.
  slot* try_lease() noexcept {
    for (std::size_t i = m_first_leasable; i < m_num_slots; ++i) {
      slot& s = m_slots[i];
      bool expected = false;
      // acquire: pairs with the release in give_back; the previous occupant's deque
      // operations happen-before ours.
      if (!s.m_occupied.load(std::memory_order_relaxed) &&
          s.m_occupied.compare_exchange_strong(expected, true, std::memory_order_acquire,
                                               std::memory_order_relaxed)) {
        std::size_t hw = m_high_water.load(std::memory_order_relaxed);
        while (hw < i + 1 && !m_high_water.compare_exchange_weak(
                                 hw, i + 1, std::memory_order_release, std::memory_order_relaxed)) {
        }
        return &s;
      }
    }
    return nullptr;
  }

  void give_back(slot& s) noexcept {
    // release: pairs with the acquire CAS of the next occupant.
    s.m_occupied.store(false, std::memory_order_release);
  }

 private:
  executor_impl& m_exec;
  slot* m_slots;
  std::size_t m_num_slots;
  std::size_t m_first_leasable;
  injection_queue m_inject;
  std::atomic<std::size_t> m_high_water;
};

}  // namespace heist::detail
