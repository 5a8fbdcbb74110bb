// parallel_scan (kind: requirement): equal to a serial inclusive scan for any size and grain,
// every output written exactly once, a non-commutative combine, exceptions, overloads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "heist/heist.hpp"

using range_t = heist::blocked_range<std::size_t>;

namespace {

// Scans v into out with parallel_scan on `ex`; counts the writes of each output.
std::uint64_t scan_sums(heist::executor& ex, const std::vector<std::uint64_t>& v,
                        std::vector<std::uint64_t>& out, std::vector<std::atomic<int>>& writes,
                        std::size_t grain) {
  return heist::parallel_scan(
      ex, range_t(0, v.size(), grain), std::uint64_t{0},
      [&](const range_t& r, std::uint64_t running, bool is_final) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          running += v[i];
          if (is_final) {
            out[i] = running;
            writes[i].fetch_add(1, std::memory_order_relaxed);
          }
        }
        return running;
      },
      [](std::uint64_t a, std::uint64_t b) { return a + b; });
}

}  // namespace

TEST(ParallelScan, EqualsTheSerialScanAndWritesEachOutputOnce) {
  for (std::size_t workers : {1u, 2u, 4u}) {
    heist::executor ex(workers);
    for (std::size_t n : {0u, 1u, 2u, 7u, 1000u, 100'003u}) {
      for (std::size_t grain : {1u, 16u, 5000u}) {
        std::vector<std::uint64_t> v(n);
        for (std::size_t i = 0; i < n; ++i)
          v[i] = (i * 2654435761u) % 1000;
        std::vector<std::uint64_t> out(n, ~std::uint64_t{0});
        std::vector<std::atomic<int>> writes(n);
        const std::uint64_t total = scan_sums(ex, v, out, writes, grain);
        std::uint64_t running = 0;
        for (std::size_t i = 0; i < n; ++i) {
          running += v[i];
          ASSERT_EQ(out[i], running) << "i=" << i << " n=" << n << " grain=" << grain;
          ASSERT_EQ(writes[i].load(), 1) << "i=" << i << " n=" << n << " grain=" << grain;
        }
        EXPECT_EQ(total, running);
      }
    }
  }
}

TEST(ParallelScan, ANonCommutativeCombineKeepsTheOrder) {
  // Concatenation is associative, not commutative: the prefixes must come out in order.
  heist::executor ex(3);
  const std::size_t n = 3000;
  std::vector<std::string> out(n);
  const std::string total = heist::parallel_scan(
      ex, range_t(0, n, 10), std::string(),
      [&](const range_t& r, std::string running, bool is_final) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          running += static_cast<char>('a' + i % 26);
          if (is_final)
            out[i] = std::to_string(running.size()) + running.substr(running.size() - 1);
        }
        return running;
      },
      [](const std::string& a, const std::string& b) { return a + b; });
  std::string expected;
  for (std::size_t i = 0; i < n; ++i) {
    expected += static_cast<char>('a' + i % 26);
    ASSERT_EQ(out[i], std::to_string(i + 1) + expected.substr(i)) << i;
  }
  EXPECT_EQ(total, expected);
}

TEST(ParallelScan, AnEmptyRangeReturnsTheIdentity) {
  EXPECT_EQ(heist::parallel_scan(
                range_t(5, 5), 42, [](const range_t&, int running, bool) { return running + 1; },
                [](int a, int b) { return a + b; }),
            42);
}

TEST(ParallelScan, AnExceptionIsRethrown) {
  heist::executor ex(2);
  EXPECT_THROW(heist::parallel_scan(
                   ex, range_t(0, 100'000, 100), 0,
                   [](const range_t& r, int running, bool) {
                     if (r.begin() <= 77'777 && 77'777 < r.end()) throw std::runtime_error("scan");
                     return running + static_cast<int>(r.size());
                   },
                   [](int a, int b) { return a + b; }),
               std::runtime_error);
}

TEST(ParallelScan, RunsInATaskArena) {
  heist::executor ex(3);
  heist::task_arena ta(2, ex);
  std::vector<int> out(50'000);
  const int total = heist::parallel_scan(
      ta, range_t(0, out.size(), 100), 0,
      [&](const range_t& r, int running, bool is_final) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          ++running;
          if (is_final) out[i] = running;
        }
        return running;
      },
      [](int a, int b) { return a + b; });
  EXPECT_EQ(total, 50'000);
  for (std::size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], static_cast<int>(i + 1));
}
