// arena_registry: the task arenas sharing an executor's threads (arena_registry.hpp), and the
// poller they share. The priority hint's protocol is in priority.cpp.
#include "core/arena_registry.hpp"

#include <algorithm>

#include "heist/detail/sleep/backoff.hpp"

namespace heist::detail {

void arena_registry::add(arena& a) {
  std::lock_guard<std::mutex> lock(m_lock);
  // relaxed under the lock: poller_or_install stores it under the same lock.
  a.set_poller(m_poller.load(std::memory_order_relaxed));
  m_arenas.push_back(&a);
  // release: pairs with any()'s acquire (a hint that makes searchers look; the list itself
  // is read under the lock).
  m_count.store(m_arenas.size(), std::memory_order_release);
}

void arena_registry::remove(arena& a) {
  {
    std::lock_guard<std::mutex> lock(m_lock);
    m_arenas.erase(std::find(m_arenas.begin(), m_arenas.end(), &a));
    // release: as in add.
    m_count.store(m_arenas.size(), std::memory_order_release);
    // Keep its counts: in_flight's sums and the external statistics must not move back.
    // acquire: as in executor_impl::in_flight (the arena has no task in flight by now).
    for (std::size_t i = 0; i < a.num_slots(); ++i) {
      const slot_counters& k = a.slot_at(i).m_counters;
      m_removed_created += k.created.load(std::memory_order_acquire);
      m_removed_finished += k.finished_total(std::memory_order_acquire);
      m_removed_stats.executed += k.executed_total();
      m_removed_stats.stolen += k.stolen.load();
      m_removed_stats.steal_attempts += k.steal_attempts.load();
      m_removed_stats.failed_steals += k.failed_steals.load();
      m_removed_stats.sleeps += k.sleeps.load();
    }
  }
  // A worker that picked the arena before it left the list may still be inside. acquire:
  // pairs with the visitor's release decrement (arena_visit.cpp).
  for (spin_backoff b; a.m_visitors.load(std::memory_order_acquire) != 0;)
    b.pause();
}

// Under m_lock: the first arena, highest priority first and rotating from `start` within a
// level, that has work a visitor can take and a free slot.
arena* arena_registry::find_locked(std::size_t start, int min_level) noexcept {
  const std::size_t n = m_arenas.size();
  for (int level = arena::k_high; level >= min_level; --level) {
    for (std::size_t k = 0; k < n; ++k) {
      arena* a = m_arenas[(start + k) % n];
      if (a->level() == level && a->has_free_slot() && a->has_work_for_visitor(m_can_steal)) {
        return a;
      }
    }
  }
  return nullptr;
}

// Under m_lock: find_locked, counted as visited by the caller.
arena* arena_registry::visit_locked(std::size_t start, int min_level) noexcept {
  arena* a = find_locked(start, min_level);
  // relaxed under the lock: remove takes the lock before it waits for zero.
  if (a != nullptr) a->m_visitors.fetch_add(1, std::memory_order_relaxed);
  return a;
}

arena* arena_registry::to_visit(std::size_t start, int min_level) noexcept {
  // Every search round of every idle worker asks: never wait for the lock here.
  std::unique_lock<std::mutex> lock(m_lock, std::try_to_lock);
  if (!lock.owns_lock()) return nullptr;
  return visit_locked(start, min_level);
}

arena* arena_registry::to_visit_at(std::size_t start, int level) noexcept {
  std::lock_guard<std::mutex> lock(m_lock);
  return visit_locked(start, level);
}

bool arena_registry::needs_thread(int min_level) noexcept {
  if (!any()) return false;
  std::lock_guard<std::mutex> lock(m_lock);
  return find_locked(0, min_level) != nullptr;
}

poller& arena_registry::poller_or_install(executor_impl& exec,
                                          std::unique_ptr<poller> (*make)(executor_impl&)) {
  // acquire: pairs with the release store below (the poller is built when seen).
  if (poller* p = m_poller.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(m_lock);
  // relaxed under the lock: only holders of the lock store it.
  if (poller* p = m_poller.load(std::memory_order_relaxed)) return *p;
  m_poller_owner = make(exec);
  // release: pairs with the acquire loads of installed_poller; the poller is fully built
  // before a worker can see it.
  m_poller.store(m_poller_owner.get(), std::memory_order_release);
  // Each arena's copy (arena::poll_pending); an arena added later copies it itself.
  m_default.set_poller(m_poller_owner.get());
  for (arena* a : m_arenas)
    a->set_poller(m_poller_owner.get());
  return *m_poller_owner;
}

}  // namespace heist::detail
