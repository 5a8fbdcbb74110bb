// arena_lifetime: what lets a future, a continuation or a suspended coroutine outlive the
// executor (or task_arena) it came from. An arena owns one; everything that may outlive the
// arena holds a counted reference to it (arena_ref) instead of a raw arena pointer, and
// reaches the arena only through a pin.
//
// The state word: bit 0 says the arena is closed (its owner is destroying it); bits 1..63
// count the pins held. A pin adds k_pin and looks at the closed bit in the same RMW; its
// owner's close() sets the bit and then waits for the count to drain. All these RMWs are on
// one word, so they are totally ordered: a pin whose RMW comes before close()'s is seen by
// close()'s wait until it is dropped (and its uses of the arena happen-before the arena's
// destruction: unpin's release, the wait's acquire); a pin whose RMW comes after sees the
// bit, takes nothing and is dropped at once. Pins are short (a spawn, a helping wait), so the
// arena's owner waits at most that long.
//
// A thread that runs inside the arena needs no pin: an arena is destroyed only after its
// tasks and the threads inside it are done.
//
// References are counted in batches per thread. Every start(), submit(), then() and
// co_await on a future makes a holder, so a count that each holder changed with its own RMW
// would be one cache line written by every thread of the arena (with one, a fork-join of
// start()ed coroutines takes longer at 2 threads than at 1). Each thread keeps a batch of
// references to one lifetime (t_lifetime_refs): a holder made on the thread takes one from
// the batch (refilled k_ref_batch at a time with one RMW), a holder released on the thread
// puts its reference back into the batch (more than 2 * k_ref_batch: the surplus goes back
// with one RMW), and the thread's exit returns the rest. A reference only moves between a
// holder and a batch, so m_refs always counts the arena's own reference, the holders' and the
// batches': it reaches 0 only when all three are gone, and the releaser that takes it there
// (acq_rel) deletes the object after every other thread's last use (their returns are
// releases). A holder released on a thread whose batch is for another lifetime releases with
// its own RMW, and a thread with refs of another lifetime in its batch takes one with its own
// RMW; a thread's batch switches to a new lifetime only when it is empty.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "heist/detail/config.hpp"

namespace heist::detail {

class arena;
class arena_lifetime;

// A thread's batch of references to one arena_lifetime (file comment). `lifetime` may be a
// lifetime deleted since, only when `count` is 0: then it is compared, never used.
struct HEIST_API lifetime_ref_batch {
  arena_lifetime* lifetime = nullptr;
  std::uint32_t count = 0;
  // Returned at the thread's exit: a holder released after that (by a later thread_local's
  // destructor) releases with its own RMW, and none is taken into the batch again.
  bool returned = false;
  lifetime_ref_batch() noexcept = default;
  lifetime_ref_batch(const lifetime_ref_batch&) = delete;
  lifetime_ref_batch& operator=(const lifetime_ref_batch&) = delete;
  ~lifetime_ref_batch();  // returns the batch (below)
};
inline HEIST_API thread_local lifetime_ref_batch t_lifetime_refs;
inline constexpr std::uint32_t k_ref_batch = 256;

class HEIST_API arena_lifetime {
 public:
  explicit arena_lifetime(arena& a) noexcept : m_arena(&a) {}
  arena_lifetime(const arena_lifetime&) = delete;
  arena_lifetime& operator=(const arena_lifetime&) = delete;

  // A new reference for a holder; the caller already holds one (the arena's, or a holder's).
  void add_ref() noexcept {
    lifetime_ref_batch& b = t_lifetime_refs;
    if (b.lifetime != this) {
      if (b.count != 0 || b.returned) {
        // relaxed: the caller's reference keeps the object alive; nothing to order.
        m_refs.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      b.lifetime = this;
    }
    if (b.count == 0) {
      m_refs.fetch_add(k_ref_batch, std::memory_order_relaxed);  // relaxed: as above
      b.count = k_ref_batch;
    }
    --b.count;
  }
  // Drops a holder's reference (to this thread's batch where it is for this lifetime).
  void release() noexcept {
    lifetime_ref_batch& b = t_lifetime_refs;
    if (b.lifetime == this) {
      if (++b.count > 2 * k_ref_batch) {
        b.count -= k_ref_batch;
        release_many(k_ref_batch);  // the batch keeps more: never the last
      }
      return;
    }
    release_many(1);
  }
  void release_many(std::uint32_t n) noexcept {
    // acq_rel: the last releaser deletes after every other holder's and batch's accesses.
    if (m_refs.fetch_sub(n, std::memory_order_acq_rel) == n) delete this;
  }

  // The arena, kept alive until unpin(); null once its owner closed it.
  arena* pin() noexcept {
    // acquire: this holder's uses of the arena stay after the RMW, so they fall inside the
    // pin as close() sees it (its wait pairs with unpin's release, file comment).
    const std::uint64_t before = m_word.fetch_add(k_pin, std::memory_order_acquire);
    if ((before & k_closed) != 0) {
      unpin();
      return nullptr;
    }
    HEIST_PERTURB_POINT(arena_pinned);
    return m_arena;
  }
  void unpin() noexcept {
    // release: pairs with close()'s acquire load; this holder's uses of the arena
    // happen-before the arena is destroyed.
    m_word.fetch_sub(k_pin, std::memory_order_release);
  }

  // The arena's owner, before destroying it: no pin succeeds after this; waits for the pins
  // still held (src/core/arena_visit.cpp). Idempotent.
  void close() noexcept;

 private:
  static constexpr std::uint64_t k_closed = 1;
  static constexpr std::uint64_t k_pin = 2;

  arena* const m_arena;
  std::atomic<std::uint64_t> m_word{0};
  std::atomic<std::uint32_t> m_refs{1};  // the arena's own, the holders' and the batches'
};

inline lifetime_ref_batch::~lifetime_ref_batch() {
  arena_lifetime* const l = lifetime;
  const std::uint32_t n = count;
  lifetime = nullptr;
  count = 0;
  returned = true;
  if (n != 0) l->release_many(n);
}

// A counted reference to an arena's lifetime (null: no arena).
class arena_ref {
 public:
  arena_ref() noexcept = default;
  explicit arena_ref(arena_lifetime* l) noexcept : m_lifetime(l) {
    if (m_lifetime != nullptr) m_lifetime->add_ref();
  }
  arena_ref(const arena_ref& other) noexcept : arena_ref(other.m_lifetime) {}
  arena_ref(arena_ref&& other) noexcept : m_lifetime(std::exchange(other.m_lifetime, nullptr)) {}
  arena_ref& operator=(arena_ref other) noexcept {
    std::swap(m_lifetime, other.m_lifetime);
    return *this;
  }
  ~arena_ref() {
    if (m_lifetime != nullptr) m_lifetime->release();
  }

  explicit operator bool() const noexcept { return m_lifetime != nullptr; }
  arena_lifetime* get() const noexcept { return m_lifetime; }

 private:
  arena_lifetime* m_lifetime = nullptr;
};

}  // namespace heist::detail
