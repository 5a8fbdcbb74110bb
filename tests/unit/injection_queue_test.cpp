// Unit tests of the injection queue (kind: requirement, boundary).
#include <gtest/gtest.h>

#include <vector>

#include "heist/detail/core/injection_queue.hpp"

using heist::detail::injection_queue;
using heist::detail::task;

namespace {
std::vector<task> make_tasks(std::size_t n) {
  std::vector<task> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i].m_isolation.store(i, std::memory_order_relaxed);
  return v;
}
}  // namespace

TEST(InjectionQueue, EmptyPopsNothing) {
  injection_queue q(4);
  EXPECT_EQ(q.pop(0), nullptr);
  EXPECT_EQ(q.size(), 0u);
}

TEST(InjectionQueue, FifoWithinABucket) {
  injection_queue q(1);
  auto tasks = make_tasks(100);
  for (auto& t : tasks)
    q.push(&t, 0);
  EXPECT_EQ(q.size(), 100u);
  for (auto& t : tasks)
    ASSERT_EQ(q.pop(0), &t);
  EXPECT_EQ(q.pop(0), nullptr);
  EXPECT_EQ(q.size(), 0u);
  // Reusable after draining through the stub node, repeatedly.
  for (int round = 0; round < 3; ++round) {
    q.push(&tasks[round], 0);
    EXPECT_EQ(q.pop(0), &tasks[round]);
    EXPECT_EQ(q.pop(0), nullptr);
  }
}

TEST(InjectionQueue, ScansEveryBucketFromTheStart) {
  injection_queue q(4);
  auto tasks = make_tasks(4);
  for (std::size_t i = 0; i < 4; ++i)
    q.push(&tasks[i], i);
  std::vector<task*> got;
  while (task* t = q.pop(2))
    got.push_back(t);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], &tasks[2]);  // scanning starts at bucket 2
}

TEST(InjectionQueue, PopIfSkipsAndKeepsTheRest) {
  injection_queue q(1);
  auto tasks = make_tasks(10);
  for (auto& t : tasks)
    q.push(&t, 0);
  task* seven = q.pop_if(
      0, [](const task* t) { return t->m_isolation.load(std::memory_order_relaxed) == 7; });
  EXPECT_EQ(seven, &tasks[7]);
  EXPECT_EQ(q.size(), 9u);
  EXPECT_EQ(q.pop_if(0, [](const task*) { return false; }), nullptr);
  EXPECT_EQ(q.size(), 9u);
  std::vector<bool> seen(10, false);
  while (task* t = q.pop(0))
    seen[t->m_isolation.load(std::memory_order_relaxed)] = true;
  for (std::size_t i = 0; i < 10; ++i)
    EXPECT_EQ(seen[i], i != 7) << i;
}

namespace {
// The tasks of a batch's rest, in list order (m_next).
std::vector<task*> list_of(task* rest) {
  std::vector<task*> v;
  for (; rest != nullptr; rest = rest->m_next.load(std::memory_order_relaxed))
    v.push_back(rest);
  return v;
}
}  // namespace

// pop_batch takes the oldest task and up to most - 1 more, a 1/share part of the bucket
// rounded up; the rest comes back newest first (pushed in list order onto a deque, the
// oldest is popped first), and the count drops by the whole batch.
TEST(InjectionQueue, PopBatchTakesTheOldestAndAShareOfTheRestNewestFirst) {
  injection_queue q(1);
  auto tasks = make_tasks(12);
  for (auto& t : tasks)
    q.push(&t, 0);
  task* rest = nullptr;
  EXPECT_EQ(q.pop_batch(0, 4, 1, rest), &tasks[0]);  // 12 / 1 + 1 = 13, at most 4
  EXPECT_EQ(list_of(rest), (std::vector<task*>{&tasks[3], &tasks[2], &tasks[1]}));
  EXPECT_EQ(q.size(), 8u);
  rest = nullptr;
  EXPECT_EQ(q.pop_batch(0, 32, 2, rest), &tasks[4]);  // 8 / 2 + 1 = 5
  EXPECT_EQ(list_of(rest), (std::vector<task*>{&tasks[8], &tasks[7], &tasks[6], &tasks[5]}));
  EXPECT_EQ(q.size(), 3u);
  rest = nullptr;
  EXPECT_EQ(q.pop_batch(0, 32, 4, rest), &tasks[9]);  // 3 / 4 + 1 = 1: the task alone
  EXPECT_EQ(rest, nullptr);
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.pop_batch(0, 32, 1, rest), &tasks[10]);  // wants 3, two are left
  EXPECT_EQ(list_of(rest), (std::vector<task*>{&tasks[11]}));
  EXPECT_EQ(q.size(), 0u);
  rest = nullptr;
  EXPECT_EQ(q.pop_batch(0, 32, 1, rest), nullptr);
  EXPECT_EQ(rest, nullptr);
  // Still a working queue after a batch emptied it through the stub node.
  q.push(&tasks[0], 0);
  EXPECT_EQ(q.pop(0), &tasks[0]);
  EXPECT_EQ(q.pop(0), nullptr);
}

// A batch comes from one bucket, the first that has tasks from `start` on.
TEST(InjectionQueue, PopBatchTakesFromOneBucketScanningFromTheStart) {
  injection_queue q(4);
  auto tasks = make_tasks(8);
  for (std::size_t i = 0; i < 8; ++i)
    q.push(&tasks[i], i % 2 == 0 ? 1 : 3);  // even ones in bucket 1, odd ones in bucket 3
  task* rest = nullptr;
  EXPECT_EQ(q.pop_batch(2, 32, 1, rest), &tasks[1]);  // bucket 3 first
  EXPECT_EQ(list_of(rest), (std::vector<task*>{&tasks[7], &tasks[5], &tasks[3]}));
  EXPECT_EQ(q.size(), 4u);
  rest = nullptr;
  EXPECT_EQ(q.pop_batch(2, 32, 1, rest), &tasks[0]);
  EXPECT_EQ(list_of(rest), (std::vector<task*>{&tasks[6], &tasks[4], &tasks[2]}));
  EXPECT_EQ(q.size(), 0u);
}

// The producers inside an injection (enter/leave) are counted per bucket, and
// producers_inside sees any of them.
TEST(InjectionQueue, ProducersInsideCountsEveryBucket) {
  injection_queue q(4);
  EXPECT_FALSE(q.producers_inside());
  q.enter(1);
  q.enter(6);  // bucket 2
  EXPECT_TRUE(q.producers_inside());
  q.leave(1);
  EXPECT_TRUE(q.producers_inside());
  q.leave(6);
  EXPECT_FALSE(q.producers_inside());
}
