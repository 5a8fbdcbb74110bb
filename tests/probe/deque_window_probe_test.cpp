// Window probes of the deque's fence-free pop mode (chase_lev_deque.hpp,
// docs/design/protocols.md "Fence-free pops, switched by the owner"): a steal that lands between
// the owner's store of bottom and its mode read, an owner that tries fence_free while a thief is
// counted, and pops while a thief is switching. Each opens one window at a perturbation point; they
// need the perturbation build and the process-wide barrier.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "heist/detail/core/chase_lev_deque.hpp"
#include "heist/detail/wait/wait_context.hpp"
#include "probe_support.hpp"

namespace {

using namespace heist_test::probe;
using heist::detail::chase_lev_deque;
using heist::detail::steal_result;
using heist::detail::steal_status;

std::vector<int> g_values(8);

#define HEIST_NEEDS_BARRIER()                                               \
  do {                                                                      \
    heist::detail::enable_owner_counting();                                 \
    if (!heist::detail::g_owner_counting.load()) {                          \
      GTEST_SKIP() << "fence-free pops need membarrier(PRIVATE_EXPEDITED)"; \
    }                                                                       \
  } while (false)

#if HEIST_PERTURB
// A thief on another thread, run to completion inside the owner's window.
struct window_steal {
  chase_lev_deque<int*>* deque;
  bool fired = false;
  steal_result<int*> result{nullptr, steal_status::empty};
  static void hook(perturb::point, void* arg) {
    auto* self = static_cast<window_steal*>(arg);
    if (self->fired) return;
    self->fired = true;
    std::thread([self] { self->result = self->deque->steal(); }).join();
  }
};
#endif

}  // namespace

// Deque [A, B], fence-free. The owner's pop has stored bottom (it reserves B) and not read the
// mode when a thief switches the mode and steals A. The owner then reads fenced, fences, and
// takes B through the last-element CAS: each taken once.
TEST(DequeWindowProbe, ASwitchBetweenTheOwnersReserveAndItsModeRead) {
  HEIST_NEEDS_PERTURB();
  HEIST_NEEDS_BARRIER();
#if HEIST_PERTURB
  chase_lev_deque<int*> d(4);
  d.enable_fence_free_pops(4, 16);
  d.push(&g_values[0]);
  d.push(&g_values[1]);
  window_steal thief{&d};
  perturb::set_hook(perturb::point::pop_reserved, &window_steal::hook, &thief);
  int* const popped = d.pop();
  perturb::clear_hooks();
  ASSERT_TRUE(thief.fired);
  EXPECT_EQ(thief.result.status, steal_status::success);
  EXPECT_EQ(thief.result.value, &g_values[0]);
  EXPECT_EQ(popped, &g_values[1]);
  EXPECT_FALSE(d.pops_fence_free()) << "the thief ended the spell";
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal().status, steal_status::empty);
#endif
}

// Deque [A], fence-free. The owner has reserved A when a thief looks: it sees the deque empty
// and leaves without a barrier or a switch; the owner keeps A and stays fence-free.
TEST(DequeWindowProbe, AThiefThatSeesTheLastElementReservedLeavesTheModeAlone) {
  HEIST_NEEDS_PERTURB();
  HEIST_NEEDS_BARRIER();
#if HEIST_PERTURB
  chase_lev_deque<int*> d(4);
  d.enable_fence_free_pops(4, 16);
  d.push(&g_values[2]);
  window_steal thief{&d};
  perturb::set_hook(perturb::point::pop_reserved, &window_steal::hook, &thief);
  int* const popped = d.pop();
  perturb::clear_hooks();
  ASSERT_TRUE(thief.fired);
  EXPECT_EQ(thief.result.status, steal_status::empty);
  EXPECT_EQ(popped, &g_values[2]);
  EXPECT_TRUE(d.pops_fence_free());
#endif
}

#if HEIST_PERTURB
// A thief held at a point until released.
struct held_thief {
  std::atomic<int> arrived{0};
  std::atomic<bool> release{false};
  static void hook(perturb::point, void* arg) {
    auto* self = static_cast<held_thief*>(arg);
    self->arrived.fetch_add(1);
    while (!self->release.load())
      std::this_thread::yield();
  }
};

// A thief on another thread, held at pop_mode_switching: it found an element, moved the mode
// to switching, and has neither waited for the owner's acknowledgement nor run its barrier.
struct switching_thief {
  held_thief held;
  steal_result<int*> stolen{nullptr, steal_status::empty};
  std::thread thread;
  explicit switching_thief(chase_lev_deque<int*>& d) {
    perturb::set_hook(perturb::point::pop_mode_switching, &held_thief::hook, &held);
    thread = std::thread([this, &d] { stolen = d.steal(); });
    while (held.arrived.load() == 0)
      std::this_thread::yield();
  }
  // Lets it go on and returns what its steal took.
  steal_result<int*> finish() {
    held.release.store(true);
    thread.join();
    perturb::clear_hooks();
    return stolen;
  }
};

// Pushes g_values[0..3] into `d`.
void push_four(chase_lev_deque<int*>& d) {
  for (int i = 0; i < 4; ++i)
    d.push(&g_values[i]);
}
#endif

// A thief has counted itself and read fenced when the owner's countdown ends: the owner must
// see the count and stay fenced (a fence-free pop now could meet the thief's fenced steal).
// Once the thief is gone, the next try succeeds.
TEST(DequeWindowProbe, TheOwnerStaysFencedWhileAThiefIsCounted) {
  HEIST_NEEDS_PERTURB();
  HEIST_NEEDS_BARRIER();
#if HEIST_PERTURB
  chase_lev_deque<int*> d(8);
  d.enable_fence_free_pops(2, 2);
  for (int i = 0; i < 6; ++i)
    d.push(&g_values[i]);
  ASSERT_EQ(d.steal().value, &g_values[0]);  // ends the spell
  ASSERT_FALSE(d.pops_fence_free());
  held_thief held;
  perturb::set_hook(perturb::point::steal_counted, &held_thief::hook, &held);
  steal_result<int*> stolen{nullptr, steal_status::empty};
  std::thread thief([&] { stolen = d.steal(); });
  while (held.arrived.load() == 0)
    std::this_thread::yield();
  // Fenced pops: the first starts the countdown of 2, the third tries fence_free and sees the
  // thief.
  EXPECT_EQ(d.pop(), &g_values[5]);
  EXPECT_EQ(d.pop(), &g_values[4]);
  EXPECT_EQ(d.pop(), &g_values[3]);
  EXPECT_FALSE(d.pops_fence_free()) << "went fence-free under a counted thief";
  held.release.store(true);
  thief.join();
  perturb::clear_hooks();
  EXPECT_EQ(stolen.status, steal_status::success);
  EXPECT_EQ(stolen.value, &g_values[1]);
  // The thief is gone: the try after the next countdown succeeds.
  int pops = 0;
  while (!d.pops_fence_free() && pops < 10) {
    EXPECT_EQ(d.pop(), pops == 0 ? &g_values[2] : nullptr);
    ++pops;
  }
  EXPECT_TRUE(d.pops_fence_free());
#endif
}

// A thief moved the mode to switching and has not run its barrier when the owner pops: the
// owner fences (switching is not fence_free) and does not go fence-free while it lasts.
TEST(DequeWindowProbe, PopsWhileAThiefIsSwitchingAreFenced) {
  HEIST_NEEDS_PERTURB();
  HEIST_NEEDS_BARRIER();
#if HEIST_PERTURB
  chase_lev_deque<int*> d(8);
  d.enable_fence_free_pops(1, 1);
  push_four(d);
  switching_thief thief(d);
  EXPECT_FALSE(d.pops_fence_free());
  EXPECT_EQ(d.pop(), &g_values[3]);
  EXPECT_EQ(d.pop(), &g_values[2]);  // a try here sees a thief counted and stays fenced
  EXPECT_FALSE(d.pops_fence_free());
  const steal_result<int*> stolen = thief.finish();
  EXPECT_EQ(stolen.status, steal_status::success);
  EXPECT_EQ(stolen.value, &g_values[0]);
  EXPECT_EQ(d.pop(), &g_values[1]);
  EXPECT_EQ(d.pop(), nullptr);
#endif
}

#if HEIST_PERTURB
namespace {
// A switching thief is released after the owner popped once (`owner_pops`) or not at all; it
// steals the oldest element, the owner the rest, newest first, with fenced pops from then on.
// Returns how many process-wide barriers ran meanwhile.
std::uint64_t switch_and_steal(bool owner_pops) {
  chase_lev_deque<int*> d(8);
  d.enable_fence_free_pops(4, 16);
  push_four(d);
  EXPECT_TRUE(d.pops_fence_free());
  switching_thief thief(d);
  const std::uint64_t barriers = heist::detail::process_wide_barriers_run();
  std::vector<int*> popped;
  if (owner_pops) popped.push_back(d.pop());  // reads switching: fences and acknowledges
  const steal_result<int*> stolen = thief.finish();
  const std::uint64_t ran = heist::detail::process_wide_barriers_run() - barriers;
  EXPECT_EQ(stolen.status, steal_status::success);
  EXPECT_EQ(stolen.value, &g_values[0]);
  EXPECT_FALSE(d.pops_fence_free());
  while (int* v = d.pop())
    popped.push_back(v);
  EXPECT_EQ(popped, (std::vector<int*>{&g_values[3], &g_values[2], &g_values[1]}));
  return ran;
}
}  // namespace
#endif

// A thief has moved the mode to switching and waits for the owner's acknowledgement when the
// owner pops: that pop reads switching, fences and stores fenced, and the thief steals on
// that go-ahead without the process-wide barrier. Each element is taken once.
TEST(DequeWindowProbe, APoppingOwnerAcknowledgesTheSwitch) {
  HEIST_NEEDS_PERTURB();
  HEIST_NEEDS_BARRIER();
#if HEIST_PERTURB
  EXPECT_EQ(switch_and_steal(true), 0u);
#endif
}

// The same switch with an owner that does not pop (it runs a long task): the thief stops
// waiting for an acknowledgement, runs the barrier itself and steals; the owner's next pops
// are fenced.
TEST(DequeWindowProbe, AThiefWhoseOwnerDoesNotPopRunsTheBarrier) {
  HEIST_NEEDS_PERTURB();
  HEIST_NEEDS_BARRIER();
#if HEIST_PERTURB
  EXPECT_EQ(switch_and_steal(false), 1u);
#endif
}
