// scheduler_internal: what the scheduler's files share (private to the library). The
// scheduler is split by concern, each file opening with its part of this glossary:
//   worker_loop.cpp     the loops of the executor's own threads (workers, blocking() stand-ins)
//   search.cpp          finding a task: the own deque, the injection queue, stealing
//   park.cpp            parking a searcher that found nothing (S1-S4), retiring on idle_timeout
//   helping_wait.cpp    task_group::wait and future::get run tasks while they wait
//   arena_visit.cpp     spawning into arenas from outside, leases, visits to task arenas
//   thread_context.cpp  what heist knows about each OS thread
//   stack_extension.cpp deep helping recursion moves to a fresh stack
//   wake_placement.cpp  a woken worker off the CPU of the thread that woke it
// Running one task (and task_group::wait's inline first step) is run_task's
// (include/heist/detail/core/run_task.hpp); sleeping and waking is idle_state's
// (include/heist/detail/sleep/idle_state.hpp);
// include/heist/detail/sleep/README.md and docs/design/protocols.md have the long version,
// docs/design/overview.md the overview with diagrams.
//
// Glossary
//   worker   a thread the executor started; it occupies one slot (deque) of its arena.
//   owner    the thread occupying a slot: the only one that pushes and pops its deque.
//   thief    any thread stealing from the top of another slot's deque.
//   inject   queue a task from a thread that holds no slot of the target arena.
//   help     run other tasks while waiting for a task_group or a future.
//   park     block the OS thread on its parker (idle_state.hpp has the sleep protocol).
//   visit    a worker with nothing to do at home leases a slot of a task_arena with work.
//   spare    a stand-in thread that runs in place of a thread blocked in heist::blocking().
//
//
// Rejected alternatives: a global queue with a condition variable (every spawn
// would take a lock); waking all sleepers on new work (burns CPU under a trickle); switching
// stacks with ucontext (sanitizers lose track of fiber switches without annotations, and a
// thread per 4096 levels costs ~50 us, i.e. nothing).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/executor_impl.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/detail/core/run_task.hpp"
#include "heist/detail/core/thread_record.hpp"
#include "heist/detail/diagnostics/perturb.hpp"
#include "heist/detail/diagnostics/trace.hpp"
#include "heist/detail/wait/wait_context.hpp"
#include "wait/stack_extension.hpp"

namespace heist::detail {

// --- tuning ------------------------------------------------------------------------------
inline constexpr std::uint32_t k_inject_check_interval = 64;
// Most tasks a searcher with an empty deque takes from an injection bucket at once: it runs
// the oldest and keeps the others in its deque, where the other workers can steal them
// (search_once; Go's scheduler takes from its global queue the same way).
inline constexpr std::size_t k_inject_batch = 32;
inline constexpr std::int64_t k_restricted_park_ns = 1'000'000;

inline std::uint64_t next_random(std::uint64_t& state) noexcept {
  // xorshift64*: fast, and good enough to spread victims.
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

struct found_task {
  task* t = nullptr;
  bool stolen = false;
};

struct nested_run {
  arena* a;
  task* t;
  bool stolen;
};

// A helping wait runs `t` inline, or on a stack extension when the stack is nearly used up.
// The wait counts itself in the help depth (depth_guard) for all the tasks it runs.
inline void execute_nested(thread_context& c, arena& a, task* t, bool stolen) {
  if (HEIST_UNLIKELY(stack_is_low(c))) {
    nested_run run{&a, t, stolen};
    const bool handed_over = run_on_stack_extension(
        c,
        [](void* p) {
          auto& r = *static_cast<nested_run*>(p);
          execute_in(*t_context, *r.a, r.t, r.stolen);
        },
        &run);
    if (handed_over) return;
  }
  execute_in(c, a, t, stolen);
}

// --- finding a task (search.cpp) --------------------------------------------------------------
// Pushes back tasks the thread popped from its own deque and will not run (see search.cpp).
void push_back_foreign(thread_context& c, task* list) noexcept;
// Pops past tasks of other isolation regions to one of `f`'s region (see search.cpp).
task* dig_for_region(thread_context& c, const task_filter& f, task* t) noexcept;

inline task* pop_own(thread_context& c, const task_filter& f) noexcept {
  task* t = c.current_slot()->m_deque.pop();
  if (HEIST_UNLIKELY(t != nullptr && !f.accepts(t))) return dig_for_region(c, f, t);
  return t;
}

// One search round in arena `a`: its injection queue, then steal attempts.
found_task search_once(thread_context& c, arena& a, const task_filter& f,
                       bool& saw_contention) noexcept;
// Searches arena `a` until a task is found, or `w` is done (w != null), or the executor
// stops (w == null). Spins, then yields, then parks.
found_task search(thread_context& c, arena& a, wait_context* w, const task_filter& f);
// Work that the calling thread could take in `a`, for the re-check before sleeping (S3).
bool work_visible(thread_context& c, arena& a) noexcept;
// Is this thread a top-level searcher of its executor's default arena (a worker or spare
// between tasks)? Only those visit task arenas, and they also re-check them before sleeping.
bool visits_arenas(const thread_context& c, arena& a, wait_context* w) noexcept;
// The idle kind a registered searcher of `a` counts as (idle_state.hpp).
idle_kind kind_of(const thread_context& c, arena& a, wait_context* w) noexcept;
// The end condition of a search: `w` done, or (no w) the executor stopping.
bool search_over(executor_impl& exec, wait_context* w) noexcept;

// --- parking (park.cpp) ------------------------------------------------------------------------
// Parks a registered searcher of arena `a` (S1-S4). On return the thread counts as a
// searcher (search_again) or is done searching (wait_over: `w` finished; retired: its count
// went to its retired-worker placeholder).
enum class park_outcome { search_again, wait_over, retired };
park_outcome park_registered(thread_context& c, arena& a, wait_context* w);
// Parks a waiter that may not take the arena's work until `w` finishes, at most 1 ms.
// Returns false if `w` finished.
bool park_restricted(thread_context& c, wait_context& w);

// L1-L2: the caller stops searching `a` as a thread of kind `k` (search.cpp).
void leave_search(arena& a, idle_kind k) noexcept;

// --- arena visits (arena_visit.cpp) -----------------------------------------------------------
// A searcher of `home` that goes visiting another arena: it stays counted as a searcher
// until it holds the visit's first task (or found none), so that its last look (L2) does not
// see the very task it is about to take and wake a second thread for it.
struct pending_leave {
  arena* home;
  idle_kind kind;
  bool done = false;
  void leave() noexcept {
    if (!done) {
      done = true;
      leave_search(*home, kind);
    }
  }
};
// Runs tasks of task arena `x` (already counted in x.m_visitors) on a leased slot until it
// has none left (or higher-priority work waits); returns whether it ran any. `leaving`, if
// given, is left once the first task is in hand.
bool visit(thread_context& c, arena& x, pending_leave* leaving = nullptr);

}  // namespace heist::detail
