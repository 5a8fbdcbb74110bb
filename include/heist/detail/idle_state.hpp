// idle_state: how idle threads of one executor go to sleep and get woken, without losing a
// wake-up and without waking anyone while somebody is already looking for work.
//
// Glossary. A thread is *busy* (running a task), *searching* (out of local work, trying
// the injection queues and other deques), or *sleeping* (parked in this object's list).
// One atomic word counts searching and sleeping threads; only idle transitions touch it,
// so the spawn fast path merely reads it.
//
// Protocol (docs/design.md, "Sleeping and waking", has the proof sketch):
//   Sleeper                                   Publisher (external submit)
//   S1 searching -> sleeping: lock the list,  P1 publish the task (bucket push, under its
//      push self, m_state += sleeper-searcher    lock; the bucket's size is an atomic)
//      (seq_cst RMW), unlock                  P2 seq_cst fence
//   S2 seq_cst fence                          P3 load m_state
//   S3 re-check every queue; if anything is   P4 if nobody searches and somebody sleeps:
//      there, cancel (S1 undone) and search      wake_one(): lock, pop a sleeper, turn it
//   S4 park until the k_work signal              into a searcher, unlock, signal its parker
// The two fences are ordered in the single total order S. If P2 comes first, S3 sees the
// task. If S2 comes first, P3 sees the sleeper (or a searcher, who will run S3 itself
// before it can sleep), so P4 wakes somebody. Either way the task is not stranded.
// Invariant: while a published task is queued, some thread is busy, searching, or being
// woken.
//
// Spawns from inside a task: a push into an *empty* deque is a seq_cst store followed by a
// seq_cst load of the idle word (notify_after_spawn(true)), which forms the same Dekker pair
// with S1-S3 without a separate fence. A push onto a non-empty deque needs nothing: any
// sleeper's re-check already saw that deque non-empty. (One window stays open: a thief
// empties the deque between the owner's read of top and its push, which the owner then
// does not treat as "into empty". The task is never lost, its owner pops it; at worst
// parallelism waits for the next spawn.) External submissions always fence.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "heist/detail/config.hpp"
#include "heist/detail/parker.hpp"

namespace heist::detail {

// A thread's entry in the sleeper list; lives in its thread_context.
struct sleeper {
  parker* m_parker = nullptr;
  sleeper* m_prev = nullptr;
  sleeper* m_next = nullptr;
  bool m_listed = false;  // guarded by idle_state::m_lock
};

class idle_state {
 public:
  static constexpr std::uint64_t k_one_searcher = 1;
  static constexpr std::uint64_t k_one_sleeper = std::uint64_t{1} << 32;

  static std::uint32_t searching(std::uint64_t s) noexcept { return static_cast<std::uint32_t>(s); }
  static std::uint32_t sleeping(std::uint64_t s) noexcept {
    return static_cast<std::uint32_t>(s >> 32);
  }

  // After a spawn from inside a task (see the file comment). was_empty: the push was the
  // seq_cst push into an empty deque, so this load is seq_cst too (a plain load on x86).
  HEIST_ALWAYS_INLINE void notify_after_spawn(bool was_empty) noexcept {
    const std::uint64_t s =
        m_state.load(was_empty ? std::memory_order_seq_cst : std::memory_order_relaxed);
    if (HEIST_UNLIKELY(searching(s) == 0 && sleeping(s) != 0)) wake_one();
  }

  // After publishing a task from outside (P2-P4).
  void notify_after_inject() noexcept {
    // P2: pairs with the sleeper's fence S2 (see the file comment).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::uint64_t s = m_state.load(std::memory_order_relaxed);
    if (searching(s) == 0 && sleeping(s) != 0) wake_one();
  }

  // Wakes one sleeper, turning it into a searcher; false if none sleeps.
  bool wake_one() noexcept;
  // Wakes everybody (shutdown).
  void wake_all() noexcept;

  void begin_search() noexcept {
    // relaxed: the count only suppresses wake-ups; a searcher always runs S1-S3 before it
    // can sleep, and S1 is a seq_cst RMW on this same word.
    m_state.fetch_add(k_one_searcher, std::memory_order_relaxed);
  }
  // Returns true if this was the last searcher and somebody sleeps: the caller, which found
  // work, should wake one more thread if more work is visible (wake propagation).
  bool end_search() noexcept {
    // relaxed: as begin_search.
    const std::uint64_t prev = m_state.fetch_sub(k_one_searcher, std::memory_order_relaxed);
    return searching(prev) == 1 && sleeping(prev) != 0;
  }

  // S1 and S2: from searching to sleeping.
  void prepare_sleep(sleeper& me) noexcept;
  // Undo S1 after a successful re-check or a wake for another reason. Returns true if it
  // removed `me` from the list itself (the caller is a searcher again); false if a waker
  // already did (the caller is a searcher too, and a k_work signal is on its way: consume
  // it before parking again).
  bool cancel_sleep(sleeper& me) noexcept;

  std::uint64_t snapshot() const noexcept { return m_state.load(std::memory_order_relaxed); }

 private:
  void unlink(sleeper& s) noexcept;

  alignas(k_cache_line) std::atomic<std::uint64_t> m_state{0};
  alignas(k_cache_line) std::mutex m_lock;
  sleeper* m_head = nullptr;  // most recent sleeper first: it has the warmest cache
};

}  // namespace heist::detail
