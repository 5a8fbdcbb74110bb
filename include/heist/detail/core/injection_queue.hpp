// injection_queue: where tasks from outside the pool go (threads that hold no slot of the
// target arena). Several buckets, so that external producers rarely meet on one cache line
// (Taskflow's shared "buffers", oneTBB's task_stream lanes).
//
// Each bucket is Dmitry Vyukov's intrusive MPSC queue (a linked list through
// task::m_next with a stub node): a producer links a task with one atomic exchange and one
// store, never waiting for anybody. Consumers are serialized per bucket by a spin_lock
// taken with try_lock only: a consumer that finds the bucket busy moves on to the next
// one. Each bucket also counts its tasks, so a consumer skips empty buckets with a plain
// load and the sleep protocol's re-check ("is anything queued?") reads only counters.
//
// The one state to know about: between a producer's exchange and its link store, the task
// is counted but not yet reachable, and pop() returns nullptr. A consumer then keeps
// searching (the count is not zero, so no thread goes to sleep on it); the producer
// completes the link in a few instructions.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "heist/detail/config.hpp"
#include "heist/detail/core/task.hpp"
#include "heist/detail/platform/spin_lock.hpp"

namespace heist::detail {

class injection_queue {
 public:
  explicit injection_queue(std::size_t min_buckets) {
    std::size_t n = 1;
    while (n < min_buckets && n < 64)
      n <<= 1;
    m_mask = n - 1;
    m_buckets = std::make_unique<bucket[]>(n);
  }

  // Any thread. FIFO within the bucket `hint` selects.
  void push(task* t, std::size_t hint) noexcept { m_buckets[hint & m_mask].push(t); }

  // Takes the oldest task of the first bucket that has one, scanning from `start`.
  task* pop(std::size_t start) noexcept {
    return pop_if(start, [](const task*) noexcept { return true; });
  }

  // Takes a task satisfying `accept` (isolated waiters), scanning from `start`. Tasks it
  // skips go back to the end of their bucket.
  template <class Accept>
  task* pop_if(std::size_t start, Accept&& accept) noexcept {
    for (std::size_t i = 0; i <= m_mask; ++i) {
      bucket& b = m_buckets[(start + i) & m_mask];
      // relaxed: a hint; the sleep protocol's re-check reads it after its own fence.
      if (b.m_size.load(std::memory_order_relaxed) == 0) continue;
      if (!b.m_consumer.try_lock()) continue;  // another consumer is at it
      spin_lock::adopted lock(b.m_consumer);
      if (task* t = b.pop_matching(accept)) return t;
    }
    return nullptr;
  }

  // Takes the oldest task of the first bucket that has one, scanning from `start`, and with
  // it up to `most` - 1 more of that bucket's oldest: a 1/`share` part of what it holds,
  // rounded up. The extra tasks come back in `rest`, linked through m_next, the newest
  // first (pushing them in list order onto a deque makes the owner pop them oldest first).
  task* pop_batch(std::size_t start, std::size_t most, std::size_t share, task*& rest) noexcept {
    for (std::size_t i = 0; i <= m_mask; ++i) {
      bucket& b = m_buckets[(start + i) & m_mask];
      // relaxed: a hint, as in pop_if.
      const std::size_t n = b.m_size.load(std::memory_order_relaxed);
      if (n == 0) continue;
      if (!b.m_consumer.try_lock()) continue;
      spin_lock::adopted lock(b.m_consumer);
      if (task* t = b.pop_batch(std::min(most, n / share + 1), rest)) return t;
    }
    return nullptr;
  }

  // Producers inside an injection (arena::begin_injection), counted in the bucket `hint`
  // selects, beside the head that their push writes anyway.
  void enter(std::size_t hint) noexcept {
    // relaxed: sequenced before the push (a release), which the task's runner acquires; the
    // destroyer reads the count only after that task finished, so it sees the increment.
    m_buckets[hint & m_mask].m_producers.fetch_add(1, std::memory_order_relaxed);
  }
  void leave(std::size_t hint) noexcept {
    // release: the producer's last touch of the arena; pairs with producers_inside.
    m_buckets[hint & m_mask].m_producers.fetch_sub(1, std::memory_order_release);
  }
  bool producers_inside() const noexcept {
    for (std::size_t i = 0; i <= m_mask; ++i) {
      // acquire: pairs with leave's release; that producer is done with the arena.
      if (m_buckets[i].m_producers.load(std::memory_order_acquire) != 0) return true;
    }
    return false;
  }

  // relaxed: a hint (the file comment); the sleep protocol's re-check reads it after its own
  // fence, which pairs with the publishers'.
  std::size_t size() const noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i <= m_mask; ++i) {
      n += m_buckets[i].m_size.load(std::memory_order_relaxed);
    }
    return n;
  }

 private:
  struct alignas(k_cache_line) bucket {
    // relaxed: the queue is published to other threads with its arena.
    bucket() noexcept {
      m_stub.m_next.store(nullptr, std::memory_order_relaxed);
      m_head.store(&m_stub, std::memory_order_relaxed);
      m_tail = &m_stub;
    }

    void push(task* t) noexcept {
      // relaxed: link()'s release exchange publishes it.
      t->m_next.store(nullptr, std::memory_order_relaxed);
      // Counted before it is linked: a consumer may see the count first (and retry), never
      // a reachable task with a zero count (which could let the last searcher sleep).
      // relaxed: the link's exchange orders it before the task is reachable; the sleep
      // protocol reads the count after its fence, which pairs with the publisher's.
      m_size.fetch_add(1, std::memory_order_relaxed);
      link(t);
    }

    void link(task* t) noexcept {
      // acq_rel: release publishes t (its closure, m_next = null) to the producer that
      // links after us and, through our link store, to the consumer; acquire makes the
      // previous producer's initialization of prev->m_next happen-before our store to it.
      task* prev = m_head.exchange(t, std::memory_order_acq_rel);
      // release: pairs with the consumer's acquire load of m_next in pop_one.
      prev->m_next.store(t, std::memory_order_release);
    }

    // Consumer, under m_consumer. The oldest task, or nullptr if empty or if the oldest is
    // still being linked by its producer. The count is the caller's to lower.
    task* pop_one() noexcept {
      task* tail = m_tail;
      // acquire: pairs with the producer's release store of the link.
      task* next = tail->m_next.load(std::memory_order_acquire);
      if (tail == &m_stub) {
        if (next == nullptr) return nullptr;
        m_tail = next;
        tail = next;
        next = next->m_next.load(std::memory_order_acquire);
      }
      if (next != nullptr) {
        m_tail = next;
        return tail;
      }
      // `tail` may be the last task. acquire: pairs with the producers' exchange.
      if (tail != m_head.load(std::memory_order_acquire)) return nullptr;  // a link pending
      // Put the stub behind it, so that it can be detached. relaxed: link() publishes it.
      m_stub.m_next.store(nullptr, std::memory_order_relaxed);
      link(&m_stub);
      next = tail->m_next.load(std::memory_order_acquire);
      if (next == nullptr) return nullptr;  // another producer slipped in; next time
      m_tail = next;
      return tail;
    }

    // Consumer, under m_consumer: up to `most` of the oldest tasks (pop_batch above).
    task* pop_batch(std::size_t most, task*& rest) noexcept {
      task* first = pop_one();
      if (first == nullptr) return nullptr;
      std::size_t taken = 1;
      for (; taken < most; ++taken) {
        task* t = pop_one();
        if (t == nullptr) break;
        // relaxed: the task is the consumer's now (pop_one never returns the newest task,
        // whose m_next a producer may still write); the deque push publishes it.
        t->m_next.store(rest, std::memory_order_relaxed);
        rest = t;
      }
      // One update for the batch: the count stays above the reachable tasks meanwhile.
      // relaxed, as pop_matching's: a hint to consumers; the sleep protocol's re-check reads
      // it after its own fence, and the taker publishes the batch's rest itself (search_once).
      m_size.fetch_sub(taken, std::memory_order_relaxed);
      return first;
    }

    template <class Accept>
    task* pop_matching(Accept& accept) noexcept {
      // Look at most at the tasks queued now: skipped ones go back to the end. A skipped task
      // stays counted while it is out (it is re-linked, not pushed): a searcher that reads the
      // count meanwhile must not conclude the bucket is empty and go to sleep on it. relaxed: a
      // bound on how many to look at (the consumer lock orders pops).
      for (std::size_t n = m_size.load(std::memory_order_relaxed); n > 0; --n) {
        task* t = pop_one();
        if (t == nullptr) return nullptr;
        if (accept(t)) {
          // relaxed: a hint's count; the task is the consumer's already.
          m_size.fetch_sub(1, std::memory_order_relaxed);
          return t;
        }
        HEIST_PERTURB_POINT(inject_rejected);
        // relaxed: link() publishes it again.
        t->m_next.store(nullptr, std::memory_order_relaxed);
        link(t);
      }
      return nullptr;
    }

    // Producers' side and consumers' side on separate lines.
    alignas(k_cache_line) std::atomic<task*> m_head;  // the most recently pushed task
    std::atomic<std::size_t> m_size{0};
    std::atomic<std::uint32_t> m_producers{0};  // inside an injection (enter, leave)
    alignas(k_cache_line) spin_lock m_consumer;
    task* m_tail;  // the oldest task, or the stub (guarded by m_consumer)
    task m_stub;
  };

  std::unique_ptr<bucket[]> m_buckets;
  std::size_t m_mask = 0;
};

}  // namespace heist::detail
