// Blocking on a future (future::get, future::wait, a graph's wait for its runs): the waiting
// thread registers a signal on its own stack as the state's completion callback and helps
// until the signal fires, like a wait for a task_group of one task.
//
// The signal is a wait_context with a count of 1 on this stack; the state's completer fires
// it (complete(): the callback exchange, then fire(), whose finish_one is its last touch
// of the signal, or the wake-up its disarm() waits for: wait_context.hpp). The value is
// ordered before the wait's end by the completer's release exchange and finish_one and the
// wait's acquire done(); a state found ready on registration is ordered by the failed CAS's
// acquire. The registration is the state's one consumer for the length of the wait: a future
// a caller holds is never registered (future_state.hpp), and on return the signal has fired,
// so the state is ready and free.

#include "core/scheduler_internal.hpp"
#include "heist/detail/compose/future_state.hpp"
#include "heist/detail/compose/resume.hpp"
#include "heist/detail/sleep/backoff.hpp"

namespace heist::detail {

namespace {

class ready_signal final : public completion_callback {
 public:
  void fire() noexcept override { m_done.finish_one(); }
  wait_context& done() noexcept { return m_done; }

 private:
  wait_context m_done{nullptr, 1};
};

}  // namespace

bool wait_until_ready(future_state_base& s) {
  if (s.ready()) return true;
  ready_signal signal;
  switch (s.on_complete(&signal)) {
    case registration::ready:
      return true;
    case registration::taken:
      return false;
    case registration::registered:
      break;
  }
  HEIST_PERTURB_POINT(future_wait_registered);
  try {
    arena_in_use home(s.m_home);
    help_until(home.get() != nullptr ? *home.get() : current_arena(), signal.done());
  } catch (...) {
    // The wait could not help (no stack extension left, the executor refused the thread):
    // the signal must not die registered. Taken back: the error goes to the caller, the state
    // is free. Too late (the completer took it): it fires at once; wait for that.
    if (s.withdraw(&signal)) throw;
    for (spin_backoff b; !signal.done().done();)
      b.pause();
  }
  return true;
}

}  // namespace heist::detail
