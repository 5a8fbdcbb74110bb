// wake_placement: a thread that wakes a sleeping worker and runs on should not end up
// sharing its CPU with the worker it woke while another CPU of the process stays idle.
//
// Why. Which CPU a woken thread runs on is the OS's choice. Linux looks for an idle CPU near
// the waker or near the wakee's previous CPU, but the search is cut short when the
// last-level cache looks busy (SIS_UTIL: the scan depth falls to zero once the domain's
// recent utilisation is high) and skips a vCPU that it believes preempted (which of the two
// acted on the measured VM is not known). Then the wakee is queued on the waker's CPU,
// behind the waker. In fork-join that is the common wake-up (a
// worker spawns, wakes a sleeper, runs on), and on the 2-vCPU machine of BENCHMARKS.md
// ("Issue 13, eighth round") it made a third of the 2-thread samples 25-40% slower: both
// workers on one CPU, the other idle, for 4-20 ms, until the load balancer moved one.
//
// What heist does (only where the arena spreads wake-ups: the executor's affinity mask has
// at least two CPUs and no more workers than CPUs, see spread_wakes):
//   waker:  records its CPU in the sleeper entry, under the sleeper list's lock, as it takes
//           the sleeper off the list (idle_state::wake_one); signals; then yields its CPU
//           once (yield_to_wakee). If the wakee was queued behind it, the wakee usually
//           runs now instead of after the waker's time slice (the OS may still pick the
//           waker again); if nothing is queued there, the yield returns at once.
//   wakee:  after it consumed its k_work signal, compares its CPU with the recorded one; if
//           they are equal, it takes that CPU out of its affinity mask (the kernel moves it
//           to another allowed CPU before the call returns) and puts the mask back as it was
//           (step_off_cpu). Only its own mask, only for those two calls.
// Neither side changes the sleep protocol: the wakee is already a searcher when it checks,
// the waker holds no lock when it yields, and no count or flag that another thread reads is
// written. A mask the user narrowed to one CPU (on_worker_start) is left alone.
#pragma once

#include <cstddef>

#include "heist/detail/thread_context.hpp"

namespace heist::detail {

// Whether an executor of `workers` workers, created by the calling thread, spreads
// wake-ups: its affinity mask (which the workers inherit) holds at least two CPUs and at
// least `workers` CPUs (with more workers than CPUs, sharing a CPU is unavoidable).
bool spread_wakes(std::size_t workers) noexcept;

// The CPU the calling thread runs on, or -1 where unknown.
int current_cpu() noexcept;

// The waker's half: give the CPU to a thread queued behind the caller, if any.
void yield_to_wakee() noexcept;

// Moves the calling thread off CPU `cpu` to another CPU of its affinity mask, then restores
// the mask. Returns the CPU it ran on while `cpu` was excluded, or -1 if it did not move
// (the mask has no other CPU, or does not hold `cpu`, or a call failed).
int step_off_cpu(int cpu) noexcept;

// The wakee's half, on a thread that consumed a k_work signal: if its waker recorded its CPU
// and the caller runs on it, step off. Only the executor's own threads move (workers and
// stand-ins); a user's thread in a helping wait keeps its mask untouched. Returns what
// step_off_cpu returned, or -1 if there was nothing to do.
int step_off_waker_cpu(const thread_context& c) noexcept;

}  // namespace heist::detail
