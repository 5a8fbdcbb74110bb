// co_await group.join() (task_group.hpp): a suspended coroutine waits for a task_group
// without a thread; the task that finishes the group last resumes it as a task.
#pragma once

#include <coroutine>
#include <exception>

#include "heist/detail/arena.hpp"
#include "heist/detail/resume.hpp"
#include "heist/detail/wait_context.hpp"

namespace heist::detail {

void help_until(arena& a, wait_context& w);

// co_await group.join(): suspends until the group's tasks are done; the last one resumes it.
class join_awaiter final : public completion_callback {
 public:
  join_awaiter(wait_context& ctx, arena& a) noexcept : m_ctx(ctx), m_arena(a) {}
  bool await_ready() const noexcept { return m_ctx.done(); }
  bool await_suspend(std::coroutine_handle<> h) {
    m_handle = h;
    switch (m_ctx.arm_resumer(this)) {
      case wait_context::arm_result::armed:
        return true;
      case wait_context::arm_result::done:
        return false;
      case wait_context::arm_result::busy:
        // Another thread already sleeps in wait() on this group: help until it is done.
        help_until(m_arena, m_ctx);
        return false;
    }
    return false;
  }
  void fire() noexcept override { resume_in(continuation_arena(&m_arena), m_handle); }
  std::coroutine_handle<> coroutine() const noexcept override { return m_handle; }
  void await_resume() {
    // acquire: the tasks' effects (done() pairs with their finish_one).
    (void)m_ctx.done();
    m_ctx.reset();
    if (m_ctx.has_exception()) std::rethrow_exception(m_ctx.take_exception());
  }

 private:
  wait_context& m_ctx;
  arena& m_arena;
  std::coroutine_handle<> m_handle;
};

}  // namespace heist::detail
