// fork(): the child has only the forking thread, so executors that existed before the fork
// must not be used there; a new executor created in the child works, and the parent's pool
// is unaffected. Its own executable: it forks (kind: requirement).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include "heist/heist.hpp"

TEST(Fork, ChildCanCreateAndUseANewExecutorAndParentKeepsWorking) {
  if (HEIST_TSAN) {
    // ThreadSanitizer refuses to start threads in the child of a multi-threaded fork
    // ("not supported. Dying"); the test runs in the Release and ASan/UBSan builds.
    GTEST_SKIP() << "ThreadSanitizer does not support threads after a multi-threaded fork";
  }
  heist::executor parent_pool(2);
  EXPECT_EQ(parent_pool.submit([] { return 1; }).get(), 1);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int status = 0;
    {
      heist::executor child_pool(2);
      std::atomic<int> n{0};
      for (int i = 0; i < 1000; ++i)
        child_pool.post([&] { n.fetch_add(1); });
      child_pool.wait_idle();
      heist::task_group g(child_pool);
      for (int i = 0; i < 100; ++i)
        g.run([&] { n.fetch_add(1); });
      g.wait();
      status = n.load() == 1100 ? 0 : 1;
    }
    // _exit: the parent's executor object in this child owns no threads; do not destroy it.
    _exit(status);
  }
  int status = -1;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::atomic<int> n{0};
  for (int i = 0; i < 1000; ++i)
    parent_pool.post([&] { n.fetch_add(1); });
  parent_pool.wait_idle();
  EXPECT_EQ(n.load(), 1000);
}
