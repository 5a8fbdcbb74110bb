// Idle threads: with executor_options::idle_timeout, idle workers end their
// threads, work arriving later starts them again, nothing is lost or run twice, and
// num_workers() does not change. Thread counts come from /proc/self/task.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using heist_test::eventually;

// Worker threads alive: threads named "retiring-INDEX" (the executors below use that name),
// so that threads the runtime starts lazily (TSan's background thread) do not count.
std::size_t threads_in_process() {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(e.path() / "comm");
    std::string name;
    std::getline(comm, name);
    n += name.rfind("retiring-", 0) == 0;
  }
  return n;
}

heist::executor_options retiring(std::size_t workers, std::chrono::milliseconds timeout) {
  heist::executor_options o;
  o.num_workers = workers;
  o.idle_timeout = timeout;
  o.max_blocking_threads = 0;  // no stand-ins: the thread counts are the workers'
  o.name = "retiring";
  return o;
}

// Starts and stops of each worker index: they must alternate (never two threads for one
// worker at once), checked from the callbacks themselves.
struct lifecycle_log {
  std::mutex lock;
  std::vector<int> live;  // per index: 0 or 1
  int starts = 0, stops = 0;
  bool overlap = false;
  explicit lifecycle_log(std::size_t n) : live(n, 0) {}
  void attach(heist::executor_options& o) {
    o.on_worker_start = [this](std::size_t i) {
      std::lock_guard<std::mutex> g(lock);
      if (live[i]++ != 0) overlap = true;
      ++starts;
    };
    o.on_worker_stop = [this](std::size_t i) {
      std::lock_guard<std::mutex> g(lock);
      if (--live[i] != 0) overlap = true;
      ++stops;
    };
  }
};

TEST(IdleTimeout, NegativeIsAnErrorNamingIt) {
  heist::executor_options o;
  o.num_workers = 2;
  o.idle_timeout = std::chrono::milliseconds(-1);
  try {
    heist::executor ex(o);
    ADD_FAILURE() << "accepted a negative idle_timeout";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("idle_timeout"), std::string::npos) << e.what();
  }
}

TEST(IdleTimeout, IdleWorkersEndTheirThreadsAndComeBackForWork) {
  heist_test::watchdog dog("IdleWorkersEndTheirThreadsAndComeBackForWork", 60s);
  const std::size_t before = threads_in_process();
  heist::executor_options o = retiring(2, 100ms);
  lifecycle_log log(2);
  log.attach(o);
  heist::executor ex(o);
  EXPECT_EQ(ex.num_workers(), 2u);
  // Both workers running (a thread is counted once it has named itself).
  ASSERT_TRUE(eventually([&] { return threads_in_process() == before + 2; }, 5s));
  EXPECT_EQ(ex.submit([] { return 7; }).get(), 7);
  // After the timeout (and the thread exits) no worker thread is left.
  EXPECT_TRUE(eventually([&] { return threads_in_process() == before; }, 5s))
      << threads_in_process() << " threads, " << before << " before the executor";
  EXPECT_EQ(ex.num_workers(), 2u);
  // Work arriving later runs: posts, submits, task groups from outside.
  std::atomic<int> ran{0};
  for (int i = 0; i < 1000; ++i)
    ex.post([&] { ran.fetch_add(1); });
  ex.wait_idle();
  EXPECT_EQ(ran.load(), 1000);
  EXPECT_EQ(ex.submit([] { return 8; }).get(), 8);
  // Work that needs both workers at once brings both back: two posts that each wait until
  // the other runs, and count the worker threads while both do. (Trivial posts may all run on
  // the first worker restarted, before a second is woken: a CI run under ASan saw that, and
  // "each worker started at least twice" below needs both.)
  std::atomic<int> arrived{0};
  std::atomic<std::size_t> threads_seen{0};
  for (int i = 0; i < 2; ++i) {
    ex.post([&] {
      arrived.fetch_add(1);
      while (arrived.load() < 2)
        std::this_thread::yield();
      threads_seen.store(threads_in_process());
    });
  }
  ex.wait_idle();
  EXPECT_EQ(threads_seen.load(), before + 2);
  // And they retire again.
  EXPECT_TRUE(eventually([&] { return threads_in_process() == before; }, 5s));
  ex.shutdown();
  std::lock_guard<std::mutex> g(log.lock);
  EXPECT_FALSE(log.overlap) << "two threads for one worker at once";
  EXPECT_EQ(log.starts, log.stops);
  EXPECT_GE(log.starts, 4) << "each worker started at least twice";
}

TEST(IdleTimeout, ZeroMeansWorkersStay) {
  const std::size_t before = threads_in_process();
  heist::executor ex(retiring(2, 0ms));
  EXPECT_EQ(ex.submit([] { return 1; }).get(), 1);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(threads_in_process(), before + 2);
}

TEST(IdleTimeout, ParallelWorkAfterRetirementUsesEveryWorker) {
  heist_test::watchdog dog("ParallelWorkAfterRetirementUsesEveryWorker", 60s);
  const std::size_t before = threads_in_process();
  heist::executor ex(retiring(3, 20ms));
  ASSERT_TRUE(eventually([&] { return threads_in_process() == before; }, 5s));
  // Three tasks that each wait for the other two: they finish only if three workers run
  // them at once (one restarted per wake-up, each waking the next).
  std::atomic<int> arrived{0};
  std::atomic<bool> all_met{true};
  std::vector<heist::future<void>> fs;
  for (int i = 0; i < 3; ++i) {
    fs.push_back(ex.submit([&] {
      arrived.fetch_add(1);
      if (!eventually([&] { return arrived.load() == 3; }, 10s)) all_met = false;
    }));
  }
  for (auto& f : fs)
    f.get();
  EXPECT_TRUE(all_met.load()) << "fewer than 3 workers came back";
}

TEST(IdleTimeout, NestedParallelismAndTaskArenasAfterRetirement) {
  heist_test::watchdog dog("NestedParallelismAndTaskArenasAfterRetirement", 60s);
  const std::size_t before = threads_in_process();
  heist::executor ex(retiring(2, 10ms));
  heist::task_arena arena(2, ex);
  for (int round = 0; round < 5; ++round) {
    ASSERT_TRUE(eventually([&] { return threads_in_process() == before; }, 5s));
    // A parallel loop from a task: spawns into a restarted worker's deque.
    std::atomic<long> sum{0};
    ex.submit([&] {
        heist::parallel_for(heist::blocked_range<int>(0, 10000), [&](auto r) {
          long s = 0;
          for (int i = r.begin(); i < r.end(); ++i)
            s += i;
          sum.fetch_add(s);
        });
      }).get();
    EXPECT_EQ(sum.load(), 10000L * 9999 / 2);
    ASSERT_TRUE(eventually([&] { return threads_in_process() == before; }, 5s));
    // A task arena's enqueued work needs a visitor: a retired worker is restarted for it.
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i)
      arena.enqueue([&] { ran.fetch_add(1); });
    EXPECT_TRUE(eventually([&] { return ran.load() == 100; }, 10s)) << ran.load();
  }
}

TEST(IdleTimeout, ShutdownWithRetiredWorkersJoinsEverything) {
  const std::size_t before = threads_in_process();
  {
    heist::executor ex(retiring(4, 5ms));
    for (int i = 0; i < 20; ++i) {
      std::atomic<int> ran{0};
      for (int k = 0; k < 50; ++k)
        ex.post([&] { ran.fetch_add(1); });
      ex.wait_idle();
      EXPECT_EQ(ran.load(), 50);
      std::this_thread::sleep_for(std::chrono::milliseconds(i % 4 * 3));
    }
  }
  EXPECT_TRUE(eventually([&] { return threads_in_process() == before; }, 5s));
}

}  // namespace
