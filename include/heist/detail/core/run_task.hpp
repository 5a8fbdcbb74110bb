// run_task: running one task on the calling thread (its group context, isolation, trace
// span, statistics and its group's count), shared by the scheduler's loops (src/) and by
// task_group::wait, which runs the child it pops back in the caller's own frame.
//
// The wait's first step (wait_for_group): a fork-join function that waits on its own slot
// almost always finds its group's last spawned child on top of its deque (LIFO; thieves
// take from the other end). Inline in the waiting function, the wait pops it and runs it
// with the least bookkeeping (try_run_own_child), and returns if that finished the group;
// anything else (an empty deque, another group's task, a stolen child, a low stack, a
// trace, a thread without a slot here) goes to the out-of-line helping wait
// (src/wait/helping_wait.cpp) with the popped task in hand. Inline, the common join costs no
// call into the library and no second frame (BENCHMARKS.md).
#pragma once

#include <cassert>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/core/arena.hpp"
#include "heist/detail/core/task.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/diagnostics/analysis_hooks.hpp"
#include "heist/detail/wait/stack_headroom.hpp"
#include "heist/detail/wait/wait_context.hpp"

namespace heist::detail {

// Which tasks a thread may take: anything, or only those of its isolation region.
struct task_filter {
  std::uintptr_t isolation = 0;
  bool restricted() const noexcept { return isolation != 0; }
  // May see a stale or null pointer (chase_lev_deque::steal_if); reads only an atomic of a
  // block of the task pool, which stays task memory for good. A coroutine member's own header
  // (frame_task_address) is not read: its frame may be gone by now; it is queued only outside
  // isolated regions (isolation 0), so a restricted filter never takes it anyway.
  // relaxed: the field is written before the push (or injection) that publishes the task,
  // and a speculative read only decides whether to try the CAS that takes it.
  bool accepts(const task* t) const noexcept {
    if (isolation == 0) return true;
    return t != nullptr && !frame_task_address(t) &&
           t->m_isolation.load(std::memory_order_relaxed) == isolation;
  }
};

// The counters a thread's statistics go to (slot_counters: flow by location, statistics by
// thread): a worker's or spare's own slot, else the slot it occupies; null: the executor's.
inline slot* stats_slot(const thread_context& c) noexcept {
  return c.home() != nullptr ? c.home() : c.current_slot();
}

// The counter that counts a task finishing on slot `s` of thread `c`, whose body ran if `ran`
// (the caller bumps it, with release, once the task is over): where `s` holds the thread's
// own statistics (a worker at home, a thread on a leased slot) a task that ran is counted
// once for flow and statistics (finished_executed); a worker's task on another slot counts
// its statistics at home now and its flow at `s`.
HEIST_ALWAYS_INLINE owner_counter& finish_counter(const thread_context& c, slot& s,
                                                  bool ran) noexcept {
  slot* const home = c.home();
  if (HEIST_LIKELY(ran && (home == nullptr || home == &s))) {
    return s.m_counters.finished_executed;
  }
  if (ran) home->m_counters.executed.bump();
  return s.m_counters.finished;
}

// --- running a task (inline: the hot path of the scheduler's loops and of the wait) ------
// Runs `t`'s body and records its span in the trace of the thread's slot, or the executor's
// list for threads without one (executor_options::trace). Out of line
// (src/diagnostics/traced_run.cpp): the untraced path of run_task keeps no clock reading
// alive across the call.
// While a scalability analysis runs, every task takes this path too: its strand is measured
// around the body (analysis_hooks.hpp); `group` is the task's group (null: none).
HEIST_API void invoke_traced(thread_context& c, task* t, bool run, bool stolen,
                             const wait_context* group) noexcept;
// Whether `exec` records the spans of tasks run by threads without a slot (its trace option).
HEIST_API bool traces_spans(const executor_impl& exec) noexcept;
// A task run by a thread without a slot of `exec` finished (its statistics; `executed`: its
// body ran). Out of line: executor_impl::count_external_finished.
HEIST_API void count_external_finished(executor_impl& exec, const thread_context& c,
                                       bool executed) noexcept;

// One task of `group` (null: none; `counted_by_owner`: its spawn was counted by the group's
// owner, try_add_owned): its group context, isolation and trace span, its statistics, and its
// group's count. `OwnChild`: the caller has checked (try_run_own_child) that the thread holds
// a slot that records no trace, that it already runs a task of its executor (m_task_depth > 0)
// and that `t` is of the running task's isolation region; so those branches go, and the depth
// and the isolation are left as they are (only zero or not zero matters of the depth: spawn.hpp;
// the region is the same); `own` is then that slot (the caller has read it). Inline into both
// callers, so that what a caller knows folds away and is not kept across the task's call.
// `in_frame`: `t` is a coroutine member's own header (task.hpp, frame_task), not a block of
// the pool: nothing is given back (the coroutine's frame is its own, and may be gone).
template <bool OwnChild = false>
HEIST_ALWAYS_INLINE void run_task_of(thread_context& c, task* t, wait_context* group,
                                     bool counted_by_owner, bool stolen, slot* own = nullptr,
                                     bool in_frame = false) noexcept {
  const bool run = group == nullptr || !group->is_cancelled();
  slot* const s = OwnChild ? own : c.current_slot();
  const bool on_slot = OwnChild || s != nullptr;
  // Chosen before the body starts, so that `run` need not be kept across the call on the
  // slot's path.
  owner_counter* const finished = on_slot ? &finish_counter(c, *s, run) : nullptr;
  wait_context* const saved_group = c.exchange_group(group);
  if constexpr (OwnChild) {
    t->m_invoke(t, run);
  } else {
    // relaxed: this thread owns `t` now (popped, stolen by CAS or dequeued), which
    // synchronized with the push that published the field.
    const std::uintptr_t saved_isolation =
        c.begin_task(t->m_isolation.load(std::memory_order_relaxed));
    if (HEIST_UNLIKELY(s != nullptr ? s->m_trace != nullptr : traces_spans(*c.exec())) ||
        analysing()) {
      invoke_traced(c, t, run, stolen, group);
    } else {
      t->m_invoke(t, run);
    }
    c.end_task(saved_isolation);
  }
  c.exchange_group(saved_group);
  if (!OwnChild && HEIST_UNLIKELY(in_frame)) {
    // not a block of the pool
  } else if (HEIST_UNLIKELY(stolen)) {
    c.m_pool.deallocate_foreign(t);  // another thread's block (task_pool.hpp)
  } else {
    c.m_pool.deallocate(t);
  }
  if (on_slot) {
    // release: see owner_counter::bump_release and executor_impl::in_flight.
    finished->bump_release();
  } else {
    count_external_finished(*c.exec(), c, run);
  }
  // The own child's finish is the caller's, fused with its look at the group
  // (try_run_own_child).
  if constexpr (!OwnChild) {
    if (group != nullptr) group->finish_task(&c, counted_by_owner);
  }
}

inline void run_task(thread_context& c, task* t, bool stolen) noexcept {
  run_task_of(c, t, group_of(t), owner_counted(t), stolen, nullptr, frame_task(t));
}

// Runs `t`, then the continuation it handed over as its last act (spawn.hpp, try_bypass), if
// any, and so on.
inline void execute_task(thread_context& c, task* t, bool stolen) noexcept {
  for (;;) {
    run_task(c, t, stolen);
    t = c.take_bypass();
    if (HEIST_LIKELY(t == nullptr)) return;
    stolen = false;
  }
}

// Runs `t` of arena `a` on the calling thread. A thread without a slot in `a` (an external
// helper of a non-strict arena) runs it as a guest: spawns inside go to `a`'s injection
// queue.
inline void execute_in(thread_context& c, arena& a, task* t, bool stolen) noexcept {
  if (c.current_arena() == &a) {
    execute_task(c, t, stolen);
    return;
  }
  const scheduling_state saved = c;
  c.restart_in(&a.exec(), &a, nullptr);
  execute_task(c, t, stolen);
  static_cast<scheduling_state&>(c) = saved;
}

// What became of a task popped in a helping wait (try_run_own_child).
enum class own_child_run : std::uint8_t {
  not_run,     // not a child for the short path: the caller still holds it
  group_open,  // run; its group is not done
  group_done,  // run; that finished its group (read with acquire, as done() does)
};

// The helping wait's common case: it popped `t` from its own slot's deque (not stolen), `t` is
// a child of the group `w` it waits for that it counted itself (owner-counted), of the
// waiter's own isolation region, the waiter runs inside a task (the common join: a task waits
// for the children it spawned), the stack has room and the slot records no trace. Then `t`
// runs through run_task_of with those facts as constants (no branch on stolen, null group,
// null slot or the external counters; the depth and the isolation stay), and its finish and
// the look at `w` that follows are one step (wait_context::finish_own_child_then_done).
// Returns not_run, having done nothing, when any of them does not hold. Such a task is a
// group_job (a task_group's or a loop's), which never hands over a continuation: only a
// submit() task's last act does (spawn.hpp, task_end_scope), and those belong to no group. So
// nothing is left in the bypass here (asserted; execute_task takes it everywhere else).
// `own`: the thread's slot (c.current_slot()), read once by the caller.
// `CheckAnalysis`: while a scalability analysis runs, decline (the task must take the traced
// path); wait_for_group, which has checked that already, passes false.
template <bool CheckAnalysis = true>
HEIST_ALWAYS_INLINE own_child_run try_run_own_child(thread_context& c, slot& own, wait_context& w,
                                                    task* t) noexcept {
  // relaxed (m_isolation): this thread popped `t`, which synchronized with its push.
  if (t->m_group != tag_group(&w, true) ||
      t->m_isolation.load(std::memory_order_relaxed) != c.isolation() ||
      HEIST_UNLIKELY(c.task_depth() == 0) || HEIST_UNLIKELY(own.m_trace != nullptr) ||
      HEIST_UNLIKELY(inline_stack_is_low(c)) || (CheckAnalysis && analysing())) {
    return own_child_run::not_run;
  }
  run_task_of<true>(c, t, &w, true, false, &own);
  assert(!c.bypass_taken() && "a group's task handed over a continuation");
  return w.finish_own_child_then_done(&c) ? own_child_run::group_done : own_child_run::group_open;
}

// Polled completions (poller.hpp) at a task boundary of a busy thread, at most every
// search_state::k_busy_poll_interval_ns (thread_record.hpp). Callers check exec.poll_pending()
// first.
HEIST_NOINLINE HEIST_API void poll_between_tasks(thread_context& c) noexcept;

// --- the wait (task_group::wait) ---------------------------------------------------------
// The helping wait, out of line (src/wait/helping_wait.cpp): the thread holds a slot of `a`, and
// `popped` is what it just popped from its own deque and did not run (may be null).
HEIST_API void help_after_pop(thread_context& c, wait_context& w, task* popped);
// The helping wait for any thread; `w` was seen not done (spawn.hpp declares it too).
HEIST_API void help_until_pending(arena& a, wait_context& w);

// Runs `t`, just popped from the calling thread's own deque inside a helping wait for `w`
// (the caller counts the nesting: depth_guard), if it is a child of `w` that may run here
// with the least bookkeeping (try_run_own_child), then lets polled completions progress, as
// the waits of nested parallelism run tasks (the thread's executor is its arena's: it holds a
// slot there, `own`). not_run: the caller still holds `t`.
template <bool CheckAnalysis = true>
HEIST_ALWAYS_INLINE own_child_run run_popped_own_child(thread_context& c, slot& own,
                                                       wait_context& w, task* t) noexcept {
  // An isolated waiter runs only tasks of its region: try_run_own_child takes only those.
  const own_child_run r = try_run_own_child<CheckAnalysis>(c, own, w, t);
  if (r != own_child_run::not_run && HEIST_UNLIKELY(c.current_arena()->poll_pending())) {
    poll_between_tasks(c);
  }
  return r;
}

// While a scalability analysis runs: the whole wait out of line, then the join.
HEIST_NOINLINE inline void wait_for_group_analysed(arena& a, wait_context& w) {
  if (!w.done()) help_until_pending(a, w);
  analysis_joined(&w);
}

// Returns when every task of `w` has finished (the file comment has the fast path).
HEIST_ALWAYS_INLINE void wait_for_group(arena& a, wait_context& w) {
  if (analysing()) {
    wait_for_group_analysed(a, w);
    return;
  }
  thread_context* const c = t_context;
  if (w.done(c)) return;
  // The slot read once (stores in between would make the compiler read it again).
  slot* const own = c != nullptr ? c->current_slot() : nullptr;
  if (HEIST_LIKELY(own != nullptr && c->current_arena() == &a)) {
    task* t = own->m_deque.pop();
    if (t != nullptr) {
      own_child_run r;
      {
        inline_depth_guard depth(*c);
        r = run_popped_own_child<false>(*c, *own, w, t);
      }
      if (r != own_child_run::not_run) {
        if (r == own_child_run::group_done) return;
        t = nullptr;
      }
    }
    help_after_pop(*c, w, t);
    return;
  }
  help_until_pending(a, w);
}

}  // namespace heist::detail
