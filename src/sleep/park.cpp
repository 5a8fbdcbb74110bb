// park: how a searcher that found nothing blocks its thread, and how it comes back. Parking
// is idle_state's protocol (idle_state.hpp, S1-S4); these are its callers. A registered
// searcher (a roamer or a helper of an arena) lists itself, re-checks what it can take and
// parks until a waker's k_work (or, in a wait, its group's k_group); a worker of an executor
// with an idle_timeout parks with a deadline and retires when it passes (R1-R2). A restricted
// waiter (inside isolate(), or without a slot of a task_arena) is never listed: it parks on
// its group alone, at most k_restricted_park_ns, and searches again.
#include <cassert>
#include <chrono>
#include <thread>

#include "core/scheduler_internal.hpp"
#include "heist/detail/sleep/wake_placement.hpp"

namespace heist::detail {

namespace {

// Arms `w` to wake this thread's parker when it finishes, before a waiter parks.
enum class arm_outcome {
  armed,     // park now
  finished,  // `w` is done: stop waiting
  poll,      // another thread already sleeps on `w`: paused briefly, search again
};
arm_outcome arm_waiter(thread_context& c, wait_context& w) {
  HEIST_PERTURB_POINT(group_arming);
  switch (w.arm(&parker_of(c))) {
    case wait_context::arm_result::done:
      return arm_outcome::finished;
    case wait_context::arm_result::busy:
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      return arm_outcome::poll;
    case wait_context::arm_result::armed:
      break;
  }
  return arm_outcome::armed;
}

// Parks a worker for at most its executor's idle_timeout (S4 with a deadline), then retires
// it (R1-R2 in worker_threads.cpp). Returns true if it was woken for work (it is a searcher),
// false if it retired (its thread ends; the placeholder holds its place in the list).
bool park_or_retire(thread_context& c, executor_impl& exec, idle_state& idle) {
  const auto now = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  const std::int64_t deadline = now() + exec.threads().idle_timeout_ns();
  for (;;) {
    const std::int64_t left = deadline - now();
    if (left <= 0) break;
    if (parker_of(c).wait_for(parker::k_work, left) != 0) {  // woken: a searcher
      step_off_waker_cpu(c);
      return true;
    }
  }
  // R1: on_worker_stop first, so that a restart's on_worker_start cannot overlap it.
  exec.worker_stopping(record_of(c).worker().index());
  HEIST_PERTURB_POINT(worker_retiring);
  // R2
  if (idle.retire(sleeper_of(c),
                  exec.threads().retired_placeholder(record_of(c).worker().index()))) {
    c.retire();
    return false;
  }
  // A waker unlisted us between the timeout and R2: take its signal and go on working.
  parker_of(c).wait_for(parker::k_work);
  exec.worker_started(record_of(c).worker().index());
  return true;
}

// May this searcher retire when its park times out? A worker (not a stand-in) between tasks
// in its executor's default arena, when the executor has an idle_timeout.
bool may_retire(const thread_context& c, arena& a, wait_context* w) noexcept {
  executor_impl& exec = a.exec();
  return w == nullptr && !record_of(c).worker().stand_in() && c.worker_of() == &exec &&
         &exec.default_arena() == &a && exec.threads().idle_timeout_ns() > 0 &&
         !exec.poll_pending();
}

}  // namespace

// Parks a registered searcher of arena `a` (S1-S4). On return the thread counts as a
// searcher (search_again) or is done searching (wait_over: `w` finished; retired: its count
// went to its placeholder, see park_or_retire).
park_outcome park_registered(thread_context& c, arena& a, wait_context* w) {
  const auto again_unless = [](bool over) {
    return over ? park_outcome::wait_over : park_outcome::search_again;
  };
  executor_impl& exec = a.exec();
  idle_state& idle = a.idle();
  if (w != nullptr) {
    const arm_outcome armed = arm_waiter(c, *w);
    if (armed != arm_outcome::armed) return again_unless(armed != arm_outcome::poll);
  }
  idle.prepare_sleep(sleeper_of(c), kind_of(c, a, w));  // S1, S2
  if (work_visible(c, a) || search_over(exec, w) ||     // S3
      (visits_arenas(c, a, w) && exec.registry().needs_thread()) ||
      (w == nullptr && record_of(c).worker().stand_in() &&
       exec.standins().surplus())) {  // go back and retire
    if (!idle.cancel_sleep(sleeper_of(c))) parker_of(c).wait_for(parker::k_work);
    return again_unless(w != nullptr && !w->disarm(parker_of(c)));
  }
  if (slot* stats = stats_slot(c)) stats->m_counters.sleeps.bump();
  HEIST_PERTURB_POINT(sleep_before_park);
  if (&a == &exec.default_arena() && exec.poll_pending()) {
    // Polled completions are pending (poller.hpp): park with a timeout and poll again; a
    // waiter also wakes for its group. A timeout withdraws from the list (S1 undone) like a
    // re-check that found work.
    const std::uint32_t why =
        parker_of(c).wait_for(parker::k_work | (w != nullptr ? parker::k_group : 0),
                              record_of(c).search().poll_park_ns());
    if (why == 0) {
      if (!idle.cancel_sleep(sleeper_of(c))) parker_of(c).wait_for(parker::k_work);
      record_of(c).search().poll_park_timed_out();
    } else if ((why & parker::k_group) != 0) {
      HEIST_PERTURB_POINT(group_waiter_woken);
      if ((why & parker::k_work) == 0 && !idle.cancel_sleep(sleeper_of(c))) {
        parker_of(c).wait_for(parker::k_work);
      }
      return park_outcome::wait_over;
    }
    step_off_waker_cpu(c);  // a no-op unless a waker that runs on took us off the list
    return again_unless(w != nullptr && !w->disarm(parker_of(c)));
  }
  if (may_retire(c, a, w)) {
    return park_or_retire(c, exec, idle) ? park_outcome::search_again : park_outcome::retired;
  }
  // S4
  const std::uint32_t why =
      parker_of(c).wait_for(parker::k_work | (w != nullptr ? parker::k_group : 0));
  if ((why & parker::k_group) != 0) {
    HEIST_PERTURB_POINT(group_waiter_woken);
    // The wait is over. Leave the list, or consume the k_work of a waker who took us.
    if ((why & parker::k_work) == 0 && !idle.cancel_sleep(sleeper_of(c))) {
      parker_of(c).wait_for(parker::k_work);
    }
    return park_outcome::wait_over;
  }
  // k_work: a waker took us out of the list and made us a searcher. (Debug: a k_work signal
  // is only ever sent by the waker that unlisted us, whose write the signal publishes.)
  assert(!sleeper_of(c).m_listed && "k_work without the waker's unlisting");
  step_off_waker_cpu(c);
  return again_unless(w != nullptr && !w->disarm(parker_of(c)));
}

// Parks a waiter that may not take the arena's work (isolated, or without a slot of a
// task_arena): only until `w` finishes, at most k_restricted_park_ns. Returns false if `w`
// finished.
bool park_restricted(thread_context& c, wait_context& w) {
  const arm_outcome armed = arm_waiter(c, w);
  if (armed != arm_outcome::armed) return armed == arm_outcome::poll;
  if (parker_of(c).wait_for(parker::k_group, k_restricted_park_ns) != 0) {
    HEIST_PERTURB_POINT(group_waiter_woken);
    return false;
  }
  return w.disarm(parker_of(c));
}

}  // namespace heist::detail
