// parallel_for_each and its feeder (kind: requirement): every item exactly once for every
// iterator category, fed items run in the same call, exceptions, executor and task_arena
// overloads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <forward_list>
#include <iterator>
#include <list>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "heist/heist.hpp"

TEST(ParallelForEach, VisitsEveryItemOnceForEachIteratorCategory) {
  const int n = 20'000;
  std::vector<int> vec(n, 0);
  heist::parallel_for_each(vec.begin(), vec.end(), [](int& x) { ++x; });
  for (int x : vec)
    ASSERT_EQ(x, 1);
  std::list<int> list(n, 0);
  heist::parallel_for_each(list.begin(), list.end(), [](int& x) { ++x; });
  for (int x : list)
    ASSERT_EQ(x, 1);
  std::forward_list<int> flist(n, 0);
  heist::parallel_for_each(flist, [](int& x) { ++x; });
  for (int x : flist)
    ASSERT_EQ(x, 1);
  std::stringstream in;
  for (int i = 1; i <= n; ++i)
    in << i << ' ';
  std::vector<std::atomic<int>> seen(n + 1);
  heist::parallel_for_each(std::istream_iterator<int>(in), std::istream_iterator<int>(),
                           [&](int x) { seen[x].fetch_add(1); });
  for (int i = 1; i <= n; ++i)
    ASSERT_EQ(seen[i].load(), 1) << i;
}

TEST(ParallelForEach, FedItemsRunInTheSameCallAndMayFeedMore) {
  // A complete binary tree of depth 14 found through the feeder, from a list (forward) and
  // from a vector (random access) of two roots: every node exactly once.
  struct node {
    int depth;
    int id;
  };
  const int depth = 14;
  const int per_root = (1 << (depth + 1)) - 1;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::atomic<std::uint8_t>> seen(2 * per_root);
    auto visit = [&](const node& x, heist::feeder<node>& feed) {
      seen[static_cast<std::size_t>(x.id)].fetch_add(1);
      if (x.depth < depth) {
        const int base = x.id - x.id % per_root;
        const int local = x.id % per_root;
        feed.add(node{x.depth + 1, base + 2 * local + 1});
        const node right{x.depth + 1, base + 2 * local + 2};
        feed.add(right);
      }
    };
    if (round == 0) {
      std::vector<node> roots{{0, 0}, {0, per_root}};
      heist::parallel_for_each(roots.begin(), roots.end(), visit);
    } else {
      std::list<node> roots{{0, 0}, {0, per_root}};
      heist::parallel_for_each(roots.begin(), roots.end(), visit);
    }
    for (std::size_t i = 0; i < seen.size(); ++i)
      ASSERT_EQ(seen[i].load(), 1) << "node " << i << " round " << round;
  }
}

TEST(ParallelForEach, ALongChainOfFedItemsDoesNotGrowTheStack) {
  std::atomic<int> count{0};
  std::vector<int> start{0};
  heist::parallel_for_each(start.begin(), start.end(), [&](int x, heist::feeder<int>& feed) {
    count.fetch_add(1);
    if (x < 100'000) feed.add(x + 1);
  });
  EXPECT_EQ(count.load(), 100'001);
}

TEST(ParallelForEach, AnExceptionCancelsTheRestAndIsRethrown) {
  heist::executor ex(2);
  std::vector<int> v(100'000);
  std::atomic<int> ran{0};
  EXPECT_THROW(heist::parallel_for_each(ex, v.begin(), v.end(),
                                        [&](int, heist::feeder<int>& feed) {
                                          if (ran.fetch_add(1) == 10) {
                                            throw std::runtime_error("item");
                                          }
                                          feed.add(1);
                                        }),
               std::runtime_error);
  EXPECT_LT(ran.load(), 200'000);
  std::list<int> l(1000, 0);
  EXPECT_THROW(heist::parallel_for_each(ex, l, [](int) { throw std::logic_error("list"); }),
               std::logic_error);
}

TEST(ParallelForEach, RunsOnTheGivenExecutorAndTaskArena) {
  // The task_arena admits two threads: no more than two distinct threads run its items.
  heist::executor ex(3);
  heist::task_arena ta(2, ex);
  std::mutex lock;
  std::set<std::thread::id> in_ex, in_ta;
  std::atomic<int> sum_ex{0}, sum_ta{0};
  std::list<int> l(20'000, 1);
  heist::parallel_for_each(ex, l.begin(), l.end(), [&](int x) {
    sum_ex.fetch_add(x);
    std::lock_guard<std::mutex> hold(lock);
    in_ex.insert(std::this_thread::get_id());
  });
  heist::parallel_for_each(ta, l, [&](int x) {
    sum_ta.fetch_add(x);
    std::lock_guard<std::mutex> hold(lock);
    in_ta.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(sum_ex.load(), 20'000);
  EXPECT_EQ(sum_ta.load(), 20'000);
  EXPECT_LE(in_ex.size(), 4u);
  EXPECT_LE(in_ta.size(), 2u);
}
