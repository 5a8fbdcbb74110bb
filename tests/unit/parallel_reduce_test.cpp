// parallel_reduce and parallel_deterministic_reduce (kind: requirement).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "heist/heist.hpp"

using heist::blocked_range;

namespace {
using range_t = blocked_range<std::size_t>;

std::uint64_t serial_sum_squares(std::size_t n) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < n; ++i)
    s += i * i % 1000003;
  return s;
}

template <class P>
std::uint64_t sum_squares(heist::executor& ex, std::size_t n, std::size_t grain, P&& p) {
  return heist::parallel_reduce(
      ex, range_t(0, n, grain), std::uint64_t{0},
      [](const range_t& r, std::uint64_t acc) {
        for (std::size_t i = r.begin(); i != r.end(); ++i)
          acc += i * i % 1000003;
        return acc;
      },
      [](std::uint64_t a, std::uint64_t b) { return a + b; }, p);
}
}  // namespace

TEST(ParallelReduce, EqualsTheSerialResultForEveryPartitioner) {
  heist::executor ex(3);
  heist::affinity_partitioner ap;
  for (std::size_t n : {0u, 1u, 2u, 97u, 10007u, 1000003u}) {
    const std::uint64_t expected = serial_sum_squares(n);
    EXPECT_EQ(sum_squares(ex, n, 1, heist::auto_partitioner{}), expected) << n;
    EXPECT_EQ(sum_squares(ex, n, 16, heist::simple_partitioner{}), expected) << n;
    EXPECT_EQ(sum_squares(ex, n, 1, heist::static_partitioner{}), expected) << n;
    EXPECT_EQ(sum_squares(ex, n, 1, ap), expected) << n;
  }
}

TEST(ParallelReduce, EmptyRangeReturnsIdentity) {
  heist::executor ex(2);
  const int r = heist::parallel_reduce(
      ex, blocked_range<int>(5, 5), 42, [](const blocked_range<int>&, int) { return 0; },
      [](int a, int b) { return a + b; });
  EXPECT_EQ(r, 42);
  const int rev = heist::parallel_deterministic_reduce(
      ex, blocked_range<int>(9, 1), -7, [](const blocked_range<int>&, int) { return 0; },
      [](int a, int b) { return a + b; });
  EXPECT_EQ(rev, -7);
}

TEST(ParallelReduce, JoinsInIndexOrder) {
  // String concatenation is associative but not commutative: any out-of-order join shows.
  heist::executor ex(3);
  const int n = 3000;
  std::string expected;
  for (int i = 0; i < n; ++i)
    expected += std::to_string(i) + ",";
  auto body = [](const blocked_range<int>& r, std::string acc) {
    for (int i = r.begin(); i != r.end(); ++i)
      acc += std::to_string(i) + ",";
    return acc;
  };
  auto join = [](std::string a, std::string b) { return a + b; };
  heist::affinity_partitioner ap;
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(heist::parallel_reduce(ex, blocked_range<int>(0, n), std::string(), body, join),
              expected);
    EXPECT_EQ(heist::parallel_reduce(ex, blocked_range<int>(0, n, 7), std::string(), body, join,
                                     heist::simple_partitioner{}),
              expected);
    EXPECT_EQ(heist::parallel_reduce(ex, blocked_range<int>(0, n), std::string(), body, join,
                                     heist::static_partitioner{}),
              expected);
    EXPECT_EQ(heist::parallel_reduce(ex, blocked_range<int>(0, n), std::string(), body, join, ap),
              expected);
    EXPECT_EQ(heist::parallel_deterministic_reduce(ex, blocked_range<int>(0, n, 5), std::string(),
                                                   body, join),
              expected);
  }
}

TEST(ParallelReduce, DeterministicReduceIsBitIdenticalAcrossThreadCounts) {
  // A floating-point sum whose value depends on the association order.
  const std::size_t n = 200000;
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = 1.0 / static_cast<double>(i + 1) * ((i % 3) ? 1 : -1e-3);
  auto body = [&](const range_t& r, double acc) {
    for (std::size_t i = r.begin(); i != r.end(); ++i)
      acc += x[i];
    return acc;
  };
  auto join = [](double a, double b) { return a + b; };
  std::uint64_t first_bits = 0;
  bool have = false;
  for (std::size_t workers = 1; workers <= 4; ++workers) {
    heist::executor ex(workers);
    for (int run = 0; run < 3; ++run) {
      const double v =
          heist::parallel_deterministic_reduce(ex, range_t(0, n, 1000), 0.0, body, join);
      std::uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      if (!have) {
        first_bits = bits;
        have = true;
      }
      EXPECT_EQ(bits, first_bits) << workers << " workers, run " << run;
    }
  }
}

TEST(ParallelReduce, ExceptionIsRethrown) {
  heist::executor ex(2);
  auto bad = [](const range_t& r, long acc) {
    if (r.begin() <= 5000 && 5000 < r.end()) throw std::domain_error("5000");
    return acc + static_cast<long>(r.size());
  };
  auto join = [](long a, long b) { return a + b; };
  EXPECT_THROW(heist::parallel_reduce(ex, range_t(0, 100000), 0L, bad, join), std::domain_error);
  EXPECT_THROW(heist::parallel_reduce(ex, range_t(0, 100000, 100), 0L, bad, join,
                                      heist::simple_partitioner{}),
               std::domain_error);
  EXPECT_THROW(heist::parallel_deterministic_reduce(ex, range_t(0, 100000, 100), 0L, bad, join),
               std::domain_error);
  // The executor is fine afterwards.
  EXPECT_EQ(heist::parallel_reduce(
                ex, range_t(0, 1000), 0L,
                [](const range_t& r, long acc) { return acc + static_cast<long>(r.size()); }, join),
            1000);
}

TEST(ParallelReduce, NestedReductions) {
  heist::executor ex(2);
  const long total = heist::parallel_reduce(
      ex, blocked_range<int>(0, 100), 0L,
      [](const blocked_range<int>& r, long acc) {
        for (int i = r.begin(); i != r.end(); ++i) {
          acc += heist::parallel_reduce(
              blocked_range<int>(0, 1000), 0L,
              [](const blocked_range<int>& s, long a) { return a + static_cast<long>(s.size()); },
              [](long a, long b) { return a + b; });
        }
        return acc;
      },
      [](long a, long b) { return a + b; });
  EXPECT_EQ(total, 100L * 1000L);
}
