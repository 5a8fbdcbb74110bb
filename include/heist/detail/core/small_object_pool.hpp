// small_object_pool: where futures' shared states come from, and coroutine frames that did not
// die in the order their thread's frame region hands them out (frame_region.hpp): heist's
// per-thread memory, not the global operator new (a then() link costs a state and a task, and
// malloc's aligned path was most of a link's time).
//
// Each thread_context owns one: per size class (16-byte steps up to 1 KiB), a LIFO free list
// of blocks, so that allocating or freeing one is a few plain instructions on the thread's
// own context, reached through t_context (one %fs-relative load; allocate_small in
// thread_context.hpp). A list longer than k_cache_limit spills half to a process-wide depot,
// from which an empty list refills before carving a new slab: blocks freed on another thread
// than the one that made them (a coroutine resumed elsewhere, a future released by its
// consumer) come back into use. Slabs are kept until the process ends (src/core/small_objects.cpp).
// 16-byte classes (the alignment operator new guarantees) rather than cache lines: a
// suspended coroutine's frame is most of what it costs, and a 112-byte frame in a 128-byte
// class wastes an eighth of it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"

namespace heist::detail {

class HEIST_API small_object_pool {
 public:
  static constexpr std::size_t k_granule = 16;
  static constexpr std::size_t k_classes = 64;  // 16 .. 1024 bytes
  static constexpr std::uint32_t k_cache_limit = 256;

  // The class of an n-byte block; k_classes or more: too big (or 0), use operator new.
  static constexpr std::size_t class_of(std::size_t n) noexcept {
    return (n + k_granule - 1) / k_granule - 1;
  }

  small_object_pool() = default;
  small_object_pool(const small_object_pool&) = delete;
  small_object_pool& operator=(const small_object_pool&) = delete;
  ~small_object_pool();  // gives every cached block to the depot

  // c < k_classes. Throws std::bad_alloc if no memory is left.
  HEIST_ALWAYS_INLINE void* allocate(std::size_t c) {
    free_block* f = m_lists[c];
    if (HEIST_UNLIKELY(f == nullptr)) f = refill(c);
    m_lists[c] = f->next;
    --m_counts[c];
    return f;
  }
  // A block of class c < k_classes from this pool's list, or null (no refill).
  HEIST_ALWAYS_INLINE void* take_cached(std::size_t c) noexcept {
    free_block* const f = m_lists[c];
    if (f == nullptr) return nullptr;
    m_lists[c] = f->next;
    --m_counts[c];
    return f;
  }
  // A block of class c < k_classes from this pool's list, else from the depot; null if neither
  // has one (no new slab: the caller has memory of its own to take, frame_region.hpp).
  void* try_take(std::size_t c) noexcept;
  HEIST_ALWAYS_INLINE void deallocate(void* p, std::size_t c) noexcept {
    auto* f = static_cast<free_block*>(p);
    f->next = m_lists[c];
    m_lists[c] = f;
    if (HEIST_UNLIKELY(++m_counts[c] > k_cache_limit)) spill(c);
  }

 private:
  struct free_block {
    free_block* next;
  };
  free_block* refill(std::size_t c);  // from the depot, else a new slab; returns the list
  void take_from_depot(std::size_t c) noexcept;  // up to half a cache's worth of class c
  void spill(std::size_t c) noexcept;            // half of list c to the depot

  free_block* m_lists[k_classes] = {};
  std::uint32_t m_counts[k_classes] = {};
};

}  // namespace heist::detail
