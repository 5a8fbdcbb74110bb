// The reference's error table, row by row: every error with its exact exception type (kind:
// boundary).
#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "heist/heist.hpp"

namespace {
template <class E, class F>
std::string what_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (...) {
    return "<other exception type>";
  }
  return "<no exception>";
}

heist::task<int> seven() {
  co_return 7;
}

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}
}  // namespace

TEST(Errors, InvalidArgumentsNameTheArgument) {
  EXPECT_NE(what_of<std::invalid_argument>([] { heist::executor ex(0); }).find("num_workers"),
            std::string::npos);
  EXPECT_NE(what_of<std::invalid_argument>([] { heist::executor ex(4097); }).find("num_workers"),
            std::string::npos);
  heist::executor ex(1);
  EXPECT_NE(
      what_of<std::invalid_argument>([&] { heist::task_arena a(0, ex); }).find("max_concurrency"),
      std::string::npos);
  EXPECT_NE(what_of<std::invalid_argument>([] {
              heist::blocked_range<int> r(0, 1, 0);
            }).find("grainsize"),
            std::string::npos);
  // A grainsize-0 range never reaches a loop.
  EXPECT_THROW(heist::parallel_for(ex, heist::blocked_range<int>(0, 10, 0),
                                   [](const heist::blocked_range<int>&) {}),
               std::invalid_argument);
}

TEST(Errors, ExecutorClosedIsARuntimeErrorForEveryEntryPoint) {
  static_assert(std::is_base_of_v<std::runtime_error, heist::executor_closed>);
  heist::executor ex(1);
  heist::task_arena arena(1, ex);
  ex.shutdown();
  EXPECT_THROW(ex.submit([] {}), heist::executor_closed);
  EXPECT_THROW(ex.post([] {}), heist::executor_closed);
  heist::task_group g(ex);
  EXPECT_THROW(g.run([] {}), heist::executor_closed);
  EXPECT_THROW(arena.enqueue([] {}), heist::executor_closed);
  g.wait();  // nothing was accepted: nothing to wait for
}

// The algorithms refuse a shut-down executor before any of their work runs (a loop over one
// leaf would otherwise run it on the caller and return, and a bigger one run on the caller alone,
// the workers gone, or fail at a give after part of the body ran); coroutines and
// continuations get the error too.
heist::task<int> after_a_schedule(heist::executor& ex) {
  co_await heist::schedule(ex);
  co_return 1;
}
TEST(Errors, EveryAlgorithmRefusesAShutDownExecutorBeforeRunningAnything) {
  heist::executor ex(1);
  heist::task_arena arena(2, ex);
  heist::promise<int> pending;
  heist::future<int> continued = pending.get_future().then(ex, [](int v) { return v + 1; });
  bool ran = false;
  ex.shutdown();
  auto body_ran = [&] { ran = true; };
  EXPECT_THROW(heist::parallel_for(ex, 0, 1, [&](int) { body_ran(); }), heist::executor_closed);
  EXPECT_THROW(heist::parallel_for(ex, 0, 1000, [&](int) { body_ran(); }), heist::executor_closed);
  EXPECT_THROW(
      heist::parallel_for(
          ex, heist::blocked_range<int>(0, 1000),
          [&](const heist::blocked_range<int>&) { body_ran(); }, heist::static_partitioner{}),
      heist::executor_closed);
  EXPECT_NE(what_of<heist::executor_closed>([&] {
              heist::parallel_reduce(
                  ex, heist::blocked_range<int>(0, 1000), 0,
                  [&](const heist::blocked_range<int>& r, int acc) {
                    body_ran();
                    return acc + static_cast<int>(r.size());
                  },
                  std::plus<>{});
            }).find("heist::parallel_reduce"),
            std::string::npos);
  EXPECT_NE(what_of<heist::executor_closed>([&] {
              heist::parallel_pipeline(
                  ex, 4,
                  heist::make_filter<void, void>(heist::filter_mode::serial_in_order,
                                                 [&](heist::flow_control& fc) {
                                                   body_ran();
                                                   fc.stop();
                                                 }));
            }).find("heist::parallel_pipeline"),
            std::string::npos);
  // Through a task_arena of the executor: execute's own function runs on this thread, the
  // algorithms it calls are refused.
  EXPECT_THROW(heist::parallel_for(arena, 0, 1, [&](int) { body_ran(); }), heist::executor_closed);
  heist::task_graph graph;
  graph.emplace(body_ran);
  EXPECT_THROW(graph.run(ex), heist::executor_closed);
  EXPECT_THROW(arena.execute([&] { graph.run().get(); }), heist::executor_closed);
  EXPECT_FALSE(ran);
  EXPECT_THROW(heist::start(ex, seven()), heist::executor_closed);
  EXPECT_THROW(heist::sync_wait(after_a_schedule(ex)), heist::executor_closed);
  // A continuation whose value arrives from outside after the shutdown, or that is attached
  // to a ready future then, cannot run: its future holds the error (docs/reference/async.md).
  pending.set_value(1);
  EXPECT_THROW(continued.get(), heist::executor_closed);
  heist::promise<int> ready;
  ready.set_value(2);
  heist::future<void> after_ready = ready.get_future().then(ex, [&](int) { body_ran(); });
  EXPECT_THROW(after_ready.get(), heist::executor_closed);
  EXPECT_FALSE(ran);
}

// A refused spawn builds its task before the admission (spawn.hpp): the closure it copied is
// destroyed, once, and nothing is counted in the group. The token's count says how many
// copies of the closure are alive.
TEST(Errors, ARefusedRunDestroysItsCopyOfTheClosure) {
  heist::executor ex(1);
  ex.shutdown();
  heist::task_group g(ex);
  auto token = std::make_shared<int>(0);
  bool ran = false;
  EXPECT_THROW(g.run([token, &ran] { ran = true; }), heist::executor_closed);
  EXPECT_EQ(token.use_count(), 1);
  auto moved = [token, &ran] { ran = true; };
  EXPECT_THROW(g.run(std::move(moved)), heist::executor_closed);
  EXPECT_EQ(token.use_count(), 1);
  EXPECT_THROW(ex.post([token] {}), heist::executor_closed);
  EXPECT_EQ(token.use_count(), 1);
  g.wait();  // nothing was counted: returns at once
  EXPECT_FALSE(ran);
}

// The same for a coroutine member (task_group::run(task<void>)): the refused member's frame,
// which the task would have owned once queued, is destroyed, once (its parameter, the token's
// copy, with it), and nothing is counted in the group.
heist::task<void> member_holding(std::shared_ptr<int> token, bool& ran) {
  ran = true;
  co_return;
}
TEST(Errors, ARefusedCoroutineMemberHasItsFrameDestroyed) {
  heist::executor ex(1);
  ex.shutdown();
  heist::task_group g(ex);
  auto token = std::make_shared<int>(0);
  bool ran = false;
  heist::task<void> member = member_holding(token, ran);
  EXPECT_EQ(token.use_count(), 2);  // the frame's copy of the parameter
  EXPECT_THROW(g.run(std::move(member)), heist::executor_closed);
  EXPECT_FALSE(member.valid());  // handed over, then destroyed with the refusal
  EXPECT_EQ(token.use_count(), 1);
  g.wait();  // nothing was counted: returns at once
  EXPECT_FALSE(ran);
}

TEST(Errors, ShutdownFromAWorkerIsALogicError) {
  heist::executor ex(1);
  EXPECT_EQ(
      what_of<std::logic_error>([&] { ex.submit([&] { ex.shutdown(); }).get(); }).find("shutdown"),
      std::string("heist::executor::").size());
}

TEST(Errors, TaskExceptionsReachTheirWaiter) {
  heist::executor ex(2);
  EXPECT_THROW(ex.submit([]() -> int { throw std::range_error("s"); }).get(), std::range_error);
  heist::task_group g(ex);
  g.run([] { throw std::overflow_error("g"); });
  EXPECT_THROW(g.wait(), std::overflow_error);
  EXPECT_THROW(heist::parallel_for(ex, 0, 100,
                                   [](int i) {
                                     if (i == 50) throw std::underflow_error("l");
                                   }),
               std::underflow_error);
}

TEST(Errors, InvalidFutureIsAFutureErrorWithNoState) {
  heist::future<void> f;
  try {
    f.get();
    FAIL();
  } catch (const std::future_error& e) {
    EXPECT_EQ(e.code(), std::future_errc::no_state);
  }
}

// Not in the reference's error table: a heist::task with no coroutine (default-constructed, moved
// from, or already handed on) is bad input to every call that runs one: std::invalid_argument
// naming the call, never a crash, and nothing counted or started.
TEST(Errors, AnEmptyTaskIsAnInvalidArgumentNamingTheCall) {
  heist::executor ex(2);
  heist::task_group g(ex);
  std::string w = what_of<std::invalid_argument>([&] { g.run(heist::task<void>{}); });
  EXPECT_TRUE(contains(w, "task_group::run") && contains(w, "empty")) << w;
  // The refused run took no count: the group still works and its wait returns.
  int ran = 0;
  g.run([&] { ++ran; });
  g.wait();
  EXPECT_EQ(ran, 1);

  heist::task<int> t = seven();
  heist::task<int> moved_to = std::move(t);
  w = what_of<std::invalid_argument>([&] { (void)heist::start(ex, std::move(t)); });
  EXPECT_TRUE(contains(w, "heist::start")) << w;
  w = what_of<std::invalid_argument>([&] { (void)heist::sync_wait(heist::task<int>{}); });
  EXPECT_TRUE(contains(w, "heist::sync_wait")) << w;
  EXPECT_EQ(heist::start(ex, std::move(moved_to)).get(), 7);

  // Awaited inside a coroutine, the error is thrown at the co_await, into the body.
  auto awaits_empty = []() -> heist::task<std::string> {
    heist::task<int> empty;
    try {
      (void)co_await std::move(empty);
    } catch (const std::invalid_argument& e) {
      co_return e.what();
    }
    co_return "<no exception>";
  };
  w = heist::start(ex, awaits_empty()).get();
  EXPECT_TRUE(contains(w, "co_await")) << w;
}
