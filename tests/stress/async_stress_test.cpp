// Continuations and when_all under load: a long then-chain, when_all over many futures
// completed from four outside threads, when_any races, promises completed while their
// continuations are attached. Counts prove each continuation ran exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

TEST(AsyncStress, AMillionThenLinks) {
  heist::executor ex(2);
  const long links = static_cast<long>(heist_test::scaled(1000000));
  heist::promise<long> p;
  heist::future<long> f = p.get_future();
  for (long i = 0; i < links; ++i)
    f = f.then([](long x) { return x + 1; });
  p.set_value(0);
  EXPECT_EQ(f.get(), links);
}

TEST(AsyncStress, WhenAllOverTenThousandFuturesCompletedFromFourThreads) {
  heist::executor ex(2);
  const std::size_t n = heist_test::scaled(10000);
  std::vector<heist::promise<std::size_t>> ps(n);
  std::vector<heist::future<std::size_t>> fs;
  for (auto& p : ps)
    fs.push_back(p.get_future());
  auto all = heist::when_all(std::move(fs));
  std::vector<std::thread> setters;
  for (std::size_t t = 0; t < 4; ++t) {
    setters.emplace_back([&, t] {
      for (std::size_t i = t; i < n; i += 4)
        ps[i].set_value(i);
    });
  }
  std::vector<heist::future<std::size_t>> done = all.get();
  for (auto& t : setters)
    t.join();
  ASSERT_EQ(done.size(), n);
  std::size_t sum = 0;
  for (auto& f : done)
    sum += f.get();
  EXPECT_EQ(sum, n * (n - 1) / 2);
}

TEST(AsyncStress, ContinuationsAttachedWhileTheValueArrives) {
  // then() races the completion: exactly one of them queues the continuation.
  heist::executor ex(2);
  const int rounds = static_cast<int>(heist_test::scaled(20000));
  std::atomic<int> ran{0};
  for (int r = 0; r < rounds; ++r) {
    heist::promise<int> p;
    auto f = p.get_future();
    std::thread setter([&] { p.set_value(r); });
    auto g = f.then([&](int x) {
      ran.fetch_add(1);
      return x;
    });
    EXPECT_EQ(g.get(), r);
    setter.join();
  }
  EXPECT_EQ(ran.load(), rounds);
}

TEST(AsyncStress, WhenAnyRacesDeliverOneWinnerAndEveryInput) {
  heist::executor ex(2);
  const int rounds = static_cast<int>(heist_test::scaled(5000));
  for (int r = 0; r < rounds; ++r) {
    std::vector<heist::promise<int>> ps(4);
    std::vector<heist::future<int>> fs;
    for (auto& p : ps)
      fs.push_back(p.get_future());
    auto any = heist::when_any(std::move(fs));
    std::vector<std::thread> setters;
    for (int i = 0; i < 4; ++i)
      setters.emplace_back([&, i] { ps[static_cast<std::size_t>(i)].set_value(i); });
    auto result = any.get();
    for (auto& t : setters)
      t.join();
    ASSERT_LT(result.index, 4u);
    int sum = 0;
    for (auto& f : result.futures)
      sum += f.get();
    ASSERT_EQ(sum, 0 + 1 + 2 + 3);
  }
}

// A loop of awaits (HEIST_AWAIT_STACK_GUARD, include/heist/detail/config.hpp): one coroutine,
// a member of a group, awaits 200,000 child tasks in a loop. Where symmetric transfer keeps a
// stack frame (unoptimized and sanitizer builds: the debug-perturb, TSan and ASan stages) the
// stack would overflow after a few thousand awaits; there a task ending below the stack's
// headroom mark resumes its awaiter as a task, on a fresh stack, maybe on the other worker.
// Every child's value is added once, and the body keeps its running group across those
// resumptions: a group made after the loop nests under the member's group, so cancelling that
// group reaches it. In optimized builds the loop is one frame deep and the same holds.
namespace {
heist::task<long> value_of(long i) {
  co_return i;
}
heist::task<void> await_loop(long n, long& sum, bool& nested_cancelled, heist::task_group& outer) {
  for (long i = 0; i < n; ++i)
    sum += co_await value_of(i);
  heist::task_group inner;  // its parent: the running group, outer (this is outer's member)
  outer.cancel();
  nested_cancelled = inner.is_canceling();
}
}  // namespace

TEST(AsyncStress, ALoopOfAwaitsKeepsItsStackAndItsGroup) {
  heist::executor ex(2);
  const long n = 200000;  // not scaled down for the sanitizers: they are the builds it is for
  for (int round = 0; round < 2; ++round) {
    heist::task_group outer(ex);
    long sum = 0;
    bool nested_cancelled = false;
    outer.run(await_loop(n, sum, nested_cancelled, outer));
    outer.wait();
    EXPECT_EQ(sum, n * (n - 1) / 2);
    EXPECT_TRUE(nested_cancelled) << "the body lost its group after a resumption";
  }
}
