// task_pool: where task blocks come from, without touching the global operator new.
//
// Each thread that spawns or runs tasks owns a task_pool: a LIFO free list of 128-byte
// blocks, so allocate/deallocate are a few non-atomic instructions on a hot cache line.
// Blocks migrate: a task spawned on worker A and stolen by worker B is freed into B's pool.
// To keep that from growing one pool without bound while another keeps carving new memory,
// pools exchange whole batches with one process-wide depot (a mutex-protected stack of
// batches): a pool that holds more than its limit (2 to 16 batches, below) gives one back,
// an empty pool takes one. New memory is carved from 64 KiB slabs obtained with
// std::aligned_alloc. Slabs are never returned to the system, for two reasons: total task
// memory is bounded by the peak number of live tasks plus 17 batches per thread (the limit
// and the foreign list), and a thief may read the header of a block it lost a race for
// (chase_lev_deque::steal_if), which must stay valid memory.
//
// Blocks of stolen tasks are kept apart. A stolen task's block
// comes from the victim's batches, among blocks the victim keeps writing; pushed on top of
// the thief's LIFO free list, it became the thief's next spawn and its hottest block. fib(30)
// on two workers ran 15-35% slower per task than two 1-worker executors side by side, by an
// amount that followed the heap layout, and keeping those blocks apart won back 3-15% of it
//. So the block of a task taken from another
// thread's deque goes to a separate foreign list: handed to the depot once it holds a batch,
// used here only when the local list runs dry. Each thread's hot blocks then come from
// batches it took whole.
//
// How many blocks the local list keeps before it gives a batch back adapts. It starts at two
// batches; a pool that gave a batch back and then ran dry (a thread whose live tasks swing by more
// than it keeps: a deep, narrow tree spawns thousands of tasks on the way down and frees them on
// the way up) keeps one batch more, up to sixteen. With a fixed two batches, two workers on such a
// tree traded the same batches through the depot on every swing, each taking blocks whose lines the
// other had just written: a deep binomial tree (heist-bench `uts-deep`) ran 17% slower per node on
// each of two workers than on one, with sampling on the free-list load in the spawn.
// Sixteen batches (128 KiB) is the most a thread keeps; one that never swings keeps two.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/core/task.hpp"

namespace heist::detail {

inline constexpr std::size_t k_task_batch = 64;  // blocks moved per depot exchange
// The local list's limit, in blocks: where it starts, and the most it grows to.
inline constexpr std::uint32_t k_task_pool_first_limit = 2 * k_task_batch;
inline constexpr std::uint32_t k_task_pool_most_limit = 16 * k_task_batch;

// Process-wide counters, for the memory-bound tests and the soak run.
struct task_memory_stats {
  std::size_t slab_bytes;    // memory obtained from the system for task blocks
  std::size_t depot_blocks;  // free blocks held by the depot
};
HEIST_API task_memory_stats task_memory() noexcept;

class HEIST_API task_pool {
 public:
  task_pool() = default;
  task_pool(const task_pool&) = delete;
  task_pool& operator=(const task_pool&) = delete;
  ~task_pool();  // gives every cached block back to the depot

  // relaxed (the free list's links, here and in deallocate): the list is this thread's; a
  // block comes from or goes to another thread only under the depot's lock.
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
    if (HEIST_UNLIKELY(++m_count > m_limit)) spill();
  }

  // A block that another thread allocated and this one ran (a stolen task): kept off the
  // local free list (the file comment). Out of line: steals are rare, and the hot loops
  // that free blocks stay as small as before.
  HEIST_NOINLINE void deallocate_foreign(task* t) noexcept;

  // For tests: free blocks held, on each list.
  std::size_t local_count() const noexcept { return m_count; }
  std::size_t foreign_count() const noexcept { return m_foreign_count; }
  std::size_t limit() const noexcept { return m_limit; }

 private:
  task* refill();         // the foreign list, else a batch from the depot or a new slab; m_free
  void spill() noexcept;  // gives one batch of the local list back to the depot

  // Four words, as before the limit adapted: the thread_context members after the pool keep
  // their offsets.
  task* m_free = nullptr;
  std::uint32_t m_count = 0;
  std::uint32_t m_limit = k_task_pool_first_limit;  // the local list spills above this
  task* m_foreign = nullptr;
  std::uint32_t m_foreign_count = 0;
  bool m_spilled_last = false;  // the last trade with the depot was a batch given back
};

}  // namespace heist::detail
