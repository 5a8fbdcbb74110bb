// fork(): the child has only the forking thread, so executors that existed before the fork
// must not be used there; a new executor created in the child works, and the parent's pool
// is unaffected. Its own executable: it forks (kind: requirement).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "heist/heist.hpp"
#include "stack_dump.hpp"
#include "test_support.hpp"

namespace {

// What a child does: a fresh executor, posts, a task group and nested fork-join; exits 0
// when every count is right. _exit: executors inherited from the parent own no threads
// here; they must not be destroyed.
[[noreturn]] void child_uses_a_new_executor() {
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
    const long fib = child_pool.submit([] { return heist_test::fork_join_fib(18); }).get();
    status = (n.load() == 1100 && fib == 2584) ? 0 : 1;
  }
  _exit(status);
}

// Forks, runs child_uses_a_new_executor in the child and waits for it with a deadline, so
// that a child stuck after the fork fails the test in a minute instead of hanging ctest.
void fork_and_check_child() {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) child_uses_a_new_executor();
  int status = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  pid_t waited = 0;
  while ((waited = waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (waited == 0) {
    heist_test::dump_stacks(pid);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the forked child did not finish within 60 s";
  }
  ASSERT_EQ(waited, pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Both tests run in the Release build only.
void skip_under_sanitizers() {
  if (HEIST_TSAN) {
    // ThreadSanitizer refuses to start threads in the child of a multi-threaded fork
    // ("not supported. Dying").
    GTEST_SKIP() << "ThreadSanitizer does not support threads after a multi-threaded fork";
  }
  if (HEIST_ASAN) {
    // GCC 12's AddressSanitizer allocator takes no lock around fork(): a fork that lands
    // while any parent thread is inside its allocator leaves the child's threads blocked on
    // ASan's own mutex, whatever heist does. Seen in CI and here, with gdb, in both tests:
    // every child thread in SizeClassAllocator64::GetFromAllocator, called from ASan's
    // thread start (pthread_getattr_np -> calloc) and from malloc.
    GTEST_SKIP() << "the ASan allocator of this toolchain is not fork-safe";
  }
}

}  // namespace

TEST(Fork, ChildCanCreateAndUseANewExecutorAndParentKeepsWorking) {
  skip_under_sanitizers();
  if (IsSkipped()) return;
  heist::executor parent_pool(2);
  EXPECT_EQ(parent_pool.submit([] { return 1; }).get(), 1);
  fork_and_check_child();
  std::atomic<int> n{0};
  for (int i = 0; i < 1000; ++i)
    parent_pool.post([&] { n.fetch_add(1); });
  parent_pool.wait_idle();
  EXPECT_EQ(n.load(), 1000);
}

// The parent keeps task memory moving between threads while the main thread forks again
// and again: an outside thread posts tasks (their blocks come from its own cache, refilled
// from the process-wide depot) and the workers retire them (their caches overflow back into
// the depot). A fork can land while a parent thread holds the depot's lock, which the child
// must still be able to take.
TEST(Fork, ForkWhileParentMovesTaskMemoryLeavesChildUsable) {
  skip_under_sanitizers();
  if (IsSkipped()) return;
  heist::executor parent_pool(2);
  std::atomic<bool> stop{false};
  std::atomic<long> ran{0};
  long posted = 0;
  std::thread poster([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      for (int i = 0; i < 256; ++i)
        parent_pool.post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
      posted += 256;
    }
  });
  for (int i = 0; i < 40 && !HasFailure(); ++i)
    fork_and_check_child();
  stop.store(true);
  poster.join();
  parent_pool.wait_idle();
  EXPECT_EQ(ran.load(), posted);
}
