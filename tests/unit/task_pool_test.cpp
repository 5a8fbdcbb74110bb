// Unit tests of the per-thread task pool (kind: requirement, boundary): the blocks of stolen
// tasks stay off the local free list (task_pool.hpp), and the local list's limit grows only for
// a pool that gave a batch back and then ran dry.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "heist/detail/core/task_pool.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/heist.hpp"

using heist::detail::k_task_batch;
using heist::detail::k_task_pool_first_limit;
using heist::detail::k_task_pool_most_limit;
using heist::detail::task;
using heist::detail::task_memory;
using heist::detail::task_pool;

TEST(TaskPool, ForeignBlocksAreNotHandedOutWhileLocalOnesRemain) {
  task_pool mine;
  task_pool other;
  task* local = mine.allocate();
  task* foreign = other.allocate();
  mine.deallocate(local);
  mine.deallocate_foreign(foreign);
  EXPECT_EQ(mine.foreign_count(), 1u);
  // The local block comes back first, and so does every block of the local list: the
  // foreign one is not among them.
  const std::size_t local_blocks = mine.local_count();
  std::vector<task*> taken;
  for (std::size_t i = 0; i < local_blocks; ++i)
    taken.push_back(mine.allocate());
  EXPECT_EQ(taken.front(), local);
  for (task* t : taken)
    EXPECT_NE(t, foreign);
  // Only now, with the local list empty, does the pool use its foreign list.
  EXPECT_EQ(mine.allocate(), foreign);
  EXPECT_EQ(mine.foreign_count(), 0u);
  for (task* t : taken)
    mine.deallocate(t);
}

TEST(TaskPool, AFullBatchOfForeignBlocksGoesToTheDepot) {
  task_pool other;
  std::vector<task*> blocks;
  for (std::size_t i = 0; i < k_task_batch; ++i)
    blocks.push_back(other.allocate());
  task_pool mine;
  const std::size_t depot_before = task_memory().depot_blocks;
  for (std::size_t i = 0; i + 1 < k_task_batch; ++i)
    mine.deallocate_foreign(blocks[i]);
  EXPECT_EQ(mine.foreign_count(), k_task_batch - 1);
  EXPECT_EQ(task_memory().depot_blocks, depot_before);
  mine.deallocate_foreign(blocks.back());
  EXPECT_EQ(mine.foreign_count(), 0u);
  EXPECT_EQ(task_memory().depot_blocks, depot_before + k_task_batch);
}

TEST(TaskPool, APoolGivesItsForeignBlocksBackWhenItGoes) {
  task_pool other;
  task* a = other.allocate();
  task* b = other.allocate();
  const std::size_t depot_before = task_memory().depot_blocks;
  std::size_t local = 0;
  {
    task_pool mine;
    mine.deallocate_foreign(a);
    mine.deallocate_foreign(b);
    local = mine.local_count();  // 0: it never allocated
  }
  EXPECT_EQ(task_memory().depot_blocks, depot_before + 2 + local);
}

TEST(TaskPool, AThiefFreesTheBlockOfATaskItStoleToItsForeignList) {
  // Worker A spawns S and spins (without helping) until the end, so S can only be stolen,
  // by worker B. S posts C into B's own deque and returns; B frees S's block, then pops C,
  // which looks at B's pool: S's block is on the foreign list, not the local one.
  heist::executor ex(2);
  std::atomic<bool> stolen_ran{false};
  std::atomic<bool> checked{false};
  std::atomic<std::size_t> foreign_seen{0};
  std::atomic<bool> same_thread{false};
  ex.post([&] {
    const std::thread::id a = std::this_thread::get_id();
    heist::task_group g;
    g.run([&] {
      const std::thread::id b = std::this_thread::get_id();
      ex.post([&, b] {
        same_thread = std::this_thread::get_id() == b;
        foreign_seen = heist::detail::current_context().m_pool.foreign_count();
        checked = true;
      });
      stolen_ran = a != b;
    });
    while (!checked.load())
      std::this_thread::yield();
    g.wait();
  });
  ex.wait_idle();
  ASSERT_TRUE(stolen_ran.load());
  ASSERT_TRUE(same_thread.load());
  EXPECT_EQ(foreign_seen.load(), 1u);
}

namespace {
// Takes n blocks from the pool, then gives them all back.
void swing(task_pool& pool, std::size_t n) {
  std::vector<task*> blocks;
  for (std::size_t i = 0; i < n; ++i)
    blocks.push_back(pool.allocate());
  for (task* t : blocks)
    pool.deallocate(t);
}
}  // namespace

TEST(TaskPool, APoolThatOnlyFillsAndEmptiesOnceKeepsItsFirstLimit) {
  task_pool mine;
  EXPECT_EQ(mine.limit(), k_task_pool_first_limit);
  // Ten batches taken (ten refills, none after a spill), then given back (spills): the
  // limit grows only at a refill that follows a spill, so it has not moved.
  swing(mine, 10 * k_task_batch);
  EXPECT_EQ(mine.limit(), k_task_pool_first_limit);
  EXPECT_LE(mine.local_count(), k_task_pool_first_limit);
}

TEST(TaskPool, APoolWhoseLiveTasksSwingPastItsLimitKeepsABatchMoreEachSwingUpToTheMost) {
  task_pool mine;
  // Each swing takes more than the pool keeps (so it runs dry and refills from the depot)
  // and gives it all back (so it spills). The first swing only spills; every later one
  // refills after a spill once, and the limit grows by one batch, up to the most.
  for (std::size_t round = 0; round < 20; ++round) {
    const std::size_t before = mine.limit();
    swing(mine, before + k_task_batch + 1);
    const std::size_t expected =
        round == 0 ? before : std::min<std::size_t>(before + k_task_batch, k_task_pool_most_limit);
    EXPECT_EQ(mine.limit(), expected) << "round " << round;
    EXPECT_LE(mine.local_count(), mine.limit()) << "round " << round;
  }
  EXPECT_EQ(mine.limit(), k_task_pool_most_limit);
  // Swings within what the pool keeps trade nothing with the depot.
  const std::size_t depot_before = task_memory().depot_blocks;
  swing(mine, mine.local_count());
  EXPECT_EQ(task_memory().depot_blocks, depot_before);
}
