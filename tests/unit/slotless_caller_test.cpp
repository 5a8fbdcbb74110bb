// Every algorithm called by a thread outside the pool that finds no slot to lease (kind:
// unit). An outside caller normally leases one of the executor's leasable slots for the call;
// when all of them are taken (other outside threads in run_and_wait, waits or loops), it runs
// its part without a deque of its own: its spawns go through the injection queue, its loop
// gives pieces while anyone is idle (loop_demand), and it helps or waits without a slot. A
// coverage look (issue 13, thirty-eighth round) found none of these paths run by a test; the
// slotless helper's steal count had crashed the round before. Each test proves every item
// ran exactly once and the results are right.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <latch>
#include <numeric>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

using heist::blocked_range;

namespace {

// Runs `call` on a thread of its own while every leasable slot of `ex` is held, so that the
// thread finds none; the worker stays free to take the work the call gives away.
template <class Call>
void call_without_a_slot(heist::executor& ex, Call call) {
  std::latch occupied(heist_test::k_leasable_slots), release(1);
  heist_test::leasable_slots_held held(ex, occupied, release);
  occupied.wait();
  std::thread caller(call);
  caller.join();
  held.open_and_join();
}

// A binary tree of nested groups over [lo, hi): each leaf marks its index.
void mark_leaves(std::vector<std::atomic<int>>& marks, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) {
    marks[lo].fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  heist::task_group g;
  g.run([&marks, lo, mid] { mark_leaves(marks, lo, mid); });
  mark_leaves(marks, mid, hi);
  g.wait();
}

// Each index of [0, n) marked once by `body`; true if every mark is exactly 1.
bool each_once(const std::vector<std::atomic<int>>& marks) {
  for (const auto& m : marks)
    if (m.load() != 1) return false;
  return true;
}

}  // namespace

TEST(SlotlessCaller, RunsEveryPartitionersLoopToTheEnd) {
  heist::executor ex(1);
  const int n = 20000;
  heist::affinity_partitioner ap;
  call_without_a_slot(ex, [&] {
    auto check = [&](auto&& partitioner, const char* name) {
      std::vector<std::atomic<int>> marks(n);
      heist::parallel_for(
          ex, blocked_range<int>(0, n, 16),
          [&](const blocked_range<int>& r) {
            for (int i = r.begin(); i < r.end(); ++i)
              marks[i].fetch_add(1, std::memory_order_relaxed);
          },
          partitioner);
      EXPECT_TRUE(each_once(marks)) << name;
    };
    check(heist::auto_partitioner{}, "auto");
    check(heist::simple_partitioner{}, "simple");
    check(heist::static_partitioner{}, "static");
    check(ap, "affinity");
    check(ap, "affinity, again");
    std::vector<std::atomic<int>> marks(n);
    heist::parallel_for(ex, 0, n, [&](int i) { marks[i].fetch_add(1); });
    EXPECT_TRUE(each_once(marks)) << "index form";
  });
}

TEST(SlotlessCaller, ReducesToTheRightSum) {
  heist::executor ex(1);
  const std::int64_t n = 200000;
  const std::int64_t expected = n * (n - 1) / 2;
  call_without_a_slot(ex, [&] {
    auto sum = [](const blocked_range<std::int64_t>& r, std::int64_t acc) {
      for (std::int64_t i = r.begin(); i < r.end(); ++i)
        acc += i;
      return acc;
    };
    EXPECT_EQ(heist::parallel_reduce(ex, blocked_range<std::int64_t>(0, n, 64), std::int64_t{0},
                                     sum, std::plus<>{}),
              expected);
    EXPECT_EQ(heist::parallel_reduce(ex, blocked_range<std::int64_t>(0, n, 64), std::int64_t{0},
                                     sum, std::plus<>{}, heist::static_partitioner{}),
              expected);
    EXPECT_EQ(heist::parallel_deterministic_reduce(ex, blocked_range<std::int64_t>(0, n, 64),
                                                   std::int64_t{0}, sum, std::plus<>{}),
              expected);
  });
}

TEST(SlotlessCaller, ForksAndJoinsATreeOfGroups) {
  heist::executor ex(1);
  std::vector<std::atomic<int>> marks(4096);
  call_without_a_slot(ex, [&] {
    // The root group's tasks go through the injection queue; the worker forks the rest.
    heist::task_group g(ex);
    g.run([&] { mark_leaves(marks, 0, 2048); });
    g.run([&] { mark_leaves(marks, 2048, 4096); });
    g.wait();
  });
  EXPECT_TRUE(each_once(marks));
}

TEST(SlotlessCaller, RunsAGraphAndAPipeline) {
  heist::executor ex(1);
  call_without_a_slot(ex, [&] {
    heist::task_graph graph;
    std::atomic<int> order{0}, first_at{-1}, second_at{-1};
    heist::graph_node first = graph.emplace([&] { first_at = order.fetch_add(1); });
    heist::graph_node second = graph.emplace([&] { second_at = order.fetch_add(1); });
    first.precede(second);
    graph.run_n(ex, 50).get();
    EXPECT_EQ(order.load(), 100);
    EXPECT_EQ(first_at.load(), 98);
    EXPECT_EQ(second_at.load(), 99);

    const int n = 3000;
    int next = 0;
    std::int64_t total = 0;
    std::vector<std::atomic<int>> marks(n);
    heist::parallel_pipeline(
        ex, 8,
        heist_test::numbers_below(n, next) &
            heist::make_filter<int, int>(heist::filter_mode::parallel,
                                         [&](int i) {
                                           marks[i].fetch_add(1);
                                           return i;
                                         }) &
            heist::make_filter<int, void>(heist::filter_mode::serial_out_of_order,
                                          [&](int i) { total += i; }));
    EXPECT_TRUE(each_once(marks));
    EXPECT_EQ(total, std::int64_t{n} * (n - 1) / 2);
  });
}
