// Owner-counted joins under stress: every way a group's count can be split
// between its owner and other threads, repeated thousands of times, with per-child counts
// that prove each child ran exactly once and that no wait returned before its children.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using heist_test::scaled;
using heist_test::watchdog;

// The owner spawns a first batch, publishes the group, and goes on spawning a second batch
// and running its own children while an outside thread claims the group and waits. The
// first batch was spawned before the publication, so the outside wait must cover it; after
// the owner's task has ended, a second wait covers everything.
TEST(JoinStress, ClaimRacesTheOwnersCounting) {
  watchdog dog("ClaimRacesTheOwnersCounting", 300s);
  heist::executor ex(2);
  const std::size_t rounds = scaled(2000);
  constexpr int k_batch = 32;
  for (std::size_t round = 0; round < rounds; ++round) {
    std::vector<std::atomic<int>> ran(2 * k_batch);
    std::atomic<heist::task_group*> published{nullptr};
    auto owner = ex.submit([&] {
      auto* group = new heist::task_group();  // owned by this worker
      for (int i = 0; i < k_batch; ++i)
        group->run([&ran, i] { ran[i].fetch_add(1); });
      published = group;
      for (int i = k_batch; i < 2 * k_batch; ++i)
        group->run([&ran, i] { ran[i].fetch_add(1); });
    });
    heist::task_group* group = nullptr;
    while ((group = published.load()) == nullptr)
      std::this_thread::yield();
    group->wait();
    for (int i = 0; i < k_batch; ++i)
      ASSERT_EQ(ran[i].load(), 1) << "round " << round << " child " << i;
    owner.get();
    group->wait();
    for (int i = 0; i < 2 * k_batch; ++i)
      ASSERT_EQ(ran[i].load(), 1) << "round " << round << " child " << i;
    delete group;
  }
}

// fib with a task_group per call on every worker count from 1 to 4: owner counting on the
// common path, thieves on the stolen children, values checked every round.
TEST(JoinStress, FibValuesOnEveryPoolSize) {
  watchdog dog("FibValuesOnEveryPoolSize", 300s);
  for (std::size_t workers = 1; workers <= 4; ++workers) {
    heist::executor ex(workers);
    const std::size_t rounds = scaled(40);
    for (std::size_t round = 0; round < rounds; ++round) {
      const long v = ex.submit([] { return heist_test::fork_join_fib(18); }).get();
      ASSERT_EQ(v, 2584) << workers << " workers, round " << round;
    }
  }
}

// Coroutines that create a group on one executor, move to another and join there (the join
// claims the group while its owner may still be running the children), many at once.
heist::task<int> spawn_move_join(heist::executor& other, std::atomic<long>& ran) {
  heist::task_group g;
  for (int i = 0; i < 64; ++i)
    g.run([&ran] { ran.fetch_add(1); });
  co_await heist::schedule(other);
  co_await g.join();
  co_return 64;
}

TEST(JoinStress, CoroutinesJoinGroupsOwnedByAnotherThread) {
  watchdog dog("CoroutinesJoinGroupsOwnedByAnotherThread", 300s);
  heist::executor first(2), second(2);
  std::atomic<long> ran{0};
  const std::size_t rounds = scaled(200);
  long expected = 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    std::vector<heist::future<int>> fs;
    for (int i = 0; i < 16; ++i)
      fs.push_back(heist::start(first, spawn_move_join(second, ran)));
    for (auto& f : fs)
      expected += f.get();
    ASSERT_EQ(ran.load(), expected) << "round " << round;
  }
}

// Inline joins under stress: coroutine trees whose members are run inline by their joiner,
// stolen, or suspended on promises that outside threads complete, or moved to another
// executor, on every pool size; each leaf has its own counter, which must read exactly 1.
heist::task<void> tree(int depth, int id, std::vector<std::atomic<int>>& leaves,
                       std::vector<heist::promise<int>>& gates, heist::executor& other) {
  if (depth == 0) {
    if (id % 7 == 0) {
      leaves[static_cast<std::size_t>(id)].fetch_add(
          co_await gates[static_cast<std::size_t>(id)].get_future());
    } else {
      if (id % 5 == 0) co_await heist::schedule(other);
      leaves[static_cast<std::size_t>(id)].fetch_add(1);
    }
    co_return;
  }
  heist::task_group g;
  g.run(tree(depth - 1, 2 * id, leaves, gates, other));
  g.run(tree(depth - 1, 2 * id + 1, leaves, gates, other));
  co_await g.join();
}

TEST(JoinStress, InlineJoinsCountEveryLeafOnce) {
  watchdog dog("InlineJoinsCountEveryLeafOnce", 300s);
  constexpr int k_depth = 9;  // 512 leaves
  constexpr std::size_t k_leaves = std::size_t{1} << k_depth;
  for (std::size_t workers = 1; workers <= 4; ++workers) {
    heist::executor ex(workers), other(1);
    const std::size_t rounds = scaled(250);
    for (std::size_t round = 0; round < rounds; ++round) {
      std::vector<std::atomic<int>> leaves(2 * k_leaves);
      std::vector<heist::promise<int>> gates(2 * k_leaves);
      heist::future<void> f = heist::start(ex, tree(k_depth, 0, leaves, gates, other));
      std::thread opener([&] {
        for (std::size_t i = 0; i < gates.size(); i += 7)
          gates[i].set_value(1);
      });
      f.get();
      opener.join();
      for (std::size_t i = 0; i < k_leaves; ++i)
        ASSERT_EQ(leaves[i].load(), 1) << workers << " workers, round " << round << ", leaf " << i;
    }
  }
}

// The group a coroutine runs in (docs/design/async.md), raced: trees of coroutine members that
// are taken inline or stolen, hop to another executor, or wait on promises an outside thread
// opens; one leaf cancels the root group. A group that a member makes after that cancel()
// returned must read cancelling at once, before its join and after it (wherever the member
// resumed); no leaf runs twice, and the cancelling leaf runs. (Between cancel()'s flag and its
// epoch bump a new group may still read uncancelled, as inside tasks: the perturbation build
// holds that window open, so the test keys on the return, as the cancel guarantee does.)
struct cancel_tree_state {
  explicit cancel_tree_state(std::size_t leaves) : ran(leaves), gates(leaves) {}
  std::vector<std::atomic<int>> ran;
  std::vector<heist::promise<int>> gates;
  std::atomic<bool> cancel_returned{false};
  std::atomic<int> late_uncancelled{0};
};

heist::task<void> cancel_tree(int depth, int id, int cancel_at, heist::task_group& root,
                              cancel_tree_state& st, heist::executor& other) {
  const auto leaf = static_cast<std::size_t>(id);
  if (depth == 0) {
    if (id % 7 == 0) {
      (void)co_await st.gates[leaf].get_future();
    } else if (id % 5 == 0) {
      co_await heist::schedule(other);
    }
    st.ran[leaf].fetch_add(1);
    if (id == cancel_at) {
      root.cancel();
      // release: pairs with the acquire loads below; what cancel() did happens before them.
      st.cancel_returned.store(true, std::memory_order_release);
    }
    co_return;
  }
  // acquire: pairs with the release store after cancel() above.
  const bool seen_before = st.cancel_returned.load(std::memory_order_acquire);
  heist::task_group g;
  if (seen_before && !g.is_canceling()) st.late_uncancelled.fetch_add(1);
  g.run(cancel_tree(depth - 1, 2 * id, cancel_at, root, st, other));
  g.run(cancel_tree(depth - 1, 2 * id + 1, cancel_at, root, st, other));
  co_await g.join();
  const bool seen_after = st.cancel_returned.load(std::memory_order_acquire);
  heist::task_group later;
  if (seen_after && !later.is_canceling()) st.late_uncancelled.fetch_add(1);
}

TEST(JoinStress, CancellingARootReachesGroupsMadeInCoroutineMembers) {
  watchdog dog("CancellingARootReachesGroupsMadeInCoroutineMembers", 300s);
  constexpr int k_depth = 7;  // leaves 128..255
  constexpr int k_first_leaf = 1 << k_depth;
  for (std::size_t workers = 1; workers <= 3; ++workers) {
    heist::executor ex(workers), other(1);
    const std::size_t rounds = scaled(200);
    for (std::size_t round = 0; round < rounds; ++round) {
      cancel_tree_state st(2 * k_first_leaf);
      const int cancel_at = k_first_leaf + static_cast<int>((round * 37) % k_first_leaf);
      heist::task_group root(ex);
      root.run(cancel_tree(k_depth, 1, cancel_at, root, st, other));
      std::thread opener([&] {
        for (std::size_t i = 0; i < st.gates.size(); i += 7)
          st.gates[i].set_value(1);
      });
      root.wait();
      opener.join();
      ASSERT_EQ(st.late_uncancelled.load(), 0) << workers << " workers, round " << round;
      ASSERT_EQ(st.ran[static_cast<std::size_t>(cancel_at)].load(), 1) << "round " << round;
      for (std::size_t i = k_first_leaf; i < st.ran.size(); ++i)
        ASSERT_LE(st.ran[i].load(), 1) << "leaf " << i << ", round " << round;
    }
  }
}

// The waiter's short path and the destructor's skip, raced: a
// worker's group runs children that run more children into the same group (on whichever
// thread took them) while children of a second group sit interleaved on the same deque;
// after the wait, half the rounds run one more child from an outside thread and leave it to
// the destructor. Every child must run exactly once, and before the wait (or destructor)
// that covers it returns.
TEST(JoinStress, ShortPathAndDestructorSkipCountEveryChildOnce) {
  watchdog dog("ShortPathAndDestructorSkipCountEveryChildOnce", 300s);
  static constexpr int k_children = 16;
  for (std::size_t workers = 1; workers <= 3; ++workers) {
    heist::executor ex(workers);
    const std::size_t rounds = scaled(1000);
    for (std::size_t round = 0; round < rounds; ++round) {
      std::vector<std::atomic<int>> ran(3 * k_children + 1);
      std::atomic<int> covered_before_return{0};
      ex.submit([&] {
          heist::task_group other;
          {
            heist::task_group g;
            for (int i = 0; i < k_children; ++i) {
              g.run([&ran, &g, i] {
                ran[i].fetch_add(1);
                g.run([&ran, i] { ran[k_children + i].fetch_add(1); });  // into its own group
              });
              other.run([&ran, i] { ran[2 * k_children + i].fetch_add(1); });
            }
            g.wait();
            int seen = 0;
            for (int i = 0; i < 2 * k_children; ++i)
              seen += ran[i].load();
            covered_before_return = seen;
            if (round % 2 == 1) {
              std::thread outside([&] { g.run([&ran] { ran[3 * k_children].fetch_add(1); }); });
              outside.join();
            }
          }  // the destructor waits for the outside child, if any
          if (round % 2 == 1) EXPECT_EQ(ran[3 * k_children].load(), 1);
          other.wait();
        }).get();
      ASSERT_EQ(covered_before_return.load(), 2 * k_children)
          << workers << " workers, round " << round;
      for (int i = 0; i < 3 * k_children; ++i)
        ASSERT_EQ(ran[i].load(), 1) << workers << " workers, round " << round << ", child " << i;
      ASSERT_EQ(ran[3 * k_children].load(), static_cast<int>(round % 2));
    }
  }
}

// wait() keeps an uncancelled group's check of its ancestors (reset() writes only after a
// cancel). An ancestor's cancel lands at varying points of a nested group's first round:
// before its tasks start, while they run (some run, some are skipped), or while the last one
// holds the round open. The next round is spawned after the cancel in every case (the
// holding task waits for it, or it was skipped after seeing it), so none of it may run.
TEST(JoinStress, AnAncestorsCancelRacingANestedRoundReachesTheNextRound) {
  watchdog dog("AnAncestorsCancelRacingANestedRoundReachesTheNextRound", 300s);
  heist::executor ex(2);
  const std::size_t rounds = scaled(1000);
  constexpr int k_tasks = 8;
  for (std::size_t round = 0; round < rounds; ++round) {
    std::atomic<int> first_ran{0}, second_ran{0};
    std::latch cancelled(1);
    heist::task_group outer(ex);
    outer.run([&] {
      heist::task_group inner;  // bound to `outer`
      for (int i = 0; i < k_tasks; ++i) {
        inner.run([&, i] {
          first_ran.fetch_add(1);
          if (i == 0) cancelled.wait();  // spawned first, popped last: holds the round open
        });
      }
      inner.wait();
      for (int i = 0; i < k_tasks; ++i)
        inner.run([&] { second_ran.fetch_add(1); });
      inner.wait();
    });
    for (std::size_t spin = 0; spin < (round % 16) * 50; ++spin)
      std::this_thread::yield();
    outer.cancel();
    cancelled.count_down();
    outer.wait();
    ASSERT_LE(first_ran.load(), k_tasks) << "round " << round;
    ASSERT_EQ(second_ran.load(), 0)
        << "round " << round << " (first round ran " << first_ran.load() << ")";
  }
}

}  // namespace
