// parallel_pipeline: orders of the three filter modes, the token limit,
// stop(), exceptions, errors, the calling thread taking part, parking instead of blocking,
// executor and task_arena overloads, move-only and non-trivial item types.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {

void raise_peak(std::atomic<int>& peak, int now) {
  int p = peak.load();
  while (now > p && !peak.compare_exchange_weak(p, now)) {
  }
}

// Counts live instances, to prove dropped items are destroyed.
struct counted {
  static std::atomic<int> live;
  int value = 0;
  explicit counted(int v) : value(v) { live.fetch_add(1); }
  counted(const counted& o) : value(o.value) { live.fetch_add(1); }
  counted(counted&& o) noexcept : value(o.value) { live.fetch_add(1); }
  ~counted() { live.fetch_sub(1); }
};
std::atomic<int> counted::live{0};

}  // namespace

TEST(Pipeline, InOrderStagesSeeItemsInTheOrderTheFirstFilterMadeThem) {
  heist::executor ex(2);
  const int n = 2000;
  int next = 0;
  std::vector<long> out;
  heist::parallel_pipeline(ex, 8,
                           heist_test::numbers_below(n, next) &
                               heist::make_filter<int, long>(heist::filter_mode::parallel,
                                                             [](int i) {
                                                               if (i % 7 == 0)
                                                                 std::this_thread::sleep_for(
                                                                     std::chrono::microseconds(50));
                                                               return static_cast<long>(i) * i;
                                                             }) &
                               heist::make_filter<long, void>(heist::filter_mode::serial_in_order,
                                                              [&](long v) { out.push_back(v); }));
  ASSERT_EQ(out.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], static_cast<long>(i) * i) << i;
}

TEST(Pipeline, SerialOutOfOrderRunsOneAtATimeAndSeesEveryItemOnce) {
  heist::executor ex(2);
  const int n = 3000;
  int next = 0;
  std::atomic<int> active{0}, peak{0};
  std::vector<int> seen(n, 0);
  heist::parallel_pipeline(
      ex, 16,
      heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                    [&](heist::flow_control& fc) {
                                      if (next == n) fc.stop();
                                      return next++;
                                    }) &
          heist::make_filter<int, int>(heist::filter_mode::parallel, [](int i) { return i; }) &
          heist::make_filter<int, void>(heist::filter_mode::serial_out_of_order, [&](int i) {
            raise_peak(peak, active.fetch_add(1) + 1);
            ++seen[i];  // unsynchronized on purpose: serial filters need no lock (TSan checks)
            active.fetch_sub(1);
          }));
  EXPECT_EQ(peak.load(), 1);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(seen[i], 1) << i;
}

TEST(Pipeline, AtMostMaxLiveTokensItemsAreInFlight) {
  heist::executor ex(4);
  for (std::size_t tokens : {1u, 2u, 5u}) {
    std::atomic<int> in_flight{0}, peak{0};
    int next = 0;
    std::atomic<int> finished{0};
    heist::parallel_pipeline(
        ex, tokens,
        heist::make_filter<void, int>(heist::filter_mode::serial_in_order, [&](heist::flow_control&
                                                                                   fc) {
          if (next == 500) {
            fc.stop();
            return 0;
          }
          raise_peak(peak, in_flight.fetch_add(1) + 1);
          return next++;
        }) & heist::make_filter<int, int>(heist::filter_mode::parallel, [](int i) {
          std::this_thread::sleep_for(std::chrono::microseconds(20));
          return i;
        }) & heist::make_filter<int, void>(heist::filter_mode::parallel, [&](int) {
          in_flight.fetch_sub(1);
          finished.fetch_add(1);
        }));
    EXPECT_EQ(finished.load(), 500);
    EXPECT_LE(peak.load(), static_cast<int>(tokens)) << tokens << " tokens";
    EXPECT_GE(peak.load(), 1);
  }
}

TEST(Pipeline, StopEndsTheInputAndDiscardsWhatThatCallReturned) {
  heist::executor ex(2);
  int calls = 0;
  std::vector<int> out;
  heist::parallel_pipeline(ex, 4,
                           heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                                         [&](heist::flow_control& fc) {
                                                           ++calls;
                                                           if (calls > 10) fc.stop();
                                                           return calls;
                                                         }) &
                               heist::make_filter<int, void>(heist::filter_mode::serial_in_order,
                                                             [&](int v) { out.push_back(v); }));
  EXPECT_EQ(calls, 11);
  ASSERT_EQ(out.size(), 10u);
  EXPECT_EQ(out.back(), 10);
}

TEST(Pipeline, ASingleFilterPipelineRunsUntilStopped) {
  heist::executor ex(2);
  int calls = 0;
  heist::parallel_pipeline(ex, 3,
                           heist::make_filter<void, void>(heist::filter_mode::serial_in_order,
                                                          [&](heist::flow_control& fc) {
                                                            if (++calls == 100) fc.stop();
                                                          }));
  EXPECT_EQ(calls, 100);
}

TEST(Pipeline, AnExceptionStopsTheInputDropsItemsAndIsRethrown) {
  heist::executor ex(2);
  std::atomic<int> made{0}, reached_last{0};
  try {
    heist::parallel_pipeline(
        ex, 8,
        heist::make_filter<void, counted>(
            heist::filter_mode::serial_in_order,
            [&](heist::flow_control&) { return counted(made.fetch_add(1)); }) &
            heist::make_filter<counted, counted>(heist::filter_mode::parallel,
                                                 [](counted c) {
                                                   if (c.value == 100)
                                                     throw std::runtime_error("item 100");
                                                   return c;
                                                 }) &
            heist::make_filter<counted, void>(heist::filter_mode::serial_in_order,
                                              [&](counted) { reached_last.fetch_add(1); }));
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 100");
  }
  EXPECT_LE(reached_last.load(), 100);  // in order: nothing after item 100
  EXPECT_LT(made.load(), 100 + 8 + 1);  // the input stopped within a window of tokens
  EXPECT_EQ(counted::live.load(), 0);   // every dropped item was destroyed
}

TEST(Pipeline, ExceptionsInTheFirstAndLastFiltersAreRethrown) {
  heist::executor ex(2);
  EXPECT_THROW(
      heist::parallel_pipeline(ex, 2,
                               heist::make_filter<void, void>(
                                   heist::filter_mode::serial_in_order,
                                   [](heist::flow_control&) { throw std::length_error("first"); })),
      std::length_error);
  int next = 0;
  EXPECT_THROW(heist::parallel_pipeline(
                   ex, 4,
                   heist::make_filter<void, int>(heist::filter_mode::serial_out_of_order,
                                                 [&](heist::flow_control&) { return next++; }) &
                       heist::make_filter<int, void>(heist::filter_mode::serial_out_of_order,
                                                     [](int i) {
                                                       if (i == 50)
                                                         throw std::overflow_error("last");
                                                     })),
               std::overflow_error);
}

TEST(Pipeline, BadArgumentsAreRefused) {
  heist::executor ex(2);
  auto f = heist::make_filter<void, void>(heist::filter_mode::parallel,
                                          [](heist::flow_control& fc) { fc.stop(); });
  try {
    heist::parallel_pipeline(ex, 0, f);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_live_tokens"), std::string::npos);
  }
  EXPECT_THROW(heist::parallel_pipeline(ex, 4, heist::filter<void, void>{}), std::invalid_argument);
  // A filter that takes no flow_control cannot start a pipeline.
  auto no_fc = heist::make_filter<void, void>(heist::filter_mode::parallel, [] {});
  EXPECT_THROW(heist::parallel_pipeline(ex, 4, no_fc), std::invalid_argument);
}

TEST(Pipeline, TheCallingThreadTakesPart) {
  // The executor's only worker is busy until the pipeline is over: the caller runs it all.
  heist::executor ex(1);
  std::atomic<bool> release{false}, busy{false};
  ex.post([&] {
    busy = true;
    heist_test::eventually([&] { return release.load(); }, std::chrono::seconds(60));
  });
  ASSERT_TRUE(heist_test::eventually([&] { return busy.load(); }));
  int next = 0;
  long sum = 0;
  heist::parallel_pipeline(
      ex, 4,
      heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                    [&](heist::flow_control& fc) {
                                      if (next == 1000) fc.stop();
                                      return next++;
                                    }) &
          heist::make_filter<int, int>(heist::filter_mode::parallel, [](int i) { return 2 * i; }) &
          heist::make_filter<int, void>(heist::filter_mode::serial_in_order,
                                        [&](int v) { sum += v; }));
  EXPECT_EQ(sum, 999L * 1000);
  release = true;
  ex.wait_idle();
}

TEST(Pipeline, AnItemWaitingForItsTurnDoesNotBlockAThread) {
  // Item 0 is slow in the parallel filter; items 1.. wait for it at the in-order filter.
  // They are parked, so threads stay free: a task posted meanwhile runs before item 0 is
  // done (were they blocked, all three threads would be stuck until it is).
  heist::executor ex(2);
  std::atomic<bool> slow_done{false}, other_ran_before{false}, slow_started{false};
  int next = 0;
  std::vector<int> out;
  std::thread poster([&] {
    heist_test::eventually([&] { return slow_started.load(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ex.post([&] { other_ran_before = !slow_done.load(); });
  });
  heist::parallel_pipeline(ex, 6,
                           heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                                         [&](heist::flow_control& fc) {
                                                           if (next == 6) fc.stop();
                                                           return next++;
                                                         }) &
                               heist::make_filter<int, int>(heist::filter_mode::parallel,
                                                            [&](int i) {
                                                              if (i == 0) {
                                                                slow_started = true;
                                                                std::this_thread::sleep_for(
                                                                    std::chrono::milliseconds(300));
                                                                slow_done = true;
                                                              }
                                                              return i;
                                                            }) &
                               heist::make_filter<int, void>(heist::filter_mode::serial_in_order,
                                                             [&](int v) { out.push_back(v); }));
  poster.join();
  ex.wait_idle();
  EXPECT_TRUE(other_ran_before.load());
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Pipeline, ExecutorAndTaskArenaOverloads) {
  heist::executor ex(4);
  heist::task_arena arena(2, ex);
  std::atomic<int> active{0}, peak{0};
  int next = 0;
  std::atomic<int> done{0};
  heist::parallel_pipeline(
      arena, 16,
      heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                    [&](heist::flow_control& fc) {
                                      if (next == 200) fc.stop();
                                      return next++;
                                    }) &
          heist::make_filter<int, void>(heist::filter_mode::parallel, [&](int) {
            raise_peak(peak, active.fetch_add(1) + 1);
            std::this_thread::sleep_for(std::chrono::microseconds(100));
            active.fetch_sub(1);
            done.fetch_add(1);
          }));
  EXPECT_EQ(done.load(), 200);
  EXPECT_LE(peak.load(), 2);
  // Inside a task of `ex`, the plain overload uses the current executor.
  const int total =
      ex.submit([] {
          int k = 0, s = 0;
          heist::parallel_pipeline(
              3, heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                               [&](heist::flow_control& fc) {
                                                 if (k == 10) fc.stop();
                                                 return k++;
                                               }) &
                     heist::make_filter<int, void>(heist::filter_mode::serial_in_order,
                                                   [&](int v) { s += v; }));
          return s;
        }).get();
  EXPECT_EQ(total, 45);
}

TEST(Pipeline, MoveOnlyAndGrowingItemTypes) {
  heist::executor ex(2);
  int next = 0;
  std::vector<std::string> out;
  heist::parallel_pipeline(
      ex, 4,
      heist::make_filter<void, std::unique_ptr<int>>(heist::filter_mode::serial_in_order,
                                                     [&](heist::flow_control& fc) {
                                                       if (next == 50) fc.stop();
                                                       return std::make_unique<int>(next++);
                                                     }) &
          heist::make_filter<std::unique_ptr<int>, std::string>(
              heist::filter_mode::parallel,
              [](std::unique_ptr<int> p) {
                return std::string(static_cast<std::size_t>(*p), 'x');
              }) &
          heist::make_filter<std::string, void>(
              heist::filter_mode::serial_in_order,
              [&](std::string s) { out.push_back(std::move(s)); }));
  ASSERT_EQ(out.size(), 50u);
  for (std::size_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i].size(), i);
}
