// deque_ring: the storage of a Chase-Lev deque (chase_lev_deque.hpp): a power-of-two circular
// buffer of atomic slots, header and slots in one cache-line-aligned allocation. The deque
// addresses it by logical index & mask, grows it by copying into a ring twice the size and
// retires the old one (never freed while the deque lives: a thief may still read it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "heist/detail/config.hpp"

namespace heist::detail {

// A power-of-two circular buffer addressed by logical index & mask.
template <class T>
struct deque_ring {
  std::int64_t m_capacity;
  std::int64_t m_mask;
  deque_ring* m_retired_next;  // owner-private list of retired rings

  static deque_ring* create(std::int64_t capacity) {
    // One allocation for header and slots; slots are value-initialized (nullptr), so a
    // speculative read of a slot outside [top, bottom) yields nullptr or an old element.
    // Cache-line aligned and padded to whole lines: the deques of an executor are created
    // one after another, and a plain malloc put the last slots of one ring on the line of
    // the next ring's header, which its owner reads on every push and pop. Whenever the
    // first owner's pushes reached those slots (the used window rotates as top advances),
    // the other worker missed on every operation: fib(30) on 2 workers ran some windows
    // at a fifth to a half of its speed (docs/design/scaling.md, "Why a 2-thread fib sample
    // is sometimes slow").
    const std::size_t bytes = sizeof(deque_ring) + sizeof(std::atomic<T>) * capacity;
    void* mem =
        std::aligned_alloc(k_cache_line, (bytes + k_cache_line - 1) / k_cache_line * k_cache_line);
    if (mem == nullptr) throw std::bad_alloc();
    deque_ring* r = ::new (mem) deque_ring{capacity, capacity - 1, nullptr};
    for (std::int64_t i = 0; i < capacity; ++i)
      ::new (&r->slots()[i]) std::atomic<T>(nullptr);
    return r;
  }
  static void destroy(deque_ring* r) noexcept {
    r->~deque_ring();
    std::free(r);
  }
  // The slots follow the header in the same allocation: addressed from the ring pointer,
  // with no pointer to load first.
  std::atomic<T>* slots() noexcept {
    return std::launder(reinterpret_cast<std::atomic<T>*>(this + 1));
  }
  const std::atomic<T>* slots() const noexcept {
    return std::launder(reinterpret_cast<const std::atomic<T>*>(this + 1));
  }
  std::atomic<T>& at(std::int64_t i) noexcept { return slots()[i & m_mask]; }
};

}  // namespace heist::detail
