// The scalability analysis under races, repeated (kind: stress; also in the perturbation
// build): while an analysis runs, idle threads park after their spin rounds without yielding
// (search.cpp), every task takes the traced path and every join goes out of line. Fork-join
// trees with idle gaps (so that workers park and are woken) and posts from a thread outside
// the pool must still run every task exactly once and leave the pool idle, and a second
// analysis must find the first fully ended.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <thread>

#include "heist/heist.hpp"
#include "test_support.hpp"

using heist_test::exactly_once;
using heist_test::scaled;
using heist_test::split_leaves;

TEST(AnalysisStress, TreesWithIdleGapsRunEveryTaskOnceWhileAnalysed) {
  heist::executor ex(3);
  for (std::size_t round = 0; round < scaled(60); ++round) {
    const std::size_t leaves = 2000;
    exactly_once tree(leaves), posted(100);
    const heist::scalability_report r = heist::analyze(ex, [&] {
      split_leaves(tree, 0, leaves / 2);
      // A gap: the workers run out of work and park (no yields while analysing).
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      std::thread outside([&] {
        for (std::size_t i = 0; i < 100; ++i)
          ex.post([&posted, i] { posted.hit(i); });
      });
      split_leaves(tree, leaves / 2, leaves);
      outside.join();
    });
    ex.wait_idle();  // a lost wake-up leaves posted tasks queued: this would not return
    ASSERT_EQ(tree.wrong(), 0u) << "round " << round;
    ASSERT_EQ(posted.wrong(), 0u) << "round " << round;
    ASSERT_GT(r.strands, leaves) << "round " << round;
    ASSERT_GE(r.work.count(), r.span.count()) << "round " << round;
  }
}
