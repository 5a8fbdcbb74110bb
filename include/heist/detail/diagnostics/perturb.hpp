// perturb: the perturbation build's hooks. With -DHEIST_PERTURB=ON every named protocol step
// of the scheduler (each publication, each park decision, each lease hand-back, each count
// change that another thread reads) calls perturb::at(point). There, a per-thread generator
// seeded from HEIST_PERTURB_SEED decides to do nothing, yield, or sleep a few microseconds:
// the interleavings that a busy 64-core machine produces by itself become common on two
// cores, and a protocol that depends on a step being quick fails in minutes instead of in a
// user's production. The seed is printed once per process (stderr) so that a failing run
// can be replayed; the thread interleaving is not fully deterministic, but the same seed
// gives each thread the same sequence of delays.
//
// Tests can also install a hook per point (set_hook) to open one window on purpose: the
// deterministic regression tests of tests/probe use it to reproduce a race at will.
//
// In a normal build HEIST_PERTURB_POINT expands to nothing and none of this is compiled.
#pragma once

#include <cstdint>

#include "heist/detail/config.hpp"

#ifndef HEIST_PERTURB
#define HEIST_PERTURB 0
#endif

namespace heist::detail::perturb {

// Every named step. Keep perturb.cpp's names in the same order.
enum class point : std::uint32_t {
  spawn_pushed,              // a task is in the spawner's deque; the idle word not read yet
  inject_pushed,             // a task is in an injection queue; no fence, no wake-up yet
  admit_counted,             // a submission is counted in flight; the closed flag not read yet
  sleep_listed,              // S1 done: listed and counted as sleeping; no re-check yet
  sleep_before_park,         // S3 found nothing; about to block on the parker
  wake_unlinked,             // a waker took a sleeper off the list; no signal sent yet
  search_leaving,            // a searcher is about to stop searching (found work, or done)
  group_finish_counted,      // a group's count reached zero; its waiter not signalled yet
  group_waiter_woken,        // a waiter consumed its k_group signal; about to return
  group_arming,              // a waiter is about to arm (publish its parker) on a group
  isolate_rejected,          // an isolated waiter holds tasks of another region it popped
  inject_rejected,           // an isolated consumer holds a task of another region it popped
  lease_draining,            // a leased slot's leftovers move to the injection queue
  lease_returned,            // a leased slot was given back; the arena not re-checked yet
  visitor_attracting,        // new work in a task arena: about to look for a visitor
  visit_entering,            // a worker is about to lease a task arena's slot
  blocking_changed,          // the blocked-thread count changed; stand-ins not told yet
  quiescence_check,          // a thread ran out of work; wait_idle() callers not checked yet
  graph_request_queued,      // a graph run request is queued; its enqueuer not driving yet
  graph_node_done,           // a graph node task is about to drop its pending unit
  graph_run_completing,      // a graph request left the queue; its future not completed yet
  pipeline_parked,           // a pipeline item was parked at a serial filter; stage unlocked
  pipeline_token_freed,      // a released token restarts the suspended input; not spawned yet
  pipeline_input_suspended,  // the pipeline input parked itself; its task goes on
  future_completing,         // a future's value is stored; its callback not taken yet
  worker_retiring,           // a worker's park timed out (on_worker_stop ran); not retired yet
  worker_restarting,         // a waker unlisted a retired worker's placeholder; no thread yet
  poll_registered,           // a polled item was counted as pending; no fence, no wake-up yet
  owner_count_confirmed,     // a group's owner is busy and saw m_owner still its; no store yet
  group_claiming,            // a non-owner cleared a group's owner; no barrier, no fold yet
  member_inlined,            // a joiner popped its group's member to run inline; not started
  pop_reserved,              // a deque's owner stored bottom - 1 (T3); mode and top not read
  pop_mode_switching,        // a thief moved a deque's pops to switching; no barrier yet
  pop_mode_trying,           // a deque's owner stored fence_free; thieves not counted yet
  steal_counted,             // a thief counted itself and read a deque's pop mode; no look yet
  waker_yielding,            // a waker that runs on signalled a sleeper; not yielded yet
  wakee_stepping_off,        // a woken thread found itself on its waker's CPU; mask unchanged
  pop_mode_acknowledging,    // a deque's owner fenced a pop that read switching; no store yet
  search_registering,        // a first look found nothing; not counted as a searcher yet
  cancel_flagged,            // a group's cancel flag is set; the epoch not bumped yet
  start_placing,             // a new worker's thread runs; the creator has not placed it yet
  join_suspending,           // a joiner's await_ready read its group not done; no step yet
  graph_run_completed,       // a graph request's future is complete; its completer goes on
  started_task_ending,       // a started task completed and released its future
  affinity_half_taken,       // an affinity thief took a share's back half; not in its own yet
  inject_batch_taken,        // a searcher took a batch from an injection bucket; none pushed
  awaiter_queued,            // an await's transfer was queued from a low stack; not returned
  future_withdrawing,        // a combinator is about to take its callback back from a future
  arena_pinned,              // a holder from outside pinned an arena; not used yet
  arena_closing,             // an arena's owner refused new pins; held ones not waited for
  future_wait_registered,    // a blocked get() registered its signal; not helping or parked yet
  future_completed,          // a future is complete (its callback fired or taken); caller goes on
  count
};

HEIST_API const char* name(point p) noexcept;

#if HEIST_PERTURB
// The delay (or hook) of one step. Out of line: it is a test build.
HEIST_API void at(point p) noexcept;

// A test's hook: called at `p` on every thread that reaches it, instead of the random delay,
// until cleared (nullptr). Hooks must be installed while no heist thread is at that point.
using hook_fn = void (*)(point, void* arg);
HEIST_API void set_hook(point p, hook_fn fn, void* arg) noexcept;
HEIST_API void clear_hooks() noexcept;
// The seed in use (HEIST_PERTURB_SEED, or one drawn from the clock and printed).
HEIST_API std::uint64_t seed() noexcept;
// Turns the random delays off or on (hooks stay active); on by default.
HEIST_API void set_random_delays(bool on) noexcept;
#endif

}  // namespace heist::detail::perturb

#if HEIST_PERTURB
#define HEIST_PERTURB_POINT(p) ::heist::detail::perturb::at(::heist::detail::perturb::point::p)
#elif !defined(HEIST_PERTURB_POINT)
#define HEIST_PERTURB_POINT(p) ((void)0)
#endif
