// The Chase-Lev work-stealing deque: one owner pushes and pops at the bottom (LIFO), any
// number of thieves steal at the top (FIFO) with a CAS.
//
// Correctness rests on Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient
// Work-Stealing for Weak Memory Models", PPoPP 2013 (doi:10.1145/2442516.2442524), with the
// two fixes CDSChecker found in its transcribed C11 code (Norris & Demsky, OOPSLA 2013):
// the grow publication (R3 release / S4 acquire) and re-loading the ring after a grow (P4).
// The step names below (P1..P7, T1..T8, S1..S6, R1..R4) are those of docs/chase-lev.md,
// which reproduces the project's memory-order table with its sources.
//
// Design choices, each against a known bug of naive versions:
//  * Indices are signed 64-bit, so pop on an empty, never-used deque computes b = -1 < t and
//    reports empty instead of reading garbage (bug 5).
//  * Slots are std::atomic<T> (T is a pointer), so the speculative read of a thief (S5)
//    racing with the owner's write after wrap-around is not a data race; TSan needs no
//    suppression (bug 6).
//  * The ring only grows. Retired rings are kept on an owner-private list until the deque is
//    destroyed, because a slow thief may still read a slot of the ring it loaded at S4
//    (bug 4). Each retired ring is half the size of its successor, so all retired rings
//    together are smaller than the live one: memory stays under twice the peak capacity.
//  * A failed steal CAS is reported as `lost_race`, never as `empty`: the sleep protocol must
//    not treat it as "no work" (bug 7).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>

#include "heist/detail/config.hpp"

namespace heist::detail {

enum class steal_status : std::uint8_t {
  success,    // the value was taken
  empty,      // the deque was empty when looked at
  lost_race,  // another thief or the owner took the element first: retry, it is not empty
  rejected,   // the top element failed the caller's predicate (steal_if)
};

template <class T>
struct steal_result {
  T value;
  steal_status status;
};

template <class T>
class chase_lev_deque {
  static_assert(std::is_pointer_v<T>, "chase_lev_deque stores pointers");
  static_assert(std::atomic<T>::is_always_lock_free);

  // A power-of-two circular buffer addressed by logical index & mask.
  struct ring {
    std::int64_t m_capacity;
    std::int64_t m_mask;
    ring* m_retired_next;  // owner-private list of retired rings
    std::atomic<T>* m_slots;

    static ring* create(std::int64_t capacity) {
      // One allocation for header and slots; slots are value-initialized (nullptr), so a
      // speculative read of a slot outside [top, bottom) yields nullptr or an old element.
      void* mem = std::malloc(sizeof(ring) + sizeof(std::atomic<T>) * capacity);
      if (mem == nullptr) throw std::bad_alloc();
      ring* r = ::new (mem) ring{capacity, capacity - 1, nullptr, nullptr};
      r->m_slots = reinterpret_cast<std::atomic<T>*>(static_cast<char*>(mem) + sizeof(ring));
      for (std::int64_t i = 0; i < capacity; ++i)
        ::new (&r->m_slots[i]) std::atomic<T>(nullptr);
      return r;
    }
    static void destroy(ring* r) noexcept {
      r->~ring();
      std::free(r);
    }
    std::atomic<T>& at(std::int64_t i) noexcept { return m_slots[i & m_mask]; }
  };

 public:
  explicit chase_lev_deque(std::int64_t initial_capacity = 256) {
    std::int64_t cap = 2;
    while (cap < initial_capacity)
      cap <<= 1;
    m_ring.store(ring::create(cap), std::memory_order_relaxed);
  }
  chase_lev_deque(const chase_lev_deque&) = delete;
  chase_lev_deque& operator=(const chase_lev_deque&) = delete;
  ~chase_lev_deque() {
    ring::destroy(m_ring.load(std::memory_order_relaxed));
    while (m_retired != nullptr) {
      ring* next = m_retired->m_retired_next;
      ring::destroy(m_retired);
      m_retired = next;
    }
  }

  // Owner only. Returns true if the deque was empty before the push (then the push is
  // seq_cst, see below).
  bool push(T value) {
    // P1: only the owner writes bottom.
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed);
    // P2: acquire pairs with a thief's successful CAS on top (S6), so the thief's read of
    // slot t happens-before the owner overwrites that slot after wrap-around.
    const std::int64_t t = m_top.load(std::memory_order_acquire);
    // P3: only the owner writes m_ring.
    ring* r = m_ring.load(std::memory_order_relaxed);
    if (HEIST_UNLIKELY(b - t > r->m_capacity - 1)) {
      // P4: grow, then use the new ring (storing into the old one would lose the value).
      r = grow(r, t, b);
    }
    // P5: relaxed store to an atomic slot; published by the release store of bottom below.
    r->at(b).store(value, std::memory_order_relaxed);
    // P6+P7: a release store instead of "release fence + relaxed store": same
    // synchronization with a thief's acquire load of bottom (S3), and TSan models it.
    if (b == t) {
      // Into an empty deque: seq_cst, so that it takes part in the sleep protocol's Dekker
      // pair (the caller's seq_cst load of the idle word, against a sleeper's seq_cst RMW
      // and fence before it re-checks the deques; idle_state.hpp). This is the push a
      // sleeping thread must not miss. seq_cst is also release: S3 still pairs with it.
      m_bottom.store(b + 1, std::memory_order_seq_cst);
      return true;
    }
    m_bottom.store(b + 1, std::memory_order_release);
    return false;
  }

  // Owner only. Takes the most recently pushed element, or returns nullptr.
  T pop() noexcept {
    // T1, T2: owner-private reads.
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed) - 1;
    ring* r = m_ring.load(std::memory_order_relaxed);
    // T3: reserve slot b before looking at top.
    m_bottom.store(b, std::memory_order_relaxed);
    // T4: seq_cst fence, pairs with the thief's fence S2. It orders the store of bottom (T3)
    // before the load of top (T5); acquire/release cannot order store->load, and without it
    // owner and thief can both take the last element.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // T5: relaxed is enough after the T4/S2 fence pair.
    std::int64_t t = m_top.load(std::memory_order_relaxed);
    if (t > b) {
      // T8: empty; put bottom back.
      m_bottom.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    // T6: the slot is ours unless this is the last element.
    T value = r->at(b).load(std::memory_order_relaxed);
    if (t == b) {
      // T7: the last element: race the thieves for it with a strong CAS on top (a spurious
      // failure would report empty while a task is queued). seq_cst so it takes part in the
      // single order with the thieves' S6 CAS; relaxed on failure (the value is dropped).
      if (!m_top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                         std::memory_order_relaxed)) {
        value = nullptr;  // a thief won
      }
      // In both cases the deque is now empty: bottom = top.
      m_bottom.store(b + 1, std::memory_order_relaxed);
    }
    return value;
  }

  // Any thread. Takes the oldest element.
  steal_result<T> steal() noexcept {
    return steal_if([](T) noexcept { return true; });
  }

  // Any thread. Takes the oldest element if `accept(element)` holds. `accept` sees a value
  // read speculatively (S5) before the CAS decides who owns it: the element may be taken,
  // run and recycled concurrently, so `accept` must only read fields that stay valid memory
  // (heist's task blocks are never returned to the OS) through atomics, and must accept a
  // nullptr. If the element is rejected, nothing is taken.
  template <class Accept>
  steal_result<T> steal_if(Accept&& accept) noexcept {
    // S1: acquire pairs with the owner's and other thieves' CAS on top.
    std::int64_t t = m_top.load(std::memory_order_acquire);
    // S2: seq_cst fence, pairs with the owner's T4 fence (the last-element race).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // S3: acquire pairs with the owner's release store of bottom (P7): slot t is visible.
    const std::int64_t b = m_bottom.load(std::memory_order_acquire);
    if (t >= b) return {nullptr, steal_status::empty};
    // S4: acquire pairs with the release store of a grown ring (R3), so the copied slots
    // are visible ([CDS] fix; the paper's consume is treated as acquire by compilers anyway).
    ring* r = m_ring.load(std::memory_order_acquire);
    // S5: speculative read; the value is ours only if the CAS below succeeds.
    T value = r->at(t).load(std::memory_order_relaxed);
    if (!accept(value)) {
      // nullptr can only come from a ring slot that a stale t points past: a lost race.
      return {nullptr, value == nullptr ? steal_status::lost_race : steal_status::rejected};
    }
    // S6: strong CAS, seq_cst to share one order with the owner's T7 CAS. On failure the
    // element went to someone else: report a lost race, which callers must not read as
    // "empty" when deciding to sleep.
    if (!m_top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                       std::memory_order_relaxed)) {
      return {nullptr, steal_status::lost_race};
    }
    return {value, steal_status::success};
  }

  // Any thread; a snapshot that may be stale by the time it is used (load monitor, hints).
  std::size_t size() const noexcept {
    // relaxed: a statistic, never used for a correctness decision on its own.
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed);
    const std::int64_t t = m_top.load(std::memory_order_relaxed);
    return b > t ? static_cast<std::size_t>(b - t) : 0;
  }
  bool empty() const noexcept { return size() == 0; }

  // Owner only (or quiescent): current ring capacity, for tests.
  std::int64_t capacity() const noexcept {
    return m_ring.load(std::memory_order_relaxed)->m_capacity;
  }

 private:
  HEIST_NOINLINE ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    // R1, R2: copy the live range keeping logical indices (thieves CAS on top, so the
    // indices must not be rebased). A stale t only copies dead slots, which is harmless.
    ring* bigger = ring::create(old->m_capacity * 2);
    for (std::int64_t i = t; i < b; ++i) {
      bigger->at(i).store(old->at(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    // R3: release pairs with the thief's acquire load of the ring (S4): a thief that sees
    // the new ring sees the copied slots ([CDS] bug: relaxed here lets it read zeros).
    m_ring.store(bigger, std::memory_order_release);
    // R4: never free the old ring while a thief may sit between S4 and S5: retire it.
    old->m_retired_next = m_retired;
    m_retired = old;
    return bigger;
  }

  // Thieves CAS m_top; the owner writes m_bottom. Separate lines so that steals do not
  // invalidate the owner's line on every push and pop.
  alignas(k_cache_line) std::atomic<std::int64_t> m_top{0};
  alignas(k_cache_line) std::atomic<std::int64_t> m_bottom{0};
  std::atomic<ring*> m_ring{nullptr};
  ring* m_retired = nullptr;  // owner-private
};

}  // namespace heist::detail
