// The process-wide depot behind the per-thread task pools (see task_pool.hpp).
#include "heist/detail/core/task_pool.hpp"

#include <pthread.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>

namespace heist::detail {
namespace {

constexpr std::size_t k_slab_bytes = 64 * 1024;
constexpr std::size_t k_blocks_per_slab = k_slab_bytes / k_task_block_size;
static_assert(k_blocks_per_slab % k_task_batch == 0);

// A batch is a chain of blocks linked through task::m_next. While a batch sits in the
// depot, its first block's m_group links it to the next batch and its m_isolation field
// holds the batch's length (both fields are unused in a free block).
struct batch {
  task* head;
  std::size_t count;
};

class depot {
 public:
  batch take() {
    {
      std::lock_guard<std::mutex> lock(m_lock);
      if (m_batches != nullptr) {
        task* head = m_batches;
        m_batches = reinterpret_cast<task*>(head->m_group);
        // relaxed: written under the same lock (push_locked); the lock orders it.
        const std::size_t n = head->m_isolation.load(std::memory_order_relaxed);
        m_free_blocks -= n;
        return {head, n};
      }
    }
    return carve_slab();
  }

  void give(batch b) noexcept {
    if (b.count == 0) return;
    std::lock_guard<std::mutex> lock(m_lock);
    push_locked(b);
  }

  // fork(): a worker of the parent may hold the lock at the moment of the fork, and the
  // child, which has only the forking thread, would then block forever on its first
  // take(). As glibc does for malloc, the forking thread takes the lock before the fork
  // and releases it on both sides after.
  void lock_for_fork() { m_lock.lock(); }
  void unlock_after_fork() { m_lock.unlock(); }

  task_memory_stats stats() {
    std::lock_guard<std::mutex> lock(m_lock);
    return {m_slab_bytes, m_free_blocks};
  }

 private:
  void push_locked(batch b) noexcept {
    // relaxed: the batch's count, read under the same lock (take).
    b.head->m_isolation.store(b.count, std::memory_order_relaxed);
    b.head->m_group = reinterpret_cast<wait_context*>(m_batches);
    m_batches = b.head;
    m_free_blocks += b.count;
  }

  // Carves a new slab into batches: returns one, stacks the rest.
  batch carve_slab() {
    void* mem = std::aligned_alloc(k_cache_line, k_slab_bytes);
    if (mem == nullptr) throw std::bad_alloc();
    auto* blocks = static_cast<std::byte*>(mem);
    batch first{nullptr, 0};
    std::lock_guard<std::mutex> lock(m_lock);
    m_slab_bytes += k_slab_bytes;
    for (std::size_t b = 0; b < k_blocks_per_slab; b += k_task_batch) {
      task* head = nullptr;
      for (std::size_t i = k_task_batch; i-- > 0;) {
        task* t = ::new (blocks + (b + i) * k_task_block_size) task_block{};
        // relaxed: new blocks, handed on under the depot's lock.
        t->m_next.store(head, std::memory_order_relaxed);
        head = t;
      }
      if (first.head == nullptr) {
        first = {head, k_task_batch};
      } else {
        push_locked({head, k_task_batch});
      }
    }
    return first;
  }

  std::mutex m_lock;
  task* m_batches = nullptr;
  std::size_t m_free_blocks = 0;
  std::size_t m_slab_bytes = 0;
};

// Immortal: thread-exit destructors of task pools may run after static destructors.
alignas(depot) std::byte g_depot_storage[sizeof(depot)];

depot* stored_depot() noexcept {
  return std::launder(reinterpret_cast<depot*>(g_depot_storage));
}

depot& the_depot() {
  // The fork handlers reach the depot through its storage, not through this function, so
  // that a fork racing with this initialisation cannot block on its guard.
  static depot* d = [] {
    depot* made = ::new (g_depot_storage) depot();
    pthread_atfork([] { stored_depot()->lock_for_fork(); },
                   [] { stored_depot()->unlock_after_fork(); },
                   [] { stored_depot()->unlock_after_fork(); });
    return made;
  }();
  return *d;
}

}  // namespace

task_memory_stats task_memory() noexcept {
  return the_depot().stats();
}

task_pool::~task_pool() {
  the_depot().give({m_free, m_count});
  the_depot().give({m_foreign, m_foreign_count});
}

task* task_pool::refill() {
  if (m_foreign != nullptr) {
    // Rather than a batch from the depot: the blocks are here already, and the bound on
    // what a thread holds stays the same.
    m_free = std::exchange(m_foreign, nullptr);
    m_count = std::exchange(m_foreign_count, 0);
    return m_free;
  }
  // A batch given back and then needed again: the thread's live tasks swing by more than
  // it keeps, so it keeps a batch more from now on (task_pool.hpp).
  if (m_spilled_last && m_limit < k_task_pool_most_limit) m_limit += k_task_batch;
  m_spilled_last = false;
  const batch b = the_depot().take();
  m_free = b.head;
  m_count = static_cast<std::uint32_t>(b.count);  // a batch: at most k_task_batch
  return m_free;
}

void task_pool::spill() noexcept {
  // Detach k_task_batch blocks from the top of the free list and give them to the depot.
  // relaxed (the list's links): the blocks are this thread's until the depot's lock hands
  // them on.
  task* head = m_free;
  task* last = head;
  for (std::size_t i = 1; i < k_task_batch; ++i) {
    last = last->m_next.load(std::memory_order_relaxed);
  }
  m_free = last->m_next.load(std::memory_order_relaxed);
  last->m_next.store(nullptr, std::memory_order_relaxed);
  m_count -= k_task_batch;
  m_spilled_last = true;
  the_depot().give({head, k_task_batch});
}

void task_pool::deallocate_foreign(task* t) noexcept {
  // relaxed: the block is this thread's until the depot's lock hands it on, as in
  // deallocate().
  t->m_next.store(m_foreign, std::memory_order_relaxed);
  m_foreign = t;
  if (++m_foreign_count == k_task_batch) {
    the_depot().give({std::exchange(m_foreign, nullptr), std::exchange(m_foreign_count, 0)});
  }
}

}  // namespace heist::detail
