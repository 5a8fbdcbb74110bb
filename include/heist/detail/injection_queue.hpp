// injection_queue: where tasks from outside the pool go (threads that own no deque of the
// target arena). Several buckets, each a mutex-guarded intrusive FIFO, so that external
// producers on different threads rarely meet on one lock (Taskflow's shared "buffers").
// A producer hashes to a bucket; consumers scan all buckets from a rotating start. Each
// bucket publishes its length in an atomic, so a consumer skips empty buckets without
// locking and the sleep protocol can re-check "is anything queued" with plain loads.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include "heist/detail/config.hpp"
#include "heist/detail/task.hpp"

namespace heist::detail {

class injection_queue {
 public:
  explicit injection_queue(std::size_t min_buckets) {
    std::size_t n = 1;
    while (n < min_buckets && n < 16)
      n <<= 1;
    m_mask = n - 1;
    m_buckets = std::make_unique<bucket[]>(n);
  }

  void push(task* t, std::size_t hint) noexcept {
    bucket& b = m_buckets[hint & m_mask];
    t->m_next = nullptr;
    std::lock_guard<std::mutex> lock(b.m_lock);
    if (b.m_tail != nullptr) {
      b.m_tail->m_next = t;
    } else {
      b.m_head = t;
    }
    b.m_tail = t;
    // relaxed: the length is a hint for lock-free emptiness checks; the task itself is
    // published by the mutex. The sleep protocol orders it with a seq_cst fence after
    // the push (idle_state::notify_after_inject) against the sleeper's fence.
    b.m_size.store(b.m_size.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // Takes the oldest task of the first non-empty bucket, scanning from `start`.
  task* pop(std::size_t start) noexcept {
    return pop_if(start, [](const task*) noexcept { return true; });
  }

  // Takes the oldest task satisfying `accept` (isolated waiters), scanning from `start`.
  template <class Accept>
  task* pop_if(std::size_t start, Accept&& accept) noexcept {
    for (std::size_t i = 0; i <= m_mask; ++i) {
      bucket& b = m_buckets[(start + i) & m_mask];
      // relaxed: a hint; a stale zero only delays the take until the next scan, and
      // the sleep protocol's re-check runs after its own fence.
      if (b.m_size.load(std::memory_order_relaxed) == 0) continue;
      std::lock_guard<std::mutex> lock(b.m_lock);
      task* prev = nullptr;
      for (task* t = b.m_head; t != nullptr; prev = t, t = t->m_next) {
        if (!accept(t)) continue;
        (prev != nullptr ? prev->m_next : b.m_head) = t->m_next;
        if (b.m_tail == t) b.m_tail = prev;
        b.m_size.store(b.m_size.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
        return t;
      }
    }
    return nullptr;
  }

  std::size_t size() const noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i <= m_mask; ++i) {
      n += m_buckets[i].m_size.load(std::memory_order_relaxed);
    }
    return n;
  }

  std::size_t bucket_count() const noexcept { return m_mask + 1; }

 private:
  struct alignas(k_cache_line) bucket {
    std::mutex m_lock;
    task* m_head = nullptr;
    task* m_tail = nullptr;
    std::atomic<std::size_t> m_size{0};
  };

  std::unique_ptr<bucket[]> m_buckets;
  std::size_t m_mask = 0;
};

}  // namespace heist::detail
