// Futures as values: the futures when_any hands back are fully usable (then, co_await,
// when_any and when_all again, get), futures and suspended coroutines outlive the executor
// that made them, and an exception reaches a coroutine by move.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/heist.hpp"

namespace {

std::vector<heist::future<int>> futures_of(std::vector<heist::promise<int>>& ps) {
  std::vector<heist::future<int>> fs;
  for (auto& p : ps)
    fs.push_back(p.get_future());
  return fs;
}

heist::task<int> await_value(heist::future<int> f) {
  co_return co_await std::move(f);
}

}  // namespace

// --- the futures when_any hands back ---------------------------------------------------------

TEST(WhenAnyLeftovers, ThenOnAPendingLeftoverWaitsForItsValue) {
  heist::executor ex(2);
  std::vector<heist::promise<int>> ps(3);
  auto any = heist::when_any(futures_of(ps));
  ps[0].set_value(1);
  auto first = any.get();
  ASSERT_EQ(first.index, 0u);
  ASSERT_FALSE(first.futures[1].is_ready());
  std::atomic<bool> ran{false};
  auto g = std::move(first.futures[1]).then([&](int v) {
    ran = true;
    return v * 2;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(ran.load()) << "the continuation ran before its input had a value";
  ps[1].set_value(21);
  EXPECT_EQ(g.get(), 42);
}

TEST(WhenAnyLeftovers, ASecondWhenAnyWaitsForAReadyInput) {
  heist::executor ex(2);
  std::vector<heist::promise<int>> ps(3);
  auto any = heist::when_any(futures_of(ps));
  ps[2].set_value(3);
  auto first = any.get();
  ASSERT_EQ(first.index, 2u);
  std::vector<heist::future<int>> rest;
  rest.push_back(std::move(first.futures[0]));
  rest.push_back(std::move(first.futures[1]));
  auto second = heist::when_any(std::move(rest));
  EXPECT_FALSE(second.is_ready());
  ps[1].set_value(7);
  auto r = second.get();
  ASSERT_EQ(r.index, 1u);
  EXPECT_TRUE(r.futures[1].is_ready());
  EXPECT_EQ(r.futures[1].get(), 7);
  EXPECT_FALSE(r.futures[0].is_ready());
  ps[0].set_value(5);
  EXPECT_EQ(r.futures[0].get(), 5);
}

TEST(WhenAnyLeftovers, WhenAllOfLeftoversIsReadyOnlyWhenAllAre) {
  heist::executor ex(2);
  std::vector<heist::promise<int>> ps(3);
  auto any = heist::when_any(futures_of(ps));
  ps[0].set_value(0);
  auto first = any.get();
  auto all = heist::when_all(std::move(first.futures[1]), std::move(first.futures[2]));
  ps[1].set_value(1);
  EXPECT_FALSE(all.is_ready());
  ps[2].set_value(2);
  auto [a, b] = all.get();
  EXPECT_EQ(a.get() + b.get(), 3);
}

TEST(WhenAnyLeftovers, CoAwaitOnALeftoverResumesWithItsValue) {
  heist::executor ex(2);
  std::vector<heist::promise<int>> ps(2);
  auto any = heist::when_any(futures_of(ps));
  ps[0].set_value(0);
  auto first = any.get();
  auto r = heist::start(ex, await_value(std::move(first.futures[1])));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(r.is_ready());
  ps[1].set_value(42);
  EXPECT_EQ(r.get(), 42);
}

TEST(WhenAnyLeftovers, TheUsualLoopTakesEveryValueOnceInCompletionOrder) {
  heist::executor ex(2);
  const int n = 50;
  std::vector<heist::promise<int>> ps(n);
  std::vector<heist::future<int>> pending = futures_of(ps);
  std::thread producer([&] {
    for (int i = n - 1; i >= 0; --i)
      ps[i].set_value(i);
  });
  long sum = 0;
  while (!pending.empty()) {
    auto r = heist::when_any(std::move(pending)).get();
    ASSERT_TRUE(r.futures[r.index].is_ready());
    sum += r.futures[r.index].get();
    r.futures.erase(r.futures.begin() + static_cast<std::ptrdiff_t>(r.index));
    pending = std::move(r.futures);
  }
  producer.join();
  EXPECT_EQ(sum, static_cast<long>(n) * (n - 1) / 2);
}

// --- futures, continuations and coroutines that outlive their executor -----------------------

TEST(FutureOutlivesExecutor, ThenOnAReadyFutureEndsWithExecutorClosed) {
  auto* ex = new heist::executor(2);
  heist::future<int> f = ex->submit([] { return 5; });
  f.wait();
  delete ex;
  auto g = std::move(f).then([](int v) { return v + 1; });
  EXPECT_THROW(g.get(), heist::executor_closed);
}

TEST(FutureOutlivesExecutor, ThenOnAnotherExecutorStillRuns) {
  heist::executor other(1);
  auto* ex = new heist::executor(2);
  heist::future<int> f = ex->submit([] { return 5; });
  f.wait();
  delete ex;
  EXPECT_EQ(std::move(f).then(other, [](int v) { return v + 1; }).get(), 6);
}

TEST(FutureOutlivesExecutor, ContinuationOfADestroyedTargetEndsWithExecutorClosed) {
  heist::promise<int> p;
  auto* ex = new heist::executor(1);
  auto g = p.get_future().then(*ex, [](int v) { return v; });
  delete ex;
  p.set_value(1);
  EXPECT_THROW(g.get(), heist::executor_closed);
}

TEST(FutureOutlivesExecutor, PromiseMadeInsideADeadExecutorsTaskCompletesAndIsWaitedFor) {
  auto* ex = new heist::executor(2);
  heist::promise<int> p;
  heist::future<int> f;
  ex->submit([&] {
      heist::promise<int> q;
      f = q.get_future();
      p = std::move(q);
    }).get();
  delete ex;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    p.set_value(11);
  });
  EXPECT_EQ(f.get(), 11);
  setter.join();
}

TEST(FutureOutlivesExecutor, CoroutineSuspendedOnAnOutsidePromiseResumesOnTheCompletingThread) {
  auto* ex = new heist::executor(2);
  heist::promise<int> p;
  std::atomic<bool> started{false};
  std::atomic<int> got{0};
  std::thread::id resumed_on;
  auto body = [](heist::future<int> f, std::atomic<bool>* began, std::atomic<int>* out,
                 std::thread::id* where) -> heist::task<void> {
    began->store(true);
    out->store(co_await std::move(f));
    *where = std::this_thread::get_id();
  };
  auto done = heist::start(*ex, body(p.get_future(), &started, &got, &resumed_on));
  while (!started.load())
    std::this_thread::yield();
  delete ex;  // waits for the task that runs the body up to its suspension
  p.set_value(9);
  EXPECT_EQ(got.load(), 9);
  EXPECT_EQ(resumed_on, std::this_thread::get_id());
  done.get();
}

TEST(FutureOutlivesExecutor, ACoroutinesHomeTaskArenaDestroyedWhileItWaits) {
  heist::executor ex(2);
  heist::promise<int> p;
  std::atomic<int> got{0};
  heist::future<void> done;
  {
    heist::task_arena arena(1, ex);
    arena.execute([&] {
      auto body = [](heist::future<int> f, std::atomic<int>* out) -> heist::task<void> {
        out->store(co_await std::move(f));
      };
      done = heist::start(body(p.get_future(), &got));
    });
  }  // waits for the task that runs the body up to its suspension
  p.set_value(4);
  done.get();
  EXPECT_EQ(got.load(), 4);
}

// References to an arena's lifetime are counted in per-thread batches: futures made on one
// thread and dropped on another, executors destroyed while threads still hold batches of their
// references, threads ending with batches and new executors made after, in one run. Under ASan
// a reference lost or counted twice is a leak or a use after free.
TEST(FutureOutlivesExecutor, ReferencesHeldInThreadBatchesOutliveTheirExecutorsInAnyOrder) {
  for (int round = 0; round < 20; ++round) {
    auto* a = new heist::executor(2);
    std::vector<heist::future<int>> made_here;
    for (int i = 0; i < 700; ++i)  // more than a batch: refills on this thread
      made_here.push_back(a->submit([i] { return i; }));
    std::vector<heist::future<int>> dropped_there(std::make_move_iterator(made_here.begin() + 350),
                                                  std::make_move_iterator(made_here.end()));
    made_here.resize(350);
    long there = 0;
    std::thread other([&] {  // takes and drops references of a, then ends with its batch
      for (auto& f : dropped_there)
        there += f.get();
      dropped_there.clear();
      std::vector<heist::future<int>> own;
      for (int i = 0; i < 300; ++i)
        own.push_back(a->submit([] { return 1; }));
      for (auto& f : own)
        there += f.get();
    });
    other.join();
    long here = 0;
    for (auto& f : made_here)
      here += f.get();
    delete a;  // this thread's batch still holds references to a's lifetime
    made_here.clear();
    heist::executor b(2);  // its lifetime may sit where a's arena was
    heist::promise<int> p;
    auto linked = p.get_future().then(b, [](int v) { return v + 1; });
    auto awaited = heist::start(b, await_value(std::move(linked)));
    p.set_value(round);
    EXPECT_EQ(awaited.get(), round + 1);
    EXPECT_EQ(here, 349L * 350 / 2);
    EXPECT_EQ(there, (350L + 699) * 350 / 2 + 300);
  }
}

// --- exceptions reach an awaiting coroutine by move --------------------------------------------

TEST(FutureException, CoAwaitTakesTheExceptionOutOfTheState) {
  // The producer is a task of another executor: it drops its reference to the future's state
  // on its own thread after completing it. Had co_await rethrown a copy of the state's
  // exception_ptr, that drop could free the exception while the handler below reads it (a
  // race ThreadSanitizer reports); moved out, the handler's thread frees it.
  heist::executor ex(1);
  heist::executor producer(1);
  for (int i = 0; i < 500; ++i) {
    auto body = [](heist::future<int> f) -> heist::task<std::string> {
      try {
        co_await std::move(f);
      } catch (const std::runtime_error& e) {
        co_return e.what();
      }
      co_return "";
    };
    heist::future<int> failing =
        producer.submit([]() -> int { throw std::runtime_error("boom: the producer failed"); });
    EXPECT_EQ(heist::start(ex, body(std::move(failing))).get(), "boom: the producer failed");
  }
}
