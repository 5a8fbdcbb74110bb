// Unit tests of the Chase-Lev deque on one thread: order, growth, and a sequential model
// check against std::deque (kind: requirement, boundary).
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "heist/detail/core/chase_lev_deque.hpp"
#include "test_support.hpp"

using heist::detail::chase_lev_deque;
using heist::detail::steal_status;

namespace {
std::vector<int> g_values(1 << 20);
int* item(std::size_t i) {
  return &g_values[i];
}
}  // namespace

TEST(Deque, PopOnNeverUsedDequeIsEmpty) {
  // Bug 5 of naive versions: unsigned indices make b = SIZE_MAX here.
  chase_lev_deque<int*> d;
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal().status, steal_status::empty);
  EXPECT_EQ(d.size(), 0u);
  EXPECT_EQ(d.pop(), nullptr);  // and the failed pop left it consistent
  d.push(item(1));
  EXPECT_EQ(d.pop(), item(1));
}

TEST(Deque, OwnerIsLifoThievesAreFifo) {
  chase_lev_deque<int*> d;
  for (std::size_t i = 0; i < 10; ++i)
    d.push(item(i));
  EXPECT_EQ(d.size(), 10u);
  EXPECT_EQ(d.pop(), item(9));
  EXPECT_EQ(d.pop(), item(8));
  auto s = d.steal();
  EXPECT_EQ(s.status, steal_status::success);
  EXPECT_EQ(s.value, item(0));
  EXPECT_EQ(d.steal().value, item(1));
  EXPECT_EQ(d.size(), 6u);
}

TEST(Deque, GrowsAndKeepsEveryElementInOrder) {
  chase_lev_deque<int*> d(2);
  EXPECT_EQ(d.capacity(), 2);
  // Interleave steals so that top != 0 when the ring grows (logical indices are kept).
  std::size_t next_steal = 0;
  for (std::size_t i = 0; i < 5000; ++i) {
    d.push(item(i));
    if (i % 3 == 0) {
      auto s = d.steal();
      ASSERT_EQ(s.status, steal_status::success);
      ASSERT_EQ(s.value, item(next_steal++));
    }
  }
  EXPECT_GE(d.capacity(), 4096);
  for (std::size_t i = 5000; i-- > next_steal;)
    ASSERT_EQ(d.pop(), item(i));
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(Deque, RingsOfDequesCreatedTogetherShareNoCacheLine) {
  // An executor creates its workers' deques one after another. Their rings must not share a
  // cache line: a plain malloc put the last slots of one on the line of the next one's
  // header, and one worker's pushes slowed the other's every push and pop (ring::create).
  constexpr std::uintptr_t line = heist::detail::k_cache_line;
  std::vector<std::unique_ptr<chase_lev_deque<int*>>> deques;
  for (std::int64_t capacity : {32, 32, 2, 32, 4, 64, 32})
    deques.push_back(std::make_unique<chase_lev_deque<int*>>(capacity));
  for (std::size_t i = 0; i < 100; ++i)
    deques[2]->push(item(i));  // grown: a ring allocated later, among the others
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> lines;  // first and last line
  for (const auto& d : deques) {
    const auto [begin, end] = d->ring_storage();
    const auto b = reinterpret_cast<std::uintptr_t>(begin);
    const auto e = reinterpret_cast<std::uintptr_t>(end);
    EXPECT_EQ(b % line, 0u) << "a ring starts inside a cache line";
    lines.emplace_back(b / line, (e - 1) / line);
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      const bool disjoint = lines[i].second < lines[j].first || lines[j].second < lines[i].first;
      EXPECT_TRUE(disjoint) << "rings " << i << " and " << j << " share a cache line";
    }
  }
}

TEST(Deque, StealIfRejectsWithoutTaking) {
  chase_lev_deque<int*> d;
  d.push(item(7));
  auto r = d.steal_if([](int* p) { return p != item(7); });
  EXPECT_EQ(r.status, steal_status::rejected);
  EXPECT_EQ(d.size(), 1u);
  auto ok = d.steal_if([](int* p) { return p == item(7); });
  EXPECT_EQ(ok.status, steal_status::success);
  EXPECT_EQ(ok.value, item(7));
}

TEST(Deque, SequentialModelCheckAgainstStdDeque) {
  // Random push/pop/steal sequences from a tiny initial capacity, compared step by step
  // with a reference model: bottom of the model = owner end.
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 50; ++round) {
    chase_lev_deque<int*> d(2);
    std::deque<int*> model;
    std::size_t next = 0;
    const std::size_t ops = heist_test::scaled(20000);
    for (std::size_t op = 0; op < ops; ++op) {
      const unsigned r = rng() % 10;
      if (r < 5 && next < g_values.size()) {
        d.push(item(next));
        model.push_back(item(next));
        ++next;
      } else if (r < 8) {
        int* got = d.pop();
        if (model.empty()) {
          ASSERT_EQ(got, nullptr);
        } else {
          ASSERT_EQ(got, model.back());
          model.pop_back();
        }
      } else {
        auto s = d.steal();
        if (model.empty()) {
          ASSERT_EQ(s.status, steal_status::empty);
        } else {
          ASSERT_EQ(s.status, steal_status::success);
          ASSERT_EQ(s.value, model.front());
          model.pop_front();
        }
      }
      ASSERT_EQ(d.size(), model.size());
    }
  }
}
