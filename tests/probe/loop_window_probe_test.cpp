// Deterministic tests for the windows of the loop protocols (kind: probe). As in
// window_probe_test.cpp, each installs a perturbation hook
// (include/heist/detail/diagnostics/perturb.hpp) where its window opens and holds it open; they
// need the perturbation build (the `perturb` preset) and are skipped elsewhere.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "probe_support.hpp"
#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using heist_test::watchdog;
using namespace heist_test::probe;

}  // namespace

// An affinity thief takes the back half of another share under that share's lock, then
// installs it in its own share under its own lock. In between the half is in neither share:
// the other participants may find nothing left and leave the loop. Held open here for 50 ms
// at the first steal of each call: the rest of the loop runs and the others leave, then the
// thief installs its half and runs all of it, and the call returns only after that, with
// every iteration run once.
TEST(WindowProbe, AnAffinityHalfInFlightIsRunByItsThiefAfterTheOthersLeft) {
  HEIST_NEEDS_PERTURB();
#if HEIST_PERTURB
  watchdog dog("AnAffinityHalfInFlightIsRunByItsThiefAfterTheOthersLeft", 120s);
  struct window {
    std::atomic<bool> armed{false};
    std::atomic<std::thread::id> holder{};
    std::atomic<std::size_t> ran_before_release{0};
    std::atomic<std::size_t>* ran = nullptr;
  } w;
  perturb::set_hook(
      perturb::point::affinity_half_taken,
      [](perturb::point, void* arg) {
        auto& s = *static_cast<window*>(arg);
        if (!s.armed.exchange(false)) return;
        s.holder = std::this_thread::get_id();
        std::this_thread::sleep_for(50ms);
        s.ran_before_release = s.ran->load();
      },
      &w);
  heist::executor ex(4);
  heist::affinity_partitioner ap;
  constexpr std::size_t n = 400;
  for (int call = 0; call < 5; ++call) {
    std::vector<std::atomic<int>> hits(n);
    std::vector<std::thread::id> ran_on(n);
    std::atomic<std::size_t> ran{0};
    w.ran = &ran;
    w.holder = std::thread::id{};
    w.armed = true;
    ex.submit([&] {
        heist::parallel_for(
            heist::blocked_range<std::size_t>(0, n),
            [&](const heist::blocked_range<std::size_t>& r) {
              for (std::size_t i = r.begin(); i != r.end(); ++i) {
                if (i < n / 4) std::this_thread::sleep_for(20us);  // share 0 is the slow one
                hits[i].fetch_add(1);
                ran_on[i] = std::this_thread::get_id();
                ran.fetch_add(1);
              }
            },
            ap);
      }).get();
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "call " << call << ", iteration " << i;
    ASSERT_NE(w.holder.load(), std::thread::id{}) << "call " << call << ": no steal";
    // The window was open: the others ran everything but the held half meanwhile, and the
    // thief ran that half (at least one iteration) once it went on.
    const std::size_t held = n - w.ran_before_release.load();
    EXPECT_GE(held, 1u) << "call " << call;
    std::size_t by_holder = 0;
    for (std::size_t i = 0; i < n; ++i)
      by_holder += ran_on[i] == w.holder.load() ? 1 : 0;
    EXPECT_GE(by_holder, held) << "call " << call;
  }
#endif
}
