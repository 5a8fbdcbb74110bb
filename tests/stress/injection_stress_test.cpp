// Many producers and consumers on the injection queue: every task comes out exactly once
// (kind: stress); executors destroyed while an outside submitter is still inside its post().
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "heist/detail/injection_queue.hpp"
#include "heist/heist.hpp"
#include "test_support.hpp"

using heist::detail::injection_queue;
using heist::detail::task;

TEST(InjectionStress, ProducersAndConsumersExactlyOnce) {
  const std::size_t per_producer = heist_test::scaled(200000);
  const int producers = 3, consumers = 2;
  const std::size_t total = per_producer * producers;
  auto tasks = std::make_unique<task[]>(total);
  auto seen = std::make_unique<std::atomic<int>[]>(total);
  for (std::size_t i = 0; i < total; ++i) {
    tasks[i].m_isolation.store(i, std::memory_order_relaxed);
    seen[i].store(0, std::memory_order_relaxed);
  }
  injection_queue q(2);  // few buckets: more contention
  std::atomic<std::size_t> taken{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (std::size_t i = 0; i < per_producer; ++i)
        q.push(&tasks[p * per_producer + i], p + i);
    });
  }
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      while (taken.load(std::memory_order_relaxed) < total) {
        if (task* t = q.pop(c)) {
          seen[t->m_isolation.load(std::memory_order_relaxed)].fetch_add(1);
          taken.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  for (auto& t : threads)
    t.join();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < total; ++i)
    bad += seen[i].load() != 1;
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(q.size(), 0u);
}

// An outside thread's task runs and finishes while that thread is still inside its submission
// (after the push, waking a worker); the executor is destroyed the moment the task is seen to
// have run. Destruction must wait for the submitter to be done with the arena (arena.hpp,
// begin_injection): ThreadSanitizer reported the use after free before it did.
TEST(InjectionStress, ExecutorDestroyedRightAfterAnOutsideSubmissionRan) {
  const std::size_t rounds = heist_test::scaled(2000);
  for (std::size_t round = 0; round < rounds; ++round) {
    std::atomic<bool> ran{false};
    std::thread submitter;
    {
      heist::executor ex(1);
      submitter = std::thread([&] { ex.post([&ran] { ran.store(true); }); });
      while (!ran.load())
        std::this_thread::yield();
    }  // ~executor: the submitter may still be inside post()
    submitter.join();
  }
}
