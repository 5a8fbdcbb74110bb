// Window probes of the joins: a coroutine's co_await group.join(), its
// inline joins, and owner-counted groups claimed by another thread. Like window_probe_test.cpp,
// each opens one window at a perturbation point; they need the perturbation build.
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
using namespace heist_test::probe;
using heist_test::eventually;
using heist_test::watchdog;

#if HEIST_PERTURB
heist::task<void> count_member(std::atomic<int>& members) {
  members.fetch_add(1);
  co_return;
}
#endif

// co_await group.join(): the last member's finish is counted (the resumer not yet fired) while
// the joining coroutine is still arming or already suspended: it is resumed exactly once, after
// every member.
TEST(WindowProbe, JoinResumedOnceWhenTheLastMemberFinishesLate) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("JoinResumedOnceWhenTheLastMemberFinishesLate", 60s);
  perturb::set_hook(
      perturb::point::group_finish_counted,
      [](perturb::point, void*) { std::this_thread::sleep_for(50us); }, nullptr);
  heist::executor ex(2);
  std::atomic<int> members{0}, resumed{0};
  auto joiner = [&]() -> heist::task<void> {
    heist::task_group g;
    for (int i = 0; i < 8; ++i)
      g.run([&] { members.fetch_add(1); });
    g.run(count_member(members));  // a coroutine member (a function: no dangling closure)
    co_await g.join();
    resumed.fetch_add(1);
    EXPECT_EQ(members.load() % 9, 0);
  };
  for (int round = 0; round < 100; ++round)
    heist::start(ex, joiner()).get();
  EXPECT_EQ(resumed.load(), 100);
  EXPECT_EQ(members.load(), 900);
#endif
}

#if HEIST_PERTURB
heist::task<void> signalling_member(std::atomic<int>& members, std::atomic<int>& done) {
  members.fetch_add(1);
  done.store(1);
  co_return;
}
#endif

// Inline joins. A joiner has popped its group's newest member to run it inline
// (member_inlined) while a thief runs the group's older member to its end on another thread.
// The thief's finish must not resume the joiner (it has not armed), and when the inlined
// member ends the joiner must find the group done and go on, exactly once, after both.
TEST(WindowProbe, MemberInlinedWhileAThiefFinishesAnotherMember) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("MemberInlinedWhileAThiefFinishesAnotherMember", 60s);
  struct state {
    std::atomic<int> older_done{0};
    std::atomic<int> windows{0};  // rounds in which the older member ended inside the window
  } st;
  perturb::set_hook(
      perturb::point::member_inlined,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        for (int i = 0; i < 200 && s.older_done.load() == 0; ++i)
          std::this_thread::sleep_for(100us);
        if (s.older_done.load() != 0) {
          std::this_thread::sleep_for(1ms);  // the thief's finish is counted by now
          s.windows.fetch_add(1);
        }
      },
      &st);
  heist::executor ex(2);
  std::atomic<int> members{0}, resumed{0};
  auto joiner = [&]() -> heist::task<void> {
    heist::task_group g;
    g.run(signalling_member(members, st.older_done));  // the older: stolen from the top
    std::this_thread::sleep_for(2ms);                  // the idle worker takes it now
    g.run(count_member(members));                      // the newest: inlined
    co_await g.join();
    resumed.fetch_add(1);
    EXPECT_EQ(members.load() % 2, 0);
  };
  for (int round = 0; round < 40; ++round) {
    st.older_done = 0;
    heist::start(ex, joiner()).get();
    ASSERT_EQ(resumed.load(), round + 1);
    ASSERT_EQ(members.load(), 2 * (round + 1));
  }
  EXPECT_GT(st.windows.load(), 0) << "no round opened the window";
#endif
}
#if HEIST_PERTURB
// A member that ends only once the joiner is held between await_ready and await_suspend's
// first step (or after 200 ms, if it was not stolen and the joiner runs it inline).
heist::task<void> member_ending_in_window(std::atomic<int>& holding, std::atomic<int>& done) {
  for (int i = 0; i < 2000 && holding.load() == 0; ++i)
    std::this_thread::sleep_for(100us);
  done.store(1);
  co_return;
}
#endif

// The joiner's first step skips the done() that await_ready
// has just read false. Its only member, stolen by the other worker, ends inside that window
// (perturbation point join_suspending): the arming must find the group done and resume the
// joiner at once, exactly once. If the arming armed anyway, nobody would be left to resume it
// (the watchdog ends the test).
TEST(WindowProbe, GroupEndsBetweenAJoinersReadyCheckAndItsFirstStep) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("GroupEndsBetweenAJoinersReadyCheckAndItsFirstStep", 60s);
  struct state {
    std::atomic<int> holding{0};
    std::atomic<int> member_done{0};
    std::atomic<int> windows{0};  // rounds in which the member ended inside the window
  } st;
  perturb::set_hook(
      perturb::point::join_suspending,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        s.holding.store(1);
        for (int i = 0; i < 200 && s.member_done.load() == 0; ++i)
          std::this_thread::sleep_for(100us);
        if (s.member_done.load() != 0) {
          std::this_thread::sleep_for(1ms);  // its finish is counted by now
          s.windows.fetch_add(1);
        }
      },
      &st);
  heist::executor ex(2);
  std::atomic<int> resumed{0};
  auto joiner = [&]() -> heist::task<void> {
    heist::task_group g;
    g.run(member_ending_in_window(st.holding, st.member_done));
    std::this_thread::sleep_for(2ms);  // the idle worker steals it and waits for the hold
    co_await g.join();
    resumed.fetch_add(1);
    EXPECT_EQ(st.member_done.load(), 1);
  };
  for (int round = 0; round < 40; ++round) {
    st.holding = 0;
    st.member_done = 0;
    heist::start(ex, joiner()).get();
    ASSERT_EQ(resumed.load(), round + 1);
  }
  perturb::set_hook(perturb::point::join_suspending, nullptr, nullptr);
  EXPECT_GT(st.windows.load(), 0) << "no round opened the window";
#endif
}

#if HEIST_PERTURB
// The window between O2 and O3 of an owner's change of its count (perturbation point
// owner_count_confirmed), opened once while `armed`: it tells a claimer to start and holds
// the owner there for 20 ms.
struct owner_change_window {
  std::atomic<bool> armed{false};
  std::atomic<int> fired{0};
  std::atomic<bool> claim_now{false};
  void hold_owner_between_o2_and_o3() {
    perturb::set_hook(
        perturb::point::owner_count_confirmed,
        [](perturb::point, void* arg) {
          auto& s = *static_cast<owner_change_window*>(arg);
          if (!s.armed.load() || s.fired.fetch_add(1) != 0) return;
          s.claim_now = true;                 // the claimer starts now...
          std::this_thread::sleep_for(20ms);  // ...while the owner sits between O2 and O3
        },
        this);
  }
};
#endif

// Owner-counted joins. The owner of a group has marked its count busy (O1) and
// seen the group still its own (O2), but not yet written its count (O3), when another thread
// claims the group: the claimer must wait for the owner's change (C3 takes no count that
// carries the busy mark) before it takes the count over, or the spawn counted meanwhile is
// lost and its wait returns early.
TEST(WindowProbe, GroupClaimedWhileItsOwnerChangesItsCount) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("GroupClaimedWhileItsOwnerChangesItsCount", 60s);
  owner_change_window st;
  st.hold_owner_between_o2_and_o3();
  heist::executor ex(2);
  for (int round = 0; round < 5; ++round) {
    st.armed = false;
    st.fired = 0;
    st.claim_now = false;
    std::atomic<bool> go{false};
    std::atomic<int> finished{0};
    std::unique_ptr<heist::task_group> g;
    std::atomic<bool> spawned{false};
    ex.post([&] {
      g = std::make_unique<heist::task_group>();
      const auto child = [&] {
        while (!go.load())
          std::this_thread::sleep_for(100us);
        finished.fetch_add(1);
      };
      g->run(child);
      st.armed = true;
      g->run(child);  // the hook opens the window inside this spawn's count
      g->run(child);
      spawned = true;
    });
    int seen = -1;
    std::thread claimer([&] {
      while (!st.claim_now.load())
        std::this_thread::yield();
      g->wait();
      seen = finished.load();
    });
    ASSERT_TRUE(eventually([&] { return spawned.load(); }));
    std::this_thread::sleep_for(10ms);
    go = true;
    claimer.join();
    EXPECT_EQ(seen, 3) << "round " << round;
    g.reset();
  }
#endif
}

#if HEIST_PERTURB
// Five rounds of the window in an owner's finish of a child it ran itself, followed by its look
// at the group: on the one worker of `ex`, inside a task arena of one (so the claiming outside
// thread gets no slot and only waits, and the owner runs every child itself), `owner_side(g,
// finished, armed)` makes group `g` with k_children children that count `finished`, sets
// `armed` just before the owner's first finish of one and returns what `finished` read once
// its join or wait returned. The window tells an outside thread to wait on `g` (claiming it)
// while the owner sits between O2 and O3 of that finish. Both must see every child.
constexpr int k_children = 20;
template <class OwnerSide>
void claim_inside_an_owners_finish(OwnerSide&& owner_side) {
  owner_change_window st;
  st.hold_owner_between_o2_and_o3();
  heist::executor ex(1);
  heist::task_arena arena(1, ex);
  for (int round = 0; round < 5; ++round) {
    st.armed = false;
    st.fired = 0;
    st.claim_now = false;
    std::atomic<int> finished{0};
    std::atomic<int> owner_saw{-1}, claimer_saw{-1};
    // Made by the worker (its owner, in its executor); the claimer reads it once the hook
    // has fired, inside the owner's wait.
    std::unique_ptr<heist::task_group> g;
    std::thread claimer([&] {
      while (!st.claim_now.load())
        std::this_thread::yield();
      g->wait();  // not the owner: claims the group first
      claimer_saw = finished.load();
    });
    ex.submit([&] { arena.execute([&] { owner_saw = owner_side(g, finished, st.armed); }); }).get();
    st.claim_now = true;  // if the hook never fired: the claimer waits on the finished group
    claimer.join();
    g.reset();
    EXPECT_EQ(st.fired.load(), 1) << "round " << round;
    EXPECT_EQ(owner_saw.load(), k_children) << "round " << round;
    EXPECT_EQ(claimer_saw.load(), k_children) << "round " << round;
  }
}
#endif

// The same window in the owner's fused finish and look
// (wait_context::finish_own_child_then_done). The owner, waiting on its group, has run a child
// it popped back and is between O2 and O3 of that child's finish when an outside thread starts
// waiting on the group and claims it. The owner then stores O3, reads the count (which may
// already hold the claimer's fold) and re-reads m_owner: it sees the claim and must take the
// claimed count, not its own part plus a count that includes it; its later finishes count in
// the shared count. Both waits return once every child has run, and only then.
TEST(WindowProbe, GroupClaimedInsideTheOwnersFinishAndLook) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("GroupClaimedInsideTheOwnersFinishAndLook", 60s);
  claim_inside_an_owners_finish([](std::unique_ptr<heist::task_group>& g,
                                   std::atomic<int>& finished, std::atomic<bool>& armed) {
    int saw = -1;
    heist::task_group outer;  // the owner's code runs as a task (the wait's short path)
    outer.run([&] {
      g = std::make_unique<heist::task_group>();
      for (int i = 0; i < k_children; ++i)
        g->run([&finished] { finished.fetch_add(1); });
      armed = true;  // the owner's next count change: its first child's finish
      g->wait();
      armed = false;  // (the outer task's finish changes the owner's count too)
      saw = finished.load();
    });
    outer.wait();
    return saw;
  });
#endif
}

// The same window in a coroutine join (join_awaiter::member_ended, which also uses
// finish_own_child_then_done). The owner, a
// coroutine in co_await group.join(), has run a member it took inline and is between O2 and O3
// of that member's finish when an outside thread starts waiting on the group and claims it.
// The join goes on taking the other members inline, each finish now counted in the shared
// count; the join and the wait both return once every member has run, and only then.
TEST(WindowProbe, GroupClaimedInsideAnInlinedMembersFinishAndLook) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("GroupClaimedInsideAnInlinedMembersFinishAndLook", 60s);
  claim_inside_an_owners_finish([](std::unique_ptr<heist::task_group>& g,
                                   std::atomic<int>& finished, std::atomic<bool>& armed) {
    int saw = -1;
    auto joiner = [&]() -> heist::task<void> {
      g = std::make_unique<heist::task_group>();  // owned by the worker running this body
      for (int i = 0; i < k_children; ++i)
        g->run(count_member(finished));
      armed = true;  // the owner's next count change: the first inlined member's finish
      co_await g->join();
      armed = false;
      saw = finished.load();
    };
    heist::sync_wait(joiner());
    return saw;
  });
#endif
}

// The other side of the same window: a claimer has cleared m_owner (C1) but not yet run the
// barrier or taken m_local, while the owner finishes the children it counted itself. Those
// finishes see the claim and count in m_state; the count the claimer then takes over must
// still add up to exactly the children left.
TEST(WindowProbe, OwnerFinishesItsChildrenWhileAClaimIsUnderWay) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("OwnerFinishesItsChildrenWhileAClaimIsUnderWay", 60s);
  struct state {
    std::atomic<bool>* go = nullptr;
    std::atomic<int> fired{0};
  } st;
  perturb::set_hook(
      perturb::point::group_claiming,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        if (s.fired.fetch_add(1) != 0) return;
        s.go->store(true);                  // the owner's children run now...
        std::this_thread::sleep_for(20ms);  // ...while the claim sits between C1 and C2
      },
      &st);
  heist::executor ex(1);  // one worker: the owner runs (and counts out) every child itself
  for (int round = 0; round < 5; ++round) {
    st.fired = 0;
    std::atomic<bool> go{false};
    st.go = &go;
    constexpr int k_children = 50;
    std::atomic<int> finished{0};
    std::unique_ptr<heist::task_group> g =
        heist_test::group_owned_by_a_worker(ex, k_children, go, finished);
    // An outside thread (no slot of this one-worker pool... it leases one and helps).
    g->wait();
    EXPECT_EQ(finished.load(), k_children) << "round " << round;
    g.reset();
  }
#endif
}

// A cancel() between its flag store and its bump of the epoch: a
// thread that finds the flag in a nested group's walk, and so skips that group's tasks, must
// then read the group itself as cancelling, although the epoch has not moved yet and the group
// was validated at it. A check that trusted the validation alone answered "not cancelled"
// there (the soak's check "nested group lost a task" caught it under TSan).
TEST(WindowProbe, AGroupSeenCancelledThroughANestedWalkReadsCancelled) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("AGroupSeenCancelledThroughANestedWalkReadsCancelled", 60s);
  struct state {
    std::atomic<bool> armed{false};
    std::atomic<int> phase{0};  // 1: the flag is set and the bump held; 2: the task has looked
  } st;
  perturb::set_hook(
      perturb::point::cancel_flagged,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<state*>(arg);
        if (!s.armed.exchange(false)) return;
        s.phase = 1;
        for (int i = 0; i < 5000 && s.phase.load() != 2; ++i)
          std::this_thread::sleep_for(1ms);
      },
      &st);
  heist::executor ex(1);
  heist::task_group g(ex);
  std::atomic<bool> ready{false};
  int inner_ran = -1;
  bool canceling = false;
  g.run([&] {
    heist::task_group inner;  // inherits g's validated epoch
    heist::task_group unrelated;
    unrelated.cancel();      // moves the epoch: inner's copy is stale now
    (void)g.is_canceling();  // validates g at the new epoch (its flag still clear)
    ready = true;
    while (st.phase.load() != 1)  // g's flag is set, its bump held
      std::this_thread::yield();
    std::atomic<int> ran{0};
    for (int k = 0; k < 3; ++k)
      inner.run([&] { ran.fetch_add(1); });
    inner.wait();  // each check walks up to g and finds its flag
    inner_ran = ran.load();
    canceling = g.is_canceling();
    st.phase = 2;
  });
  while (!ready.load())
    std::this_thread::yield();
  st.armed = true;
  g.cancel();  // held at cancel_flagged until the task has looked
  g.wait();
  EXPECT_EQ(inner_ran, 0);
  EXPECT_TRUE(canceling);
#endif
}

}  // namespace
