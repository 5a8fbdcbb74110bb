// parallel_sort (kind: requirement): the result equals std::sort's for any input shape,
// comparator and size; exceptions; executor and task_arena overloads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "heist/heist.hpp"

namespace {

std::vector<int> shaped(const std::string& shape, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (shape == "random") v[i] = static_cast<int>(rng());
    if (shape == "sorted") v[i] = static_cast<int>(i);
    if (shape == "reversed") v[i] = static_cast<int>(n - i);
    if (shape == "equal") v[i] = 7;
    if (shape == "few") v[i] = static_cast<int>(rng() % 4);
    if (shape == "organ") v[i] = static_cast<int>(std::min(i, n - i));
    if (shape == "sawtooth") v[i] = static_cast<int>(i % 1000);
  }
  return v;
}

}  // namespace

TEST(ParallelSort, EqualsStdSortForEveryShapeAndSize) {
  for (const char* shape : {"random", "sorted", "reversed", "equal", "few", "organ", "sawtooth"}) {
    for (std::size_t n : {0u, 1u, 2u, 3u, 100u, 2048u, 2049u, 10'000u, 300'000u}) {
      std::vector<int> v = shaped(shape, n, n);
      std::vector<int> expected = v;
      std::sort(expected.begin(), expected.end());
      heist::parallel_sort(v.begin(), v.end());
      ASSERT_EQ(v, expected) << shape << " n=" << n;
    }
  }
}

TEST(ParallelSort, KeepsEveryElementWithAComparatorThatOrdersPartOfTheKey) {
  // Sorting pairs by .first only: the second members must all still be there (a permutation).
  std::mt19937_64 rng(3);
  std::vector<std::pair<int, int>> v(200'000);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = {static_cast<int>(rng() % 100), static_cast<int>(i)};
  heist::parallel_sort(v.begin(), v.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; }));
  std::vector<int> seconds;
  for (const auto& p : v)
    seconds.push_back(p.second);
  std::sort(seconds.begin(), seconds.end());
  for (std::size_t i = 0; i < seconds.size(); ++i)
    ASSERT_EQ(seconds[i], static_cast<int>(i));
}

TEST(ParallelSort, SortsStringsDescendingAndContainersWhole) {
  std::mt19937_64 rng(5);
  std::vector<std::string> v(100'000);
  for (auto& s : v)
    s = std::to_string(rng() >> (rng() % 60));
  std::vector<std::string> expected = v;
  std::sort(expected.begin(), expected.end(), std::greater<>{});
  heist::parallel_sort(v, std::greater<>{});
  EXPECT_EQ(v, expected);
  std::deque<double> d;
  for (int i = 0; i < 50'000; ++i)
    d.push_back(static_cast<double>((i * 7919) % 50'021));
  heist::parallel_sort(d);
  EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
  int raw[5000];
  for (int i = 0; i < 5000; ++i)
    raw[i] = (i * 31) % 5000;
  heist::parallel_sort(raw, raw + 5000);
  for (int i = 0; i < 5000; ++i)
    ASSERT_EQ(raw[i], i);
}

TEST(ParallelSort, RunsOnTheGivenExecutorAndTaskArena) {
  heist::executor ex(3);
  std::vector<int> v = shaped("random", 500'000, 9);
  std::vector<int> expected = v;
  std::sort(expected.begin(), expected.end());
  heist::parallel_sort(ex, v.begin(), v.end());
  EXPECT_EQ(v, expected);
  heist::task_arena ta(2, ex);
  v = shaped("random", 500'000, 10);
  expected = v;
  std::sort(expected.begin(), expected.end());
  heist::parallel_sort(ta, v);
  EXPECT_EQ(v, expected);
}

TEST(ParallelSort, AComparatorExceptionIsRethrownAndNoElementIsLost) {
  // The throw lands in every phase: the serial sort of a small input, the first partitions, the
  // leaves (insertion sorts included) and the last comparisons.
  heist::executor ex(2);
  for (std::size_t n : {20u, 1500u, 400'000u}) {
    const std::vector<int> before = shaped("random", n, 11 + n);
    std::vector<int> v = before;
    std::atomic<long> calls{0};
    heist::parallel_sort(ex, v.begin(), v.end(), [&](int a, int b) {
      calls.fetch_add(1, std::memory_order_relaxed);
      return a < b;
    });
    const long total = calls.load();
    std::vector<int> sorted_before = before;
    std::sort(sorted_before.begin(), sorted_before.end());
    for (long at : {0L, 1L, total / 7, total / 3, total / 2, total - total / 5, total - 10}) {
      v = before;
      calls = 0;
      EXPECT_THROW(heist::parallel_sort(ex, v.begin(), v.end(),
                                        [&](int a, int b) {
                                          if (calls.fetch_add(1, std::memory_order_relaxed) == at)
                                            throw std::runtime_error("comparator");
                                          return a < b;
                                        }),
                   std::runtime_error)
          << "n=" << n << " throw at call " << at << " of " << total;
      std::sort(v.begin(), v.end());
      ASSERT_EQ(v, sorted_before) << "n=" << n << " throw at call " << at << " of " << total;
    }
  }
}

TEST(ParallelSort, TheSerialStepsKeepEveryElementWhenTheComparatorThrows) {
  // Insertion sort and heapsort (the bound for badly partitioned pieces) on their own.
  for (int budget : {0, 40}) {
    for (std::size_t n : {2u, 15u, 16u, 17u, 600u}) {
      const std::vector<int> before = shaped("random", n, n + 100);
      std::vector<int> expected = before;
      std::sort(expected.begin(), expected.end());
      std::vector<int> v = before;
      long total = 0;
      heist::detail::sort_serial(v.begin(), v.end(), budget, [&](int a, int b) {
        ++total;
        return a < b;
      });
      ASSERT_EQ(v, expected) << "budget " << budget << " n=" << n;
      for (long at = 0; at < total; at += 1 + total / 50) {
        v = before;
        long calls = 0;
        EXPECT_THROW(heist::detail::sort_serial(v.begin(), v.end(), budget,
                                                [&](int a, int b) {
                                                  if (calls++ == at)
                                                    throw std::runtime_error("comparator");
                                                  return a < b;
                                                }),
                     std::runtime_error);
        std::sort(v.begin(), v.end());
        ASSERT_EQ(v, expected) << "budget " << budget << " n=" << n << " throw at " << at;
      }
    }
  }
}
