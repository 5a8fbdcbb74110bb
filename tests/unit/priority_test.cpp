// Arena priorities: a worker choosing among arenas serves higher priority
// first, busy workers switch to high-priority work at their next task boundary, low work
// yields to normal work, and order inside an arena is unchanged.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

TEST(Priority, InvalidValueIsAnErrorNamingIt) {
  heist::executor ex(1);
  try {
    heist::task_arena a(1, ex, static_cast<heist::priority>(7));
    ADD_FAILURE() << "accepted priority 7";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("priority"), std::string::npos) << e.what();
  }
  heist::task_arena low(1, ex, heist::priority::low);
  EXPECT_EQ(low.arena_priority(), heist::priority::low);
  heist::task_arena plain(1, ex);
  EXPECT_EQ(plain.arena_priority(), heist::priority::normal);
}

// One worker, blocked while work queues up in every arena; released, it must start every
// high task before any normal one and every normal one (task arena or submit) before any
// low one. Inside each arena the enqueue order is kept.
TEST(Priority, QueuedWorkIsServedHighestPriorityFirst) {
  heist_test::watchdog dog("QueuedWorkIsServedHighestPriorityFirst", 60s);
  for (int round = 0; round < 20; ++round) {
    heist::executor ex(1);
    heist::task_arena low(1, ex, heist::priority::low);
    heist::task_arena normal(1, ex, heist::priority::normal);
    heist::task_arena high(1, ex, heist::priority::high);
    std::atomic<bool> release{false}, blocked{false};
    ex.post([&] {
      blocked = true;
      while (!release.load())
        std::this_thread::yield();
    });
    ASSERT_TRUE(eventually([&] { return blocked.load(); }));
    heist_test::run_log log;
    for (int i = 0; i < 3; ++i) {
      low.enqueue([&log, i] { log.add(static_cast<char>('a' + i)); });
      normal.enqueue([&log, i] { log.add(static_cast<char>('n' + i)); });
      high.enqueue([&log, i] { log.add(static_cast<char>('A' + i)); });
      ex.post([&log] { log.add('d'); });
    }
    release = true;
    ASSERT_TRUE(eventually([&] { return log.joined().size() == 12; }, 20s)) << log.joined();
    const std::string s = log.joined();
    EXPECT_EQ(s.substr(0, 3), "ABC") << s;
    EXPECT_EQ(s.substr(9), "abc") << s;
    // The normal ones, in between: the task arena's in its order, the default arena's.
    std::string normals = s.substr(3, 6), arena_order;
    for (char ch : normals)
      if (ch != 'd') arena_order += ch;
    EXPECT_EQ(arena_order, "nop") << s;
    ex.wait_idle();
  }
}

// Every worker busy with a flood of short low-priority tasks that never ends by itself: a
// task enqueued into a high arena must still start, at a task boundary.
TEST(Priority, HighPriorityWorkPreemptsALowFloodAtTaskBoundaries) {
  heist_test::watchdog dog("HighPriorityWorkPreemptsALowFloodAtTaskBoundaries", 60s);
  heist::executor ex(2);
  heist::task_arena low(2, ex, heist::priority::low);
  heist::task_arena high(1, ex, heist::priority::high);
  std::atomic<bool> stop{false};
  std::atomic<long> low_ran{0};
  struct flood {
    heist::task_arena* arena;
    std::atomic<bool>* stop;
    std::atomic<long>* ran;
    void operator()() const {
      const auto until = std::chrono::steady_clock::now() + 20us;
      while (std::chrono::steady_clock::now() < until) {
      }
      ran->fetch_add(1);
      if (!stop->load()) arena->enqueue(*this);
    }
  };
  for (int i = 0; i < 8; ++i)
    low.enqueue(flood{&low, &stop, &low_ran});
  ASSERT_TRUE(eventually([&] { return low_ran.load() > 1000; }));
  for (int k = 0; k < 50; ++k) {
    std::atomic<bool> high_ran{false};
    const long before = low_ran.load();
    high.enqueue([&] { high_ran = true; });
    EXPECT_TRUE(eventually([&] { return high_ran.load(); }, 10s)) << "high task never started";
    EXPECT_GT(low_ran.load(), before - 1);
  }
  // Low work also yields to the executor's own (normal) submissions.
  for (int k = 0; k < 50; ++k) {
    auto f = ex.submit([] { return 5; });
    EXPECT_EQ(f.get(), 5);
  }
  // And to a normal task arena's work.
  heist::task_arena normal(1, ex, heist::priority::normal);
  std::atomic<int> normal_ran{0};
  for (int k = 0; k < 50; ++k)
    normal.enqueue([&] { normal_ran.fetch_add(1); });
  EXPECT_TRUE(eventually([&] { return normal_ran.load() == 50; }, 10s)) << normal_ran.load();
  const long flood_count = low_ran.load();
  stop = true;
  ex.wait_idle();
  EXPECT_GT(low_ran.load(), flood_count - 1);
}

// A flood of high-priority work does not stop the low arena forever once it ends, and work
// inside one arena keeps its order (FIFO for enqueue with one slot).
TEST(Priority, LowWorkRunsWhenHigherWorkIsDoneAndKeepsItsOrder) {
  heist::executor ex(2);
  heist::task_arena low(1, ex, heist::priority::low);
  heist::task_arena high(2, ex, heist::priority::high);
  heist_test::run_log log;
  std::atomic<int> highs{0};
  for (int i = 0; i < 26; ++i) {
    low.enqueue([&log, i] { log.add(static_cast<char>('a' + i)); });
    high.enqueue([&] { highs.fetch_add(1); });
  }
  ASSERT_TRUE(eventually([&] { return log.joined().size() == 26; }, 20s));
  EXPECT_EQ(log.joined(), "abcdefghijklmnopqrstuvwxyz");
  EXPECT_EQ(highs.load(), 26);
}

// execute() into a high-priority arena from outside while the workers flood a low one.
TEST(Priority, ExecuteInAHighArenaWhileLowWorkFloods) {
  heist_test::watchdog dog("ExecuteInAHighArenaWhileLowWorkFloods", 60s);
  heist::executor ex(2);
  heist::task_arena low(2, ex, heist::priority::low);
  heist::task_arena high(2, ex, heist::priority::high);
  std::atomic<bool> stop{false};
  std::atomic<long> low_ran{0};
  std::function<void()> again = [&] {
    low_ran.fetch_add(1);
    if (!stop.load()) low.enqueue(again);
  };
  for (int i = 0; i < 4; ++i)
    low.enqueue(again);
  for (int k = 0; k < 20; ++k) {
    const long sum = high.execute([&] {
      std::atomic<long> s{0};
      heist::parallel_for(heist::blocked_range<long>(0, 1000), [&](auto r) {
        for (long i = r.begin(); i < r.end(); ++i)
          s.fetch_add(i, std::memory_order_relaxed);
      });
      return s.load();
    });
    EXPECT_EQ(sum, 1000L * 999 / 2);
  }
  stop = true;
  ex.wait_idle();
}

}  // namespace
