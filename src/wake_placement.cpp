// wake_placement: the waker's yield and the wakee's step off its waker's CPU (the design is
// in wake_placement.hpp).
#include "heist/detail/wake_placement.hpp"

#include <sched.h>

#include "affinity_mask.hpp"
#include "heist/detail/perturb.hpp"

namespace heist::detail {

bool spread_wakes(std::size_t workers) noexcept {
  const auto mask = affinity_mask::of_calling_thread();
  return mask && mask->count() >= 2 && workers <= mask->count();
}

int current_cpu() noexcept {
  return sched_getcpu();
}

void yield_to_wakee() noexcept {
  (void)sched_yield();
}

int step_off_cpu(int cpu) noexcept {
  const auto mask = affinity_mask::of_calling_thread();
  if (!mask || !mask->has(cpu) || mask->count() < 2) return -1;
  affinity_mask others = *mask;
  others.remove(cpu);
  // The kernel migrates a thread that runs on a CPU outside its new mask before
  // sched_setaffinity returns, so the CPU read next is already another one.
  if (others.count() == 0 || !others.apply()) return -1;
  const int moved_to = sched_getcpu();
  // Back to the mask the thread had: the OS may place it anywhere again from now on. If the
  // mask cannot be restored (a cpuset shrank meanwhile), the narrower one stays: still a
  // subset of what the thread was allowed.
  (void)mask->apply();
  return moved_to;
}

int step_off_waker_cpu(const thread_context& c) noexcept {
  const int waker = c.m_sleeper.m_waker_cpu;
  if (waker < 0 || c.m_worker_of == nullptr || sched_getcpu() != waker) return -1;
  HEIST_PERTURB_POINT(wakee_stepping_off);
  return step_off_cpu(waker);
}

}  // namespace heist::detail
