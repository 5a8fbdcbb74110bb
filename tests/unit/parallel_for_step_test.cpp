// parallel_for with a step, and the index form with a partitioner (kind: requirement).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "heist/heist.hpp"

TEST(ParallelForStep, VisitsEveryStepOnceAndNothingElse) {
  heist::executor ex(3);
  for (int step : {1, 2, 3, 7, 1000, 5000}) {
    for (int last : {0, 1, 999, 1000, 1001, 4999}) {
      std::vector<std::atomic<int>> seen(5000);
      heist::parallel_for(ex, 0, last, step, [&](int i) { seen[static_cast<std::size_t>(i)]++; });
      for (int i = 0; i < 5000; ++i) {
        ASSERT_EQ(seen[static_cast<std::size_t>(i)].load(), (i < last && i % step == 0) ? 1 : 0)
            << "i=" << i << " step=" << step << " last=" << last;
      }
    }
  }
}

TEST(ParallelForStep, WorksNearTheEndsOfTheIndexType) {
  std::atomic<int> count{0};
  std::atomic<std::int64_t> sum{0};
  const std::int8_t lo = -128, hi = 127;
  heist::parallel_for(lo, hi, std::int8_t{50}, [&](std::int8_t i) {
    count++;
    sum += i;
  });
  EXPECT_EQ(count.load(), 6);  // -128 -78 -28 22 72 122
  EXPECT_EQ(sum.load(), -128 - 78 - 28 + 22 + 72 + 122);
  std::atomic<int> wide{0};
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  heist::parallel_for(top - 100, top, std::uint64_t{10}, [&](std::uint64_t) { wide++; });
  EXPECT_EQ(wide.load(), 10);
}

TEST(ParallelForStep, AStepOfZeroOrBelowIsRefusedNamingIt) {
  for (int step : {0, -1}) {
    try {
      heist::parallel_for(0, 10, step, [](int) {});
      FAIL() << "no exception for step " << step;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("step"), std::string::npos) << e.what();
    }
  }
}

TEST(ParallelForStep, TheIndexFormsTakeEveryPartitioner) {
  heist::executor ex(2);
  heist::affinity_partitioner ap;
  heist::task_arena ta(2, ex);
  for (int round = 0; round < 2; ++round) {
    std::atomic<long> a{0}, b{0}, c{0}, d{0}, e{0}, f{0};
    heist::parallel_for(
        ex, 0, 10'000, [&](int i) { a += i; }, heist::simple_partitioner{});
    heist::parallel_for(
        ex, 0, 10'000, [&](int i) { b += i; }, heist::static_partitioner{});
    heist::parallel_for(
        ex, 0, 10'000, [&](int i) { c += i; }, ap);
    heist::parallel_for(
        0, 10'000, 3, [&](int i) { d += i; }, heist::auto_partitioner{});
    heist::parallel_for(
        ta, 0, 10'000, 3, [&](int i) { e += i; }, heist::static_partitioner{});
    heist::parallel_for(
        ta, 0, 10'000, [&](int i) { f += i; }, heist::simple_partitioner{});
    EXPECT_EQ(a.load(), 10'000L * 9'999 / 2);
    EXPECT_EQ(b.load(), a.load());
    EXPECT_EQ(c.load(), a.load());
    long expected = 0;
    for (int i = 0; i < 10'000; i += 3)
      expected += i;
    EXPECT_EQ(d.load(), expected);
    EXPECT_EQ(e.load(), expected);
    EXPECT_EQ(f.load(), a.load());
  }
}

TEST(ParallelForStep, AnExceptionCancelsTheLoopAndIsRethrown) {
  heist::executor ex(2);
  EXPECT_THROW(heist::parallel_for(ex, 0, 1'000'000, 2,
                                   [](int i) {
                                     if (i == 5000) throw std::runtime_error("body");
                                   }),
               std::runtime_error);
}
