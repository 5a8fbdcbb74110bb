// The fence-free pop mode of the Chase-Lev deque (chase_lev_deque.hpp,
// docs/design/protocols.md "Fence-free pops, switched by the owner"): which events end a fence-free
// spell, which do not, and how many fenced pops the owner waits before it tries again (kind:
// requirement). The races themselves are in tests/stress/deque_stress_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "heist/detail/core/chase_lev_deque.hpp"
#include "heist/detail/wait/wait_context.hpp"
#include "heist/heist.hpp"

using heist::detail::chase_lev_deque;
using heist::detail::steal_status;

namespace {

std::vector<int> g_values(64);

// Fence-free pops need the process-wide barrier, which the first executor registers.
bool barrier_available() {
  heist::detail::enable_owner_counting();
  return heist::detail::g_owner_counting.load();
}

// Pops (on an empty deque: the pop still takes the mode path) until the next pop would run
// fence-free; returns how many it took, or `limit` + 1.
int pops_until_fence_free(chase_lev_deque<int*>& d, int limit = 10000) {
  for (int n = 1; n <= limit; ++n) {
    EXPECT_EQ(d.pop(), nullptr);
    if (d.pops_fence_free()) return n;
  }
  return limit + 1;
}

// A thief's successful steal (the deque has an element) ends the spell.
void steal_one(chase_lev_deque<int*>& d) {
  d.push(&g_values[0]);
  const auto r = d.steal();
  ASSERT_EQ(r.status, steal_status::success);
  ASSERT_EQ(r.value, &g_values[0]);
}

}  // namespace

// An executor's slots get the mode when the process-wide barrier exists, also the first
// executor of a process, whose constructor registers the barrier: it must do so before it
// prepares its slots. ctest runs each test in a process of its own, so here this is the
// first executor.
TEST(FenceFreePops, TheFirstExecutorOfAProcessGivesItsSlotsTheMode) {
  heist::executor ex(1);
  // Slot 1 is a leasable slot nobody occupies: its deque is quiescent.
  const heist::detail::slot& spare = heist::detail::default_arena_of(ex).slot_at(1);
  // What preparing a slot asks, once the barrier is registered (off also where the barrier
  // is missing or HEIST_FENCE_FREE_POPS=0).
  EXPECT_EQ(spare.m_deque.pops_fence_free(), heist::detail::fence_free_retry_pops(1) != 0)
      << "the slots were prepared before the barrier was registered";
}

TEST(FenceFreePops, OffUnlessEnabled) {
  chase_lev_deque<int*> d;
  EXPECT_FALSE(d.pops_fence_free());
  d.enable_fence_free_pops(0, 0);
  EXPECT_FALSE(d.pops_fence_free());
  d.push(&g_values[0]);
  EXPECT_EQ(d.steal().status, steal_status::success);
  EXPECT_EQ(pops_until_fence_free(d, 100), 101) << "a deque without the mode stays fenced";
}

TEST(FenceFreePops, AStealThatTakesAnElementEndsTheSpell) {
  if (!barrier_available()) GTEST_SKIP() << "membarrier is not available";
  chase_lev_deque<int*> d;
  d.enable_fence_free_pops(4, 16);
  EXPECT_TRUE(d.pops_fence_free());
  d.push(&g_values[1]);
  d.push(&g_values[2]);
  EXPECT_EQ(d.pop(), &g_values[2]);  // a fence-free pop of a non-last element
  EXPECT_TRUE(d.pops_fence_free());
  const auto r = d.steal();
  EXPECT_EQ(r.status, steal_status::success);
  EXPECT_EQ(r.value, &g_values[1]);
  EXPECT_FALSE(d.pops_fence_free());
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.size(), 0u);
}

TEST(FenceFreePops, AThiefThatTakesNothingLeavesTheSpell) {
  // An empty deque, or an element the thief's predicate rejects: no barrier, no switch.
  if (!barrier_available()) GTEST_SKIP() << "membarrier is not available";
  chase_lev_deque<int*> d;
  d.enable_fence_free_pops(4, 16);
  EXPECT_EQ(d.steal().status, steal_status::empty);
  EXPECT_TRUE(d.pops_fence_free());
  d.push(&g_values[3]);
  const auto r = d.steal_if([](int*) noexcept { return false; });
  EXPECT_EQ(r.status, steal_status::rejected);
  EXPECT_TRUE(d.pops_fence_free());
  EXPECT_EQ(d.pop(), &g_values[3]);
  EXPECT_TRUE(d.pops_fence_free());
}

TEST(FenceFreePops, TheOwnerComesBackAfterAWaitThatDoublesWhileSpellsAreShort) {
  if (!barrier_available()) GTEST_SKIP() << "membarrier is not available";
  chase_lev_deque<int*> d;
  d.enable_fence_free_pops(4, 16);
  // A spell of no pops ended at once: the wait doubles to 8 fenced pops after the first
  // fenced one, which notices the end.
  steal_one(d);
  EXPECT_EQ(pops_until_fence_free(d), 9);
  // Ended again after one pop: 16.
  steal_one(d);
  EXPECT_EQ(pops_until_fence_free(d), 17);
  // And again: capped at 16.
  steal_one(d);
  EXPECT_EQ(pops_until_fence_free(d), 17);
  // A spell at least as long as the wait resets it to 4.
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(d.pop(), nullptr);
  EXPECT_TRUE(d.pops_fence_free());
  steal_one(d);
  EXPECT_EQ(pops_until_fence_free(d), 5);
}

TEST(FenceFreePops, AStealNoPopAcknowledgesRunsOneBarrier) {
  // The owner (this thread) does not pop while it steals: no acknowledgement comes, so the
  // thief runs the process-wide barrier, once.
  if (!barrier_available()) GTEST_SKIP() << "membarrier is not available";
  chase_lev_deque<int*> d;
  d.enable_fence_free_pops(4, 16);
  const std::uint64_t before = heist::detail::process_wide_barriers_run();
  steal_one(d);
  EXPECT_EQ(heist::detail::process_wide_barriers_run(), before + 1);
  EXPECT_FALSE(d.pops_fence_free());
}

TEST(FenceFreePops, AnOwnerThatKeepsPoppingSparesTheThiefTheBarrier) {
  // The owner pops (and pushes back) without pause while another thread steals once: the
  // owner's next pop acknowledges the switch. A thread descheduled at the wrong moment may
  // still make the thief run the barrier, so up to 50 rounds; at least one must go without,
  // and in every round each element is taken exactly once.
  if (!barrier_available()) GTEST_SKIP() << "membarrier is not available";
  constexpr int k_values = 16;
  bool spared = false;
  for (int round = 0; round < 50 && !spared; ++round) {
    chase_lev_deque<int*> d(32);
    d.enable_fence_free_pops(4, 16);
    for (int i = 0; i < k_values; ++i)
      d.push(&g_values[i]);
    std::atomic<bool> go{false}, stolen_done{false};
    int* stolen = nullptr;
    const std::uint64_t before = heist::detail::process_wide_barriers_run();
    std::thread thief([&] {
      while (!go.load())
        std::this_thread::yield();
      const auto r = d.steal();
      if (r.status == steal_status::success) stolen = r.value;
      stolen_done.store(true);
    });
    go.store(true);
    while (!stolen_done.load()) {  // the owner: pop the newest, push it back
      int* v = d.pop();
      ASSERT_NE(v, nullptr);
      d.push(v);
    }
    thief.join();
    spared = heist::detail::process_wide_barriers_run() == before;
    std::vector<int> taken(k_values, 0);
    if (stolen != nullptr) ++taken[stolen - g_values.data()];
    while (int* v = d.pop())
      ++taken[v - g_values.data()];
    for (int i = 0; i < k_values; ++i)
      ASSERT_EQ(taken[i], 1) << "value " << i << " in round " << round;
  }
  EXPECT_TRUE(spared) << "every steal ran the barrier though the owner kept popping";
}

TEST(FenceFreePops, ElementsKeepTheirOrderAcrossSwitches) {
  // LIFO for the owner, FIFO for thieves, whatever the mode of each pop.
  if (!barrier_available()) GTEST_SKIP() << "membarrier is not available";
  chase_lev_deque<int*> d(4);
  d.enable_fence_free_pops(1, 1);
  for (int i = 0; i < 40; ++i)
    d.push(&g_values[i]);
  int low = 0, high = 39;
  while (low <= high) {
    const auto r = d.steal();
    ASSERT_EQ(r.status, steal_status::success);
    EXPECT_EQ(r.value, &g_values[low++]);
    if (low > high) break;
    EXPECT_EQ(d.pop(), &g_values[high--]);
    if (low > high) break;
    EXPECT_EQ(d.pop(), &g_values[high--]);  // fence-free again after one fenced pop
  }
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal().status, steal_status::empty);
}

TEST(FenceFreePops, WhereExecutorsTurnThemOn) {
  heist::executor ex(2);  // registers the barrier if it can
  using heist::detail::fence_free_retry_pops;
  if (!heist::detail::g_owner_counting.load()) {
    EXPECT_EQ(fence_free_retry_pops(2), 0u) << "no barrier, no fence-free pops";
    return;
  }
  EXPECT_GT(fence_free_retry_pops(2), 0u);
  EXPECT_EQ(fence_free_retry_pops(heist::detail::k_fence_free_max_workers + 1), 0u)
      << "large executors keep fenced pops";
  ::setenv("HEIST_FENCE_FREE_POPS", "0", 1);
  EXPECT_EQ(fence_free_retry_pops(2), 0u) << "HEIST_FENCE_FREE_POPS=0 turns them off";
  ::unsetenv("HEIST_FENCE_FREE_POPS");
  EXPECT_GT(fence_free_retry_pops(2), 0u);
}
