// Small-object memory (include/heist/detail/core/small_object_pool.hpp): the depot, slabs, and the
// blocks of threads outside heist (no thread_context: they take and give blocks at the depot,
// under its lock). Blocks of one class are interchangeable, and none is ever given back to the
// system: a block moves between pools and the depot only.
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>

#include "heist/detail/core/small_object_pool.hpp"
#include "heist/detail/core/thread_record.hpp"

namespace heist::detail {
namespace {

constexpr std::size_t k_slab_blocks = 32;

// The depot: per class, a list of spilled blocks (guarded by one lock).
struct frame_depot {
  std::mutex lock;
  void* lists[small_object_pool::k_classes] = {};
};
frame_depot& depot() {
  static frame_depot* d = new frame_depot();  // immortal: threads may exit after statics
  return *d;
}

void* depot_pop(frame_depot& d, std::size_t c) noexcept {
  void* f = d.lists[c];
  if (f != nullptr) d.lists[c] = *static_cast<void**>(f);
  return f;
}
void depot_push(frame_depot& d, std::size_t c, void* f) noexcept {
  *static_cast<void**>(f) = d.lists[c];
  d.lists[c] = f;
}

}  // namespace

void small_object_pool::take_from_depot(std::size_t c) noexcept {
  frame_depot& d = depot();
  std::lock_guard<std::mutex> guard(d.lock);
  for (std::uint32_t i = 0; i < k_cache_limit / 2; ++i) {
    void* f = depot_pop(d, c);
    if (f == nullptr) break;
    deallocate(f, c);
  }
}

small_object_pool::free_block* small_object_pool::refill(std::size_t c) {
  take_from_depot(c);
  if (m_lists[c] != nullptr) return m_lists[c];
  const std::size_t size = (c + 1) * k_granule;
  auto* slab = static_cast<std::byte*>(std::malloc(size * k_slab_blocks));
  if (slab == nullptr) throw std::bad_alloc();
  for (std::size_t i = 0; i < k_slab_blocks; ++i)
    deallocate(slab + i * size, c);
  return m_lists[c];
}

void* small_object_pool::try_take(std::size_t c) noexcept {
  if (m_lists[c] == nullptr) take_from_depot(c);
  return take_cached(c);
}

void small_object_pool::spill(std::size_t c) noexcept {
  frame_depot& d = depot();
  std::lock_guard<std::mutex> guard(d.lock);
  for (std::uint32_t i = 0; i < k_cache_limit / 2; ++i) {
    free_block* f = m_lists[c];
    m_lists[c] = f->next;
    --m_counts[c];
    depot_push(d, c, f);
  }
}

small_object_pool::~small_object_pool() {
  frame_depot& d = depot();
  std::lock_guard<std::mutex> guard(d.lock);
  for (std::size_t c = 0; c < k_classes; ++c) {
    while (free_block* f = m_lists[c]) {
      m_lists[c] = f->next;
      depot_push(d, c, f);
    }
  }
}

// A thread outside heist (no thread_context): the depot, else a new slab into the depot.
void* allocate_small_outside(std::size_t n) {
  const std::size_t c = small_object_pool::class_of(n);
  if (c >= small_object_pool::k_classes) return ::operator new(n);
  frame_depot& d = depot();
  std::lock_guard<std::mutex> guard(d.lock);
  if (void* f = depot_pop(d, c)) return f;
  const std::size_t size = (c + 1) * small_object_pool::k_granule;
  auto* slab = static_cast<std::byte*>(std::malloc(size * k_slab_blocks));
  if (slab == nullptr) throw std::bad_alloc();
  for (std::size_t i = 1; i < k_slab_blocks; ++i)
    depot_push(d, c, slab + i * size);
  return slab;
}

void deallocate_small_outside(void* p, std::size_t n) noexcept {
  const std::size_t c = small_object_pool::class_of(n);
  if (c >= small_object_pool::k_classes) {
    ::operator delete(p);
    return;
  }
  frame_depot& d = depot();
  std::lock_guard<std::mutex> guard(d.lock);
  depot_push(d, c, p);
}

}  // namespace heist::detail
