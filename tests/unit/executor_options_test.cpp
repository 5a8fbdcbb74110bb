// executor_options: worker names, the worker start and stop hooks, and
// where exceptions that have no waiter go: a post() task's, a hook's, and the handler's own
// (kind: requirement).
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <latch>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {
// An on_unhandled_exception handler that keeps each exception's what(), from any thread.
struct collected_whats {
  std::mutex m;
  std::vector<std::string> messages;
  std::function<void(std::exception_ptr)> handler() {
    return [this](std::exception_ptr e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        std::lock_guard<std::mutex> lock(m);
        messages.emplace_back(ex.what());
      }
    };
  }
};
}  // namespace

TEST(Executor, PostExceptionGoesToHandlerAndPoolKeepsRunning) {
  collected_whats seen;
  heist::executor_options o;
  o.num_workers = 2;
  o.on_unhandled_exception = seen.handler();
  heist::executor ex(o);
  for (int i = 0; i < 10; ++i)
    ex.post([] { throw std::runtime_error("boom"); });
  std::atomic<int> after{0};
  for (int i = 0; i < 10; ++i)
    ex.post([&] { after.fetch_add(1); });
  ex.wait_idle();
  EXPECT_EQ(after.load(), 10);
  std::lock_guard<std::mutex> lock(seen.m);
  ASSERT_EQ(seen.messages.size(), 10u);
  EXPECT_EQ(seen.messages[0], "boom");
}

TEST(Executor, DefaultUnhandledHandlerPrintsWhat) {
  testing::internal::CaptureStderr();
  {
    heist::executor ex(1);
    ex.post([] { throw std::runtime_error("printed-to-stderr"); });
    ex.wait_idle();
    std::atomic<bool> alive{false};
    ex.post([&] { alive = true; });
    ex.wait_idle();
    EXPECT_TRUE(alive.load());
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("printed-to-stderr"), std::string::npos) << err;
}

TEST(Executor, WorkerThreadsAreNamed) {
  heist::executor_options o;
  o.num_workers = 2;
  o.name = "pool";
  heist::executor ex(o);
  std::set<std::string> names;
  std::mutex m;
  for (int i = 0; i < 200; ++i) {
    ex.submit([&] {
        std::lock_guard<std::mutex> lock(m);
        names.insert(heist_test::this_thread_name());
      }).wait();
  }
  for (const auto& n : names) {
    // Tasks may also run on the waiting (helping) main thread.
    if (n.rfind("pool-", 0) != 0) EXPECT_EQ(n, heist_test::this_thread_name());
  }
  heist::executor dflt(1);
  std::string name;
  std::latch done(1);
  dflt.post([&] {
    name = heist_test::this_thread_name();
    done.count_down();
  });
  done.wait();
  EXPECT_EQ(name, "heist-0");
}

TEST(Executor, WorkerStartAndStopRunOnceOnTheWorkerThread) {
  std::mutex m;
  std::vector<std::pair<std::size_t, std::string>> started, stopped;
  {
    heist::executor_options o;
    o.num_workers = 3;
    o.name = "obs";
    o.on_worker_start = [&](std::size_t i) {
      std::lock_guard<std::mutex> lock(m);
      started.emplace_back(i, heist_test::this_thread_name());
    };
    o.on_worker_stop = [&](std::size_t i) {
      std::lock_guard<std::mutex> lock(m);
      stopped.emplace_back(i, heist_test::this_thread_name());
    };
    heist::executor ex(o);
    ex.submit([] {}).get();
  }
  ASSERT_EQ(started.size(), 3u);
  ASSERT_EQ(stopped.size(), 3u);
  std::set<std::size_t> ids;
  for (auto& [i, name] : started) {
    ids.insert(i);
    EXPECT_EQ(name, "obs-" + std::to_string(i));
  }
  EXPECT_EQ(ids, (std::set<std::size_t>{0, 1, 2}));
  for (auto& [i, name] : stopped)
    EXPECT_EQ(name, "obs-" + std::to_string(i));
}

// A hook that throws does not take its worker down: the exception goes to
// on_unhandled_exception (executor.cpp, worker_started / worker_stopping) and the worker runs
// tasks as usual.
TEST(Executor, AHookThatThrowsGoesToTheUnhandledHandlerAndTheWorkerGoesOn) {
  collected_whats seen;
  std::atomic<int> ran{0};
  {
    heist::executor_options o;
    o.num_workers = 2;
    o.on_worker_start = [](std::size_t i) {
      throw std::runtime_error("start " + std::to_string(i));
    };
    o.on_worker_stop = [](std::size_t i) { throw std::runtime_error("stop " + std::to_string(i)); };
    o.on_unhandled_exception = seen.handler();
    heist::executor ex(o);
    std::latch both(2);
    for (int i = 0; i < 2; ++i) {
      ex.post([&] {  // two tasks that wait for each other: both workers run
        ran.fetch_add(1);
        both.arrive_and_wait();
      });
    }
    ex.wait_idle();
  }
  EXPECT_EQ(ran.load(), 2);
  std::multiset<std::string> got(seen.messages.begin(), seen.messages.end());
  EXPECT_EQ(got, (std::multiset<std::string>{"start 0", "start 1", "stop 0", "stop 1"}));
}

// The handler itself may throw, and a task may throw something that is not a std::exception:
// either way a line on stderr says so, the exception is dropped and the worker goes on.
TEST(Executor, AThrowingHandlerAndANonStandardExceptionAreReportedOnStderr) {
  testing::internal::CaptureStderr();
  std::atomic<int> after{0};
  {
    heist::executor_options o;
    o.num_workers = 1;
    o.on_unhandled_exception = [](std::exception_ptr) { throw std::logic_error("handler"); };
    heist::executor ex(o);
    ex.post([] { throw std::runtime_error("task"); });
    ex.post([&] { after.fetch_add(1); });
    ex.wait_idle();
    heist::executor plain(1);
    plain.post([] { throw 42; });
    plain.post([&] { after.fetch_add(1); });
    plain.wait_idle();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(after.load(), 2);
  EXPECT_NE(err.find("on_unhandled_exception threw; the exception is dropped"), std::string::npos)
      << err;
  EXPECT_NE(err.find("unhandled exception in a post() task (not a std::exception)"),
            std::string::npos)
      << err;
}
