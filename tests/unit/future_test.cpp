// future and its errors (kind: requirement).
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <latch>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "heist/heist.hpp"
#include "test_support.hpp"

TEST(Future, DefaultConstructedIsInvalidAndGetThrowsNoState) {
  heist::future<int> f;
  EXPECT_FALSE(f.valid());
  EXPECT_FALSE(f.is_ready());
  try {
    f.get();
    FAIL();
  } catch (const std::future_error& e) {
    EXPECT_EQ(e.code(), std::make_error_code(std::future_errc::no_state));
  }
  EXPECT_THROW(f.wait(), std::future_error);
}

TEST(Future, GetConsumesAndMovedFromIsInvalid) {
  heist::executor ex(2);
  heist::future<int> a = ex.submit([] { return 7; });
  EXPECT_TRUE(a.valid());
  heist::future<int> b = std::move(a);
  EXPECT_FALSE(a.valid());
  EXPECT_THROW(a.get(), std::future_error);
  EXPECT_EQ(b.get(), 7);
  EXPECT_FALSE(b.valid());
  EXPECT_THROW(b.get(), std::future_error);
  heist::future<int> c;
  c = ex.submit([] { return 8; });
  EXPECT_EQ(c.get(), 8);
}

TEST(Future, VoidAndMoveOnlyResults) {
  heist::executor ex(2);
  std::atomic<bool> ran{false};
  heist::future<void> v = ex.submit([&] { ran = true; });
  v.get();
  EXPECT_TRUE(ran.load());
  auto p = ex.submit([] { return std::make_unique<std::string>("moved"); });
  std::unique_ptr<std::string> s = p.get();
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, "moved");
}

TEST(Future, RethrowsTheTaskException) {
  heist::executor ex(2);
  auto f = ex.submit([]() -> int { throw std::out_of_range("range!"); });
  try {
    f.get();
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "range!");
  }
  EXPECT_FALSE(f.valid());
  auto g = ex.submit([] { throw 42; });
  try {
    g.get();
    FAIL();
  } catch (int v) {
    EXPECT_EQ(v, 42);
  }
}

TEST(Future, IsReadyAfterTheTaskFinished) {
  heist::executor ex(1);
  std::latch gate(1);
  auto f = ex.submit([&] {
    gate.wait();
    return 3;
  });
  EXPECT_FALSE(f.is_ready());
  gate.count_down();
  EXPECT_TRUE(heist_test::eventually([&] { return f.is_ready(); }));
  EXPECT_EQ(f.get(), 3);
}

TEST(Future, NestedWaitOnOneWorkerDoesNotDeadlock) {
  // The only worker waits on a future of a task queued behind it: the wait must run it.
  heist::executor ex(1);
  auto outer = ex.submit([&] {
    auto inner = ex.submit([&] {
      auto innermost = ex.submit([] { return 1; });
      return innermost.get() + 1;
    });
    return inner.get() + 1;
  });
  EXPECT_EQ(outer.get(), 3);
}

TEST(Future, ExternalWaiterHelps) {
  // The only worker is blocked until the main thread's future is done: the main thread
  // must run that task itself while it waits.
  heist::executor ex(1);
  std::latch started(1), release(1);
  ex.post([&] {
    started.count_down();
    release.wait();
  });
  started.wait();  // the worker, not this thread, is the one blocked
  auto f = ex.submit([] { return std::this_thread::get_id(); });
  EXPECT_EQ(f.get(), std::this_thread::get_id());
  release.count_down();
  ex.wait_idle();
}

TEST(Future, WaitCanBeCalledRepeatedlyBeforeGet) {
  heist::executor ex(2);
  auto f = ex.submit([] { return 11; });
  f.wait();
  f.wait();
  EXPECT_TRUE(f.is_ready());
  EXPECT_EQ(f.get(), 11);
}

TEST(Future, DroppingAnUnfinishedFutureIsSafe) {
  heist::executor ex(2);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) {
    (void)ex.submit([&] {
      ran.fetch_add(1);
      return std::string(100, 'x');
    });
  }
  ex.wait_idle();
  EXPECT_EQ(ran.load(), 100);
}
