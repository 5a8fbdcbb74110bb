// Inline joins (join_awaiter.hpp) and the continuation bypass (spawn.hpp, try_bypass): a
// coroutine in co_await group.join() runs the members on top of its own deque itself, and a
// continuation queued by a task's last act runs next on the same thread. Both are invisible to
// results: these tests check counts, values, exceptions, cancellation and where things run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <latch>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "heist/detail/core/run_task.hpp"
#include "heist/heist.hpp"

namespace {

heist::task<void> add_one(std::atomic<int>& n) {
  n.fetch_add(1);
  co_return;
}

heist::task<void> throw_after_adding(std::atomic<int>& n) {
  n.fetch_add(1);
  throw std::runtime_error("member failed");
  co_return;
}

// Counts its frame's destruction: a member skipped by cancellation still has its frame freed.
struct frame_counter {
  std::atomic<int>* destroyed;
  explicit frame_counter(std::atomic<int>& d) : destroyed(&d) {}
  frame_counter(frame_counter&& o) noexcept : destroyed(std::exchange(o.destroyed, nullptr)) {}
  ~frame_counter() {
    if (destroyed != nullptr) destroyed->fetch_add(1);
  }
};
heist::task<void> counted_member(frame_counter fc, std::atomic<int>& ran) {
  ran.fetch_add(1);
  co_return;
}

heist::task<void> await_then_add(heist::future<int> f, std::atomic<int>& n) {
  n.fetch_add(co_await std::move(f));
}

TEST(InlineJoin, EveryMemberRunsOnceAndTheJoinSeesThemAll) {
  for (std::size_t workers : {1u, 2u, 4u}) {
    heist::executor ex(workers);
    std::atomic<int> n{0};
    auto body = [&]() -> heist::task<int> {
      heist::task_group g;
      for (int i = 0; i < 100; ++i)
        g.run(add_one(n));
      co_await g.join();
      co_return n.load();
    };
    for (int round = 1; round <= 20; ++round)
      EXPECT_EQ(heist::start(ex, body()).get(), 100 * round) << workers << " workers";
  }
}

TEST(InlineJoin, AnInlinedMemberThatSuspendsIsResumedAndTheJoinWaitsForIt) {
  heist::executor ex(2);
  std::atomic<int> n{0};
  heist::promise<int> p;
  auto body = [&]() -> heist::task<int> {
    heist::task_group g;
    g.run(add_one(n));
    g.run(await_then_add(p.get_future(), n));  // on top: inlined, then suspends on p
    co_await g.join();
    co_return n.load();
  };
  heist::future<int> f = heist::start(ex, body());
  std::thread outside([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    p.set_value(10);
  });
  EXPECT_EQ(f.get(), 11);
  outside.join();
}

TEST(InlineJoin, AnExceptionFromAnInlinedMemberIsRethrownByTheJoin) {
  heist::executor ex(1);
  std::atomic<int> n{0};
  auto body = [&]() -> heist::task<void> {
    heist::task_group g;
    g.run(add_one(n));
    g.run(throw_after_adding(n));
    co_await g.join();
  };
  EXPECT_THROW(heist::start(ex, body()).get(), std::runtime_error);
  // The thrower (on top) ran; its exception cancelled the group, so the other member ran
  // only if a thread took it before that.
  EXPECT_GE(n.load(), 1);
  EXPECT_LE(n.load(), 2);
}

TEST(InlineJoin, MembersOfACancelledGroupAreSkippedAndTheirFramesFreed) {
  heist::executor ex(1);
  std::atomic<int> ran{0}, destroyed{0};
  std::latch joined(1);
  auto body = [&]() -> heist::task<void> {
    heist::task_group g;
    for (int i = 0; i < 5; ++i)
      g.run(counted_member(frame_counter(destroyed), ran));
    g.cancel();
    co_await g.join();  // pops the five, finds the group cancelled, skips them
    joined.count_down();
  };
  // The main thread blocks on a latch until the join is over, and does not help: a waiting
  // get() would steal from the worker's deque, and a member it took before the cancel would
  // run (ASan's slower spawns made that window wide enough to hit in CI).
  heist::future<void> done = heist::start(ex, body());
  joined.wait();
  done.get();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(destroyed.load(), 5);
}

TEST(InlineJoin, AnotherGroupsTaskOnTopOfTheDequeIsPutBackAndStillRuns) {
  heist::executor ex(1);  // one worker: the joiner's deque holds both groups' tasks
  std::atomic<int> n{0};
  std::atomic<bool> other_ran{false};
  auto body = [&]() -> heist::task<void> {
    heist::task_group mine, other;
    mine.run(add_one(n));
    other.run([&] { other_ran = true; });  // on top: not a member of `mine`
    co_await mine.join();
    EXPECT_EQ(n.load(), 1);
    co_await other.join();
    EXPECT_TRUE(other_ran.load());
  };
  heist::start(ex, body()).get();
  EXPECT_TRUE(other_ran.load());
}

// A member run() from inside a task is queued by its own frame: no block of the task pool.
TEST(InlineJoin, AMemberIsQueuedByItsOwnFrameWithoutAPoolBlock) {
  heist::executor ex(1);
  std::atomic<int> n{0};
  auto body = [&]() -> heist::task<std::ptrdiff_t> {
    heist::task_group g;
    const heist::detail::task_pool& pool = heist::detail::current_context().m_pool;
    const auto before = static_cast<std::ptrdiff_t>(pool.local_count());
    for (int i = 0; i < 10; ++i)
      g.run(add_one(n));
    const auto after = static_cast<std::ptrdiff_t>(pool.local_count());
    co_await g.join();
    co_return before - after;
  };
  EXPECT_EQ(heist::start(ex, body()).get(), 0) << "blocks taken from the pool for 10 members";
  EXPECT_EQ(n.load(), 10);
}

// A thief inside an isolated region reads the isolation of the task it may steal before
// taking it; a member's entry lies in its frame, which may be freed by then, so the filter
// tells it by its address and never reads it (task.hpp, frame_task_address).
TEST(InlineJoin, AnIsolatedThiefRejectsAMembersEntryWithoutReadingIt) {
  alignas(16) std::byte memory[64];
  // A task at 8 mod 16, as a member's entry in its promise; its isolation field says "yours".
  auto* entry = ::new (static_cast<void*>(memory + 8)) heist::detail::task{};
  entry->m_isolation.store(42, std::memory_order_relaxed);
  auto* block = ::new (static_cast<void*>(memory + 32)) heist::detail::task{};
  block->m_isolation.store(42, std::memory_order_relaxed);
  const heist::detail::task_filter isolated{42};
  EXPECT_TRUE(heist::detail::frame_task_address(entry));
  EXPECT_FALSE(isolated.accepts(entry));
  EXPECT_TRUE(isolated.accepts(block));  // a block of the pool (0 mod 16) is read
  EXPECT_TRUE(heist::detail::task_filter{}.accepts(entry));  // an open filter takes anything
}

// Inside an isolated region members go through blocks of the pool (an entry in a frame is
// queued with isolation 0 only); each runs once, inlined or not.
TEST(InlineJoin, MembersRunInsideAnIsolatedRegionRunOnce) {
  for (std::size_t workers : {1u, 2u}) {
    heist::executor ex(workers);
    std::atomic<int> n{0};
    auto body = [&]() -> heist::task<void> {
      heist::task_group g;
      for (int i = 0; i < 50; ++i)
        g.run(add_one(n));
      co_await g.join();
    };
    heist::task_group outer(ex);
    outer.run([&] { heist::isolate([&] { heist::sync_wait(body()); }); });
    outer.wait();
    EXPECT_EQ(n.load(), 50) << workers << " workers";
  }
}

TEST(Bypass, AThenChainCompletedByATaskRunsOnOneThread) {
  heist::executor ex(2);
  constexpr int k_links = 2000;
  std::vector<std::thread::id> where(k_links);
  heist::promise<int> p;
  heist::future<int> f = p.get_future();
  for (int i = 0; i < k_links; ++i) {
    f = f.then([&where, i](int v) {
      where[static_cast<std::size_t>(i)] = std::this_thread::get_id();
      return v + 1;
    });
  }
  ex.submit([&p] { p.set_value(0); }).get();  // the first link is queued like any spawn
  EXPECT_EQ(f.get(), k_links);
  // Each link's task hands the next link over as its last act: no link is queued where an
  // idle worker could steal it, so once the chain runs it stays on one thread.
  const std::set<std::thread::id> threads(where.begin() + 1, where.end());
  EXPECT_EQ(threads.size(), 1u);
}

TEST(Bypass, ACoroutineAwaitingASubmittedTaskContinuesWhereTheTaskRan) {
  heist::executor ex(2);
  for (int round = 0; round < 20; ++round) {
    std::thread::id ran_on, resumed_on;
    std::atomic<bool> go{false};
    auto body = [&]() -> heist::task<int> {
      const int v = co_await ex.submit([&] {
        // Held until the coroutine has surely suspended on the future (had the value come
        // first, the coroutine would simply go on where it was).
        while (!go.load())
          std::this_thread::yield();
        ran_on = std::this_thread::get_id();
        return 7;
      });
      resumed_on = std::this_thread::get_id();
      co_return v;
    };
    heist::future<int> f = heist::start(ex, body());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    go = true;
    EXPECT_EQ(f.get(), 7);
    EXPECT_EQ(ran_on, resumed_on) << "round " << round;
  }
}

TEST(Bypass, ContinuationsInsideAnIsolatedRegionStayInIt) {
  heist::executor ex(2);
  std::atomic<int> sum{0};
  heist::task_group outer(ex);
  outer.run([&] {
    heist::isolate([&] {
      heist::future<int> f = ex.submit([] { return 1; });
      for (int i = 0; i < 100; ++i)
        f = f.then([](int v) { return v + 1; });
      sum += f.get();
    });
  });
  outer.wait();
  EXPECT_EQ(sum.load(), 101);
}

}  // namespace
