// Frame regions (include/heist/detail/core/frame_region.hpp): the slow path of a frame's
// allocation, and the regions ended threads give back. A region is never given back to the
// system: its memory is the calling thread's to hand out, a pool's blocks once freed out of
// order, or the free part of a region waiting in the list below for the next thread.
#include "heist/detail/core/frame_region.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>

#include "heist/detail/core/thread_record.hpp"

namespace heist::detail {

constinit thread_local std::byte* t_frame_base HEIST_TLS_MODEL = nullptr;
constinit thread_local std::byte* t_frame_top HEIST_TLS_MODEL = nullptr;
constinit thread_local std::byte* t_frame_end HEIST_TLS_MODEL = nullptr;

namespace {

// The free part of a region an ended thread gave back, kept in that free memory itself.
struct spare_region {
  std::byte* end;
  spare_region* next;
};
// Every region made starts with a link to the one made before it (so that leak checkers find
// each reachable), then the memory handed out. Nothing here uses the global operator new:
// frames never come from it (docs/reference/async.md).
struct region_link {
  alignas(16) region_link* prev;
};

struct region_depot {
  std::mutex lock;
  spare_region* spares = nullptr;
  region_link* made = nullptr;
};
region_depot& regions() {
  // Never destroyed (threads may end after statics), and not from the heap.
  alignas(region_depot) static std::byte storage[sizeof(region_depot)];
  static region_depot* const d = ::new (static_cast<void*>(storage)) region_depot();
  return *d;
}
std::atomic<std::size_t> g_regions_made{0};

// A region for the calling thread: a given-back one with room for `size` bytes, else fresh.
frame_region take_region(std::size_t size) {
  region_depot& d = regions();
  std::lock_guard<std::mutex> guard(d.lock);
  for (spare_region** at = &d.spares; *at != nullptr; at = &(*at)->next) {
    spare_region* const r = *at;
    auto* const start = reinterpret_cast<std::byte*>(r);
    if (static_cast<std::size_t>(r->end - start) >= size) {
      *at = r->next;
      return frame_region{start, start, r->end};
    }
  }
  void* const memory = std::malloc(k_frame_region_bytes);
  if (memory == nullptr) throw std::bad_alloc();
  auto* const link = ::new (memory) region_link{d.made};
  d.made = link;
  // relaxed: a statistic for tests, read after the threads that made regions were joined.
  g_regions_made.fetch_add(1, std::memory_order_relaxed);
  auto* const start = static_cast<std::byte*>(memory) + sizeof(region_link);
  return frame_region{start, start, static_cast<std::byte*>(memory) + k_frame_region_bytes};
}

}  // namespace

void* allocate_frame_slow(std::size_t n) {
  const std::size_t size = frame_block_size(n);
  thread_context* const self = t_context;
  if (self == nullptr || size > k_max_region_frame) return allocate_small(n);
  // A region with no room left: blocks freed out of order, here or on other threads (the
  // depot's), come back into use before new memory is taken. A thread without a region takes
  // one first, so that pool blocks do not keep it off a region for good.
  if (t_frame_top != nullptr) {
    if (void* p = record_of(*self).small_objects().try_take(small_object_pool::class_of(n))) {
      return p;
    }
  }
  // The old region's rest (less than this frame, at most 1 KiB) stays unused.
  const frame_region r = take_region(size);
  // The new region's base is where its free part starts: what lies below belongs to frames of
  // the thread that gave it back, freed into pools.
  t_frame_base = r.top;
  t_frame_top = r.top + size;
  t_frame_end = r.end;
  return r.top;
}

void give_back_frame_region() noexcept {
  std::byte* const top = t_frame_top;
  if (top == nullptr) return;
  // A free part too small to hold its own entry stays unused.
  if (static_cast<std::size_t>(t_frame_end - top) >= sizeof(spare_region)) {
    region_depot& d = regions();
    std::lock_guard<std::mutex> guard(d.lock);
    d.spares = ::new (static_cast<void*>(top)) spare_region{t_frame_end, d.spares};
  }
  t_frame_base = nullptr;
  t_frame_top = nullptr;
  t_frame_end = nullptr;
}

std::size_t frame_regions_made() noexcept {
  return g_regions_made.load(std::memory_order_relaxed);
}

}  // namespace heist::detail
