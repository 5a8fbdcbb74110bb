// task_pool: where task blocks come from, without touching the global operator new.
//
// Each thread that spawns or runs tasks owns a task_pool: a LIFO free list of 128-byte
// blocks, so allocate/deallocate are a few non-atomic instructions on a hot cache line.
// Blocks migrate: a task spawned on worker A and stolen by worker B is freed into B's pool.
// To keep that from growing one pool without bound while another keeps carving new memory,
// pools exchange whole batches with one process-wide depot (a mutex-protected stack of
// batches): a pool that holds more than 2 batches gives one back, an empty pool takes one.
// New memory is carved from 64 KiB slabs obtained with std::aligned_alloc. Slabs are never
// returned to the system, for two reasons: total task memory is bounded by the peak number
// of live tasks plus one batch per thread, and a thief may read the header of a block it
// lost a race for (chase_lev_deque::steal_if), which must stay valid memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/task.hpp"

namespace heist::detail {

inline constexpr std::size_t k_task_batch = 64;  // blocks moved per depot exchange

// Process-wide counters, for the memory-bound tests and the soak run.
struct task_memory_stats {
  std::size_t slab_bytes;    // memory obtained from the system for task blocks
  std::size_t depot_blocks;  // free blocks held by the depot
};
task_memory_stats task_memory() noexcept;

class task_pool {
 public:
  task_pool() = default;
  task_pool(const task_pool&) = delete;
  task_pool& operator=(const task_pool&) = delete;
  ~task_pool();  // gives every cached block back to the depot

  HEIST_ALWAYS_INLINE task* allocate() {
    task* t = m_free;
    if (HEIST_UNLIKELY(t == nullptr)) t = refill();
    m_free = t->m_next.load(std::memory_order_relaxed);
    --m_count;
    return t;
  }

  HEIST_ALWAYS_INLINE void deallocate(task* t) noexcept {
    t->m_next.store(m_free, std::memory_order_relaxed);
    m_free = t;
    if (HEIST_UNLIKELY(++m_count > 2 * k_task_batch)) spill();
  }

 private:
  task* refill();         // takes a batch from the depot or carves a new slab; returns m_free
  void spill() noexcept;  // gives one batch back to the depot

  task* m_free = nullptr;
  std::size_t m_count = 0;
};

}  // namespace heist::detail
