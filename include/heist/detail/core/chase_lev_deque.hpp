// The Chase-Lev work-stealing deque: one owner pushes and pops at the bottom (LIFO), any
// number of thieves steal at the top (FIFO) with a CAS.
//
// Correctness rests on Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient
// Work-Stealing for Weak Memory Models", PPoPP 2013 (doi:10.1145/2442516.2442524), with the
// two fixes CDSChecker found in its transcribed C11 code (Norris & Demsky, OOPSLA 2013):
// the grow publication (R3 release / S4 acquire) and re-loading the ring after a grow (P4).
// The step names below (P1..P7, T1..T8, S1..S6, R1..R4) are those of docs/design/chase-lev.md,
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
//
// Fence-free pops (docs/design/protocols.md "Fence-free pops, switched by the owner"). The pop's
// seq_cst fence (T4) costs about a quarter of a fork-join spawn, and it only matters while a
// thief is stealing from this deque, which is rare. A deque built with
// enable_fence_free_pops() has a mode on the owner's line:
//    fence_free --(a thief that would take an element: CAS)--------------------> switching
//    switching  --(the owner's next pop: it fences, then acknowledges)---------> fenced
//    switching  --(or that thief, if no pop acknowledged soon: membarrier, CAS)-> fenced
//    fenced     --(the owner, after a quiet spell, if no thief is counted)------> fence_free
// The owner reads the mode after its store of bottom (T3) and fences unless it is
// fence_free. A thief counts itself in m_thieves for the whole steal, and steals with the
// fenced protocol only once the mode is fenced or after a process-wide barrier of its own:
//  * the barrier lands on the owner's CPU at a point P of its program. A pop whose mode read
//    is after P sees switching or fenced and fences; one whose read is before P has its T3
//    before P, visible to every read after the barrier. Either way the pop acts fenced
//    towards every steal that starts after the barrier.
//  * an owner's store of fenced (its acknowledgement: a pop that read switching fences, then
//    stores it) is seq_cst, so release to the thief's seq_cst read of it: every earlier pop,
//    fence-free or not, happened-before the steal; later pops read fenced until a try, and
//    a try cannot miss this counted thief (all mode accesses and the count are seq_cst:
//    docs/design/protocols.md, case 3). A popping owner acknowledges within a pop, so the
//    barrier (13 us on a VM) is left to owners that do not pop.
//  * the owner moves fenced -> fence_free with a seq_cst store of the mode then a seq_cst
//    load of m_thieves; a thief's seq_cst increment of m_thieves precedes its seq_cst load of
//    the mode. Store buffering both ways is impossible: either the owner sees the thief and
//    stays fenced, or the thief sees fence_free and switches before it steals.
// A thief that finds the deque empty, or the element rejected, leaves without a barrier. The
// owner retries fence_free after a number of fenced pops that doubles (up to a cap) each
// time thieves ended a fence-free spell quickly, so a deque stolen from all the time stays
// fenced and pays no barriers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

#include "heist/detail/config.hpp"
#include "heist/detail/core/deque_ring.hpp"
#include "heist/detail/platform/cpu.hpp"

namespace heist::detail {

// The retry_pops to give chase_lev_deque::enable_fence_free_pops (max_retry_pops: 1024 times
// it) for the deques of an executor with `workers` workers, or 0 to keep its pops fenced: where the
// barrier is available, the executor small enough that a barrier interrupting every CPU of the
// process now and then is cheap (k_fence_free_max_workers), and HEIST_FENCE_FREE_POPS is not "0".
// Registers the barrier first if nobody has (src/wait/owner_counting.cpp defines it).
inline constexpr std::size_t k_fence_free_max_workers = 8;
inline constexpr std::uint32_t k_fence_free_max_retry_factor = 1024;
HEIST_API std::uint32_t fence_free_retry_pops(std::size_t workers) noexcept;

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

// How long a switching thief waits for the deque owner's acknowledgement before it runs the
// barrier (chase_lev_deque::enable_fence_free_pops): 64 pauses, 0.6 us on this project's VM
// (Sapphire Rapids), a few microseconds where a pause is long (140 cycles on Skylake); many
// fork-join pops, and less than a membarrier on a VM.
inline constexpr std::uint32_t k_default_ack_spins = 64;

template <class T>
class chase_lev_deque {
  static_assert(std::is_pointer_v<T>, "chase_lev_deque stores pointers");
  static_assert(std::atomic<T>::is_always_lock_free);

  using ring = deque_ring<T>;  // deque_ring.hpp

 public:
  explicit chase_lev_deque(std::int64_t initial_capacity = 256) {
    std::int64_t cap = 2;
    while (cap < initial_capacity)
      cap <<= 1;
    ring* const r = ring::create(cap);
    // relaxed: the deque is published to thieves with whatever shares it (thread start, a
    // lease), which orders this store too.
    m_ring.store(r, std::memory_order_relaxed);
    cache_ring(r);
  }
  chase_lev_deque(const chase_lev_deque&) = delete;
  chase_lev_deque& operator=(const chase_lev_deque&) = delete;
  ~chase_lev_deque() {
    // relaxed: no thief is left when the deque is destroyed.
    ring::destroy(m_ring.load(std::memory_order_relaxed));
    while (m_retired != nullptr) {
      ring* next = m_retired->m_retired_next;
      ring::destroy(m_retired);
      m_retired = next;
    }
  }

  // Owner only. Returns true if the deque was empty before the push (then the push is
  // seq_cst, see below).
  HEIST_ALWAYS_INLINE bool push(T value) {
    // P1: only the owner writes bottom.
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed);
    // P2: acquire pairs with a thief's successful CAS on top (S6), so the thief's read of
    // slot t happens-before the owner overwrites that slot after wrap-around.
    const std::int64_t t = m_top.load(std::memory_order_acquire);
    // P3: only the owner writes m_ring; it reads its own copy of the ring's slots and mask
    // (cache_ring), one load fewer on the way to the slot than through m_ring.
    // P4: full: grow first (out of line, so that nothing of the common path lives across a
    // call there).
    if (HEIST_UNLIKELY(b - t > m_owner_mask)) return push_growing(value);
    return publish(m_owner_slots, m_owner_mask, b, t, value);
  }

  // Before the deque is shared (no thread but the creator uses it yet): let its pops run
  // without the seq_cst fence while nobody steals from it (the file comment). Only where
  // process_wide_barrier() is available. `retry_pops`: fenced pops before the owner tries
  // fence_free again after a thief ended it (0: always fenced); the wait doubles while
  // thieves keep ending spells quickly, up to `max_retry_pops`. `ack_spins`: how many pauses
  // a switching thief waits for the owner's acknowledgement before it runs the barrier (0:
  // it always runs the barrier; the stress tests race that path on its own).
  void enable_fence_free_pops(std::uint32_t retry_pops, std::uint32_t max_retry_pops,
                              std::uint32_t ack_spins = k_default_ack_spins) noexcept {
    m_fence_free_base = retry_pops;
    m_ack_spins = ack_spins;
    m_max_retry_backoff = max_retry_pops < retry_pops ? retry_pops : max_retry_pops;
    m_retry_backoff = retry_pops;
    // relaxed: published to other threads with the deque itself (thread start, a lease).
    m_mode.store(retry_pops != 0 ? k_fence_free : k_fenced, std::memory_order_relaxed);
  }

  // Owner only (or quiescent): whether the next pop runs without the fence, for tests.
  bool pops_fence_free() const noexcept {
    return m_mode.load(std::memory_order_relaxed) == k_fence_free;
  }

  // Owner only. Takes the most recently pushed element, or returns nullptr.
  HEIST_ALWAYS_INLINE T pop() noexcept {
    // Owner-private countdown to the next try at fence-free pops; 0 when not counting.
    if (HEIST_UNLIKELY(m_retry_countdown != 0) && --m_retry_countdown == 0) try_fence_free();
    // T1, T2: owner-private reads.
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed) - 1;
    // T2 reads the owner's copy of the ring (cache_ring).
    std::atomic<T>* const slots = m_owner_slots;
    const std::int64_t mask = m_owner_mask;
    // T3: reserve slot b before looking at top.
    m_bottom.store(b, std::memory_order_relaxed);
    HEIST_PERTURB_POINT(pop_reserved);
    // TM: the mode, read after T3 in program order (the compiler barriers keep it there; a
    // CPU that runs it early replays it if a thief's barrier interrupts in between). relaxed:
    // only the owner and a switching thief's barrier order it (the file comment); a switching
    // read only makes this pop fence and then acknowledge (seq_cst, acknowledge_switch).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const std::uint8_t mode = m_mode.load(std::memory_order_relaxed);
    if (HEIST_LIKELY(mode == k_fence_free)) {
      // No thief steals from this deque before this CPU ran a barrier or acknowledged.
      ++m_fence_free_pops;
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      // T4: seq_cst fence, pairs with the thief's fence S2. It orders the store of bottom
      // (T3) before the load of top (T5); acquire/release cannot order store->load, and
      // without it owner and thief can both take the last element.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (HEIST_UNLIKELY(mode == k_switching)) acknowledge_switch();
      if (m_fence_free_base != 0 && m_retry_countdown == 0) schedule_fence_free_retry();
    }
    // T5: relaxed is enough after the T4/S2 fence pair. Fence-free, no thief CASes top
    // without having run a barrier after which this pop's T3 is visible to it (a top read
    // here that misses such a CAS still leaves the two on different slots, or both on the
    // last one's CAS), and top as left by steals that ended before the spell is visible
    // through C- and TC (try_fence_free).
    std::int64_t t = m_top.load(std::memory_order_relaxed);
    if (t > b) {
      // T8: empty; put bottom back.
      m_bottom.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    // T6: the slot is ours unless this is the last element.
    T value = slots[b & mask].load(std::memory_order_relaxed);
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
  // (heist's task blocks are never returned to the OS; a coroutine member's entry in its
  // frame is told by its address and not read: task_filter) through atomics, and must accept
  // a nullptr. If the element is rejected, nothing is taken.
  template <class Accept>
  steal_result<T> steal_if(Accept&& accept) noexcept {
    // m_fence_free_base is set before the deque is shared and never changes.
    if (m_fence_free_base == 0) return steal_fenced(accept);
    // C+: seq_cst, the thief's half of the store-buffering pair with try_fence_free (the
    // owner's seq_cst store of the mode, then seq_cst load of m_thieves): counted before
    // the mode is read, so the owner cannot turn fence_free under a fenced steal.
    m_thieves.fetch_add(1, std::memory_order_seq_cst);
    // SM: seq_cst, see C+; also acquire for the release store of fenced in switch_to_fenced.
    const std::uint8_t mode = m_mode.load(std::memory_order_seq_cst);
    HEIST_PERTURB_POINT(steal_counted);
    steal_result<T> result{nullptr, steal_status::empty};
    if (mode == k_fenced || switch_to_fenced(mode, accept, result)) result = steal_fenced(accept);
    // C-: release pairs with the owner's seq_cst load of m_thieves in try_fence_free: an
    // owner that sees this thief gone, and pops without a fence from then on, sees top as
    // this steal's CAS left it.
    m_thieves.fetch_sub(1, std::memory_order_release);
    return result;
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
    // relaxed: the owner reads its own store (or nothing runs).
    return m_ring.load(std::memory_order_relaxed)->m_capacity;
  }
  // Owner only (or quiescent): the bytes the current ring occupies, header included, for the
  // test that rings of different deques never share a cache line (ring::create).
  std::pair<const void*, const void*> ring_storage() const noexcept {
    // relaxed: as capacity().
    const ring* r = m_ring.load(std::memory_order_relaxed);
    return {r, reinterpret_cast<const char*>(r->slots() + r->m_capacity)};
  }

 private:
  enum : std::uint8_t { k_fenced = 0, k_fence_free = 1, k_switching = 2 };

  // The Chase-Lev steal. Safe while every pop that overlaps it fences (T4), or has its T3
  // made visible by a process-wide barrier that ran before this steal began.
  template <class Accept>
  steal_result<T> steal_fenced(Accept& accept) noexcept {
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

  // A counted thief found the mode fence_free or switching. Looks first (S1, S3..S5 without
  // taking): an empty deque or a rejected element is reported in `result` with no barrier
  // (false). Otherwise moves the mode on and runs the barrier that makes a fenced steal safe
  // (true). Stale reads here only make the look wrong, never the steal: it is redone.
  template <class Accept>
  HEIST_NOINLINE bool switch_to_fenced(std::uint8_t mode, Accept& accept,
                                       steal_result<T>& result) noexcept {
    // acquire, as S1, S3, S4 (the look reads the slot an owner's push published).
    const std::int64_t t = m_top.load(std::memory_order_acquire);
    const std::int64_t b = m_bottom.load(std::memory_order_acquire);
    if (t >= b) return false;  // result says empty
    const T value = m_ring.load(std::memory_order_acquire)->at(t).load(std::memory_order_relaxed);
    if (!accept(value)) {
      result = {nullptr, value == nullptr ? steal_status::lost_race : steal_status::rejected};
      return false;
    }
    // fence_free -> switching: only one thief ends the spell. seq_cst, like every write of
    // the mode a thief may read as its go-ahead (the proof in the file comment). On failure
    // another thief is switching, or the owner went back to fenced after a failed try.
    std::uint8_t expected = k_fence_free;
    const bool switcher =
        mode == k_fence_free &&
        m_mode.compare_exchange_strong(expected, k_switching, std::memory_order_seq_cst);
    HEIST_PERTURB_POINT(pop_mode_switching);
    // KA: a popping owner acknowledges within a pop; only an owner that does not pop (it runs
    // a long task, or waits) costs a barrier.
    if (owner_acknowledged()) return true;
    process_wide_barrier();
    // seq_cst (so also release: pairs with the seq_cst load SM or KA of a later thief, which
    // then steals after this barrier, so the owner's pops are fenced towards it too). A CAS:
    // the owner may have acknowledged meanwhile, and may even have tried fence_free since.
    expected = k_switching;
    if (switcher) m_mode.compare_exchange_strong(expected, k_fenced, std::memory_order_seq_cst);
    return true;
  }

  // KA: waits a little for the owner to acknowledge the switch (mode fenced). seq_cst loads:
  // the thief's go-ahead, ordered in the single order after its C+ (the proof).
  HEIST_NOINLINE bool owner_acknowledged() noexcept {
    if (m_ack_spins == 0) return false;
    for (std::uint32_t spin = 0; spin < m_ack_spins; ++spin) {
      if (m_mode.load(std::memory_order_seq_cst) == k_fenced) return true;
      cpu_relax();
    }
    return m_mode.load(std::memory_order_seq_cst) == k_fenced;
  }

  // Owner, in a fenced pop (after T4) that read switching: moves the mode to fenced.
  // seq_cst: the thief that waits in KA reads it as its go-ahead; everything this owner did
  // before (the fence-free pops' stores of bottom) happens-before that thief's steal, and
  // every later pop reads fenced at TM until a try sees no thief counted.
  HEIST_NOINLINE void acknowledge_switch() noexcept {
    HEIST_PERTURB_POINT(pop_mode_acknowledging);
    m_mode.store(k_fenced, std::memory_order_seq_cst);
  }

  // Owner, at the start of a pop: fenced -> fence_free unless a thief is counted.
  HEIST_NOINLINE void try_fence_free() noexcept {
    // relaxed: the owner's own writes, or a switching thief's (then it is not fenced yet).
    if (m_mode.load(std::memory_order_relaxed) != k_fenced) {
      m_retry_countdown = m_retry_backoff;  // a thief is still switching; try later
      return;
    }
    // TW: seq_cst, with TC below: the owner's half of the store-buffering pair with C+ and
    // SM (steal_if).
    m_mode.store(k_fence_free, std::memory_order_seq_cst);
    HEIST_PERTURB_POINT(pop_mode_trying);
    // TC: seq_cst (so also acquire: pairs with the thieves' release C-, see there).
    if (m_thieves.load(std::memory_order_seq_cst) != 0) {
      // A thief is stealing, or about to: stay fenced. A CAS, because a thief that read
      // fence_free meanwhile may have moved it to switching; then it ends at fenced itself.
      // relaxed: no pop ran fence-free in this window, so there is nothing to publish.
      std::uint8_t expected = k_fence_free;
      m_mode.compare_exchange_strong(expected, k_fenced, std::memory_order_relaxed);
      m_retry_countdown = m_retry_backoff;
      return;
    }
    m_fence_free_pops = 0;
  }

  // Owner: the first fenced pop after a fence-free spell ended (a thief switched) or after a
  // failed try. A spell shorter than the wait before it doubles the wait, up to the cap; a
  // long one resets it.
  void schedule_fence_free_retry() noexcept {
    m_retry_backoff = m_fence_free_pops >= m_retry_backoff        ? m_fence_free_base
                      : m_retry_backoff > m_max_retry_backoff / 2 ? m_max_retry_backoff
                                                                  : m_retry_backoff * 2;
    m_retry_countdown = m_retry_backoff;
  }

  // The owner's copy of the current ring's slots and mask (P3, T2), set whenever m_ring is.
  void cache_ring(ring* r) noexcept {
    m_owner_slots = r->slots();
    m_owner_mask = r->m_mask;
  }

  // P5-P7 of push: the value into slot b of the ring whose slots and mask are given, then
  // bottom past it.
  HEIST_ALWAYS_INLINE bool publish(std::atomic<T>* slots, std::int64_t mask, std::int64_t b,
                                   std::int64_t t, T value) noexcept {
    // P5: relaxed store to an atomic slot; published by the release store of bottom below.
    slots[b & mask].store(value, std::memory_order_relaxed);
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

  // push() into a full ring: P1-P3 again (the same orders, for the same reasons), grow (P4),
  // then publish into the new ring.
  HEIST_NOINLINE bool push_growing(T value) {
    const std::int64_t b = m_bottom.load(std::memory_order_relaxed);
    const std::int64_t t = m_top.load(std::memory_order_acquire);
    ring* r = m_ring.load(std::memory_order_relaxed);
    // Storing into the old ring would lose the value.
    if (b - t > r->m_capacity - 1) r = grow(r, t, b);
    return publish(r->slots(), r->m_mask, b, t, value);
  }

  HEIST_NOINLINE ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    // R1, R2: copy the live range keeping logical indices (thieves CAS on top, so the
    // indices must not be rebased). A stale t only copies dead slots, which is harmless.
    ring* bigger = ring::create(old->m_capacity * 2);
    // relaxed: the owner's own slots; R3's release publishes the copies.
    for (std::int64_t i = t; i < b; ++i) {
      bigger->at(i).store(old->at(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    // R3: release pairs with the thief's acquire load of the ring (S4): a thief that sees
    // the new ring sees the copied slots ([CDS] bug: relaxed here lets it read zeros).
    m_ring.store(bigger, std::memory_order_release);
    cache_ring(bigger);
    // R4: never free the old ring while a thief may sit between S4 and S5: retire it.
    old->m_retired_next = m_retired;
    m_retired = old;
    return bigger;
  }

  // Thieves CAS m_top; the owner writes m_bottom. Separate lines so that steals do not
  // invalidate the owner's line on every push and pop.
  alignas(k_cache_line) std::atomic<std::int64_t> m_top{0};
  // The owner's line: thieves read bottom, ring and mode; everything else is owner-private.
  alignas(k_cache_line) std::atomic<std::int64_t> m_bottom{0};
  std::atomic<ring*> m_ring{nullptr};
  std::atomic<T>* m_owner_slots = nullptr;  // owner-private: m_ring's slots (cache_ring)
  std::int64_t m_owner_mask = 0;            // owner-private: m_ring's mask
  std::atomic<std::uint8_t> m_mode{k_fenced};
  std::uint32_t m_fence_free_base = 0;    // 0: always fenced; set before sharing, then const
  std::uint32_t m_max_retry_backoff = 0;  // set with m_fence_free_base
  std::uint32_t m_ack_spins = 0;          // set with m_fence_free_base
  std::uint32_t m_retry_backoff = 0;      // owner-private: fenced pops before the next try
  std::uint32_t m_retry_countdown = 0;    // owner-private: 0 when not counting down
  std::uint64_t m_fence_free_pops = 0;    // owner-private: pops of the current spell
  // The owner's line ends here: m_bottom through m_fence_free_pops fill its 64 bytes.
  // Thieves inside steal_if of a fence-free-capable deque; its own line, since every steal
  // attempt writes it and the owner reads it only when it tries fence_free.
  alignas(k_cache_line) std::atomic<std::uint32_t> m_thieves{0};
  ring* m_retired = nullptr;  // owner-private; touched only when the ring grows
};

}  // namespace heist::detail
