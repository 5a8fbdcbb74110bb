// Unit tests of the injection queue (kind: requirement, boundary).
#include <gtest/gtest.h>

#include <vector>

#include "heist/detail/injection_queue.hpp"

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
