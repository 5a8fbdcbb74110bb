// priority: arena priorities. A thread choosing among arenas serves the
// highest level first, and a thread running lower-level work looks at every task boundary
// whether higher-level work waits for a thread.
//
// The hint. arena_registry::m_wanted has bit L set while a task arena of level L (normal or
// high) may have queued work and a free slot. Publishers set it (note_wanted, from
// attract_visitor, which runs after every injection into a task arena and after a slot of
// one with work left is given back); threads at a task boundary read it (one relaxed load).
// A thread that finds no such arena clears the bit:
//   C1 clear the bit (seq_cst RMW)   P1 publish the task, P2 seq_cst fence (attract_visitor)
//   C2 seq_cst fence                 P3 load the bit (seq_cst), set it if clear
//   C3 re-check the arenas of that level; set the bit again if one wants a thread
// If C3 misses the task, P2 follows C2 in the single order, so P3 sees the cleared bit and
// sets it; if P3 saw the bit still set, C1 follows P3 and C3 sees the task. The hint never
// decides correctness: a task arena's work is always found by the sleep protocol (visitors
// are woken by attract_visitor), the hint only makes busy threads come sooner.
//
// Where threads look: run_tasks (a worker between tasks of the default arena, normal) and
// search (each round of a roamer's search) serve high arenas first; visit (a thread inside a
// task arena) goes back after a task when a higher level wants a thread, or, in a low arena,
// when the default arena has queued work (low yields to normal). Inside a task (helping
// waits, nested loops) nothing changes: the boundary is between top-level tasks.
#include "core/scheduler_internal.hpp"

namespace heist::detail {

void arena_registry::note_wanted(const arena& a) noexcept {
  if (a.level() == arena::k_low) return;
  const std::uint32_t bit = 1u << a.level();
  // P3: seq_cst, after the caller's fence P2 (see the file comment). Read first: the line is
  // written only when the bit changes.
  if ((m_wanted.load(std::memory_order_seq_cst) & bit) == 0) {
    m_wanted.fetch_or(bit, std::memory_order_seq_cst);
  }
}

void arena_registry::clear_wanted(int level) noexcept {
  const std::uint32_t bit = 1u << level;
  m_wanted.fetch_and(~bit, std::memory_order_seq_cst);                         // C1
  std::atomic_thread_fence(std::memory_order_seq_cst);                         // C2
  if (needs_thread(level)) m_wanted.fetch_or(bit, std::memory_order_seq_cst);  // C3
}

bool executor_impl::serve_higher_priority(thread_context& c, int level, std::size_t start,
                                          pending_leave* leaving) {
  bool ran = false;
  for (int l = arena::k_high; l > level; --l) {
    if (!m_registry.wanted(l)) continue;  // a hint (the file comment)
    arena* x = m_registry.to_visit_at(start, l);
    if (x == nullptr) {
      m_registry.clear_wanted(l);
      continue;
    }
    ran = visit(c, *x, leaving) || ran;
  }
  if (leaving != nullptr) leaving->leave();
  return ran;
}

bool executor_impl::visit_preempted(const arena& x) noexcept {
  if (HEIST_UNLIKELY(m_registry.wants_above(x.level()))) return true;
  return x.level() == arena::k_low && m_arena->has_queued_work();
}

}  // namespace heist::detail
