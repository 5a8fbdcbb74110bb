// Parallel loops under races, repeated (kind: stress): nested loops of every partitioner,
// long leaves while many threads are idle (an auto loop then gives a piece per idle thread),
// exceptions that cancel a loop midway, and loops started from several threads at once.
// Counts prove that every iteration ran exactly once (or, after a cancellation, at most once);
// reductions are checked against the exact integer sum.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

using heist::blocked_range;
using heist_test::exactly_once;

namespace {

void spin_for(std::chrono::nanoseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// A small deterministic generator per round, so a failing round can be replayed.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// sum of i over [lo, hi) with partitioner `kind` (0 auto, 1 simple, 2 static, 3 deterministic).
std::uint64_t reduce_indices(unsigned kind, std::size_t n, std::size_t grain) {
  const blocked_range<std::size_t> r(0, n, grain);
  auto body = [](const blocked_range<std::size_t>& s, std::uint64_t acc) {
    for (std::size_t i = s.begin(); i != s.end(); ++i)
      acc += i;
    return acc;
  };
  auto join = [](std::uint64_t a, std::uint64_t b) { return a + b; };
  switch (kind % 4) {
    case 0:
      return heist::parallel_reduce(r, std::uint64_t{0}, body, join);
    case 1:
      return heist::parallel_reduce(r, std::uint64_t{0}, body, join, heist::simple_partitioner{});
    case 2:
      return heist::parallel_reduce(r, std::uint64_t{0}, body, join, heist::static_partitioner{});
    default:
      return heist::parallel_deterministic_reduce(r, std::uint64_t{0}, body, join);
  }
}

}  // namespace

TEST(LoopStress, NestedLoopsOfEveryPartitionerRunEveryIndexOnce) {
  // Four workers on however many cores: outer loops of every partitioner (one affinity
  // partitioner reused across rounds), each outer index running an inner loop and a
  // reduction of its own; a few iterations spin so that pieces are stolen mid-loop.
  heist::executor ex(4);
  heist::affinity_partitioner ap;
  const std::size_t rounds = heist_test::scaled(1000);
  const std::size_t grains[] = {1, 3, 16};
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::uint64_t h = mix(round);
    const std::size_t outer = 1 + h % 24;
    const std::size_t inner = 1 + (h >> 8) % 300;
    const std::size_t grain = grains[(h >> 20) % 3];
    const auto outer_kind = static_cast<unsigned>(round % 4);
    const auto inner_kind = static_cast<unsigned>((h >> 24) % 3);
    exactly_once once(outer * inner);
    std::atomic<std::size_t> bad_sums{0};
    heist_test::parallel_for_with_partitioner(
        outer_kind, ex, blocked_range<std::size_t>(0, outer, 1),
        [&](const blocked_range<std::size_t>& o) {
          for (std::size_t i = o.begin(); i != o.end(); ++i) {
            heist::affinity_partitioner unused;  // inner kinds are auto, simple and static
            heist_test::parallel_for_with_partitioner(
                inner_kind, ex, blocked_range<std::size_t>(0, inner, grain),
                [&, i](const blocked_range<std::size_t>& r) {
                  for (std::size_t j = r.begin(); j != r.end(); ++j) {
                    if ((i + j) % 61 == 0) spin_for(std::chrono::microseconds(20));
                    once.hit(i * inner + j);
                  }
                },
                unused);
            const std::uint64_t want = std::uint64_t{inner} * (inner - 1) / 2;
            if (reduce_indices(static_cast<unsigned>(i + round), inner, grain) != want) {
              bad_sums.fetch_add(1);
            }
          }
        },
        ap);
    ASSERT_EQ(once.wrong(), 0u) << "round " << round;
    ASSERT_EQ(bad_sums.load(), 0u) << "round " << round;
  }
}

TEST(LoopStress, LongLeavesWhileManyThreadsIdleGiveEveryPieceOnce) {
  // Six workers that are spinning, yielding or asleep when each loop starts (a varying gap
  // between rounds); every eighth iteration is a long one, so a loop task holds a long leaf
  // while idle threads ask for pieces: it gives one per idle thread.
  heist::executor ex(6);
  const std::size_t rounds = heist_test::scaled(1000);
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::uint64_t h = mix(round + 1000);
    const std::size_t n = 8 + h % 120;
    exactly_once once(n);
    auto body = [&](const blocked_range<std::size_t>& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) {
        if (i % 8 == 0) spin_for(std::chrono::microseconds(30));
        once.hit(i);
      }
    };
    if (round % 2 == 0) {
      heist::parallel_for(ex, blocked_range<std::size_t>(0, n, 1), body);
    } else {
      ex.submit([&] { heist::parallel_for(blocked_range<std::size_t>(0, n, 1), body); }).get();
    }
    ASSERT_EQ(once.wrong(), 0u) << "round " << round << ", n " << n;
    const std::uint64_t sum = ex.submit([&] { return reduce_indices(0, n, 1); }).get();
    ASSERT_EQ(sum, std::uint64_t{n} * (n - 1) / 2) << "round " << round;
    switch (round % 3) {
      case 0:
        break;
      case 1:
        std::this_thread::yield();
        break;
      default:
        std::this_thread::sleep_for(std::chrono::microseconds(h % 300));
    }
  }
}

TEST(LoopStress, AnExceptionCancelsTheLoopAndNoIndexRunsTwice) {
  heist::executor ex(4);
  const std::size_t rounds = heist_test::scaled(3000);
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::uint64_t h = mix(round + 2000);
    const std::size_t n = 100 + h % 3000;
    const std::size_t thrower = (h >> 16) % n;
    exactly_once once(n);
    bool caught = false;
    heist::affinity_partitioner unused;  // kinds 0-2: auto, simple, static
    try {
      heist_test::parallel_for_with_partitioner(
          static_cast<unsigned>(round % 3), ex, blocked_range<std::size_t>(0, n, 1 + round % 5),
          [&](const blocked_range<std::size_t>& r) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) {
              once.hit(i);
              if (i == thrower) throw std::runtime_error("index " + std::to_string(i));
            }
          },
          unused);
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "index " + std::to_string(thrower);
    }
    ASSERT_TRUE(caught) << "round " << round;
    ASSERT_EQ(once.hits(thrower), 1) << "round " << round;
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_LE(once.hits(i), 1) << "round " << round << ", index " << i;
  }
}

TEST(LoopStress, LoopsFromSeveralThreadsAtOnce) {
  // Three threads outside the pool (each leases a slot or gives through the injection queue)
  // and tasks inside it run loops on the same two workers at once.
  heist::executor ex(2);
  const std::size_t rounds = heist_test::scaled(1000);
  std::atomic<std::size_t> failures{0};
  auto loops = [&](std::size_t seed) {
    for (std::size_t round = 0; round < rounds; ++round) {
      const std::uint64_t h = mix(seed * 100000 + round);
      const std::size_t n = 1 + h % 2000;
      exactly_once once(n);
      heist::affinity_partitioner ap;
      heist_test::parallel_for_with_partitioner(
          static_cast<unsigned>(h >> 40), ex, blocked_range<std::size_t>(0, n, 1 + (h >> 32) % 8),
          [&](const blocked_range<std::size_t>& r) {
            for (std::size_t i = r.begin(); i != r.end(); ++i)
              once.hit(i);
          },
          ap);
      if (once.wrong() != 0) failures.fetch_add(1);
    }
  };
  std::vector<std::thread> outside;
  for (std::size_t t = 0; t < 3; ++t)
    outside.emplace_back(loops, t);
  ex.submit([&] { loops(7); }).get();
  for (auto& t : outside)
    t.join();
  EXPECT_EQ(failures.load(), 0u);
}

TEST(LoopStress, AffinityStealChainsOnFrontHeavyLoopsRunEveryIndexOnce) {
  // Four workers (on however many cores) and an affinity loop whose first iterations are slow:
  // the idle participants steal halves of share 0 into their own shares and from each other,
  // chains of steals over the same iterations. Every iteration runs once, and the reduction,
  // which joins the chunks by offset, gets the exact sum of the indices.
  heist::executor ex(4);
  heist::affinity_partitioner ap;
  const std::size_t rounds = heist_test::scaled(1500);
  std::size_t steals = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::uint64_t h = mix(round + 31);
    const std::size_t n = 16 + h % 600;
    const std::size_t heavy = n / 4;
    exactly_once once(n);
    std::uint64_t sum = 0;
    ex.submit([&] {
        heist::parallel_for(
            blocked_range<std::size_t>(0, n),
            [&](const blocked_range<std::size_t>& r) {
              for (std::size_t i = r.begin(); i != r.end(); ++i) {
                if (i < heavy) spin_for(std::chrono::nanoseconds(300));
                once.hit(i);
              }
            },
            ap);
        steals += ap.last_steals();
        sum = heist::parallel_reduce(
            blocked_range<std::size_t>(0, n), std::uint64_t{0},
            [&](const blocked_range<std::size_t>& r, std::uint64_t acc) {
              for (std::size_t i = r.begin(); i != r.end(); ++i) {
                if (i < heavy) spin_for(std::chrono::nanoseconds(300));
                acc += i;
              }
              return acc;
            },
            [](std::uint64_t a, std::uint64_t b) { return a + b; }, ap);
      }).get();
    ASSERT_EQ(once.wrong(), 0u) << "round " << round << ", n " << n;
    ASSERT_EQ(sum, std::uint64_t{n} * (n - 1) / 2) << "round " << round << ", n " << n;
  }
  EXPECT_GT(steals, 0u);  // the loops did take halves of other shares
}
