// arena_record: the whole of an arena. Its first part, arena (arena.hpp), is what the inline
// paths of a spawn and a wait read; the record adds what threads outside the arena and idle
// threads use: the injection queue that receives tasks from threads holding none of its
// slots, the idle state its threads sleep in, and the lifetime that futures and suspended
// coroutines hold instead of a pointer to it. Only the library makes arenas (an executor's
// default arena, a task_arena), and every one is an arena_record.
#pragma once

#include <cstddef>

#include "heist/detail/compose/poller.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/core/arena.hpp"
#include "heist/detail/core/arena_lifetime.hpp"
#include "heist/detail/core/injection_queue.hpp"
#include "heist/detail/sleep/idle_state.hpp"

namespace heist::detail {

class arena_record final : public arena {
 public:
  arena_record(executor_impl& exec, slot* slots, const layout& l)
      : arena(exec, slots, l), m_inject(l.inject_buckets) {
    m_idle.set_spread_wakes(l.spread_wakes);
  }
  // The owner closes the lifetime first (close_lifetime), once nothing runs in the arena.
  ~arena_record() {
    m_lifetime->close();
    m_lifetime->release();
  }

 private:
  friend class arena;
  arena_lifetime* const m_lifetime = new arena_lifetime(*this);
  injection_queue m_inject;
  idle_state m_idle;
};

inline arena_record& arena::record() noexcept {
  return static_cast<arena_record&>(*this);
}
inline const arena_record& arena::record() const noexcept {
  return static_cast<const arena_record&>(*this);
}
inline arena_ref arena::lifetime() const noexcept {
  return arena_ref(record().m_lifetime);
}
inline bool arena::is(const arena_ref& r) const noexcept {
  return r.get() == record().m_lifetime;
}
inline void arena::close_lifetime() noexcept {
  record().m_lifetime->close();
}
inline injection_queue& arena::inject() noexcept {
  return record().m_inject;
}
inline const injection_queue& arena::inject() const noexcept {
  return record().m_inject;
}
inline idle_state& arena::idle() noexcept {
  return record().m_idle;
}

inline void arena::set_poller(poller* p) noexcept {
  // release: pairs with poll_pending's acquire.
  m_polls_pending.store(p != nullptr ? &p->pending_count() : nullptr, std::memory_order_release);
}

// Injections under way (inject(): from before the push until after its wake-up). The task
// an outside thread injects may run and finish, and the arena's owner see nothing left in
// flight and destroy the arena, while that thread is still in inject() after the push:
// whoever destroys an arena first waits for these counts to reach zero. They are counted
// in the injection queue's buckets (injection_queue::enter), on each bucket's producer
// line: one shared counter cost every post a cache miss on a line that all producers, and
// the searchers reading the queue beside it, kept taking away.
inline void arena::begin_injection(std::size_t hint) noexcept {
  inject().enter(hint);
}
inline void arena::end_injection(std::size_t hint) noexcept {
  inject().leave(hint);
}

// Any task queued in this arena (a hint; the sleep protocol reads it after its fence).
inline bool arena::has_queued_work() const noexcept {
  if (inject().size() != 0) return true;
  const std::size_t n = active_slots();
  for (std::size_t i = 0; i < n; ++i) {
    if (!slot_at(i).m_deque.empty()) return true;
  }
  return false;
}

// Work a visiting thread could take: queued tasks, but with steal_policy::none only the
// injection queue's (a visitor that cannot steal would find the deques' tasks out of reach
// and come back for them forever).
inline bool arena::has_work_for_visitor(bool can_steal) const noexcept {
  return can_steal ? has_queued_work() : inject().size() != 0;
}

}  // namespace heist::detail
