// heist::analyze (kind: requirement): work and span of DAGs of known busy loops at 1, 2 and
// 4 workers (fork-join, loops, graphs, pipelines, futures), the report's figures and forms,
// and its errors.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <latch>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "heist/heist.hpp"

using namespace std::chrono;

namespace {

// A busy loop of d of the calling thread's CPU time (a strand of known length, preempted or
// not).
void busy(microseconds d) {
  const auto cpu = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return nanoseconds(seconds(ts.tv_sec) + nanoseconds(ts.tv_nsec));
  };
  const nanoseconds until = cpu() + d;
  while (cpu() < until) {
  }
}

double ms(nanoseconds d) {
  return static_cast<double>(d.count()) * 1e-6;
}

// Sanitizer builds run heist's own code between the hook points (which counts in the strands
// around it) several times slower: a fixed allowance there, the checks staying about the DAG.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr double k_sanitizer_ms = 3.0;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr double k_sanitizer_ms = 3.0;
#else
constexpr double k_sanitizer_ms = 0;
#endif
#else
constexpr double k_sanitizer_ms = 0;
#endif

// Within 5% of `truth` ms, plus 0.15 ms for the hooks' own clock reads.
void expect_near_ms(nanoseconds measured, double truth, double slack, const std::string& what) {
  EXPECT_NEAR(ms(measured), truth, truth * (0.05 + slack) + 0.15 + k_sanitizer_ms) << what;
}

double slack_for(std::size_t) {
  return 0.0;
}

// Extra relative allowance for shapes whose strands wake idle threads (see the loop's check).
constexpr double k_wakeups = 0.15;

}  // namespace

TEST(Analysis, KnownDagsMeasureTheirWorkAndSpanAtEveryWorkerCount) {
  for (std::size_t workers : {1u, 2u, 4u}) {
    heist::executor ex(workers);
    const double slack = slack_for(workers);
    const std::string at = " at " + std::to_string(workers) + " workers";
    // A chain: four tasks, each joined before the next.
    auto r = heist::analyze(ex, [] {
      for (int i = 0; i < 4; ++i) {
        heist::task_group g;
        g.run([] { busy(microseconds(2000)); });
        g.wait();
      }
    });
    expect_near_ms(r.work, 8, slack, "chain work" + at);
    expect_near_ms(r.span, 8, slack, "chain span" + at);
    // k independent tasks.
    r = heist::analyze(ex, [] {
      heist::task_group g;
      for (int i = 0; i < 6; ++i)
        g.run([] { busy(microseconds(2000)); });
      g.wait();
    });
    expect_near_ms(r.work, 12, slack, "independent work" + at);
    expect_near_ms(r.span, 2, slack, "independent span" + at);
    // Two unequal branches: parallelism 1.5.
    r = heist::analyze(ex, [] {
      heist::parallel_invoke([] { busy(microseconds(6000)); }, [] { busy(microseconds(3000)); });
    });
    expect_near_ms(r.work, 9, slack, "branches work" + at);
    expect_near_ms(r.span, 6, slack, "branches span" + at);
    // A binary tree of depth 3 (8 leaves of 1 ms, 1 ms in every inner node before its fork).
    struct tree {
      static void node(int depth) {
        busy(microseconds(1000));
        if (depth == 0) return;
        heist::task_group g;
        g.run([depth] { node(depth - 1); });
        node(depth - 1);
        g.wait();
      }
    };
    r = heist::analyze(ex, [] { tree::node(3); });
    expect_near_ms(r.work, 15, slack, "tree work" + at);
    expect_near_ms(r.span, 4, slack, "tree span" + at);
  }
}

TEST(Analysis, GraphsPipelinesLoopsAndFuturesAreMeasured) {
  for (std::size_t workers : {1u, 2u}) {
    heist::executor ex(workers);
    const std::string at = " at " + std::to_string(workers) + " workers";
    // A diamond: a (1 ms) before b (3 ms) and c (1 ms), both before d (1 ms).
    heist::task_graph g;
    auto a = g.emplace([] { busy(microseconds(1000)); });
    auto b = g.emplace([] { busy(microseconds(3000)); });
    auto c = g.emplace([] { busy(microseconds(1000)); });
    auto d = g.emplace([] { busy(microseconds(1000)); });
    a.precede(b, c);
    b.precede(d);
    c.precede(d);
    // Then 1 ms after the run: the run's end joins the longest path, not the last node's.
    auto r = heist::analyze(ex, [&] {
      g.run(ex).wait();
      busy(microseconds(1000));
    });
    expect_near_ms(r.work, 7, 0, "diamond work" + at);
    expect_near_ms(r.span, 6, 0, "diamond span" + at);
    // A loop of 40 iterations of 250 us: work 10 ms; the span is what the partitioner made of
    // it (at least one iteration, at most the whole loop).
    r = heist::analyze(ex,
                       [] { heist::parallel_for(0, 40, [](int) { busy(microseconds(250)); }); });
    // A loop's and a future's strands hold the scheduler's wake-ups of idle threads (system
    // calls, counted as the program's work): on a loaded machine they grow, hence 20% here.
    expect_near_ms(r.work, 10, k_wakeups, "loop work" + at);
    EXPECT_GE(ms(r.span), 0.24) << at;
    EXPECT_LE(ms(r.span), 10.5) << at;
    // A future's value: the consumer's path waits for the producer.
    r = heist::analyze(ex, [&] {
      auto f = ex.submit([] { busy(microseconds(2000)); });
      busy(microseconds(500));
      f.get();
      busy(microseconds(500));
    });
    expect_near_ms(r.work, 3, k_wakeups, "future work" + at);
    expect_near_ms(r.span, 2.5, 0, "future span" + at);
    // A pipeline: 8 items through a serial stage of 500 us and a parallel one of 500 us.
    int next = 0;
    r = heist::analyze(ex, [&] {
      heist::parallel_pipeline(
          4, heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                           [&](heist::flow_control& fc) {
                                             if (next == 8) {
                                               fc.stop();
                                               return 0;
                                             }
                                             busy(microseconds(500));
                                             return next++;
                                           }) &
                 heist::make_filter<int, void>(heist::filter_mode::parallel,
                                               [](int) { busy(microseconds(500)); }));
      busy(microseconds(1000));
    });
    // The serial stage's 8 items in order, the last one's parallel stage, then 1 ms.
    expect_near_ms(r.work, 9, 0, "pipeline work" + at);
    expect_near_ms(r.span, 5.5, 0, "pipeline span" + at);
    next = 0;
  }
}

TEST(Analysis, TheReportsFiguresFollowFromWorkAndSpan) {
  heist::scalability_report r;
  r.work = milliseconds(90);
  r.span = milliseconds(60);
  r.burdened_span = milliseconds(61);
  EXPECT_DOUBLE_EQ(r.parallelism(), 1.5);
  EXPECT_DOUBLE_EQ(r.speedup_bound(1), 1.0);
  EXPECT_DOUBLE_EQ(r.speedup_bound(2), 1.5);
  EXPECT_DOUBLE_EQ(r.speedup_bound(64), 1.5);
  EXPECT_NEAR(r.burdened_parallelism(), 90.0 / 61.0, 1e-12);
  EXPECT_NEAR(r.predicted_speedup(2), 90.0 / (45.0 + 61.0), 1e-12);
  EXPECT_NEAR(r.predicted_speedup(256), 90.0 / (90.0 / 256 + 61.0), 1e-12);
  r.measured.push_back({2, 1.45});
  std::ostringstream json;
  r.write_json(json);
  EXPECT_NE(json.str().find("\"work\": 90000000"), std::string::npos) << json.str();
  EXPECT_NE(json.str().find("\"span\": 60000000"), std::string::npos);
  EXPECT_NE(json.str().find("\"parallelism\": 1.5"), std::string::npos);
  EXPECT_NE(json.str().find("\"256\":"), std::string::npos);
  EXPECT_NE(json.str().find("\"threads\": 2"), std::string::npos);
  std::ostringstream svg;
  r.write_svg(svg, 64);
  EXPECT_EQ(svg.str().rfind("<svg", 0), 0u);
  EXPECT_NE(svg.str().find("</svg>"), std::string::npos);
  EXPECT_NE(svg.str().find("<circle"), std::string::npos);  // the measured point
}

TEST(Analysis, BadArgumentsAndNestedAnalysesAreRefused) {
  heist::scalability_report r;
  EXPECT_THROW(r.predicted_speedup(0), std::invalid_argument);
  EXPECT_THROW(r.speedup_bound(0), std::invalid_argument);
  std::ostringstream out;
  EXPECT_THROW(r.write_svg(out, 1), std::invalid_argument);
  EXPECT_THROW(r.write_svg(out, 1 << 20), std::invalid_argument);
  heist::executor ex(2);
  EXPECT_THROW(heist::analyze(ex, [&] { heist::analyze(ex, [] {}); }), std::logic_error);
  // The refused inner call left the outer analysis intact, and a later one runs.
  const auto after = heist::analyze(ex, [] { busy(microseconds(1000)); });
  EXPECT_GE(ms(after.work), 0.95);
  // An exception from f ends the analysis and comes back.
  EXPECT_THROW(heist::analyze(ex, [] { throw std::runtime_error("f"); }), std::runtime_error);
  EXPECT_NO_THROW(heist::analyze(ex, [] {}));
}

TEST(Analysis, TasksLeftRunningAreNamedAsNotJoined) {
  heist::executor ex(2);
  std::atomic<bool> release{false};
  const auto r = heist::analyze(ex, [&] {
    ex.post([&] {
      while (!release.load())
        std::this_thread::yield();
    });
    busy(microseconds(2000));
  });
  release = true;
  EXPECT_GE(r.not_joined, 1u);
  ex.wait_idle();
}

TEST(Analysis, WhenAllStartsAfterItsLongestInput) {
  heist::executor ex(2);
  const auto r = heist::analyze(ex, [&] {
    auto a = ex.submit([] { busy(microseconds(3000)); });
    auto b = ex.submit([] { busy(microseconds(1000)); });
    heist::when_all(std::move(a), std::move(b)).get();
    busy(microseconds(1000));
  });
  expect_near_ms(r.work, 5, k_wakeups, "when_all work");
  expect_near_ms(r.span, 4, 0, "when_all span");
}

TEST(Analysis, AnalysesOfTwoExecutorsRunAtOnceAndOfOneAreRefused) {
  heist::executor a(1), b(1);
  // a's root blocks (no CPU time, so not its work) until b's analysis is over.
  std::atomic<bool> inside{false};
  std::latch release(1);
  heist::scalability_report ra;
  std::thread other([&] {
    ra = heist::analyze(a, [&] {
      inside = true;
      release.wait();
      heist::task_group g;
      g.run([] { busy(microseconds(2000)); });
      g.wait();
    });
  });
  while (!inside.load())
    std::this_thread::yield();
  // The same executor: refused while the other thread's analysis runs.
  EXPECT_THROW(heist::analyze(a, [] {}), std::logic_error);
  // Another executor: measured on its own, beside the first.
  const auto rb = heist::analyze(b, [] {
    heist::task_group g;
    g.run([] { busy(microseconds(3000)); });
    busy(microseconds(1000));
    g.wait();
  });
  release.count_down();
  other.join();
  expect_near_ms(rb.work, 4, 0, "b's work");
  expect_near_ms(rb.span, 3, 0, "b's span");
  expect_near_ms(ra.work, 2, 0, "a's work");
  expect_near_ms(ra.span, 2, 0, "a's span");
}

TEST(Analysis, AFutureAlreadyCompleteStillOrdersItsConsumers) {
  // The producers finish before when_all, then() and get() look at their futures: each
  // consumer still starts after its producer.
  heist::executor ex(2);
  const auto r = heist::analyze(ex, [&] {
    auto a = ex.submit([] { busy(microseconds(3000)); });
    auto b = ex.submit([] { busy(microseconds(1000)); });
    a.wait();
    b.wait();
    auto both = heist::when_all(std::move(a), std::move(b));
    both.get();
    auto c = ex.submit([] { busy(microseconds(2000)); });
    c.wait();
    c.then([] { busy(microseconds(1000)); }).get();
  });
  expect_near_ms(r.work, 7, k_wakeups, "work");
  expect_near_ms(r.span, 6, 0, "span: a, then c, then its continuation");
}
