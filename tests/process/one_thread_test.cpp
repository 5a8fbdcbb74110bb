// HEIST_NUM_THREADS=1 means one thread (kind: process; the variable is set before the default
// executor exists, by main below): the default executor's callers count in its concurrency,
// so every algorithm called from outside the pool runs its work one piece at a time, as
// OpenMP and oneTBB do. Each test counts the threads inside the work at once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "heist/heist.hpp"

namespace {

class concurrency_meter {
 public:
  void enter_and_leave() {
    const int n = m_now.fetch_add(1) + 1;
    int most = m_most.load();
    while (n > most && !m_most.compare_exchange_weak(most, n)) {
    }
    // Long enough that a second thread, if there were one, would be seen inside.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    while (std::chrono::steady_clock::now() < until) {
    }
    m_now.fetch_sub(1);
    m_calls.fetch_add(1);
  }
  int most() const { return m_most.load(); }
  int calls() const { return m_calls.load(); }

 private:
  std::atomic<int> m_now{0}, m_most{0}, m_calls{0};
};

}  // namespace

TEST(OneThread, TheDefaultExecutorHasOneWorkerAndNoSeatForCallers) {
  EXPECT_EQ(heist::available_parallelism(), 1u);
  EXPECT_EQ(heist::default_executor().num_workers(), 1u);
}

TEST(OneThread, ParallelForRunsOnePieceAtATime) {
  concurrency_meter m;
  heist::parallel_for(0, 2000, [&](int) { m.enter_and_leave(); });
  EXPECT_EQ(m.calls(), 2000);
  EXPECT_EQ(m.most(), 1);
}

TEST(OneThread, ParallelReduceRunsOnePieceAtATime) {
  concurrency_meter m;
  const int sum = heist::parallel_reduce(
      heist::blocked_range<int>(0, 1000), 0,
      [&](const heist::blocked_range<int>& r, int v) {
        for (int i = r.begin(); i < r.end(); ++i) {
          m.enter_and_leave();
          v += i;
        }
        return v;
      },
      [](int a, int b) { return a + b; });
  EXPECT_EQ(sum, 999 * 1000 / 2);
  EXPECT_EQ(m.most(), 1);
}

TEST(OneThread, TaskGroupsAndParallelInvokeRunOneTaskAtATime) {
  concurrency_meter m;
  heist::task_group g;
  for (int i = 0; i < 200; ++i)
    g.run([&] { m.enter_and_leave(); });
  g.wait();
  auto f = [&] { m.enter_and_leave(); };
  heist::parallel_invoke(f, f, f, f);
  heist::task_group h;
  h.run_and_wait([&] { m.enter_and_leave(); });
  EXPECT_EQ(m.calls(), 205);
  EXPECT_EQ(m.most(), 1);
}

TEST(OneThread, SubmittedTasksAndAPipelineRunOneAtATime) {
  concurrency_meter m;
  std::vector<heist::future<void>> fs;
  for (int i = 0; i < 100; ++i)
    fs.push_back(heist::default_executor().submit([&] { m.enter_and_leave(); }));
  for (auto& x : fs)
    x.get();
  int left = 100;
  heist::parallel_pipeline(4, heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                                            [&](heist::flow_control& fc) {
                                                              if (left == 0) {
                                                                fc.stop();
                                                                return 0;
                                                              }
                                                              m.enter_and_leave();
                                                              return left--;
                                                            }) &
                                  heist::make_filter<int, void>(heist::filter_mode::parallel,
                                                                [&](int) { m.enter_and_leave(); }));
  EXPECT_EQ(m.calls(), 300);
  EXPECT_EQ(m.most(), 1);
}

TEST(OneThread, OutsideThreadsCallingAtOnceStillShareOneThread) {
  concurrency_meter m;
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&] { heist::parallel_for(0, 500, [&](int) { m.enter_and_leave(); }); });
  for (auto& t : callers)
    t.join();
  EXPECT_EQ(m.calls(), 1500);
  EXPECT_EQ(m.most(), 1);
}

int main(int argc, char** argv) {
  setenv("HEIST_NUM_THREADS", "1", 1);  // before anything creates the default executor
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
