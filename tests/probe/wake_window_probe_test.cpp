// Window probes for wake placement (include/heist/detail/sleep/wake_placement.hpp): a waker held
// right after its signal (where it yields its CPU), and a woken worker held right before it
// steps off its waker's CPU; and for the first look (src/core/search.cpp): a worker held after an
// unregistered search round found nothing. Each hook holds its window open (200 ms to 1 s), as an
// OS that deschedules the thread there would. They need the perturbation build (preset perturb) and
// are skipped elsewhere; they also skip where the process may use only one CPU (no spreading).
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>

#include "heist/detail/sleep/wake_placement.hpp"
#include "heist/heist.hpp"
#include "probe_support.hpp"
#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using heist_test::eventually;
using heist_test::watchdog;

using namespace heist_test::probe;

bool process_may_spread() {
  return heist::detail::spread_wakes(2);
}

#if HEIST_PERTURB
// Holds the first thread that reaches the hooked point once armed (50 ms unless told), as an
// OS that deschedules it there would; `holding` is true meanwhile, `released` once it is over.
struct hold_once {
  std::atomic<bool> armed{false};
  std::atomic<bool> holding{false};
  std::atomic<bool> released{false};
  std::atomic<int> held{0};
  std::thread::id holder;  // written before `holding`
  std::chrono::milliseconds hold{50};
  void install(perturb::point p) { perturb::set_hook(p, &hook, this); }
  static void hook(perturb::point, void* arg) {
    auto& s = *static_cast<hold_once*>(arg);
    if (!s.armed.exchange(false)) return;
    s.holder = std::this_thread::get_id();
    s.holding = true;
    s.held.fetch_add(1);
    std::this_thread::sleep_for(s.hold);
    s.holding = false;
    s.released = true;
  }
};
#endif

// A task spawns into a pool whose other worker sleeps, which wakes it; the waker is then held
// at its yield (as if the OS ran something else there). The woken worker is already a
// searcher: it steals the child and runs it before the waker comes back. (Not "while the
// waker is held": the hook runs after the futex wake, and a woken worker that the OS runs
// on the waker's CPU at once, preempting it, may run the child before the waker even
// reaches the hook; a CI run saw that.)
TEST(WakeWindowProbe, AWakerHeldAtItsYieldDoesNotHoldUpTheWokenWorker) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  if (!process_may_spread()) GTEST_SKIP() << "needs two CPUs";
  watchdog dog("AWakerHeldAtItsYieldDoesNotHoldUpTheWokenWorker", 60s);
  hold_once st;
  // Long enough that a woken worker slowed by the other tests running beside it (a loaded CI
  // machine) still steals within it; a worker that waited for its waker would wait all of it.
  st.hold = 1000ms;
  st.install(perturb::point::waker_yielding);
  heist::executor ex(2);
  std::this_thread::sleep_for(20ms);  // both workers park
  std::atomic<bool> child_ran_before_release{false};
  std::thread::id parent_thread, child_thread;
  std::latch done(1);
  ex.post([&] {
    parent_thread = std::this_thread::get_id();
    heist::task_group g;
    st.armed = true;  // the spawn below wakes the sleeping worker: hold its waker (us)
    g.run([&] {
      child_thread = std::this_thread::get_id();
      child_ran_before_release = !st.released.load();
    });
    g.wait();
    done.count_down();
  });
  done.wait();
  EXPECT_EQ(st.held.load(), 1) << "the spawn did not wake the sleeping worker";
  EXPECT_NE(child_thread, parent_thread);
  EXPECT_TRUE(child_ran_before_release.load()) << "the woken worker waited for its waker";
  perturb::clear_hooks();
#endif
}

// Both workers pinned to one CPU by the user (on_worker_start), so a woken worker always finds
// itself on its waker's CPU. Held there before it steps off, it already counts as a searcher:
// a task posted during the hold, when the other worker has parked, wakes nobody (the
// publisher sees a searcher), and the held worker runs it once released. After, the pinned
// masks are still the user's (one CPU: the step-off leaves them alone).
TEST(WakeWindowProbe, AWokenWorkerHeldBeforeSteppingOffStillCountsAsASearcher) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  if (!process_may_spread()) GTEST_SKIP() << "needs two CPUs";
  watchdog dog("AWokenWorkerHeldBeforeSteppingOffStillCountsAsASearcher", 60s);
  const cpu_set_t all = heist_test::this_thread_mask();
  ASSERT_NE(CPU_COUNT(&all), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &all))
    ++cpu;
  hold_once st;
  st.hold = 500ms;  // long enough for the steps below even under TSan on a busy machine
  st.install(perturb::point::wakee_stepping_off);
  heist::executor_options o;
  o.num_workers = 2;  // a two-CPU process spreads with two workers
  o.on_worker_start = [cpu](std::size_t) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
  };
  std::atomic<bool> mask_kept{true};
  o.on_worker_stop = [cpu, &mask_kept](std::size_t) {
    const cpu_set_t m = heist_test::this_thread_mask();
    if (CPU_COUNT(&m) != 1 || !CPU_ISSET(cpu, &m)) mask_kept = false;
  };
  std::atomic<bool> x_ran{false};
  std::thread::id x_thread;
  {
    heist::executor ex(o);
    std::this_thread::sleep_for(20ms);  // both workers park
    std::atomic<bool> child_ran{false};
    ex.post([&] {
      heist::task_group g;
      st.armed = true;  // this spawn wakes the other worker: hold it before it steps off
      g.run([&] { child_ran = true; });
      g.wait();
    });
    ASSERT_TRUE(eventually([&] { return st.holding.load(); }, 5s))
        << "the woken worker never reached its step-off check";
    // Its waker runs the child itself meanwhile, then parks.
    ASSERT_TRUE(eventually([&] { return child_ran.load(); }, 1s));
    std::this_thread::sleep_for(10ms);  // the waker parks meanwhile
    ASSERT_TRUE(st.holding.load()) << "the hold ended too early for this test";
    ex.post([&] {
      x_thread = std::this_thread::get_id();
      x_ran = true;
    });
    ASSERT_TRUE(eventually([&] { return x_ran.load(); }, 5s)) << "the task posted was lost";
  }
  EXPECT_EQ(x_thread, st.holder) << "a second worker was woken for work the held one takes";
  EXPECT_TRUE(mask_kept.load()) << "a one-CPU mask the user set was changed";
  perturb::clear_hooks();
#endif
}

// A worker out of work makes its first search round before it counts as a searcher (the
// first look, src/core/search.cpp). Held right after that round found nothing, it is to publishers
// what a busy thread is: a task posted meanwhile wakes the sleeping worker, which runs it
// while the held one is still held.
TEST(WakeWindowProbe, AWorkerOnItsFirstLookSuppressesNoWakeUp) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("AWorkerOnItsFirstLookSuppressesNoWakeUp", 60s);
  hold_once st;
  st.hold = 500ms;  // long enough for the steps below even under TSan on a busy machine
  st.install(perturb::point::search_registering);
  heist::executor ex(2);
  std::this_thread::sleep_for(20ms);  // both workers park
  std::atomic<bool> t_ran{false}, x_ran{false}, x_ran_while_held{false};
  std::thread::id t_thread, x_thread;
  st.armed = true;  // the worker woken for t searches after it: hold its first look
  ex.post([&] {
    t_thread = std::this_thread::get_id();
    t_ran = true;
  });
  ASSERT_TRUE(eventually([&] { return st.holding.load(); }, 5s))
      << "the worker that ran t never made a first look";
  ASSERT_TRUE(t_ran.load());
  ex.post([&] {
    x_thread = std::this_thread::get_id();
    x_ran_while_held = st.holding.load();
    x_ran = true;
  });
  ASSERT_TRUE(eventually([&] { return x_ran.load(); }, 5s)) << "the task posted was lost";
  EXPECT_EQ(st.holder, t_thread);
  EXPECT_NE(x_thread, st.holder);
  EXPECT_TRUE(x_ran_while_held.load())
      << "a worker on its first look counted as a searcher: the sleeper was not woken";
  perturb::clear_hooks();
#endif
}

// Start placement (wake_placement.hpp): the creator is held after a new worker's thread
// started and before it narrowed that thread to its CPU. The worker must wait for the mark
// rather than take the creator's mask back first (the creator's narrowing would then be the
// last word and pin it to one CPU for good): at on_worker_start every worker has the
// creator's whole mask and started on a CPU of its own.
TEST(WakeWindowProbe, AWorkerWaitsForItsCreatorToPlaceItBeforeTakingItsMaskBack) {
  HEIST_NEEDS_PERTURB();
  if (!process_may_spread()) GTEST_SKIP() << "needs two CPUs";
#if HEIST_PERTURB
  watchdog dog("AWorkerWaitsForItsCreatorToPlaceItBeforeTakingItsMaskBack", 60s);
  struct hold_every {
    std::atomic<int> held{0};
    static void hook(perturb::point, void* arg) {
      static_cast<hold_every*>(arg)->held.fetch_add(1);
      std::this_thread::sleep_for(50ms);  // the new worker runs meanwhile
    }
  } st;
  perturb::set_hook(perturb::point::start_placing, &hold_every::hook, &st);
  const cpu_set_t creator = heist_test::this_thread_mask();
  ASSERT_NE(CPU_COUNT(&creator), 0);
  std::atomic<int> started{0}, whole_mask{0}, whole_mask_at_stop{0};
  int cpu[2] = {-2, -2};
  heist::executor_options o;
  o.num_workers = 2;
  o.on_worker_start = [&](std::size_t i) {
    if (heist_test::same_mask(heist_test::this_thread_mask(), creator)) whole_mask.fetch_add(1);
    cpu[i] = heist::detail::start_cpu();
    started.fetch_add(1);  // publishes cpu[i] to the test thread (seq_cst)
  };
  o.on_worker_stop = [&](std::size_t) {
    if (heist_test::same_mask(heist_test::this_thread_mask(), creator)) {
      whole_mask_at_stop.fetch_add(1);
    }
  };
  {
    heist::executor ex(o);
    ASSERT_TRUE(eventually([&] { return started.load() == 2; }));
  }
  perturb::clear_hooks();
  EXPECT_EQ(st.held.load(), 2);
  EXPECT_EQ(whole_mask.load(), 2) << "a worker started with the one CPU it was narrowed to";
  EXPECT_EQ(whole_mask_at_stop.load(), 2) << "a worker kept the one CPU it was narrowed to";
  EXPECT_GE(cpu[0], 0);
  EXPECT_GE(cpu[1], 0);
  EXPECT_NE(cpu[0], cpu[1]);
#endif
}

}  // namespace
