// arena_registry: the task arenas that share an executor's threads, what idle threads ask of
// them (which one to visit, does any want a thread), the priority hint over them, the poller
// every arena of the executor reads, and the counts of arenas already destroyed (so that
// in_flight's sums and the statistics never move back).
//
// The list is read and written under one lock. Searchers take it with try_lock (a hint: the
// re-check before sleeping, needs_thread, is the one that must not miss an arena); the
// priority protocol (C1-C3 against P1-P3) is in priority.cpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "heist/detail/compose/poller.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/executor_options.hpp"
#include "heist/stats.hpp"

namespace heist::detail {

class executor_impl;

class arena_registry {
 public:
  // `default_arena` gets the poller too; `policy`: whether visitors may steal.
  arena_registry(arena& default_arena, steal_policy policy) noexcept
      : m_default(default_arena), m_can_steal(policy != steal_policy::none) {}
  arena_registry(const arena_registry&) = delete;
  arena_registry& operator=(const arena_registry&) = delete;

  void add(arena& a);
  // Called once the arena has no task in flight: folds its counts in, then waits for
  // visiting workers to leave.
  void remove(arena& a);
  bool any() const noexcept {
    // acquire: pairs with add's and remove's release; a hint (the list is read under its lock).
    return m_count.load(std::memory_order_acquire) != 0;
  }
  // A task arena with work a visitor can take and a free slot, now counted as visited by the
  // caller (arena::m_visitors), or nullptr. `start` rotates the scan for fairness; arenas are
  // scanned by priority, highest first, and `min_level` skips lower ones. A hint taken with
  // try_lock (nullptr when the list is busy).
  arena* to_visit(std::size_t start, int min_level = arena::k_low) noexcept;
  // As to_visit, at level `level` only, waiting for the lock (serve_higher_priority).
  arena* to_visit_at(std::size_t start, int level) noexcept;
  // Is any task arena waiting for a thread? (the sleep protocol's re-check)
  bool needs_thread(int min_level = arena::k_low) noexcept;

  // --- the priority hint (priority.cpp) --------------------------------------------------
  // Bit L set while a task arena of level L > low may have work and a free slot. Threads
  // running lower-level work read it at every task boundary: one relaxed load of a line
  // written only when the set of wanted levels changes.
  bool wants_above(int level) const noexcept {
    return (m_wanted.load(std::memory_order_relaxed) >> (level + 1)) != 0;
  }
  bool wanted(int level) const noexcept {
    // relaxed: a hint (priority.cpp).
    return (m_wanted.load(std::memory_order_relaxed) & (1u << level)) != 0;
  }
  // New work in (or a free slot of) strict arena `a`; the caller fenced after publishing (P3).
  void note_wanted(const arena& a) noexcept;
  // No arena of `level` wants a thread: clears its bit unless a re-check finds one (C1-C3).
  void clear_wanted(int level) noexcept;

  // --- the poller ------------------------------------------------------------------------
  // The executor's poller, created by `make` on first use; every arena, the default one and
  // those added later, gets its pointer (arena::poll_pending).
  poller& poller_or_install(executor_impl& exec, std::unique_ptr<poller> (*make)(executor_impl&));
  // acquire: pairs with poller_or_install's release store (the poller is fully built).
  poller* installed_poller() const noexcept { return m_poller.load(std::memory_order_acquire); }

  // --- what in_flight and the statistics read ---------------------------------------------
  // The registry's lock, held while the caller sums the arenas: the set of arenas and the
  // counts folded in from destroyed ones stay fixed.
  class locked_view {
   public:
    explicit locked_view(const arena_registry& r) : m_registry(r), m_hold(r.m_lock) {}
    const std::vector<arena*>& arenas() const noexcept { return m_registry.m_arenas; }
    std::uint64_t removed_created() const noexcept { return m_registry.m_removed_created; }
    std::uint64_t removed_finished() const noexcept { return m_registry.m_removed_finished; }
    const worker_stats& removed_stats() const noexcept { return m_registry.m_removed_stats; }

   private:
    const arena_registry& m_registry;
    std::lock_guard<std::mutex> m_hold;
  };

 private:
  arena* find_locked(std::size_t start, int min_level) noexcept;
  arena* visit_locked(std::size_t start, int min_level) noexcept;

  arena& m_default;
  const bool m_can_steal;
  mutable std::mutex m_lock;
  std::vector<arena*> m_arenas;
  std::atomic<std::size_t> m_count{0};
  alignas(k_cache_line) std::atomic<std::uint32_t> m_wanted{0};  // see wants_above
  std::atomic<poller*> m_poller{nullptr};
  std::unique_ptr<poller> m_poller_owner;  // guarded by m_lock until published
  std::uint64_t m_removed_created = 0;     // guarded by m_lock
  std::uint64_t m_removed_finished = 0;    // guarded by m_lock
  worker_stats m_removed_stats;            // guarded by m_lock
};

}  // namespace heist::detail
