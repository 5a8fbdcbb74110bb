// parallel_pipeline under load: a million items, many short pipelines with random modes and
// token counts, failures at random items. Counts prove every item passed every filter once,
// orders prove in-order filters kept the input's order. HEIST_STRESS_SCALE scales the sizes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {

heist::filter_mode mode_of(unsigned k) {
  switch (k % 3) {
    case 0:
      return heist::filter_mode::serial_in_order;
    case 1:
      return heist::filter_mode::serial_out_of_order;
    default:
      return heist::filter_mode::parallel;
  }
}

struct tracked {
  static std::atomic<long> live;
  long value;
  explicit tracked(long v) : value(v) { live.fetch_add(1, std::memory_order_relaxed); }
  tracked(const tracked& o) : value(o.value) { live.fetch_add(1, std::memory_order_relaxed); }
  ~tracked() { live.fetch_sub(1, std::memory_order_relaxed); }
};
std::atomic<long> tracked::live{0};

}  // namespace

TEST(PipelineStress, AMillionItemsInOrderThroughAParallelMiddle) {
  heist::executor ex(2);
  const long n = static_cast<long>(heist_test::scaled(1000000));
  long next = 0;
  long expected_next = 0;
  long out_of_order = 0;
  std::atomic<long> middle{0};
  heist::parallel_pipeline(
      ex, 16,
      heist::make_filter<void, long>(heist::filter_mode::serial_in_order,
                                     [&](heist::flow_control& fc) {
                                       if (next == n) fc.stop();
                                       return next++;
                                     }) &
          heist::make_filter<long, long>(heist::filter_mode::parallel,
                                         [&](long v) {
                                           middle.fetch_add(1, std::memory_order_relaxed);
                                           return v * 3;
                                         }) &
          heist::make_filter<long, void>(heist::filter_mode::serial_in_order, [&](long v) {
            if (v != expected_next * 3) ++out_of_order;
            ++expected_next;
          }));
  EXPECT_EQ(expected_next, n);
  EXPECT_EQ(middle.load(), n);
  EXPECT_EQ(out_of_order, 0);
}

TEST(PipelineStress, ManyShortPipelinesWithRandomModesAndTokens) {
  heist::executor ex(2);
  std::mt19937 rng(11);
  const int rounds = static_cast<int>(heist_test::scaled(2000));
  for (int r = 0; r < rounds; ++r) {
    const int items = 1 + static_cast<int>(rng() % 200);
    const std::size_t tokens = 1 + rng() % 8;
    const heist::filter_mode m1 = mode_of(rng()), m2 = mode_of(rng()), m3 = mode_of(rng());
    int next = 0;
    std::vector<std::atomic<int>> passes(static_cast<std::size_t>(items));
    std::vector<int> order2, order3;
    std::atomic<long> active2{0};
    bool serial_overlap = false;
    heist::parallel_pipeline(ex, tokens,
                             heist::make_filter<void, int>(m1, [&](heist::flow_control& fc) {
                               if (next == items) fc.stop();
                               return next++;
                             }) & heist::make_filter<int, int>(m2, [&](int i) {
                               if (m2 != heist::filter_mode::parallel) {
                                 if (active2.fetch_add(1) != 0) serial_overlap = true;
                                 order2.push_back(i);
                                 active2.fetch_sub(1);
                               }
                               passes[static_cast<std::size_t>(i)].fetch_add(1);
                               return i;
                             }) & heist::make_filter<int, void>(m3, [&](int i) {
                               if (m3 != heist::filter_mode::parallel) order3.push_back(i);
                               passes[static_cast<std::size_t>(i)].fetch_add(1);
                             }));
    ASSERT_FALSE(serial_overlap) << "round " << r;
    for (int i = 0; i < items; ++i)
      ASSERT_EQ(passes[static_cast<std::size_t>(i)].load(), 2) << "round " << r << " item " << i;
    auto in_order = [](const std::vector<int>& v) {
      for (std::size_t i = 0; i < v.size(); ++i)
        if (v[i] != static_cast<int>(i)) return false;
      return true;
    };
    if (m2 == heist::filter_mode::serial_in_order) ASSERT_TRUE(in_order(order2)) << "round " << r;
    if (m3 == heist::filter_mode::serial_in_order) ASSERT_TRUE(in_order(order3)) << "round " << r;
  }
}

TEST(PipelineStress, FailuresAtRandomItemsDestroyEveryDroppedItem) {
  heist::executor ex(2);
  std::mt19937 rng(5);
  const int rounds = static_cast<int>(heist_test::scaled(500));
  for (int r = 0; r < rounds; ++r) {
    const long fail_at = static_cast<long>(rng() % 300);
    long next = 0;
    bool threw = false;
    try {
      heist::parallel_pipeline(
          ex, 1 + rng() % 10,
          heist::make_filter<void, tracked>(heist::filter_mode::serial_in_order,
                                            [&](heist::flow_control&) { return tracked(next++); }) &
              heist::make_filter<tracked, tracked>(heist::filter_mode::parallel,
                                                   [&](tracked t) {
                                                     if (t.value == fail_at)
                                                       throw std::runtime_error("fail");
                                                     return t;
                                                   }) &
              heist::make_filter<tracked, void>(mode_of(rng()), [](tracked) {}));
    } catch (const std::runtime_error&) {
      threw = true;
    }
    ASSERT_TRUE(threw) << "round " << r;
    ASSERT_EQ(tracked::live.load(), 0) << "round " << r;
  }
}

// Items of about 1 us in the parallel stage: the input makes several per hop before handing
// itself on (pipeline.cpp, hop_items), as many as the tokens allow. Every token count keeps
// the input's order through the in-order output, every item passes once, and no more items
// are in flight than tokens; a failure in the first filter in the middle of a hop drops the
// items that hop had made (destroyed) and is rethrown.
TEST(PipelineStress, MiddlingItemsGoSeveralPerHopInOrderWithinTheTokenLimit) {
  heist::executor ex(2);
  const long n = static_cast<long>(heist_test::scaled(4000));
  auto spin_1us = [] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  for (std::size_t tokens : {1u, 2u, 3u, 8u, 16u}) {
    long next = 0;
    std::atomic<int> in_flight{0}, peak{0};
    std::vector<long> out;
    heist::parallel_pipeline(
        ex, tokens,
        heist::make_filter<void, long>(heist::filter_mode::serial_in_order,
                                       [&](heist::flow_control& fc) -> long {
                                         if (next == n) {
                                           fc.stop();
                                           return 0;
                                         }
                                         const int now = in_flight.fetch_add(1) + 1;
                                         for (int p = peak.load();
                                              now > p && !peak.compare_exchange_weak(p, now);) {
                                         }
                                         return next++;
                                       }) &
            heist::make_filter<long, long>(heist::filter_mode::parallel,
                                           [&](long v) {
                                             spin_1us();
                                             return v * 3;
                                           }) &
            heist::make_filter<long, void>(heist::filter_mode::serial_in_order, [&](long v) {
              out.push_back(v);
              in_flight.fetch_sub(1);
            }));
    ASSERT_EQ(out.size(), static_cast<std::size_t>(n)) << tokens << " tokens";
    for (long i = 0; i < n; ++i)
      ASSERT_EQ(out[i], 3 * i) << tokens << " tokens, item " << i;
    EXPECT_LE(peak.load(), static_cast<int>(tokens));
  }
  const long fail_at = n / 2;
  long next = 0, last_out = -1;
  bool in_order = true;
  try {
    heist::parallel_pipeline(
        ex, 16,
        heist::make_filter<void, tracked>(heist::filter_mode::serial_in_order,
                                          [&](heist::flow_control&) {
                                            if (next == fail_at) throw std::runtime_error("input");
                                            return tracked(next++);
                                          }) &
            heist::make_filter<tracked, tracked>(heist::filter_mode::parallel,
                                                 [&](tracked t) {
                                                   spin_1us();
                                                   return t;
                                                 }) &
            heist::make_filter<tracked, void>(heist::filter_mode::serial_in_order, [&](tracked t) {
              in_order = in_order && t.value == last_out + 1;
              last_out = t.value;
            }));
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "input");
  }
  EXPECT_TRUE(in_order);
  EXPECT_LT(last_out, fail_at);
  EXPECT_EQ(tracked::live.load(), 0);
}
