// worker_loop: the loops of the executor's own threads. (Glossary: scheduler_internal.hpp.)
//
// The worker loop
//   1. Every 64th task, look at the injection queue first, so a worker busy with its own
//      recursion cannot starve external submissions (Go's scheduler does the same every
//      61 ticks).
//   2. Pop the own deque (LIFO: the most recently spawned, cache-hot task).
//   3. Search (search.cpp), visiting task arenas with work on the way (arena_visit.cpp).
//
// blocking() stand-ins ("spares") run the same loop on a spare slot of the default arena,
// and retire at a task boundary once fewer threads block than spares stand in.
#include <pthread.h>

#include <chrono>
#include <string>

#include "core/scheduler_internal.hpp"
#include "heist/detail/core/arena_lease.hpp"
#include "heist/detail/sleep/backoff.hpp"

namespace heist::detail {

void poll_between_tasks(thread_context& c) noexcept {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  if (!record_of(c).search().busy_poll_due(now)) return;
  c.exec()->poll_once();
}

// --- the loops of the executor's own threads --------------------------------------------------
namespace {
// Runs tasks of the default arena (and visits task arenas) until `stop_after_task` says so
// or the executor stops. The caller has set up the context and its slot.
template <class StopAfterTask>
void run_tasks(thread_context& c, arena& a, StopAfterTask&& stop_after_task) {
  slot& self = *c.current_slot();
  const task_filter anything{};
  for (;;) {
    found_task found;
    if (HEIST_UNLIKELY(++self.m_tick >= k_inject_check_interval)) {
      self.m_tick = 0;
      found.t = a.inject().pop(self.m_index);
    }
    if (found.t == nullptr) found.t = self.m_deque.pop();
    if (found.t == nullptr) {
      found = search(c, a, nullptr, anything);
      if (found.t == nullptr) return;  // stopping (all accepted tasks ran), or retired
    }
    execute_task(c, found.t, found.stolen);
    // Polled completions progress while every worker computes (poller.hpp): at a task
    // boundary, at most every search_state::k_busy_poll_interval_ns (thread_record.hpp).
    if (HEIST_UNLIKELY(c.exec()->poll_pending())) poll_between_tasks(c);
    // A task boundary: a task arena of higher priority than the default arena's (normal)
    // that waits for a thread is served first (priority.cpp).
    if (HEIST_UNLIKELY(c.exec()->registry().wants_above(arena::k_normal))) {
      c.exec()->serve_higher_priority(c, arena::k_normal, self.m_tick);
    }
    if (stop_after_task()) return;
  }
}
}  // namespace

void worker_main(executor_impl& exec, std::size_t index, bool restarted) {
  thread_record c;
  arena& a = exec.default_arena();
  c.occupy(&exec, &a, &a.slot_at(index));
  c.work_for(&exec, c.current_slot());
  record_of(c).worker().assign(index, false);
  init_stack_bounds(c);
  t_context = &c;
  exec.worker_started(index);
  bool go_on = true;
  if (restarted) {
    // Started by a wake-up that counted this thread as a searcher (worker_threads.cpp, R3):
    // search before anything else, without counting itself again.
    record_of(c).search().mark_counted_by_waker();
    const found_task found = search(c, a, nullptr, task_filter{});
    if (found.t != nullptr) {
      execute_task(c, found.t, found.stolen);
    } else {
      go_on = false;  // stopping, or retired again
    }
  }
  if (go_on) run_tasks(c, a, [] { return false; });
  // A retiring worker called on_worker_stop before it retired (R1).
  if (!c.retired()) exec.worker_stopping(index);
  t_context = nullptr;
}

// A stand-in for threads blocked in heist::blocking(): on duty, it runs tasks like a worker
// on a spare slot of the default arena, and retires at a task boundary once fewer threads
// block than spares stand in. Retired, it waits a keep-alive period to be called again.
void spare_main(executor_impl& exec) {
  {
    thread_record c;
    init_stack_bounds(c);
    c.work_for(&exec, nullptr);
    record_of(c).worker().assign(exec.num_workers(), true);
    t_context = &c;
    arena& a = exec.default_arena();
    const std::string name = exec.options().name.substr(0, 9) + "-spare";
    pthread_setname_np(pthread_self(), name.c_str());
    do {
      // There is one spare slot per allowed spare; a spare that just retired may still be
      // handing its slot back, for a few instructions.
      slot* s = a.try_lease_spare();
      for (spin_backoff b; s == nullptr && !exec.stopping(); s = a.try_lease_spare())
        b.pause();
      if (s == nullptr) break;
      c.restart_in(&exec, &a, s);
      c.set_home(s);
      // Run at least the task it may have been woken for, then check at every boundary (and
      // before parking, in search).
      run_tasks(c, a, [&exec] { return exec.standins().should_retire(); });
      const scheduling_state saved{};
      end_lease(c, a, *s, saved);
      c.set_home(nullptr);
      if (exec.stopping()) break;
    } while (exec.standins().park());
    t_context = nullptr;
  }
  exec.standins().exited();
}

}  // namespace heist::detail
