// Deterministic tests for races whose window is a few instructions wide: the sleep protocol's,
// and the windows of the later protocols. Each installs a perturbation hook
// (include/heist/detail/diagnostics/perturb.hpp) at the protocol step where the window opens and
// holds it open long enough for the other threads to do what a busy machine would let them do. They
// need the perturbation build (the `perturb` preset) and are skipped in every other build.
// The joins' probes are in join_window_probe_test.cpp; those of graphs, pipelines and futures
// in composition_window_probe_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "probe_support.hpp"
#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using heist_test::eventually;
using heist_test::watchdog;

using namespace heist_test::probe;

// Bug 4. An isolated waiter pops a task of another region and pushes it back. Meanwhile an
// idle worker looked at the (momentarily empty) deque and parked; the push back woke nobody
// and the task sat there while a task of the waiter's group waited for it.
TEST(WindowProbe, IsolatedWaiterPushBackWakesASleeper) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("IsolatedWaiterPushBackWakesASleeper", 60s);
  struct state {
    std::atomic<int> fired{0};
  } st;
  perturb::set_hook(
      perturb::point::isolate_rejected,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        // The first time only: hold the window open while the idle worker searches and parks.
        if (s.fired.fetch_add(1) == 0) std::this_thread::sleep_for(50ms);
      },
      &st);
  heist::executor ex(3);
  std::atomic<bool> g1_started{false}, x_ran{false}, x_in_time{false}, done{false};
  ex.post([&] {
    heist::isolate([&] {
      heist::task_group g;
      g.run([&] {
        g1_started = true;
        x_in_time = eventually([&] { return x_ran.load(); }, 3s);
      });
      // Another worker takes g1; then a task of another region lands on top of this deque.
      eventually([&] { return g1_started.load(); });
      heist::isolate([&] { ex.post([&] { x_ran = true; }); });
      g.wait();
    });
    done = true;
  });
  EXPECT_TRUE(eventually([&] { return done.load(); }, 20s));
  ex.wait_idle();
  EXPECT_TRUE(x_in_time.load()) << "the pushed-back task waited for its owner's wait to end";
#endif
}

// A worker out of work takes a batch from the injection queue (search_once): it runs the
// first task and pushes the others onto its deque. Held between the two (as an OS that
// deschedules it there would), the batch's other task is in neither place, and the other
// worker, finding nothing, parks. The push must then wake it: the first task waits for the
// second to run elsewhere, and a push that woke nobody would leave it waiting out its 5 s.
TEST(WindowProbe, ABatchPushedAfterTheOtherWorkerParkedWakesIt) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("ABatchPushedAfterTheOtherWorkerParkedWakesIt", 60s);
  struct state {
    std::atomic<bool> armed{false};
    std::atomic<int> held{0};
  } st;
  perturb::set_hook(
      perturb::point::inject_batch_taken,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        if (!s.armed.exchange(false)) return;
        s.held.fetch_add(1);
        std::this_thread::sleep_for(300ms);  // the other worker searches and parks
      },
      &st);
  heist::executor ex(2);
  // Both workers busy, so that the two tasks below queue up and no post wakes anybody.
  heist_test::occupied_workers busy(ex, 2);
  std::atomic<int> arrived{0};
  std::atomic<bool> first_met{false};
  std::thread::id first_thread, second_thread;
  ex.post([&] {
    first_thread = std::this_thread::get_id();
    arrived.fetch_add(1);
    first_met = eventually([&] { return arrived.load() == 2; }, 5s);
  });
  ex.post([&] {
    second_thread = std::this_thread::get_id();
    arrived.fetch_add(1);
  });
  st.armed = true;
  busy.release();
  ASSERT_TRUE(eventually([&] { return first_met.load() || arrived.load() == 2; }, 20s));
  ex.wait_idle();
  EXPECT_EQ(st.held.load(), 1) << "no worker took the two tasks as a batch";
  EXPECT_TRUE(first_met.load()) << "the batch's second task waited for its taker's first";
  EXPECT_NE(first_thread, second_thread);
#endif
}

// Bug 5. The main thread, a helper in g.wait(), is the only searcher when an outside thread
// posts: the publisher sees a searcher and wakes nobody. The helper's wait is over, and it
// left without a last look: the task stayed queued while the only worker slept.
TEST(WindowProbe, LastSearcherLeavingLooksOnceMore) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("LastSearcherLeavingLooksOnceMore", 60s);
  struct state {
    std::thread::id main;
    std::atomic<bool> armed{false};
    heist::executor* ex = nullptr;
    std::atomic<bool> y_ran{false};
  } st;
  st.main = std::this_thread::get_id();
  heist::executor ex(1);
  st.ex = &ex;
  perturb::set_hook(
      perturb::point::search_leaving,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        if (std::this_thread::get_id() != s.main || !s.armed.exchange(false)) return;
        std::this_thread::sleep_for(20ms);  // the worker finishes t1, searches and parks
        std::thread poster([&s] { s.ex->post([&s] { s.y_ran = true; }); });
        poster.join();  // published while the main thread still counts as a searcher
      },
      &st);
  heist::task_group g(ex);
  std::atomic<bool> t1_started{false};
  g.run([&] {
    t1_started = true;
    std::this_thread::sleep_for(30ms);
  });
  ASSERT_TRUE(eventually([&] { return t1_started.load(); }));
  st.armed = true;
  g.wait();
  EXPECT_TRUE(eventually([&] { return st.y_ran.load(); }, 3s))
      << "a task posted while the last searcher left was not run";
  perturb::clear_hooks();
#endif
}

// Bug 6. A second finisher of a group (a run() concurrent with the end of wait()) signalled
// the waiter again after the first signal; the stale signal later ended another wait while
// that wait's real finisher had yet to read the waiter's frame.
TEST(WindowProbe, StaleGroupSignalCannotEndALaterWait) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("StaleGroupSignalCannotEndALaterWait", 60s);
  struct state {
    std::thread::id main;
    std::atomic<int> phase{0};  // 1: first wait, 2: second wait
    heist::task_group* g1 = nullptr;
    std::atomic<bool> woken_once{false};
    std::atomic<bool> t2_counted{false}, t2_ran{false};
    std::atomic<bool> f_in_window{false}, g2_returned{false}, early{false};
    std::atomic<int> finish_hooks{0};
  } st;
  st.main = std::this_thread::get_id();
  heist::executor ex(2);
  perturb::set_hook(
      perturb::point::group_waiter_woken,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        if (std::this_thread::get_id() != s.main || s.phase.load() != 1 ||
            s.woken_once.exchange(true)) {
          return;
        }
        // The first wait is ending: a concurrent run() adds t2, which finishes at once.
        std::thread q([&s] { s.g1->run([&s] { s.t2_ran = true; }); });
        q.join();
        eventually([&s] { return s.t2_counted.load() || s.t2_ran.load(); }, 2s);
        std::this_thread::sleep_for(10ms);
      },
      &st);
  perturb::set_hook(
      perturb::point::group_finish_counted,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        if (s.phase.load() == 1 && s.woken_once.load() && !s.t2_counted.load()) {
          // t2's finisher believes a waiter sleeps: it signals once the second wait's real
          // finisher is inside its own window.
          s.t2_counted = true;
          eventually([&s] { return s.f_in_window.load(); }, 3s);
          return;
        }
        if (s.phase.load() == 2 && s.finish_hooks.fetch_add(1) == 0) {
          s.f_in_window = true;
          std::this_thread::sleep_for(100ms);
          if (s.g2_returned.load()) s.early = true;
        }
      },
      &st);
  heist::task_group g1(ex);
  st.g1 = &g1;
  st.phase = 1;
  // Each waited task must be running on a worker before the wait begins (else the waiter
  // would take it from the queue and run it itself, and never sleep).
  std::atomic<bool> t1_started{false}, t3_started{false};
  g1.run([&] {
    t1_started = true;
    std::this_thread::sleep_for(20ms);
  });
  ASSERT_TRUE(eventually([&] { return t1_started.load(); }));
  g1.wait();
  eventually([&] { return st.t2_ran.load(); }, 2s);
  g1.wait();
  {
    heist::task_group g2(ex);
    st.phase = 2;
    g2.run([&] {
      t3_started = true;
      std::this_thread::sleep_for(30ms);
    });
    ASSERT_TRUE(eventually([&] { return t3_started.load(); }));
    g2.wait();
    st.g2_returned = true;
    // Keep g2 alive until its finisher left the window: the bug is the early return, which
    // the flag records; a use after free would be a second failure.
    eventually([&] { return st.finish_hooks.load() > 0; }, 2s);
    std::this_thread::sleep_for(120ms);
  }
  EXPECT_FALSE(st.early.load()) << "a wait returned before its last task's finisher signalled";
  perturb::clear_hooks();
#endif
}

}  // namespace

// Idle workers retire. A worker's park timed out and it called on_worker_stop, but
// has not yet handed its place to its placeholder (R1-R2), when work arrives: the waker takes
// the worker itself off the list, so the retirement must fail and the worker must run it.
TEST(WindowProbe, WorkArrivesWhileAWorkerRetires) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("WorkArrivesWhileAWorkerRetires", 60s);
  struct state {
    std::atomic<int> fired{0};
    std::atomic<bool> in_window{false};
  } st;
  perturb::set_hook(
      perturb::point::worker_retiring,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        if (s.fired.fetch_add(1) == 0) {
          s.in_window = true;
          std::this_thread::sleep_for(100ms);
        }
      },
      &st);
  heist::executor_options o;
  o.num_workers = 1;
  o.idle_timeout = 20ms;
  std::atomic<int> starts{0}, stops{0};
  o.on_worker_start = [&](std::size_t) { starts.fetch_add(1); };
  o.on_worker_stop = [&](std::size_t) { stops.fetch_add(1); };
  heist::executor ex(o);
  ASSERT_TRUE(eventually([&] { return st.in_window.load(); }, 10s));
  std::atomic<bool> ran{false};
  ex.post([&] { ran = true; });  // wakes the still-listed worker
  EXPECT_TRUE(eventually([&] { return ran.load(); }, 10s)) << "the task waited for nobody";
  ex.shutdown();
  EXPECT_EQ(starts.load(), stops.load());
  EXPECT_GE(starts.load(), 2) << "the worker did not go on after its failed retirement";
#endif
}

// A retired worker's placeholder was taken off the list by a waker, but the new thread is not
// started yet (worker_threads::restart), while more work arrives: the later publications see a
// searcher and wake nobody, so the restarted thread must find all of it.
TEST(WindowProbe, WorkArrivesWhileARetiredWorkerRestarts) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("WorkArrivesWhileARetiredWorkerRestarts", 60s);
  perturb::set_hook(
      perturb::point::worker_restarting,
      [](perturb::point, void*) { std::this_thread::sleep_for(30ms); }, nullptr);
  heist::executor_options o;
  o.num_workers = 1;
  o.idle_timeout = 5ms;
  heist::executor ex(o);
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(50ms);  // the worker retires
    std::atomic<int> ran{0};
    std::thread other([&] {
      for (int i = 0; i < 10; ++i)
        ex.post([&] { ran.fetch_add(1); });
    });
    for (int i = 0; i < 10; ++i)
      ex.post([&] { ran.fetch_add(1); });
    other.join();
    EXPECT_TRUE(eventually([&] { return ran.load() == 20; }, 10s)) << ran.load();
  }
#endif
}

// Polled completions. A registrant counted an item as pending but has not yet
// fenced and looked for a sleeper (poll_registered) while the only worker searches, finds
// nothing and parks: either the worker's S4 sees the item pending (timed park, polls) or the
// registrant sees it asleep and wakes it. The item completes and its continuation runs.
#if HEIST_PERTURB
namespace {
class one_flag_poller : public heist::detail::poller {
 public:
  std::atomic<bool> ready{false};
  heist::promise<int> done;
  void add(heist::detail::executor_impl& exec) {
    add_pending(1);
    heist::detail::notify_poll_pending(exec);
  }
  bool poll() noexcept override {
    if (!ready.load() || pending() == 0) return false;
    remove_pending(1);
    done.set_value(1);
    return true;
  }
};
}  // namespace
#endif

TEST(WindowProbe, PolledItemRegisteredWhileTheWorkerParks) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("PolledItemRegisteredWhileTheWorkerParks", 60s);
  perturb::set_hook(
      perturb::point::poll_registered,
      [](perturb::point, void*) { std::this_thread::sleep_for(20ms); }, nullptr);
  heist::executor ex(1);
  for (int round = 0; round < 10; ++round) {
    auto& impl = heist::detail_impl(ex);
    one_flag_poller* p = nullptr;
    if (round == 0) {
      p = static_cast<one_flag_poller*>(&heist::detail::install_poller(
          impl, [](heist::detail::executor_impl&) -> std::unique_ptr<heist::detail::poller> {
            return std::make_unique<one_flag_poller>();
          }));
    } else {
      p = static_cast<one_flag_poller*>(heist::detail::installed_poller(impl));
      p->done = heist::promise<int>();
      p->ready = false;
    }
    std::this_thread::sleep_for(5ms);  // the worker parks
    heist::future<int> f = p->done.get_future();
    std::atomic<bool> ran{false};
    auto g = f.then(ex, [&ran](int v) {
      ran = true;
      return v;
    });
    p->ready = true;  // completes at the first poll
    p->add(impl);     // the hook holds the window between counting and waking
    EXPECT_TRUE(eventually([&] { return ran.load(); }, 10s)) << "round " << round;
    EXPECT_EQ(g.get(), 1);
  }
#endif
}
