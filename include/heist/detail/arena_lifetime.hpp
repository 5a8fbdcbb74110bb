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
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "heist/detail/perturb.hpp"

namespace heist::detail {

class arena;

class arena_lifetime {
 public:
  explicit arena_lifetime(arena& a) noexcept : m_arena(&a) {}
  arena_lifetime(const arena_lifetime&) = delete;
  arena_lifetime& operator=(const arena_lifetime&) = delete;

  void add_ref() noexcept {
    // relaxed: the caller already holds a reference (the arena's, or a holder's).
    m_refs.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    // acq_rel: the last releaser deletes after every other holder's accesses.
    if (m_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
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
  // still held (src/arena_visit.cpp). Idempotent.
  void close() noexcept;

 private:
  static constexpr std::uint64_t k_closed = 1;
  static constexpr std::uint64_t k_pin = 2;

  arena* const m_arena;
  std::atomic<std::uint64_t> m_word{0};
  std::atomic<std::uint32_t> m_refs{1};  // the arena's own reference
};

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
