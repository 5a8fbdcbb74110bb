// task_arena and isolate (kind: requirement); blocking() is in blocking_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <latch>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;

namespace {

// Tracks how many threads run inside a region at once.
struct high_water {
  std::atomic<int> current{0}, highest{0};
  void enter() {
    const int now = current.fetch_add(1) + 1;
    int seen = highest.load();
    while (now > seen && !highest.compare_exchange_weak(seen, now)) {
    }
  }
  void leave() { current.fetch_sub(1); }
};

void spin(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

TEST(TaskArena, RejectsZeroConcurrencyNamingTheArgument) {
  heist::executor ex(2);
  try {
    heist::task_arena a(0, ex);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_concurrency"), std::string::npos) << e.what();
  }
  heist::task_arena b(3, ex);
  EXPECT_EQ(b.max_concurrency(), 3u);
}

TEST(TaskArena, ExecuteReturnsValuesAndRethrows) {
  heist::executor ex(2);
  heist::task_arena a(2, ex);
  EXPECT_EQ(a.execute([] { return 42; }), 42);
  std::thread::id ran_on;
  a.execute([&] { ran_on = std::this_thread::get_id(); });  // a free slot: the caller joins
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_THROW(a.execute([]() -> int { throw std::out_of_range("arena"); }), std::out_of_range);
  auto p = a.execute([] { return std::make_unique<int>(5); });
  EXPECT_EQ(*p, 5);
}

TEST(TaskArena, ConcurrencyNeverExceedsTheLimit) {
  heist::executor ex(4);
  for (std::size_t limit : {1u, 2u, 3u}) {
    heist::task_arena a(limit, ex);
    high_water hw;
    std::atomic<int> count{0};
    a.execute([&] {
      heist::parallel_for(0, 400, [&](int) {
        hw.enter();
        spin(50us);
        count.fetch_add(1);
        hw.leave();
      });
    });
    EXPECT_EQ(count.load(), 400);
    EXPECT_LE(hw.highest.load(), static_cast<int>(limit)) << "limit " << limit;
    EXPECT_GE(hw.highest.load(), 1);
  }
}

TEST(TaskArena, LimitHoldsForTaskGroupsAndNestedLoopsAndEnqueue) {
  heist::executor ex(4);
  heist::task_arena a(2, ex);
  high_water hw;
  std::atomic<int> count{0};
  auto work = [&] {
    hw.enter();
    spin(20us);
    count.fetch_add(1);
    hw.leave();
  };
  a.execute([&] {
    heist::task_group g;  // in the arena
    for (int i = 0; i < 100; ++i)
      g.run(work);
    g.wait();
    heist::parallel_for(0, 10, [&](int) { heist::parallel_for(0, 10, [&](int) { work(); }); });
  });
  for (int i = 0; i < 200; ++i)
    a.enqueue(work);
  EXPECT_TRUE(heist_test::eventually([&] { return count.load() == 400; }));
  EXPECT_LE(hw.highest.load(), 2);
}

TEST(TaskArena, EnqueueRunsEveryTaskAndReportsExceptions) {
  std::atomic<int> handled{0};
  heist::executor_options o;
  o.num_workers = 2;
  o.on_unhandled_exception = [&](std::exception_ptr) { handled.fetch_add(1); };
  heist::executor ex(o);
  std::atomic<int> count{0};
  {
    heist::task_arena a(1, ex);
    for (int i = 0; i < 500; ++i)
      a.enqueue([&] { count.fetch_add(1); });
    a.enqueue([] { throw std::runtime_error("enqueued"); });
  }  // the destructor waits for the arena's tasks
  EXPECT_EQ(count.load(), 500);
  EXPECT_EQ(handled.load(), 1);
}

TEST(TaskArena, MultipleArenasAreServedConcurrently) {
  heist::executor ex(2);
  heist::task_arena a(1, ex), b(1, ex);
  std::atomic<int> in_a{0}, in_b{0};
  for (int i = 0; i < 50; ++i) {
    a.enqueue([&] {
      spin(100us);
      in_a.fetch_add(1);
    });
    b.enqueue([&] {
      spin(100us);
      in_b.fetch_add(1);
    });
  }
  EXPECT_TRUE(heist_test::eventually([&] { return in_a.load() == 50 && in_b.load() == 50; }));
}

TEST(TaskArena, NestedArenas) {
  heist::executor ex(4);
  heist::task_arena outer(3, ex), inner(1, ex);
  high_water hw_inner;
  const int r = outer.execute([&] {
    int sum = 0;
    for (int i = 0; i < 5; ++i) {
      sum += inner.execute([&] {
        int local = 0;
        heist::parallel_for(0, 50, [&](int) {
          hw_inner.enter();
          spin(10us);
          hw_inner.leave();
        });
        local += 1;
        return local;
      });
    }
    return sum;
  });
  EXPECT_EQ(r, 5);
  EXPECT_LE(hw_inner.highest.load(), 1);
  // Re-entering the same arena runs inline.
  EXPECT_EQ(outer.execute([&] { return outer.execute([] { return 9; }); }), 9);
}

TEST(TaskArena, CreatesNoThreadsAndHoldsNoneWhenIdle) {
  heist::executor ex(2);
  const int before = heist_test::process_threads();
  {
    heist::task_arena a(2, ex);
    EXPECT_EQ(heist_test::process_threads(), before);
    std::atomic<int> n{0};
    for (int i = 0; i < 100; ++i)
      a.enqueue([&] { n.fetch_add(1); });
    EXPECT_TRUE(heist_test::eventually([&] { return n.load() == 100; }));
    // Its work is done: both workers must be free for the executor's own tasks again.
    std::mutex m;
    std::set<std::string> names;
    heist::parallel_for(ex, 0, 200, [&](int) {
      spin(200us);
      std::lock_guard<std::mutex> lock(m);
      names.insert(heist_test::this_thread_name());
    });
    EXPECT_TRUE(names.count("heist-0") && names.count("heist-1"));
  }
  EXPECT_EQ(heist_test::process_threads(), before);
}

TEST(TaskArena, AlgorithmOverloadsRunInTheArena) {
  heist::executor ex(4);
  heist::task_arena a(2, ex);
  high_water hw;
  heist::parallel_for(a, 0, 300, [&](int) {
    hw.enter();
    spin(20us);
    hw.leave();
  });
  EXPECT_LE(hw.highest.load(), 2);
  const long sum = heist::parallel_reduce(
      a, heist::blocked_range<int>(0, 1000), 0L,
      [](const heist::blocked_range<int>& r, long acc) {
        for (int i = r.begin(); i != r.end(); ++i)
          acc += i;
        return acc;
      },
      [](long x, long y) { return x + y; });
  EXPECT_EQ(sum, 999L * 1000 / 2);
}

// Calls `call` while another thread holds the only slot of `a` (a one-slot arena), released
// 50 ms later: execute() from `call` finds the slot taken and delegates (its function runs as
// a task of the arena once the slot is free; the caller waits without running anything).
template <class Call>
void with_the_only_slot_taken(heist::task_arena& a, Call call) {
  std::latch inside(1), release(1);
  std::thread holder([&] {
    a.execute([&] {
      inside.count_down();
      release.wait();
    });
  });
  inside.wait();
  std::thread helper([&] {
    std::this_thread::sleep_for(50ms);
    release.count_down();
  });
  call();
  holder.join();
  helper.join();
}

TEST(TaskArena, ExecuteWhenEverySlotIsTakenDelegatesAndStillReturns) {
  heist::executor ex(2);
  heist::task_arena a(1, ex);
  with_the_only_slot_taken(a, [&] { EXPECT_EQ(a.execute([] { return 11; }), 11); });
}

TEST(TaskArena, ADelegatedCallRethrowsItsException) {
  heist::executor ex(2);
  heist::task_arena a(1, ex);
  bool ran = false;
  with_the_only_slot_taken(a, [&] {
    try {
      a.execute([&]() -> int {
        ran = true;
        throw std::out_of_range("delegated");
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::out_of_range& e) {
      EXPECT_STREQ(e.what(), "delegated");
    }
  });
  EXPECT_TRUE(ran);
}

// --- isolate ------------------------------------------------------------------------------
namespace {
thread_local bool t_inside_isolated_wait = false;
}

TEST(Isolate, WaitingInsideRunsOnlyItsOwnTasks) {
  heist::executor ex(2);
  std::atomic<int> violations{0}, outer_done{0};
  heist::parallel_for(ex, 0, 64, [&](int) {
    // An outer iteration must never start inside another one's isolated wait on this thread.
    if (t_inside_isolated_wait) violations.fetch_add(1);
    heist::isolate([&] {
      const bool saved = t_inside_isolated_wait;
      t_inside_isolated_wait = true;
      heist::parallel_for(0, 32, [&](int) { spin(20us); });
      t_inside_isolated_wait = saved;
    });
    outer_done.fetch_add(1);
  });
  EXPECT_EQ(outer_done.load(), 64);
  EXPECT_EQ(violations.load(), 0);
}

// A wait inside isolate() on a group whose child was spawned outside the region: the child is
// on top of the waiter's own deque, but the waiter may not take it (another worker does).
TEST(Isolate, AWaitInsideLeavesItsGroupsChildFromOutsideToOthers) {
  heist::executor ex(2);
  for (int round = 0; round < 20; ++round) {
    std::thread::id waiter, runner;
    ex.submit([&] {
        heist::task_group g;
        g.run([&] { runner = std::this_thread::get_id(); });
        waiter = std::this_thread::get_id();
        heist::isolate([&] { g.wait(); });
      }).get();
    EXPECT_NE(runner, waiter) << "round " << round;
  }
}

TEST(Isolate, ReturnsValuesAndPropagatesExceptions) {
  EXPECT_EQ(heist::isolate([] { return 3; }), 3);
  EXPECT_THROW(heist::isolate([]() -> int { throw std::runtime_error("iso"); }),
               std::runtime_error);
  // Nested isolation, on a worker.
  heist::executor ex(2);
  EXPECT_EQ(ex.submit([] {
                return heist::isolate([] { return heist::isolate([] { return 4; }); });
              }).get(),
            4);
}

TEST(Isolate, EveryRegionGetsATagNoOtherRegionHadAcrossThreadsAndBlocks) {
  // Tags come from per-thread blocks of the shared counter (task_arena.hpp): four threads,
  // each through several blocks, nested regions included; no tag twice, none zero (no
  // isolation), and the outer region's tag is back after a nested one.
  constexpr int k_threads = 4;
  const int calls = static_cast<int>(3 * heist::detail::k_isolation_tag_block + 7);
  std::vector<std::vector<std::uintptr_t>> seen(k_threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < calls; ++i) {
        heist::isolate([&] {
          const std::uintptr_t outer = heist::detail::current_context().isolation();
          seen[t].push_back(outer);
          if (i % 5 == 0) {
            heist::isolate(
                [&] { seen[t].push_back(heist::detail::current_context().isolation()); });
            EXPECT_EQ(heist::detail::current_context().isolation(), outer);
          }
        });
      }
      EXPECT_EQ(heist::detail::current_context().isolation(), 0u);
    });
  }
  for (auto& th : threads)
    th.join();
  std::set<std::uintptr_t> all;
  std::size_t total = 0;
  for (const auto& v : seen) {
    total += v.size();
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(total, static_cast<std::size_t>(k_threads) * (calls + (calls + 4) / 5));
  EXPECT_EQ(all.size(), total);
  EXPECT_EQ(all.count(0), 0u);
}
