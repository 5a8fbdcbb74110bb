// Deterministic tests for the windows of the composition protocols: graphs and pipelines
// and futures. As in window_probe_test.cpp, each installs a
// perturbation hook (include/heist/detail/diagnostics/perturb.hpp) where its window opens and holds
// it open; they need the perturbation build (the `perturb` preset) and are skipped elsewhere.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
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

#if HEIST_PERTURB
// An exception that counts its live copies, and a hook that holds a completing thread until
// the caller has handled the error and dropped every reference it had, then records how many
// copies are left: the completer must hold none by then (see the probes below).
struct counted_error : std::runtime_error {
  counted_error(std::atomic<int>& live, const char* what)
      : std::runtime_error(what), m_live(&live) {
    m_live->fetch_add(1);
  }
  counted_error(const counted_error& other) : std::runtime_error(other), m_live(other.m_live) {
    m_live->fetch_add(1);
  }
  ~counted_error() override { m_live->fetch_sub(1); }
  std::atomic<int>* m_live;
};

struct delivered_error_watch {
  std::atomic<int> live{0};
  std::atomic<bool> armed{false}, dropped{false};
  std::atomic<int> live_at_completer{-1};
  const std::thread::id caller = std::this_thread::get_id();  // never held

  void arm() {
    dropped = false;
    live_at_completer = -1;
    armed = true;
  }
  static void hook(perturb::point, void* arg) {
    auto& s = *static_cast<delivered_error_watch*>(arg);
    if (std::this_thread::get_id() == s.caller || !s.armed.exchange(false)) return;
    eventually([&] { return s.dropped.load(); }, 10s);
    s.live_at_completer = s.live.load();
  }
  // One round: `make` returns a future that a worker completes with a counted_error. This
  // thread handles the error and drops the future, then asks what the completer still holds.
  template <class MakeFuture>
  void deliver_and_count(MakeFuture make, const char* what, int round) {
    arm();
    {
      auto f = make();
      // Not get() yet: a helping wait could run the work here, making this thread the
      // completer to hold. A worker completes it; get() then finds it ready.
      while (!f.is_ready())
        std::this_thread::yield();
      try {
        (void)f.get();
        ADD_FAILURE() << "no exception";
      } catch (const counted_error& e) {
        EXPECT_STREQ(e.what(), what);
      }
    }  // the future is gone: this thread holds nothing
    dropped = true;
    eventually([&] { return live_at_completer.load() >= 0; }, 10s);
    EXPECT_EQ(live_at_completer.load(), 0) << "round " << round;
  }
};

#endif

}  // namespace

// Graphs and pipelines. The pipeline's input suspends itself (a CAS puts the
// "input waits" marker on the free-token stack) and its task goes on carrying its item,
// while the item that frees the next token restarts the input on another thread. A delay
// right after the suspension let the old task overwrite the new input's reservation (seen
// as a crash in the benchmark before the fix). Here the window is held open every time.
TEST(WindowProbe, PipelineInputRestartedWhileItsOldTaskStillRuns) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("PipelineInputRestartedWhileItsOldTaskStillRuns", 60s);
  perturb::set_hook(
      perturb::point::pipeline_input_suspended,
      [](perturb::point, void*) { std::this_thread::sleep_for(200us); }, nullptr);
  heist::executor ex(2);
  for (std::size_t tokens : {1u, 2u, 3u}) {
    int next = 0;
    std::vector<int> out;
    heist::parallel_pipeline(ex, tokens,
                             heist::make_filter<void, int>(heist::filter_mode::serial_in_order,
                                                           [&](heist::flow_control& fc) {
                                                             if (next == 400) fc.stop();
                                                             return next++;
                                                           }) &
                                 heist::make_filter<int, int>(heist::filter_mode::parallel,
                                                              [](int i) {
                                                                // Long enough that items are handed
                                                                // off.
                                                                std::this_thread::sleep_for(2us);
                                                                return i;
                                                              }) &
                                 heist::make_filter<int, void>(heist::filter_mode::serial_in_order,
                                                               [&](int i) { out.push_back(i); }));
    ASSERT_EQ(out.size(), 400u) << tokens << " tokens";
    for (int i = 0; i < 400; ++i)
      ASSERT_EQ(out[static_cast<std::size_t>(i)], i);
  }
#endif
}

// A graph request completes (its future not yet ready) while other threads queue runs of
// the same graph and wait for them: every run is served once, in order, and the thread
// completing the last one never touches the graph after the destructor may run.
TEST(WindowProbe, GraphRequestsQueueWhileOneCompletes) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("GraphRequestsQueueWhileOneCompletes", 60s);
  perturb::set_hook(
      perturb::point::graph_run_completing,
      [](perturb::point, void*) { std::this_thread::sleep_for(100us); }, nullptr);
  heist::executor ex(2);
  std::atomic<int> runs{0};
  for (int round = 0; round < 20; ++round) {
    auto g = std::make_unique<heist::task_graph>();
    auto a = g->emplace([&] { runs.fetch_add(1); });
    auto b = g->emplace([] {});
    a.precede(b);
    std::vector<std::thread> callers;
    for (int t = 0; t < 3; ++t) {
      callers.emplace_back([&] {
        for (int i = 0; i < 5; ++i)
          g->run(ex).get();
      });
    }
    for (auto& t : callers)
      t.join();
    (void)g->run_n(ex, 3);
    g.reset();  // waits for the last request; its completer is still in the window
  }
  EXPECT_EQ(runs.load(), 20 * (15 + 3));
#endif
}

// A node task is about to return its weight (the last step of the run) while the node's
// successors are stolen and run on the other worker: the run ends once, after every node.
TEST(WindowProbe, GraphNodeTasksEndingLateDoNotEndTheRunEarly) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("GraphNodeTasksEndingLateDoNotEndTheRunEarly", 60s);
  perturb::set_hook(
      perturb::point::graph_node_done,
      [](perturb::point, void*) { std::this_thread::sleep_for(50us); }, nullptr);
  heist::executor ex(2);
  heist::task_graph g;
  std::atomic<int> ran{0};
  std::vector<heist::graph_node> nodes;
  for (int i = 0; i < 63; ++i) {  // a binary tree: many spawns, each with half a weight
    nodes.push_back(g.emplace([&] { ran.fetch_add(1); }));
    if (i > 0) nodes[static_cast<std::size_t>((i - 1) / 2)].precede(nodes.back());
  }
  for (int r = 1; r <= 30; ++r) {
    g.run(ex).get();
    ASSERT_EQ(ran.load(), 63 * r);
  }
#endif
}

// Asynchronous composition. A producer has stored a future's value and counted it
// down, but not yet taken the callback word, while a continuation and a co_await register on
// other threads: each registration either is taken by the producer or sees the ready marker
// and runs itself, never both, never neither.
TEST(WindowProbe, ContinuationsRegisteredWhileAFutureCompletes) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("ContinuationsRegisteredWhileAFutureCompletes", 60s);
  perturb::set_hook(
      perturb::point::future_completing,
      [](perturb::point, void*) { std::this_thread::sleep_for(50us); }, nullptr);
  heist::executor ex(2);
  std::atomic<int> ran{0};
  for (int round = 0; round < 200; ++round) {
    heist::promise<int> p;
    heist::future<int> f = p.get_future();
    std::thread producer([&] { p.set_value(round); });
    auto g = f.then([&](int v) {
      ran.fetch_add(1);
      return v;
    });
    ASSERT_EQ(g.get(), round);
    producer.join();
    heist::promise<int> q;
    heist::future<int> qf = q.get_future();
    auto awaiting = [&]() -> heist::task<int> { co_return co_await qf; };
    auto h = heist::start(ex, awaiting());
    std::thread([&] { q.set_value(round + 1); }).join();
    ASSERT_EQ(h.get(), round + 1);
  }
  EXPECT_EQ(ran.load(), 200);
#endif
}

// A blocked get() registers a signal on its stack as the future's callback, then helps or
// parks until the signal fires. Here the waiter is held between its registration and its
// first step, and the completer between storing the value and taking the callback, from an
// outside thread and from a worker, both blocking from inside and outside the pool: every get
// returns its value once, and no signal is touched after its waiter returned (the stack is
// reused by the next round at once).
TEST(WindowProbe, ABlockedGetsSignalFiresWhileItRegistersHelpsOrParks) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("ABlockedGetsSignalFiresWhileItRegistersHelpsOrParks", 60s);
  struct holds {
    std::atomic<int> waits{0};
  } st;
  perturb::set_hook(
      perturb::point::future_wait_registered,
      [](perturb::point, void* arg) {
        auto* s = static_cast<holds*>(arg);
        if (s->waits.fetch_add(1) % 2 == 0) std::this_thread::sleep_for(100us);
      },
      &st);
  perturb::set_hook(
      perturb::point::future_completing,
      [](perturb::point, void*) { std::this_thread::sleep_for(20us); }, nullptr);
  heist::executor ex(2);
  for (int round = 0; round < 200; ++round) {
    heist::promise<int> p;
    heist::future<int> f = p.get_future();
    std::thread producer([&] { p.set_value(round); });
    ASSERT_EQ(f.get(), round);  // outside the pool: registers, parks
    producer.join();
    auto inside = ex.submit([&ex, round] {
      heist::future<int> g = ex.submit([round] { return round + 1; });
      return g.get();  // a worker: registers, helps (runs the inner task itself or waits)
    });
    ASSERT_EQ(inside.get(), round + 1);
  }
  EXPECT_GT(st.waits.load(), 0);
#endif
}

// A graph run failed; its request completes and the caller's get() rethrows the error while
// the completing worker is still in complete(). The worker must hold no reference to the
// exception by then: the caller's handler reads what() and drops its copy, and if the
// worker's reference were the last, the worker would destroy the exception, ordered after
// the read only through libstdc++'s uninstrumented count (ThreadSanitizer reported the race
// in CI). Here the worker is held after the completion until the caller has dropped every
// reference it had; the error must already be gone.
TEST(WindowProbe, AGraphRunsErrorIsNotHeldByItsCompleterOnceDelivered) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("AGraphRunsErrorIsNotHeldByItsCompleterOnceDelivered", 60s);
  delivered_error_watch st;
  perturb::set_hook(perturb::point::graph_run_completed, delivered_error_watch::hook, &st);
  heist::executor ex(2);
  for (int round = 0; round < 20; ++round) {
    heist::task_graph g;
    auto a = g.emplace([] {});
    auto bad = g.emplace([&] { throw counted_error(st.live, "node failed"); });
    a.precede(bad);
    st.deliver_and_count([&] { return g.run(ex); }, "node failed", round);
  }
#endif
}

// The same for start(): a started task completes its future and releases it (its frame freed
// before). Nothing of the task may keep the error once it is delivered.
TEST(WindowProbe, AStartedTasksErrorIsNotHeldByItsFramesOnceDelivered) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("AStartedTasksErrorIsNotHeldByItsFramesOnceDelivered", 60s);
  delivered_error_watch st;
  perturb::set_hook(perturb::point::started_task_ending, delivered_error_watch::hook, &st);
  heist::executor ex(2);
  auto failing = [&]() -> heist::task<int> {
    co_await heist::schedule(ex);  // the rest runs on a worker
    throw counted_error(st.live, "task failed");
  };
  for (int round = 0; round < 20; ++round)
    st.deliver_and_count([&] { return heist::start(ex, failing()); }, "task failed", round);
#endif
}

// The same for then(): a continuation whose source failed skips its function and passes
// the error on; the worker running it frees the source after completing the result (held
// here right after that completion, the result ready), so the source must not keep the error.
TEST(WindowProbe, AnErrorPassedThroughAContinuationIsNotHeldByItsSource) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("AnErrorPassedThroughAContinuationIsNotHeldByItsSource", 60s);
  delivered_error_watch st;
  perturb::set_hook(perturb::point::future_completed, delivered_error_watch::hook, &st);
  heist::executor ex(2);
  std::atomic<int> ran{0};
  for (int round = 0; round < 20; ++round) {
    st.deliver_and_count(
        [&] {
          heist::promise<int> p;
          auto g = p.get_future().then([&](int v) {
            ran.fetch_add(1);
            return v;
          });
          // This thread completes the source (never held); a worker, the result.
          p.set_exception(std::make_exception_ptr(counted_error(st.live, "source failed")));
          return g;
        },
        "source failed", round);
  }
  EXPECT_EQ(ran.load(), 0);
#endif
}

#if HEIST_PERTURB
heist::task<long> probe_value_of(long i) {
  co_return i;
}
// Awaits n child tasks in a loop; `progress` counts the awaits that have resumed, each after
// its child's frame was destroyed (the task temporary ends with the statement).
heist::task<long> counted_await_loop(long n, std::atomic<long>& progress) {
  long sum = 0;
  for (long i = 0; i < n; ++i) {
    sum += co_await probe_value_of(i);
    progress.store(i + 1);
  }
  co_return sum;
}
#endif

// A task that ends below the stack's mark, in a build whose symmetric transfers keep stack
// frames (HEIST_AWAIT_STACK_GUARD), queues its awaiter as a task instead of transferring to
// it (resume.hpp, transfer_or_queue) and must not touch its own frame after the spawn: the
// awaiter may resume on the other worker at once and destroy that frame. Held at
// awaiter_queued until the awaiter has gone on past the await (its child's frame destroyed),
// or 200 ms: every await resumes once, with its value.
TEST(WindowProbe, AnAwaiterQueuedFromALowStackGoesOnWhileItsTaskReturns) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  if (!HEIST_AWAIT_STACK_GUARD) GTEST_SKIP() << "transfers are tail calls here: no stack guard";
  watchdog dog("AnAwaiterQueuedFromALowStackGoesOnWhileItsTaskReturns", 120s);
  struct state {
    std::atomic<long> progress{0};
    std::atomic<int> queued{0};
    std::atomic<int> windows{0};  // holds in which the awaiter went on elsewhere
  } st;
  perturb::set_hook(
      perturb::point::awaiter_queued,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        const long seen = s.progress.load();
        s.queued.fetch_add(1);
        for (int i = 0; i < 2000 && s.progress.load() == seen; ++i)
          std::this_thread::sleep_for(100us);
        if (s.progress.load() != seen) s.windows.fetch_add(1);
      },
      &st);
  heist::executor ex(2);
  const long n = 100000;
  for (int round = 0; round < 2; ++round) {
    st.progress = 0;
    EXPECT_EQ(heist::start(ex, counted_await_loop(n, st.progress)).get(), n * (n - 1) / 2);
    EXPECT_EQ(st.progress.load(), n);
  }
  perturb::set_hook(perturb::point::awaiter_queued, nullptr, nullptr);
  EXPECT_GT(st.queued.load(), 0) << "no await ended below the headroom mark";
  EXPECT_GT(st.windows.load(), 0) << "no queued awaiter went on while its task returned";
#endif
}
