// The promise / continuation half: promise<T> from any thread and its
// std::future_error codes, future::then (chains, exceptions passing through, the executor a
// continuation runs on), when_all (vector and variadic) and when_any.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {
std::future_errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::future_error& e) {
    return static_cast<std::future_errc>(e.code().value());
  }
  ADD_FAILURE() << "no std::future_error";
  return {};
}
}  // namespace

TEST(Promise, ValueFromAnOutsideThreadReachesTheFuture) {
  heist::promise<int> p;
  heist::future<int> f = p.get_future();
  EXPECT_FALSE(f.is_ready());
  std::thread t([&] { p.set_value(42); });
  EXPECT_EQ(f.get(), 42);
  t.join();
}

TEST(Promise, VoidAndExceptions) {
  heist::promise<void> pv;
  auto fv = pv.get_future();
  pv.set_value();
  EXPECT_NO_THROW(fv.get());
  heist::promise<std::string> pe;
  auto fe = pe.get_future();
  pe.set_exception(std::make_exception_ptr(std::runtime_error("boom")));
  EXPECT_THROW(fe.get(), std::runtime_error);
}

TEST(Promise, MisuseGivesTheStdFutureErrorCodes) {
  heist::promise<int> p;
  auto f = p.get_future();
  EXPECT_EQ(code_of([&] { (void)p.get_future(); }), std::future_errc::future_already_retrieved);
  p.set_value(1);
  EXPECT_EQ(code_of([&] { p.set_value(2); }), std::future_errc::promise_already_satisfied);
  EXPECT_EQ(code_of([&] { p.set_exception(std::make_exception_ptr(1)); }),
            std::future_errc::promise_already_satisfied);
  EXPECT_EQ(f.get(), 1);
  heist::future<int> broken;
  {
    heist::promise<int> q;
    broken = q.get_future();
  }
  EXPECT_EQ(code_of([&] { (void)broken.get(); }), std::future_errc::broken_promise);
  heist::promise<int> moved_from;
  heist::promise<int> to(std::move(moved_from));
  EXPECT_EQ(code_of([&] { moved_from.set_value(3); }), std::future_errc::no_state);
  EXPECT_EQ(code_of([&] { (void)heist::future<int>{}.then([](int x) { return x; }); }),
            std::future_errc::no_state);
}

// A null exception_ptr is bad input, not an exception to deliver: the promise refuses it and
// can still be satisfied (until this round, get() returned a value that was never set).
TEST(Promise, ANullExceptionIsRefusedAndThePromiseStaysUnsatisfied) {
  heist::promise<int> p;
  auto f = p.get_future();
  try {
    p.set_exception(nullptr);
    ADD_FAILURE() << "a null exception_ptr was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("set_exception"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(f.is_ready());
  p.set_value(5);
  EXPECT_EQ(f.get(), 5);
  heist::promise<void> v;
  auto fv = v.get_future();
  EXPECT_THROW(v.set_exception(std::exception_ptr{}), std::invalid_argument);
  v.set_exception(std::make_exception_ptr(std::runtime_error("real")));
  EXPECT_THROW(fv.get(), std::runtime_error);
}

TEST(Then, ChainsRunAsTasksWhenTheValueArrives) {
  heist::executor ex(2);
  heist::promise<int> p;
  std::atomic<int> ran{0};
  auto f = p.get_future()
               .then([&](int x) {
                 ran.fetch_add(1);
                 return x * 2;
               })
               .then([&](int x) {
                 ran.fetch_add(1);
                 return std::to_string(x);
               })
               .then([&](std::string s) {
                 ran.fetch_add(1);
                 return s + "!";
               });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ran.load(), 0);  // nothing runs, nothing waits, before the value
  std::thread t([&] { p.set_value(21); });
  EXPECT_EQ(f.get(), "42!");
  EXPECT_EQ(ran.load(), 3);
  t.join();
  // On a ready future the continuation runs at once, as a task.
  auto g = ex.submit([] { return 5; });
  g.wait();
  EXPECT_EQ(std::move(g).then([](int x) { return x + 1; }).get(), 6);
}

TEST(Then, AContinuationReturningVoidCompletesAFutureOfVoid) {
  heist::executor ex(2);
  std::atomic<int> seen{0};
  heist::future<void> after_int = ex.submit([] { return 5; }).then([&](int x) { seen = x; });
  after_int.get();
  EXPECT_EQ(seen.load(), 5);
  heist::future<int> chained =
      ex.submit([] {}).then([&] { seen.fetch_add(1); }).then(ex, [&] { return seen.load() * 10; });
  EXPECT_EQ(chained.get(), 60);
}

TEST(Then, AnExceptionSkipsTheContinuationsAndPassesThrough) {
  heist::executor ex(2);
  std::atomic<int> ran{0};
  auto f = ex.submit([]() -> int { throw std::out_of_range("first"); })
               .then([&](int x) {
                 ran.fetch_add(1);
                 return x;
               })
               .then([&](int) { ran.fetch_add(1); });
  EXPECT_THROW(f.get(), std::out_of_range);
  EXPECT_EQ(ran.load(), 0);
  // A continuation that throws puts its exception in its own result.
  auto g = ex.submit([] { return 1; }).then([](int) -> int { throw std::logic_error("second"); });
  EXPECT_THROW(g.get(), std::logic_error);
}

TEST(Then, RunsOnTheNamedExecutorOrTheOneThatCompleted) {
  // The main thread does not call get() until the continuation is done (get() helps, and
  // would run it itself): it polls a flag, so the name seen is the executor worker's.
  heist::executor_options o1, o2;
  o1.num_workers = 1;
  o1.name = "first";
  o2.num_workers = 1;
  o2.name = "second";
  heist::executor a(o1), b(o2);
  auto name_after = [](heist::future<std::string> f, std::atomic<bool>& done) {
    EXPECT_TRUE(heist_test::eventually([&] { return done.load(); }));
    return f.get();
  };
  std::atomic<bool> done_b{false}, done_a{false};
  heist::promise<int> pb;
  auto on_b = pb.get_future().then(b, [&](int) {
    done_b = true;
    return heist_test::this_thread_name();
  });
  std::thread([&] { pb.set_value(1); }).join();  // completed outside every executor
  EXPECT_EQ(name_after(std::move(on_b), done_b), "second-0");
  auto on_a = a.submit([] {
                 std::this_thread::sleep_for(std::chrono::milliseconds(5));
                 return 1;
               }).then([&](int) {
    done_a = true;
    return heist_test::this_thread_name();
  });
  EXPECT_EQ(name_after(std::move(on_a), done_a), "first-0");  // the completing executor's
}

TEST(WhenAll, VectorAndVariadicAreReadyWhenEveryInputIs) {
  heist::executor ex(2);
  std::vector<heist::promise<int>> ps(10);
  std::vector<heist::future<int>> fs;
  for (auto& p : ps)
    fs.push_back(p.get_future());
  auto all = heist::when_all(std::move(fs));
  for (int i = 0; i < 9; ++i)
    ps[static_cast<std::size_t>(i)].set_value(i);
  EXPECT_FALSE(all.is_ready());
  ps[9].set_exception(std::make_exception_ptr(std::runtime_error("nine")));
  std::vector<heist::future<int>> done = all.get();
  ASSERT_EQ(done.size(), 10u);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(done[static_cast<std::size_t>(i)].get(), i);
  EXPECT_THROW(done[9].get(), std::runtime_error);  // each input keeps its exception

  auto mixed =
      heist::when_all(ex.submit([] { return 1; }), ex.submit([] { return 2.5; }), ex.submit([] {}));
  auto [a, b, c] = mixed.get();
  EXPECT_EQ(a.get(), 1);
  EXPECT_EQ(b.get(), 2.5);
  EXPECT_NO_THROW(c.get());
  EXPECT_TRUE(heist::when_all(std::vector<heist::future<int>>{}).get().empty());
}

TEST(WhenAny, ReadyWithTheFirstInputsIndex) {
  heist::promise<int> p0, p1, p2;
  std::vector<heist::future<int>> fs;
  fs.push_back(p0.get_future());
  fs.push_back(p1.get_future());
  fs.push_back(p2.get_future());
  auto any = heist::when_any(std::move(fs));
  EXPECT_FALSE(any.is_ready());
  p1.set_value(11);
  heist::when_any_result<int> r = any.get();
  EXPECT_EQ(r.index, 1u);
  ASSERT_EQ(r.futures.size(), 3u);
  EXPECT_EQ(r.futures[1].get(), 11);
  EXPECT_FALSE(r.futures[0].is_ready());
  p0.set_value(10);
  p2.set_value(12);
  EXPECT_EQ(r.futures[0].get(), 10);
  EXPECT_EQ(r.futures[2].get(), 12);
  auto none = heist::when_any(std::vector<heist::future<int>>{}).get();
  EXPECT_EQ(none.index, static_cast<std::size_t>(-1));
}
