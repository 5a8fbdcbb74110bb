// completion_callback: what runs once when something a thread did not wait for completes: a
// future's continuation or awaiting coroutine (future_state.hpp), or the coroutine suspended in
// co_await group.join() on a task_group (join_awaiter.hpp, wait_context.hpp).
#pragma once

#include <coroutine>

#include "heist/detail/config.hpp"

namespace heist::detail {

// Runs once, on the thread that completes what it was registered on (a future's state, or a
// group whose coroutine waits in co_await group.join()). Must not throw.
class HEIST_API completion_callback {
 public:
  virtual void fire() noexcept = 0;
  // A coroutine's resumer (co_await group.join()) returns the coroutine, so that the task
  // finishing the group last may continue it by symmetric transfer instead of firing.
  virtual std::coroutine_handle<> coroutine() const noexcept { return {}; }

 protected:
  ~completion_callback() = default;
};

}  // namespace heist::detail
