// Coroutines: task<T> is lazy, co_await on it runs it and passes values and
// exceptions; co_await on a future, on schedule(ex) and on task_group::join() suspend without
// a thread and resume as tasks; start and sync_wait; deep chains of awaits use no stack.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {

heist::task<int> value_of(int x) {
  co_return x;
}

heist::task<int> sum_of_three() {
  const int a = co_await value_of(1);
  const int b = co_await value_of(2);
  const int c = co_await value_of(3);
  co_return a + b + c;
}

heist::task<int> throws_logic() {
  throw std::logic_error("inside");
  co_return 0;
}

heist::task<std::string> catches_it() {
  try {
    (void)co_await throws_logic();
  } catch (const std::logic_error& e) {
    co_return std::string("caught ") + e.what();
  }
  co_return "not caught";
}

heist::task<long> depth(long n) {
  if (n == 0) co_return 0;
  co_return 1 + co_await depth(n - 1);
}

heist::task<void> fib_into(int n, long& out) {
  if (n < 2) {
    out = n;
    co_return;
  }
  long a = 0, b = 0;
  heist::task_group g;
  g.run(fib_into(n - 1, a));    // a member of g until it ends
  co_await fib_into(n - 2, b);  // runs here, by symmetric transfer
  co_await g.join();            // the last child to finish resumes this coroutine
  out = a + b;
}

}  // namespace

TEST(Coroutine, TasksAreLazyAndAwaitPassesValuesAndExceptions) {
  heist::executor ex(2);
  std::atomic<int> started{0};
  auto lazy = [&]() -> heist::task<int> {
    started.fetch_add(1);
    co_return 7;
  };
  heist::task<int> t = lazy();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(started.load(), 0);  // nothing runs until awaited or started
  EXPECT_EQ(heist::start(ex, std::move(t)).get(), 7);
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(heist::start(ex, sum_of_three()).get(), 6);
  EXPECT_EQ(heist::start(ex, catches_it()).get(), "caught inside");
  EXPECT_THROW(heist::start(ex, throws_logic()).get(), std::logic_error);
  EXPECT_EQ(heist::sync_wait(sum_of_three()), 6);
}

TEST(Coroutine, AwaitingAFutureSuspendsAndResumesOnTheExecutor) {
  heist::executor_options o;
  o.num_workers = 1;
  o.name = "coro";
  heist::executor ex(o);
  heist::promise<int> p;
  heist::future<int> pf = p.get_future();
  std::atomic<bool> suspended{false};
  auto waiter = [&]() -> heist::task<std::string> {
    suspended = true;
    const int v = co_await std::move(pf);
    co_return heist_test::this_thread_name() + ":" + std::to_string(v);
  };
  heist::future<std::string> f = heist::start(ex, waiter());
  ASSERT_TRUE(heist_test::eventually([&] { return suspended.load(); }));
  // The worker is free while the coroutine waits: other work runs.
  EXPECT_EQ(ex.submit([] { return 5; }).get(), 5);
  std::thread([&] { p.set_value(9); }).join();  // completed outside every executor
  // Poll instead of get(): get() helps, and could run the resumed coroutine itself.
  ASSERT_TRUE(heist_test::eventually([&] { return f.is_ready(); }));
  EXPECT_EQ(f.get(), "coro-0:9");  // resumed where it was suspended
  // An exception in the awaited future reaches the coroutine.
  heist::promise<int> q;
  heist::future<int> qf = q.get_future();
  auto rethrows = [&]() -> heist::task<int> { co_return co_await qf; };
  auto g = heist::start(ex, rethrows());
  q.set_exception(std::make_exception_ptr(std::range_error("late")));
  EXPECT_THROW(g.get(), std::range_error);
}

// A coroutine suspended on a future whose executor has shut down when the value arrives
// from outside is never left suspended: it resumes on the completing thread (resume.hpp,
// resume_in), finishes, and completes its start() future.
heist::task<int> doubled_where(heist::future<int> f, std::thread::id& where) {
  const int v = co_await f;
  where = std::this_thread::get_id();
  co_return 2 * v;
}
TEST(Coroutine, ACoroutineWhoseExecutorShutDownResumesOnTheCompletingThread) {
  heist::executor ex(1);
  heist::promise<int> p;
  std::thread::id where;
  heist::future<int> result = heist::start(ex, doubled_where(p.get_future(), where));
  ex.wait_idle();  // suspended: no task left
  ex.shutdown();
  p.set_value(21);
  EXPECT_EQ(result.get(), 42);
  EXPECT_EQ(where, std::this_thread::get_id());
}

TEST(Coroutine, ScheduleMovesTheCoroutineToAnotherExecutor) {
  heist::executor_options oa, ob;
  oa.num_workers = 1;
  oa.name = "alpha";
  ob.num_workers = 1;
  ob.name = "beta";
  heist::executor a(oa), b(ob);
  auto hop = [&]() -> heist::task<std::string> {
    co_await heist::schedule(a);
    std::string where = heist_test::this_thread_name();
    co_await heist::schedule(b);
    where += "," + heist_test::this_thread_name();
    co_await heist::schedule(a);
    where += "," + heist_test::this_thread_name();
    co_return where;
  };
  heist::future<std::string> f = heist::start(a, hop());
  ASSERT_TRUE(heist_test::eventually([&] { return f.is_ready(); }));  // (get() would help)
  EXPECT_EQ(f.get(), "alpha-0,beta-0,alpha-0");
}

// schedule()'s result has a public name: it can be held and awaited later.
static_assert(std::is_same_v<decltype(heist::schedule(std::declval<heist::executor&>())),
                             heist::schedule_awaitable>);

TEST(Coroutine, AHeldScheduleAwaitableMovesTheCoroutineWhenAwaited) {
  heist::executor_options o;
  o.num_workers = 1;
  o.name = "gamma";
  heist::executor ex(o);
  auto hop = [&]() -> heist::task<std::string> {
    heist::schedule_awaitable later = heist::schedule(ex);
    const std::string before = heist_test::this_thread_name();
    co_await later;
    co_return before + "," + heist_test::this_thread_name();
  };
  std::string where = heist::sync_wait(hop());
  EXPECT_EQ(where.substr(where.find(',') + 1), "gamma-0");
}

TEST(Coroutine, JoinWaitsForTheGroupWithoutAThread) {
  heist::executor ex(2);
  long out = 0;
  heist::start(ex, fib_into(22, out)).get();
  EXPECT_EQ(out, 17711);
  // An exception in a group member is rethrown by join().
  auto failing = []() -> heist::task<void> {
    heist::task_group g;
    g.run([] { throw std::out_of_range("member"); });
    g.run([] {});
    co_await g.join();
  };
  EXPECT_THROW(heist::start(ex, failing()).get(), std::out_of_range);
}

TEST(Coroutine, AMillionNestedAwaitsUseNoMoreStackThanOne) {
  // Each level awaits the next by symmetric transfer, and each end resumes its awaiter the
  // same way: on a worker's 8 MiB stack, a million frames of recursion would not fit.
  // Symmetric transfer is a tail call the compiler emits in optimized builds. The sanitizers'
  // instrumentation keeps those frames (TSan overflowed here), and GCC at -O0 makes a plain
  // call of it (a Debug build overflowed): there the stack guard (HEIST_AWAIT_STACK_GUARD)
  // queues the transfer that finds the stack low as a task, and the chain goes on from a
  // fresh stack (docs/design/async.md).
  heist::executor ex(2);
  EXPECT_EQ(heist::start(ex, depth(1'000'000)).get(), 1'000'000);
}

TEST(Coroutine, ManySuspendedCoroutinesCostNoThreads) {
  heist::executor ex(2);
  const int n = 100000;
  std::vector<heist::promise<int>> ps(static_cast<std::size_t>(n));
  std::atomic<long> sum{0};
  std::atomic<int> resumed{0};
  std::vector<heist::future<void>> done;
  done.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    done.push_back(heist::start(
        ex,
        [](heist::future<int> f, std::atomic<long>& s, std::atomic<int>& r) -> heist::task<void> {
          s.fetch_add(co_await std::move(f));
          r.fetch_add(1);
        }(ps[static_cast<std::size_t>(i)].get_future(), sum, resumed)));
  }
  ex.wait_idle();  // every coroutine is suspended now, and no task is in flight
  EXPECT_EQ(resumed.load(), 0);
  std::thread setter([&] {
    for (int i = 0; i < n; ++i)
      ps[static_cast<std::size_t>(i)].set_value(i);
  });
  setter.join();
  for (auto& f : done)
    f.get();
  EXPECT_EQ(resumed.load(), n);  // each resumed exactly once
  EXPECT_EQ(sum.load(), static_cast<long>(n) * (n - 1) / 2);
}
