// Unit tests of the per-thread task pool (kind: requirement, boundary): the blocks of stolen
// tasks stay off the local free list (task_pool.hpp, issue 13's seventh round).
#include <gtest/gtest.h>

#include <vector>

#include "heist/detail/task_pool.hpp"

using heist::detail::k_task_batch;
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
