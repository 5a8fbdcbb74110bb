// arena_lease: lets a thread that holds no slot of an arena (an external thread, or a
// worker of another executor) occupy a leasable slot for a scope: a helping wait,
// run_and_wait, a parallel algorithm. Inside the scope it spawns into its own deque and
// pops LIFO like a worker, and idle workers steal from it. At the end, tasks still in the
// deque move to the injection queue, so an unoccupied slot never holds work. If every
// leasable slot is taken, the lease is empty and the thread keeps using the injection queue.
#pragma once

#include <new>

#include "heist/detail/config.hpp"
#include "heist/detail/core/arena.hpp"
#include "heist/detail/core/thread_context.hpp"

namespace heist::detail {

// Out of line (arena_visit.cpp).
HEIST_API slot* begin_lease(thread_context& c, arena& a) noexcept;
HEIST_API void end_lease(thread_context& c, arena& a, slot& s,
                         const scheduling_state& saved) noexcept;

class arena_lease {
 public:
  arena_lease(thread_context& c, arena& a) noexcept : m_context(c), m_arena(a) {
    if (holds_slot_of(c, a)) return;
    ::new (static_cast<void*>(&m_saved)) scheduling_state(c);
    m_slot = begin_lease(c, a);
  }
  ~arena_lease() {
    if (m_slot != nullptr) end_lease(m_context, m_arena, *m_slot, m_saved);
  }
  arena_lease(const arena_lease&) = delete;
  arena_lease& operator=(const arena_lease&) = delete;

 private:
  thread_context& m_context;
  arena& m_arena;
  slot* m_slot = nullptr;
  // What the thread was doing before the lease: written and read only when m_slot is set, and
  // otherwise left unwritten (a lease that finds its thread on a slot of the arena, the case
  // of every parallel_invoke and loop in a task, then costs the check alone).
  union {
    scheduling_state m_saved;
  };
};

}  // namespace heist::detail
