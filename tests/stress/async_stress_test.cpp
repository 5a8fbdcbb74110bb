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
