// helping_wait: task_group::wait, future::get and the parallel algorithms wait by running
// tasks. (Glossary: scheduler_internal.hpp.)
//
//   A waiting thread runs tasks until its wait_context is done: its own deque first (its
//   group's tasks are on top, LIFO), then the same search as an idle worker (in the waited
//   arena only), then it parks until the group finishes (k_group) or the arena has new work
//   (k_work). A worker therefore never blocks its OS thread while it can run something, so
//   nested waits cannot deadlock, even on one worker. A thread inside isolate()
//   ("restricted") only takes tasks of its isolation region; it stays out of the idle
//   accounting (a wake-up for work it may not run would be lost) and parks with a 1 ms
//   timeout instead. A thread without a slot of a task_arena never runs that arena's tasks
//   (its concurrency limit); it only waits.
//
#include <cstdio>
#include <exception>

#include "core/scheduler_internal.hpp"
#include "heist/detail/core/arena_lease.hpp"
#include "heist/detail/core/spawn.hpp"

namespace heist::detail {

namespace {
// The helping loop proper; `own` says whether the thread holds a slot of `a`. Entered with
// `w` not done (the callers check first), so the first check is at the end of a round.
// `popped`: a task the caller already popped from its own deque (own only), run first.
// The wait counts once in the help depth for the tasks it runs inline: each nested wait on
// this stack is one more level.
HEIST_NOINLINE void help_loop(thread_context& c, arena& a, wait_context& w, bool own,
                              task* popped) {
  const task_filter f{c.isolation()};
  depth_guard depth(c);
  do {
    found_task found;
    if (popped != nullptr) {
      found.t = f.accepts(popped) ? popped : dig_for_region(c, f, popped);
      popped = nullptr;
    } else if (own) {
      found.t = pop_own(c, f);
    } else if (a.slotless_threads_wait()) {
      // No slot of a task_arena (or of the default executor's arena): running its tasks
      // would exceed its concurrency limit.
      park_restricted(c, w);
      continue;
    }
    if (found.t == nullptr) {
      found = search(c, a, &w, f);
      // w is done. Leave through the loop condition: its acquire load of the count is what
      // makes the tasks' effects visible (search may have seen zero through a relaxed load).
      if (found.t == nullptr) continue;
    }
    execute_nested(c, a, found.t, found.stolen);
    if (!own) a.exec().admission().note_idle();
    // Polled completions progress while the waits of nested parallelism run tasks.
    if (HEIST_UNLIKELY(a.exec().poll_pending()) && c.exec() == &a.exec()) poll_between_tasks(c);
  } while (!w.done(&c));
}

// The common case of a wait on the thread's own slot of its own arena: the tasks on top of
// its deque are the group's own children (LIFO), which try_run_own_child runs with the least
// bookkeeping. Anything else (an empty deque, a task of another group or region, a low stack,
// a trace) goes to help_loop with the task in hand. Returns when `w` is done.
HEIST_ALWAYS_INLINE void help_own_slot(thread_context& c, wait_context& w) {
  task* t;
  {
    // One level of nesting for the tasks run here; released before help_loop counts its own.
    depth_guard depth(c);
    for (;;) {
      slot& own = *c.current_slot();
      t = own.m_deque.pop();
      if (t == nullptr) break;
      const own_child_run r = run_popped_own_child(c, own, w, t);
      if (r == own_child_run::not_run) break;
      if (r == own_child_run::group_done) return;
    }
  }
  help_loop(c, *c.current_arena(), w, true, t);
}
}  // namespace

void help_until(arena& a, wait_context& w) {
  if (!w.done()) help_until_pending(a, w);
}

void help_after_pop(thread_context& c, wait_context& w, task* popped) {
  const analysis_wait_scope paused;
  if (popped == nullptr) {
    help_own_slot(c, w);
  } else {
    help_loop(c, *c.current_arena(), w, true, popped);
  }
}

void help_until_pending(arena& a, wait_context& w) {
  const analysis_wait_scope paused;
  thread_context& c = current_context();
  if (HEIST_LIKELY(holds_slot_of(c, a))) {
    help_own_slot(c, w);
    return;
  }
  arena_lease lease(c, a);
  help_loop(c, a, w, holds_slot_of(c, a), nullptr);
}

void report_unhandled_exception(std::exception_ptr e) noexcept {
  thread_context* c = t_context;
  if (c != nullptr && c->exec() != nullptr) {
    c->exec()->report_unhandled(std::move(e));
    return;
  }
  std::fputs("heist: unhandled exception in a task outside any executor\n", stderr);
}

}  // namespace heist::detail
