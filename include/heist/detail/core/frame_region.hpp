// frame_region: where a heist thread's coroutine frames come from. Fork-join frames die in the
// order they were made (a co_await's task ends before its awaiter goes on; a member joined
// inline ends before its joiner), so each thread hands out frames from a region of its own like
// a stack: an allocation moves the region's top up, and freeing the frame just below the top
// moves it back down. Nothing else is read or written, and no free list is followed.
//
// Frames that do not die in that order go to the freeing thread's small-object pool
// (small_object_pool.hpp) instead of back to the region: a frame freed on another thread (a
// stolen member, a coroutine resumed elsewhere), one freed while a newer frame lives above it
// (a suspended coroutine's), one of a region this thread no longer holds. A region block is
// 16-byte aligned and as big as the pool's class of its size, so it is a pool block like any
// other from then on. When the region has no room for a frame, the thread takes a block of the
// frame's class from its pool or the depot first, so that such blocks come back into use before
// new memory is taken; only when neither has one does it take a new region (one an ended
// thread gave back, else fresh memory). Memory grows only when no free block of the class is
// found, as with the pool alone.
//
// Owner: the calling thread alone reads and writes its region (t_frame_*), so nothing here
// is atomic. A thread that ends gives the free part of its region back (thread_record's
// destructor); the frames below it that are still alive are freed into pools as they end.
// Regions are kept until the process ends (src/core/frame_region.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/core/small_object_pool.hpp"
#include "heist/detail/core/thread_record.hpp"

namespace heist::detail {

// A region: [top, end) is free and its holder's to hand out; [base, top) was handed out (live
// frames, or blocks since given to a pool).
struct frame_region {
  std::byte* base = nullptr;
  std::byte* top = nullptr;
  std::byte* end = nullptr;
};
// The calling thread's region, one thread-local word per bound (plain variables: no reference
// to a thread-local object is formed, which sanitizer builds would check against null). All
// null: no region (a thread outside heist, or one that has not made a frame yet).
extern HEIST_API constinit thread_local std::byte* t_frame_base HEIST_TLS_MODEL;
extern HEIST_API constinit thread_local std::byte* t_frame_top HEIST_TLS_MODEL;
extern HEIST_API constinit thread_local std::byte* t_frame_end HEIST_TLS_MODEL;

// How many bytes a region holds, and the biggest frame it hands out (the pool's biggest class:
// bigger frames come from the global operator new, through allocate_small).
inline constexpr std::size_t k_frame_region_bytes = 64 * 1024;
inline constexpr std::size_t k_max_region_frame =
    small_object_pool::k_classes * small_object_pool::k_granule;

// The block an n-byte frame takes: its pool class's size.
constexpr std::size_t frame_block_size(std::size_t n) noexcept {
  return (n + small_object_pool::k_granule - 1) & ~(small_object_pool::k_granule - 1);
}

// The thread has no region (it takes one), or its region and its pool's list have no room
// (a block from the depot, else a new region); frames over k_max_region_frame and threads
// outside heist: allocate_small.
HEIST_API void* allocate_frame_slow(std::size_t n);
// The calling thread ends: the free part of its region goes to the next thread that needs one.
HEIST_API void give_back_frame_region() noexcept;
// Regions taken from fresh memory since the process started (tests).
HEIST_API std::size_t frame_regions_made() noexcept;

HEIST_ALWAYS_INLINE void* allocate_frame(std::size_t n) {
  const std::size_t size = frame_block_size(n);
  if (size <= k_max_region_frame) {
    std::byte* const top = t_frame_top;
    if (HEIST_LIKELY(size <= static_cast<std::size_t>(t_frame_end - top))) {
      t_frame_top = top + size;
      return top;
    }
    // No room left: a block of the frame's class that the thread's pool holds.
    thread_context* const self = t_context;
    if (top != nullptr && self != nullptr) {
      if (void* p = record_of(*self).small_objects().take_cached(small_object_pool::class_of(n))) {
        return p;
      }
    }
  }
  return allocate_frame_slow(n);
}

// `n`: the size given to allocate_frame.
HEIST_ALWAYS_INLINE void deallocate_frame(void* p, std::size_t n) noexcept {
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  // Just below the top and inside the region: the region's own newest block (or a block of it
  // a pool handed out again): free memory next to [top, end).
  if (HEIST_LIKELY(b + frame_block_size(n) == reinterpret_cast<std::uintptr_t>(t_frame_top) &&
                   b >= reinterpret_cast<std::uintptr_t>(t_frame_base))) {
    t_frame_top = static_cast<std::byte*>(p);
    return;
  }
  deallocate_small(p, n);
}

}  // namespace heist::detail
