// Idle workers retiring (executor_options::idle_timeout) raced against work arriving from
// every direction: outside posts, nested spawns, task arenas, shutdown. Counts prove every
// task ran exactly once; the start/stop callbacks prove no worker index ever has two
// threads. Timeouts turn a lost wake-up into a failure, not a hang (kind: stress).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using heist_test::eventually;

struct lifecycle_check {
  std::unique_ptr<std::atomic<int>[]> live;
  std::atomic<bool> overlap{false};
  std::atomic<int> starts{0};
  explicit lifecycle_check(std::size_t n) : live(std::make_unique<std::atomic<int>[]>(n)) {
    for (std::size_t i = 0; i < n; ++i)
      live[i] = 0;
  }
  void attach(heist::executor_options& o) {
    o.on_worker_start = [this](std::size_t i) {
      if (live[i].fetch_add(1) != 0) overlap = true;
      starts.fetch_add(1);
    };
    o.on_worker_stop = [this](std::size_t i) {
      if (live[i].fetch_sub(1) != 1) overlap = true;
    };
  }
};

// The gap before each burst sweeps across the timeout, so bursts land while workers spin,
// park, time out, hand over to their placeholder, and after their threads are gone.
void sleep_around(std::chrono::microseconds timeout, std::mt19937& rng) {
  std::uniform_int_distribution<long> d(0, 2 * timeout.count());
  std::this_thread::sleep_for(std::chrono::microseconds(d(rng)));
}

TEST(RetireStress, BurstsAroundTheTimeoutRunExactlyOnce) {
  heist_test::watchdog dog("BurstsAroundTheTimeoutRunExactlyOnce", 300s);
  constexpr std::size_t workers = 3;
  heist::executor_options o;
  o.num_workers = workers;
  o.idle_timeout = 1ms;
  lifecycle_check life(workers);
  life.attach(o);
  heist::executor ex(o);
  std::mt19937 rng(12345);
  const std::size_t rounds = heist_test::scaled(400);
  std::atomic<long> ran{0};
  long expected = 0;
  for (std::size_t r = 0; r < rounds; ++r) {
    sleep_around(1000us, rng);
    // One post whose task fans out (a nested group: spawns into a restarted worker's
    // deque), and single posts.
    ex.post([&ran] {
      heist::task_group g;
      for (int i = 0; i < 8; ++i)
        g.run([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
      g.wait();
      ran.fetch_add(1, std::memory_order_relaxed);
    });
    for (std::size_t k = 0; k < r % 3; ++k)
      ex.post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
    expected += 9 + static_cast<long>(r % 3);
    if (r % 8 == 0) {
      ex.wait_idle();
      ASSERT_EQ(ran.load(), expected) << "round " << r;
    }
  }
  ex.wait_idle();
  EXPECT_EQ(ran.load(), expected);
  ex.shutdown();
  EXPECT_FALSE(life.overlap.load()) << "two threads for one worker at once";
  EXPECT_GT(life.starts.load(), static_cast<int>(workers)) << "no worker ever restarted";
}

TEST(RetireStress, OutsideThreadsAndTaskArenasWakeRetiredWorkers) {
  heist_test::watchdog dog("OutsideThreadsAndTaskArenasWakeRetiredWorkers", 300s);
  heist::executor_options o;
  o.num_workers = 2;
  o.idle_timeout = 1ms;
  lifecycle_check life(2);
  life.attach(o);
  heist::executor ex(o);
  heist::task_arena arena(2, ex);
  const std::size_t rounds = heist_test::scaled(200);
  std::atomic<long> ran{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < 2; ++t) {
    producers.emplace_back([&, t] {
      std::mt19937 rng(77 + t);
      for (std::size_t r = 0; r < rounds; ++r) {
        sleep_around(1000us, rng);
        if (t == 0) {
          arena.enqueue([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
        } else {
          EXPECT_EQ(ex.submit([&ran] {
                        ran.fetch_add(1, std::memory_order_relaxed);
                        return 1;
                      }).get(),
                    1);
        }
      }
    });
  }
  for (auto& p : producers)
    p.join();
  EXPECT_TRUE(eventually([&] { return ran.load() == static_cast<long>(2 * rounds); }, 30s))
      << ran.load() << " of " << 2 * rounds;
  ex.wait_idle();
  EXPECT_FALSE(life.overlap.load());
}

TEST(RetireStress, ShutdownRacingRetirementAndRestart) {
  heist_test::watchdog dog("ShutdownRacingRetirementAndRestart", 300s);
  const std::size_t rounds = heist_test::scaled(100);
  std::mt19937 rng(9);
  for (std::size_t r = 0; r < rounds; ++r) {
    std::atomic<int> ran{0};
    {
      heist::executor_options o;
      o.num_workers = 2;
      o.idle_timeout = 1ms;
      heist::executor ex(o);
      sleep_around(1000us, rng);
      for (int k = 0; k < 10; ++k)
        ex.post([&ran] { ran.fetch_add(1); });
      sleep_around(1000us, rng);
    }  // shutdown: runs everything accepted, joins live and retired threads
    ASSERT_EQ(ran.load(), 10) << "round " << r;
  }
}

}  // namespace
