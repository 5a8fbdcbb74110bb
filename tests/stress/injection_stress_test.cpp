// Many producers and consumers on the injection queue: every task comes out exactly once, one
// at a time or in batches (kind: stress); executors destroyed while an outside submitter is
// still inside its post(); a batch's tasks spread over the workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "heist/detail/core/injection_queue.hpp"
#include "heist/heist.hpp"
#include "test_support.hpp"

using heist::detail::injection_queue;
using heist::detail::task;

namespace {
// Three producers push their tasks into a queue of two buckets (few: more contention) while
// two consumers take them: `take(q, consumer, round, mark)` takes what it can and marks each
// task it took. Every task must be marked exactly once.
template <class Take>
void expect_every_task_once(Take take) {
  const std::size_t per_producer = heist_test::scaled(200000);
  const int producers = 3, consumers = 2;
  const std::size_t total = per_producer * producers;
  auto tasks = std::make_unique<task[]>(total);
  auto seen = std::make_unique<std::atomic<int>[]>(total);
  for (std::size_t i = 0; i < total; ++i) {
    tasks[i].m_isolation.store(i, std::memory_order_relaxed);
    seen[i].store(0, std::memory_order_relaxed);
  }
  injection_queue q(2);
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
      auto mark = [&](task* t) {
        seen[t->m_isolation.load(std::memory_order_relaxed)].fetch_add(1);
        taken.fetch_add(1, std::memory_order_relaxed);
      };
      for (std::size_t round = 0; taken.load(std::memory_order_relaxed) < total; ++round)
        take(q, static_cast<std::size_t>(c), round, mark);
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
}  // namespace

TEST(InjectionStress, ProducersAndConsumersExactlyOnce) {
  expect_every_task_once([](injection_queue& q, std::size_t c, std::size_t, auto& mark) {
    if (task* t = q.pop(c)) mark(t);
  });
}

// The same with consumers that take batches (pop_batch, as searching workers do), of every
// size and share, and single tasks in between.
TEST(InjectionStress, ProducersAndBatchingConsumersExactlyOnce) {
  expect_every_task_once([](injection_queue& q, std::size_t c, std::size_t round, auto& mark) {
    if (round % 4 == 0) {
      if (task* t = q.pop(c)) mark(t);
      return;
    }
    task* rest = nullptr;
    task* t = q.pop_batch(c, 1 + round % 40, 1 + round % 3, rest);
    if (t == nullptr) return;
    mark(t);
    while (rest != nullptr) {
      task* next = rest->m_next.load(std::memory_order_relaxed);
      mark(rest);
      rest = next;
    }
  });
}

// Two tasks posted behind two busy workers: the first worker free takes both from the
// injection queue (a batch: it runs the first and keeps the second in its deque), and the
// first waits until the second runs. The other worker must be told of the second and steal
// it; a batch kept out of sight would leave the first waiting for its 10 s and fail.
TEST(InjectionStress, ABatchsOtherTaskRunsBesideItsFirst) {
  using namespace std::chrono_literals;
  const std::size_t rounds = heist_test::scaled(300);
  heist::executor ex(2);
  std::size_t met = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    heist_test::occupied_workers busy(ex, 2);
    std::atomic<int> arrived{0}, both_met{0};
    for (int i = 0; i < 2; ++i) {
      ex.post([&] {
        arrived.fetch_add(1);
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (arrived.load() != 2 && std::chrono::steady_clock::now() < until)
          std::this_thread::yield();
        if (arrived.load() == 2) both_met.fetch_add(1);
      });
    }
    busy.release();
    ex.wait_idle();
    met += both_met.load() == 2;
  }
  EXPECT_EQ(met, rounds);
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
