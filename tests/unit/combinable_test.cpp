// combinable (kind: requirement): per-slot values combined exactly, init, clear, copies, use
// from threads outside the pool.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "heist/heist.hpp"

TEST(Combinable, ALoopsPerThreadSumsCombineToTheTotal) {
  heist::executor ex(3);
  heist::combinable<std::uint64_t> sum;
  heist::parallel_for(ex, std::uint64_t{0}, std::uint64_t{1'000'000},
                      [&](std::uint64_t i) { sum.local() += i; });
  EXPECT_EQ(sum.combine(std::plus<>{}), 1'000'000ull * 999'999 / 2);
  std::uint64_t each = 0;
  int elements = 0;
  sum.combine_each([&](std::uint64_t v) {
    each += v;
    ++elements;
  });
  EXPECT_EQ(each, 1'000'000ull * 999'999 / 2);
  EXPECT_GE(elements, 1);
  EXPECT_LE(elements, 4);  // one per slot that ran iterations: three workers and the caller
}

TEST(Combinable, InitMakesEachElementAndLocalSaysWhetherItExisted) {
  std::atomic<int> made{0};
  heist::combinable<std::array<int, 16>> bins([&] {
    made.fetch_add(1);
    std::array<int, 16> a{};
    a[0] = 100;
    return a;
  });
  bool exists = true;
  bins.local(exists);
  EXPECT_FALSE(exists);
  bins.local(exists);
  EXPECT_TRUE(exists);
  heist::executor ex(2);
  heist::parallel_for(ex, 0, 16'000,
                      [&](int i) { ++bins.local()[static_cast<std::size_t>(i % 16)]; });
  const auto total = bins.combine([](std::array<int, 16> a, const std::array<int, 16>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      a[i] += b[i];
    return a;
  });
  EXPECT_EQ(total[0], 1000 + 100 * made.load());
  for (std::size_t i = 1; i < 16; ++i)
    EXPECT_EQ(total[i], 1000);
}

TEST(Combinable, ClearDropsEveryElementAndCombineOfNoneIsInit) {
  heist::combinable<int> c([] { return 5; });
  EXPECT_EQ(c.combine(std::plus<>{}), 5);
  heist::parallel_for(0, 1000, [&](int) { ++c.local(); });
  EXPECT_GT(c.combine(std::plus<>{}), 1000);
  c.clear();
  int elements = 0;
  c.combine_each([&](int) { ++elements; });
  EXPECT_EQ(elements, 0);
  EXPECT_EQ(c.combine(std::plus<>{}), 5);
}

TEST(Combinable, ThreadsOutsideThePoolGetTheirOwnElement) {
  heist::combinable<int> c;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        ++c.local();
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(c.combine(std::plus<>{}), 4000);
}

TEST(Combinable, ACopyHoldsTheSameValues) {
  heist::combinable<long> c;
  heist::parallel_for(0, 10'000, [&](int i) { c.local() += i; });
  const heist::combinable<long> copy = c;
  EXPECT_EQ(copy.combine(std::plus<>{}), 10'000L * 9'999 / 2);
  c.clear();
  EXPECT_EQ(copy.combine(std::plus<>{}), 10'000L * 9'999 / 2);
}

TEST(Combinable, AnEmptyInitFunctionIsRefusedNamingIt) {
  try {
    heist::combinable<int> c{std::function<int()>()};
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("init"), std::string::npos);
  }
}
