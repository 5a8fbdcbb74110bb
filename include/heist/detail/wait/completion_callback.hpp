// completion_callback: what runs once when something a thread did not wait for completes: a
// future's continuation or awaiting coroutine (future_state.hpp), or the coroutine suspended in
// co_await group.join() on a task_group (join_awaiter.hpp, wait_context.hpp). The waiting
// side knows only this interface: what a callback stands for (a task to queue, a coroutine to
// resume) is the business of the layer that registered it.
#pragma once

#include "heist/detail/config.hpp"

namespace heist::detail {

// Runs once, on the thread that completes what it was registered on (a future's state, or a
// group whose coroutine waits in co_await group.join()). Must not throw.
class HEIST_API completion_callback {
 public:
  virtual void fire() noexcept = 0;
  // What the completing thread may run next itself, in place of fire(): an opaque
  // continuation whose meaning the registering layer knows (a suspended coroutine's frame
  // address: the task finishing a group last, or completing a future, continues that
  // coroutine by symmetric transfer: compose/resume.hpp, take_over). Null: fire() must run.
  virtual void* continuation() const noexcept { return nullptr; }

 protected:
  ~completion_callback() = default;
};

}  // namespace heist::detail
