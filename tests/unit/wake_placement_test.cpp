// Wake placement (include/heist/detail/sleep/wake_placement.hpp): a waker that runs on records its
// CPU for the sleeper it takes; a woken worker that finds itself on that CPU moves to
// another CPU of its mask and puts the mask back; masks a user narrowed are left alone
// (kind: unit). Tests that need two CPUs skip on a machine or container with one.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/core/thread_record.hpp"
#include "heist/detail/sleep/idle_state.hpp"
#include "heist/detail/sleep/wake_placement.hpp"
#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {

using heist::detail::idle_kind;
using heist::detail::idle_state;
using heist::detail::parker;
using heist::detail::sleeper;
using heist_test::same_mask;

cpu_set_t mask_of_this_thread() {
  const cpu_set_t set = heist_test::this_thread_mask();
  EXPECT_NE(CPU_COUNT(&set), 0) << "sched_getaffinity failed";
  return set;
}

// The lowest CPU in `set`, or -1.
int first_cpu(const cpu_set_t& set) {
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(i, &set)) return i;
  }
  return -1;
}

// Restores the calling thread's mask when the test ends, whatever it asserted.
class mask_guard {
 public:
  mask_guard() : m_saved(mask_of_this_thread()) {}
  ~mask_guard() { sched_setaffinity(0, sizeof m_saved, &m_saved); }
  const cpu_set_t& saved() const { return m_saved; }

 private:
  cpu_set_t m_saved;
};

// Runs f on a worker of `ex` and waits without helping (future::get would let this thread
// run it), so that f and its children run on the executor's threads only.
template <class F>
void run_on_a_worker(heist::executor& ex, F f) {
  std::latch done(1);
  ex.post([&] {
    f();
    done.count_down();
  });
  done.wait();
}

#define REQUIRE_TWO_CPUS(mask)                                              \
  if (CPU_COUNT(&(mask)) < 2) GTEST_SKIP() << "needs two CPUs in the mask"; \
  static_assert(true)

TEST(WakePlacement, StepOffCpuMovesTheThreadElsewhereAndRestoresItsMask) {
  mask_guard guard;
  REQUIRE_TWO_CPUS(guard.saved());
  for (int round = 0; round < 50; ++round) {
    const int cpu = heist::detail::current_cpu();
    ASSERT_GE(cpu, 0);
    const int moved_to = heist::detail::step_off_cpu(cpu);
    // While `cpu` was out of the mask the thread could not run there, wherever the OS had
    // put it before the call.
    ASSERT_GE(moved_to, 0) << "round " << round;
    EXPECT_NE(moved_to, cpu) << "round " << round;
    EXPECT_TRUE(CPU_ISSET(moved_to, &guard.saved()));
    EXPECT_TRUE(same_mask(mask_of_this_thread(), guard.saved())) << "round " << round;
  }
}

TEST(WakePlacement, StepOffCpuLeavesAOneCpuMaskAlone) {
  mask_guard guard;
  const int cpu = first_cpu(guard.saved());
  ASSERT_GE(cpu, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(heist::detail::step_off_cpu(cpu), -1);
  EXPECT_TRUE(same_mask(mask_of_this_thread(), one));
  EXPECT_EQ(heist::detail::current_cpu(), cpu);
}

TEST(WakePlacement, StepOffCpuIgnoresACpuOutsideTheMask) {
  mask_guard guard;
  REQUIRE_TWO_CPUS(guard.saved());
  const int a = first_cpu(guard.saved());
  cpu_set_t rest = guard.saved();
  CPU_CLR(a, &rest);
  ASSERT_EQ(sched_setaffinity(0, sizeof rest, &rest), 0);
  EXPECT_EQ(heist::detail::step_off_cpu(a), -1);
  EXPECT_EQ(heist::detail::step_off_cpu(-1), -1);
  EXPECT_TRUE(same_mask(mask_of_this_thread(), rest));
}

TEST(WakePlacement, SpreadNeedsTwoCpusAndNoMoreWorkersThanCpus) {
  mask_guard guard;
  const auto cpus = static_cast<std::size_t>(CPU_COUNT(&guard.saved()));
  if (cpus >= 2) {
    EXPECT_TRUE(heist::detail::spread_wakes(1));
    EXPECT_TRUE(heist::detail::spread_wakes(cpus));
  }
  EXPECT_FALSE(heist::detail::spread_wakes(cpus + 1));
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first_cpu(guard.saved()), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_FALSE(heist::detail::spread_wakes(1));
}

// One listed sleeper, woken by this thread: what wake_one records for it.
struct listed_sleeper {
  idle_state idle;
  parker p;
  sleeper s;
  explicit listed_sleeper(bool spread) {
    idle.set_spread_wakes(spread);
    s.m_parker = &p;
    idle.begin_search(idle_kind::roamer);
    idle.prepare_sleep(s, idle_kind::roamer);
  }
  int wake(bool waker_runs_on) {
    EXPECT_TRUE(idle.wake_one(false, waker_runs_on));
    EXPECT_EQ(p.take(parker::k_work), parker::k_work);
    EXPECT_FALSE(s.m_listed);
    idle.end_search(idle_kind::roamer);  // the woken one is a searcher; it stops
    return s.m_waker_cpu;
  }
};

TEST(WakePlacement, AWakerThatRunsOnRecordsItsCpuWhereTheArenaSpreads) {
  {
    listed_sleeper l(true);
    EXPECT_EQ(l.s.m_waker_cpu, -1) << "a sleeper starts without a waker";
    const int cpu = l.wake(true);
    EXPECT_GE(cpu, 0);
    EXPECT_LT(cpu, CPU_SETSIZE);
    // It sleeps again: the old record goes.
    l.idle.begin_search(idle_kind::roamer);
    l.idle.prepare_sleep(l.s, idle_kind::roamer);
    EXPECT_EQ(l.s.m_waker_cpu, -1);
    EXPECT_EQ(l.wake(false), -1) << "an outside publisher (inject) records nothing";
  }
  {
    listed_sleeper l(false);
    EXPECT_EQ(l.wake(true), -1) << "an arena that does not spread records nothing";
  }
}

TEST(WakePlacement, OnlyTheExecutorsOwnThreadsStepOff) {
  mask_guard guard;
  REQUIRE_TWO_CPUS(guard.saved());
  // A user's thread (here the test's own thread) keeps its CPU even if a waker recorded it.
  heist::detail::thread_context& mine = heist::detail::current_context();
  ASSERT_EQ(mine.worker_of(), nullptr);
  heist::detail::sleeper_of(mine).m_waker_cpu = heist::detail::current_cpu();
  EXPECT_EQ(heist::detail::step_off_waker_cpu(mine), -1);
  heist::detail::sleeper_of(mine).m_waker_cpu = -1;

  // A worker moves: inside a task the worker is not listed, so setting the record by hand
  // stands for a waker that ran on the same CPU. The OS may move the worker between the two
  // reads of its CPU; then nothing happens and the round is tried again.
  heist::executor ex(1);
  int moves = 0;
  bool wrong = false;
  run_on_a_worker(ex, [&] {
    heist::detail::thread_context& c = heist::detail::current_context();
    for (int round = 0; round < 200 && moves < 20; ++round) {
      const int cpu = heist::detail::current_cpu();
      heist::detail::sleeper_of(c).m_waker_cpu = cpu;
      const int moved_to = heist::detail::step_off_waker_cpu(c);
      if (moved_to >= 0) {
        ++moves;
        if (moved_to == cpu || !same_mask(mask_of_this_thread(), guard.saved())) wrong = true;
      }
      heist::detail::sleeper_of(c).m_waker_cpu =
          cpu + 1000;  // a CPU it does not run on: never moves
      if (heist::detail::step_off_waker_cpu(c) != -1) wrong = true;
    }
    heist::detail::sleeper_of(c).m_waker_cpu = -1;
  });
  EXPECT_GT(moves, 0);
  EXPECT_FALSE(wrong);
}

// Bursts of fork-join separated by pauses long enough for the workers to park: each burst
// wakes them through spawns (the spreading path). Every worker's mask at stop is the one it
// started with, and a mask a user narrowed in on_worker_start is never widened.
void bursts(heist::executor& ex, int count) {
  for (int b = 0; b < count; ++b) {
    const long v = ex.submit([] { return heist_test::fork_join_fib(16); }).get();
    ASSERT_EQ(v, 987);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

TEST(WakePlacement, WorkersEndWithTheMasksTheyStartedWith) {
  const cpu_set_t all = mask_of_this_thread();
  const auto cpus = static_cast<std::size_t>(CPU_COUNT(&all));
  std::mutex lock;
  std::vector<cpu_set_t> at_start(cpus), at_stop(cpus);
  heist::executor_options o;
  o.num_workers = cpus;
  o.on_worker_start = [&](std::size_t i) {
    const std::lock_guard<std::mutex> g(lock);
    at_start[i] = mask_of_this_thread();
  };
  o.on_worker_stop = [&](std::size_t i) {
    const std::lock_guard<std::mutex> g(lock);
    at_stop[i] = mask_of_this_thread();
  };
  {
    heist::executor ex(o);
    bursts(ex, 100);
  }
  for (std::size_t i = 0; i < cpus; ++i) {
    EXPECT_TRUE(same_mask(at_start[i], all)) << "worker " << i;
    EXPECT_TRUE(same_mask(at_stop[i], all)) << "worker " << i;
  }
}

TEST(WakePlacement, AMaskTheUserNarrowedStaysNarrow) {
  const cpu_set_t all = mask_of_this_thread();
  REQUIRE_TWO_CPUS(all);
  // Every worker pinned to the same single CPU: they must share it; none moves off.
  const int cpu = first_cpu(all);
  std::atomic<int> elsewhere{0};
  std::mutex lock;
  std::vector<cpu_set_t> at_stop(2);
  heist::executor_options o;
  o.num_workers = 2;
  o.on_worker_start = [&](std::size_t) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
  };
  o.on_worker_stop = [&](std::size_t i) {
    const std::lock_guard<std::mutex> g(lock);
    at_stop[i] = mask_of_this_thread();
  };
  {
    heist::executor ex(o);
    for (int b = 0; b < 50; ++b) {
      run_on_a_worker(ex, [&] {
        heist::task_group g;
        for (int k = 0; k < 8; ++k) {
          g.run([&] {
            if (heist::detail::current_cpu() != cpu) elsewhere.fetch_add(1);
          });
        }
        g.wait();
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  EXPECT_EQ(elsewhere.load(), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  for (const cpu_set_t& m : at_stop)
    EXPECT_TRUE(same_mask(m, one));
}

// Where a fresh executor's workers start (wake_placement.hpp).
// Each initial worker ran on a CPU of its own, taken from the creator's mask, before its
// on_worker_start; then it held the creator's whole mask again. Returns each worker's
// start_cpu() and whether its mask at on_worker_start was the creator's.
struct start_record {
  std::vector<int> cpu;
  std::vector<bool> mask_restored;
};
start_record start_workers_under(const cpu_set_t& creator_mask, std::size_t workers) {
  mask_guard guard;
  EXPECT_EQ(sched_setaffinity(0, sizeof creator_mask, &creator_mask), 0);
  start_record r{std::vector<int>(workers, -2), std::vector<bool>(workers, false)};
  std::mutex lock;
  heist::executor_options o;
  o.num_workers = workers;
  o.on_worker_start = [&](std::size_t i) {
    const std::lock_guard<std::mutex> g(lock);
    r.cpu[i] = heist::detail::start_cpu();
    r.mask_restored[i] = same_mask(mask_of_this_thread(), creator_mask);
  };
  {
    heist::executor ex(o);
    EXPECT_TRUE(heist_test::eventually([&] {
      const std::lock_guard<std::mutex> g(lock);
      for (int c : r.cpu) {
        if (c == -2) return false;
      }
      return true;
    }));
  }
  return r;
}

TEST(WakePlacement, AFreshExecutorsWorkersStartOnCpusOfTheirOwn) {
  const cpu_set_t all = mask_of_this_thread();
  REQUIRE_TWO_CPUS(all);
  const auto cpus = static_cast<std::size_t>(CPU_COUNT(&all));
  for (std::size_t workers : {std::size_t{2}, cpus}) {
    const start_record r = start_workers_under(all, workers);
    cpu_set_t seen;
    CPU_ZERO(&seen);
    for (std::size_t i = 0; i < workers; ++i) {
      EXPECT_TRUE(r.mask_restored[i]) << "worker " << i << " kept its start CPU as its mask";
      ASSERT_GE(r.cpu[i], 0) << "worker " << i << " was not placed";
      EXPECT_TRUE(CPU_ISSET(r.cpu[i], &all)) << "worker " << i << " on CPU " << r.cpu[i];
      EXPECT_FALSE(CPU_ISSET(r.cpu[i], &seen)) << "two workers started on CPU " << r.cpu[i];
      CPU_SET(r.cpu[i], &seen);
    }
  }
}

TEST(WakePlacement, StartCpusComeFromTheCreatorsMask) {
  const cpu_set_t all = mask_of_this_thread();
  if (CPU_COUNT(&all) < 3) GTEST_SKIP() << "needs three CPUs in the mask";
  // The creator narrowed to its two highest CPUs: the workers start on exactly those.
  cpu_set_t two;
  CPU_ZERO(&two);
  for (int i = CPU_SETSIZE - 1, n = 0; i >= 0 && n < 2; --i) {
    if (CPU_ISSET(i, &all)) {
      CPU_SET(i, &two);
      ++n;
    }
  }
  const start_record r = start_workers_under(two, 2);
  EXPECT_NE(r.cpu[0], r.cpu[1]);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(r.cpu[i] >= 0 && CPU_ISSET(r.cpu[i], &two)) << "worker " << i << ": " << r.cpu[i];
    EXPECT_TRUE(r.mask_restored[i]) << "worker " << i;
  }
}

TEST(WakePlacement, NoStartPlacementWhereWorkersCannotSpread) {
  const cpu_set_t all = mask_of_this_thread();
  // One CPU for the creator: nothing to spread over. More workers than CPUs: sharing is
  // unavoidable. Either way the workers are not placed and keep the creator's mask.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first_cpu(all), &one);
  const start_record single = start_workers_under(one, 2);
  const start_record crowded =
      start_workers_under(all, static_cast<std::size_t>(CPU_COUNT(&all)) + 1);
  for (const start_record* r : {&single, &crowded}) {
    for (std::size_t i = 0; i < r->cpu.size(); ++i) {
      EXPECT_EQ(r->cpu[i], -1) << "worker " << i;
      EXPECT_TRUE(r->mask_restored[i]) << "worker " << i;
    }
  }
}

}  // namespace
