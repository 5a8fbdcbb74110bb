// heist-bench's note on slow samples: which samples count as slow, how each is sorted by what
// its threads did, and that a heist row records what the sorting needs for every sample.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.hpp"
#include "workloads/fork_join.hpp"

namespace {

bench::result row(int threads, std::vector<double> samples, std::vector<double> busy,
                  std::vector<double> least_share) {
  bench::result r;
  r.workload = "w";
  r.backend = "heist";
  r.threads = threads;
  r.unit = "ms";
  r.samples = std::move(samples);
  r.stats = bench::summarize(r.samples);
  r.busy = std::move(busy);
  r.least_share = std::move(least_share);
  return r;
}

TEST(SlowSamples, ShapeFollowsBusyThenLeastShare) {
  EXPECT_EQ(bench::shape_of(0.89, 1.0), bench::sample_shape::worker_idle);
  EXPECT_EQ(bench::shape_of(0.89, 0.2), bench::sample_shape::worker_idle);
  EXPECT_EQ(bench::shape_of(0.9, 0.84), bench::sample_shape::uneven_cores);
  EXPECT_EQ(bench::shape_of(1.0, 0.85), bench::sample_shape::every_core_slower);
}

TEST(SlowSamples, EachSlowSampleIsCountedUnderItsShape) {
  // Median 10; 11.0 is exactly 1.1x and not slow; 11.5, 13, 14 and 16 are.
  std::vector<bench::result> rows{row(2, {10, 10, 10, 10, 10, 10, 11.0, 11.5, 13, 14, 16},
                                      {1, 1, 1, 1, 1, 1, 0.5, 0.99, 0.97, 0.70, 1.0},
                                      {1, 1, 1, 1, 1, 1, 0.5, 0.60, 0.55, 0.95, 0.90})};
  bench::note_slow_samples(rows);
  EXPECT_EQ(rows[0].note,
            "4 of 11 samples over 1.1x the median: a worker idle 1 (busy 0.70..0.70, least busy "
            "worker 0.95..0.95x the mean tasks), cores at different speeds 2 (busy 0.97..0.99, "
            "least busy worker 0.55..0.60x the mean tasks), every core slower 1 (busy "
            "1.00..1.00, least busy worker 0.90..0.90x the mean tasks)");
}

TEST(SlowSamples, NoNoteWithoutSlowSamplesOneThreadShapesOrBusyWorkers) {
  std::vector<bench::result> rows{
      row(2, {10, 10.5, 11, 9}, {1, 1, 1, 1}, {1, 1, 1, 1}),           // none over 1.1x
      row(1, {10, 10, 10, 20}, {1, 1, 1, 1}, {1, 1, 1, 1}),            // one thread
      row(2, {10, 10, 10, 20}, {}, {}),                                // not recorded
      row(2, {10, 10, 10, 20}, {1, 1, 1}, {1, 1, 1}),                  // not one per sample
      row(2, {10, 10, 10, 20}, {0.5, 0.5, 0.95, 1}, {1, 1, 1, 0.5})};  // workers wait by design
  bench::note_slow_samples(rows);
  for (const bench::result& r : rows)
    EXPECT_EQ(r.note, "");
}

// A heist row at two threads records busy and least_share once per timed sample, in range;
// rows with one worker or none (heist at one thread, serial) record neither. The probe reads
// the CPU clock just outside the timed call, while the workers still search, so a sample must
// be long (fib(25), about a millisecond) for that margin to stay a small part of busy.
TEST(SlowSamples, HeistRowsRecordEverySamplesShape) {
  bench::context x;
  x.cfg.threads = {1, 2};
  x.cfg.workloads = {"fib"};
  x.cfg.backends = {"heist", "serial"};
  const int reps = 5;
  bench::timed_case(x, "fork-join", "fib", "fib(25)", {{"heist", true}, {"serial", true}}, reps,
                    75025, nullptr, [](auto& b) {
                      long v = 0;
                      b.run([&] { v = bench::fib<std::decay_t<decltype(b)>>(25); });
                      return static_cast<std::uint64_t>(v);
                    });
  ASSERT_EQ(x.results.size(), 3u);  // heist at 1 and 2 threads, serial at 1
  for (const bench::result& r : x.results) {
    ASSERT_EQ(r.samples.size(), static_cast<std::size_t>(reps)) << r.backend << r.threads;
    if (r.backend == "serial" || r.threads == 1) {  // one worker: no shares to compare
      EXPECT_TRUE(r.busy.empty());
      EXPECT_TRUE(r.least_share.empty());
    } else if (r.threads == 2) {
      ASSERT_EQ(r.busy.size(), r.samples.size());
      ASSERT_EQ(r.least_share.size(), r.samples.size());
      for (std::size_t k = 0; k < r.samples.size(); ++k) {
        EXPECT_GT(r.busy[k], 0.0);
        EXPECT_LT(r.busy[k], 1.5);  // CPU time cannot exceed the threads' wall time by much
        EXPECT_GE(r.least_share[k], 0.0);
        EXPECT_LE(r.least_share[k], 1.0);  // the least can be at most the mean
      }
    }
  }
}

}  // namespace
