// The group a coroutine runs in (docs/reference/api.md, task_group: "Groups nest like oneTBB's
// bound contexts"; docs/design/async.md, "The group a coroutine runs in"): a task_group created in
// the body of a coroutine member of group G is G's child, as inside a task of G, however the
// body got to run (started as a task, taken inline by its joiner, resumed after an await), and
// in a task that such a member awaits. A join puts the joiner's own group back. (kind:
// requirement)
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {

// What the body saw: whether a group it created was cancelled at once, and how many of the
// 100 tasks it ran into that group ran.
struct inner_report {
  std::atomic<bool> started{false};
  std::atomic<bool> cancelling{false};
  std::atomic<int> ran{0};
};

heist::task<void> cancel_then_spawn(heist::task_group& outer, inner_report& r) {
  outer.cancel();
  heist::task_group inner;
  r.cancelling = inner.is_canceling();
  for (int i = 0; i < 100; ++i)
    inner.run([&r] { r.ran.fetch_add(1); });
  co_await inner.join();
}

heist::task<void> hop_then_cancel(heist::task_group& outer, heist::executor& ex, inner_report& r) {
  co_await heist::schedule(ex);  // resumes as a task, on whichever worker takes it
  co_await cancel_then_spawn(outer, r);
}

// Runs `make(outer, r)` as the only member of a group in a task of `ex`, waits, and reports.
template <class Make>
void expect_inner_group_cancelled(heist::executor& ex, Make make) {
  inner_report r;
  ex.submit([&] {
      heist::task_group outer;
      outer.run(make(outer, r));
      outer.wait();
    }).get();
  EXPECT_TRUE(r.cancelling.load());
  EXPECT_EQ(r.ran.load(), 0);
}

}  // namespace

TEST(CoroutineGroup, GroupsInsideAMemberAreChildrenOfItsGroup) {
  heist::executor ex(2);
  // Started as a task; after a hop to another task; in a task the member awaits.
  expect_inner_group_cancelled(
      ex, [](heist::task_group& g, inner_report& r) { return cancel_then_spawn(g, r); });
  expect_inner_group_cancelled(
      ex, [&ex](heist::task_group& g, inner_report& r) { return hop_then_cancel(g, ex, r); });
  expect_inner_group_cancelled(ex, [](heist::task_group& g, inner_report& r) {
    return [](heist::task_group& g2, inner_report& r2) -> heist::task<void> {
      co_await cancel_then_spawn(g2, r2);
    }(g, r);
  });
}

TEST(CoroutineGroup, AMemberTakenInlineByItsJoinerRunsInItsGroup) {
  heist::executor ex(1);  // one worker: the joiner finds the member on top of its deque
  inner_report r;
  auto joiner = [](inner_report& rep) -> heist::task<void> {
    heist::task_group g;
    g.run(cancel_then_spawn(g, rep));
    co_await g.join();
  };
  heist::future<void> f = heist::start(ex, joiner(r));
  // Not get(): it would lease a slot and might take the member before the joiner does.
  ASSERT_TRUE(heist_test::eventually([&] { return f.is_ready(); }));
  f.get();
  EXPECT_TRUE(r.cancelling.load());
  EXPECT_EQ(r.ran.load(), 0);
}

TEST(CoroutineGroup, ASiblingsExceptionReachesGroupsMadeAfterAMemberResumes) {
  heist::executor ex(2);
  heist::promise<void> go;
  heist::future<void> resumed = go.get_future();
  inner_report r;
  auto member = [](heist::future<void>& f, inner_report& rep) -> heist::task<void> {
    rep.started = true;
    co_await f;  // suspended while the sibling throws
    heist::task_group inner;
    rep.cancelling = inner.is_canceling();
    for (int i = 0; i < 100; ++i)
      inner.run([&rep] { rep.ran.fetch_add(1); });
    co_await inner.join();
  };
  std::atomic<bool> thrown{false};
  heist::task_group outer(ex);
  outer.run(member(resumed, r));
  // Started, so that the sibling's exception cannot skip it.
  ASSERT_TRUE(heist_test::eventually([&] { return r.started.load(); }));
  outer.run([&] {
    thrown = true;
    throw std::runtime_error("sibling");
  });
  ASSERT_TRUE(heist_test::eventually([&] { return thrown.load() && outer.is_canceling(); }));
  // The sibling's cancel may be between its flag and its epoch bump, when a new group can
  // still read uncancelled; a cancel() that returned here closes that window.
  outer.cancel();
  go.set_value();  // from outside the pool: the member resumes as a task
  EXPECT_THROW(outer.wait(), std::runtime_error);
  EXPECT_TRUE(r.cancelling.load());
  EXPECT_EQ(r.ran.load(), 0);
}

TEST(CoroutineGroup, AJoinPutsBackTheJoinersOwnGroup) {
  heist::executor ex(1);
  std::atomic<bool> after_join_cancelling{true};
  // The member of `outer` joins a group whose member ran inline (in that group); after the
  // join it runs in `outer` again, so a group it makes then is not a child of the joined
  // group: cancelling that one does not reach it.
  auto member = [](std::atomic<bool>& seen) -> heist::task<void> {
    heist::task_group g;
    g.run([]() -> heist::task<void> { co_return; }());
    co_await g.join();
    g.cancel();
    heist::task_group later;
    seen = later.is_canceling();
  };
  ex.submit([&] {
      heist::task_group outer;
      outer.run(member(after_join_cancelling));
      outer.wait();
    }).get();
  EXPECT_FALSE(after_join_cancelling.load());
}

TEST(CoroutineGroup, TheCallersRunningGroupIsTheSameAfterASyncWait) {
  heist::executor ex(2);
  ex.submit([&] {
      heist::task_group g;
      g.run([&] {
        heist::detail::wait_context* const before = heist::detail::current_group();
        auto body = [](heist::executor& e) -> heist::task<int> {
          co_await heist::schedule(e);
          heist::task_group inner;
          inner.run([]() -> heist::task<void> { co_return; }());
          co_await inner.join();
          co_return 7;
        };
        EXPECT_EQ(heist::sync_wait(body(ex)), 7);
        EXPECT_EQ(heist::detail::current_group(), before);
      });
      g.wait();
    }).get();
}
