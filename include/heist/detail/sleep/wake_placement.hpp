// wake_placement: a thread that wakes a sleeping worker and runs on should not end up
// sharing its CPU with the worker it woke while another CPU of the process stays idle.
//
// Why. Which CPU a woken thread runs on is the OS's choice. Linux looks for an idle CPU near
// the waker or near the wakee's previous CPU, but the search is cut short when the
// last-level cache looks busy (SIS_UTIL: the scan depth falls to zero once the domain's
// recent utilisation is high) and skips a vCPU that it believes preempted (which of the two
// acted on the measured VM is not known). Then the wakee is queued on the waker's CPU,
// behind the waker. In fork-join that is the common wake-up (a
// worker spawns, wakes a sleeper, runs on), and on a 2-vCPU VM it made a third of the 2-thread
// samples 25-40% slower: both workers on one CPU, the other idle, for 4-20 ms, until the load
// balancer moved one.
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
//
// Where a fresh executor's workers start. The wake-up path above
// never runs when a pool is new: its workers are still searching when the first task comes,
// nobody parks, nobody is woken. Linux places a new thread on the CPU it finds idlest at that
// instant, and on the 2-vCPU VM of BENCHMARKS.md about one fresh 2-worker executor in 150-200
// got both workers on one CPU: the second queued behind the first until the 4 ms tick, then
// the two took turns for the whole run (nqueens(12) in 33 ms, the 1-worker time, against
// 16.5) while the other CPU idled. So, where the arena spreads wake-ups, the creator gives
// each initial worker a CPU of its own mask, starting after its own CPU: right after creating
// worker i's thread it narrows that thread's mask to the one CPU (the kernel moves a thread
// queued elsewhere at once), then marks it placed (release). The worker's first act, before
// on_worker_start, is to wait for that mark (acquire; the creator's next few instructions,
// yielding meanwhile) and to take back the creator's mask whole: from then on the OS places
// it as it likes, and a mask the user sets in on_worker_start stays. Restarted workers
// (after idle_timeout) are started by a waker and are not placed.
#pragma once

#include <cstddef>
#include <memory>
#include <thread>

#include "heist/detail/config.hpp"
#include "heist/detail/core/thread_context.hpp"

namespace heist::detail {

// Whether an executor of `workers` workers, created by the calling thread, spreads
// wake-ups: its affinity mask (which the workers inherit) holds at least two CPUs and at
// least `workers` CPUs (with more workers than CPUs, sharing a CPU is unavoidable).
HEIST_API bool spread_wakes(std::size_t workers) noexcept;

// The CPU the calling thread runs on, or -1 where unknown.
HEIST_API int current_cpu() noexcept;

// The waker's half: give the CPU to a thread queued behind the caller, if any.
HEIST_API void yield_to_wakee() noexcept;

// Moves the calling thread off CPU `cpu` to another CPU of its affinity mask, then restores
// the mask. Returns the CPU it ran on while `cpu` was excluded, or -1 if it did not move
// (the mask has no other CPU, or does not hold `cpu`, or a call failed).
HEIST_API int step_off_cpu(int cpu) noexcept;

// The wakee's half, on a thread that consumed a k_work signal: if its waker recorded its CPU
// and the caller runs on it, step off. Only the executor's own threads move (workers and
// stand-ins); a user's thread in a helping wait keeps its mask untouched. Returns what
// step_off_cpu returned, or -1 if there was nothing to do.
HEIST_API int step_off_waker_cpu(const thread_context& c) noexcept;

// The initial workers' CPUs (the file comment). plan_start_placement returns null where the
// creator's mask does not allow spreading `workers` threads (spread_wakes is false).
class start_placement;
HEIST_API std::shared_ptr<start_placement> plan_start_placement(std::size_t workers);
// The creator, right after creating worker `index`'s thread `t`: narrow it to its CPU, then
// mark it placed (always, also when the kernel refused).
HEIST_API void place_started_worker(start_placement& p, std::size_t index, std::thread& t) noexcept;
// Worker `index`, first thing on its thread: wait for the mark, then take the creator's mask.
HEIST_API void settle_started_worker(start_placement& p, std::size_t index) noexcept;
// The CPU the calling thread ran on while narrowed by its start placement; -1 if it was not
// placed (a restart, a user's thread, an executor that does not spread).
HEIST_API int start_cpu() noexcept;

}  // namespace heist::detail
