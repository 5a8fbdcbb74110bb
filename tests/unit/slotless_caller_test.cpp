// Every algorithm called by a thread outside the pool that finds no slot to lease (kind:
// unit). An outside caller normally leases one of the executor's leasable slots for the call;
// when all of them are taken (other outside threads in run_and_wait, waits or loops), it runs
// its part without a deque of its own: its spawns go through the injection queue, its loop
// gives pieces while anyone is idle (loop_demand), and it helps or waits without a slot. A
// coverage look found none of these paths run by a test; the
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

}  // namespace

TEST(SlotlessCaller, RunsEveryPartitionersLoopToTheEnd) {
  heist::executor ex(1);
  const int n = 20000;
  heist::affinity_partitioner ap;
  call_without_a_slot(ex, [&] {
    auto check = [&](auto&& partitioner, const char* name) {
      heist_test::exactly_once once(n);
      heist::parallel_for(
          ex, blocked_range<int>(0, n, 16),
          [&](const blocked_range<int>& r) {
            for (int i = r.begin(); i < r.end(); ++i)
              once.hit(i);
          },
          partitioner);
      EXPECT_EQ(once.wrong(), 0u) << name;
    };
    check(heist::auto_partitioner{}, "auto");
    check(heist::simple_partitioner{}, "simple");
    check(heist::static_partitioner{}, "static");
    check(ap, "affinity");
    check(ap, "affinity, again");
    heist_test::exactly_once once(n);
    heist::parallel_for(ex, 0, n, [&](int i) { once.hit(i); });
    EXPECT_EQ(once.wrong(), 0u) << "index form";
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
  heist_test::exactly_once once(4096);
  call_without_a_slot(ex, [&] {
    // The root group's tasks go through the injection queue; the worker forks the rest.
    heist::task_group g(ex);
    g.run([&] { heist_test::split_leaves(once, 0, 2048); });
    g.run([&] { heist_test::split_leaves(once, 2048, 4096); });
    g.wait();
  });
  EXPECT_EQ(once.wrong(), 0u);
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
    heist_test::exactly_once once(n);
    heist::parallel_pipeline(
        ex, 8,
        heist_test::numbers_below(n, next) &
            heist::make_filter<int, int>(heist::filter_mode::parallel,
                                         [&](int i) {
                                           once.hit(i);
                                           return i;
                                         }) &
            heist::make_filter<int, void>(heist::filter_mode::serial_out_of_order,
                                          [&](int i) { total += i; }));
    EXPECT_EQ(once.wrong(), 0u);
    EXPECT_EQ(total, std::int64_t{n} * (n - 1) / 2);
  });
}
