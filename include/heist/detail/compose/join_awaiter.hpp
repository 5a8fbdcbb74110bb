// co_await group.join() (task_group.hpp): a suspended coroutine waits for a task_group
// without a thread; the task that finishes the group last resumes it as a task.
//
// Inline joins. Most coroutine members of a group (task_group::run(task)) are never stolen:
// when their joiner reaches co_await group.join(), the newest of them is still on top of the
// joiner's own deque. The joiner then pops it and runs it itself by symmetric transfer,
// instead of arming and going back to the scheduler (which would pop the same member, run
// it, and resume the joiner from the member's end). The member remembers its joiner; when it
// ends it counts itself out and continues the join (member_ended): the joiner's coroutine if
// the group is done, the next member on top of the deque, or the armed wait. No stack grows
// (each step is a symmetric transfer) and, with the group owner-counted, no atomic
// read-modify-write is needed at all. docs/design/async.md "Inline joins" has the proof sketch.
#pragma once

#include <coroutine>
#include <exception>

#include "heist/detail/compose/resume.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/core/arena.hpp"
#include "heist/detail/core/run_task.hpp"
#include "heist/detail/sleep/backoff.hpp"
#include "heist/detail/wait/completion_callback.hpp"
#include "heist/detail/wait/wait_context.hpp"

namespace heist::detail {

HEIST_API void help_until(arena& a, wait_context& w);

// co_await group.join(): suspends until the group's tasks are done; the last one resumes it.
class HEIST_API join_awaiter final : public completion_callback {
 public:
  join_awaiter(wait_context& ctx, arena& a) noexcept
      : m_ctx(ctx), m_arena(a), m_resume_group(current_group()) {}
  bool await_ready() noexcept { return m_seen_done = m_ctx.done(); }
  template <class P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
    m_handle = h;
    m_resume_group = group_to_resume_in<P>(m_resume_group);
    // await_ready has just read the group not done: straight to its members (a group that
    // ended in between is seen by the arming, which then says done).
    HEIST_PERTURB_POINT(join_suspending);
    return take_member_or_arm();
  }

  // A member this join ran inline has ended on thread `self` (t_context, null outside heist;
  // it may have suspended and resumed elsewhere), its frame freed; `owner_counted`: its run()
  // was counted by the group's owner. Counts it out and says what the join does next: resume
  // the joiner (the group is done), run the next member on top of this thread's deque, or arm
  // and let the last member resume the joiner (noop: this thread goes back to its scheduler).
  // On the owner's thread the finish and the look at the group are one step, as after a
  // wait's own child (wait_context::finish_own_child_then_done).
  std::coroutine_handle<> member_ended(const thread_context* self, bool owner_counted) noexcept {
    bool done;
    if (owner_counted && self != nullptr) {
      done = m_ctx.finish_own_child_then_done(self);
    } else {
      m_ctx.finish_one();
      done = m_ctx.done(self);
    }
    if (done) {
      m_seen_done = true;  // and the joiner resumes right here, by transfer
      return m_handle;
    }
    return take_member_or_arm();
  }

  std::coroutine_handle<> take_member_or_arm() noexcept {
    if (std::coroutine_handle<> member = take_member()) return member;
    switch (m_ctx.arm_resumer(this)) {
      case wait_context::arm_result::armed:
        return std::noop_coroutine();
      case wait_context::arm_result::done:
        return m_handle;
      case wait_context::arm_result::busy:
        // Another thread already sleeps in wait() on this group: help until it is done.
        try {
          help_until(m_arena, m_ctx);
        } catch (...) {  // no stack extension available: wait without helping
          for (spin_backoff b; !m_ctx.done();)
            b.pause();
        }
        return m_handle;
    }
    return m_handle;
  }

  void fire() noexcept override { resume_in(continuation_arena(&m_arena), m_handle); }
  void* continuation() const noexcept override { return m_handle.address(); }
  void await_resume() {
    // An inline member ran in its group, and a resume task in none: back to the joiner's.
    enter_group(m_resume_group);
    // acquire: the tasks' effects (done() pairs with their finish_one). Already read on this
    // thread when the join ended in a done() here (await_ready, or a step that then
    // transferred to the joiner): the common inline join reads the group once.
    if (!m_seen_done) (void)m_ctx.done();
    if (analysing()) analysis_joined(&m_ctx);
    m_ctx.reset();
    if (m_ctx.has_exception()) std::rethrow_exception(m_ctx.take_exception());
  }

 private:
  // If the top of the calling thread's deque is a coroutine member of this group, pops it and
  // returns it, ready to run as inlined by this join; members found cancelled are destroyed
  // and counted out on the way. Null otherwise (the deque as it was). Inline: the common case
  // (coroutine_member.hpp, which defines it with the promise); what else the pop finds goes to
  // take_member_after_pop (src/wait/coroutine_join.cpp).
  std::coroutine_handle<> take_member() noexcept;
  // The rest of take_member on thread `c`, whose slot is `s`, for `popped`, just popped from
  // its deque and not taken inline (another task, a member of another group or region, a
  // cancelled member).
  std::coroutine_handle<> take_member_after_pop(thread_context& c, slot& s, task* popped) noexcept;
  // `p`'s member (of this group, just popped by this thread `c` from its slot `s`) runs
  // inline by this join: counted as run (as execute_task would), its joiner noted, its body in
  // its group.
  template <class Promise>
  HEIST_ALWAYS_INLINE std::coroutine_handle<> inline_member(thread_context& c, slot& s,
                                                            Promise& p) noexcept {
    HEIST_PERTURB_POINT(member_inlined);
    // release: as execute_task's (executor_impl::in_flight).
    finish_counter(c, s, true).bump_release();
    p.m_inlined_by = this;
    c.exchange_group(&m_ctx);  // the member's body runs in its group (resume.hpp, enter_group)
    return std::coroutine_handle<Promise>::from_promise(p);
  }

  wait_context& m_ctx;
  arena& m_arena;
  wait_context* m_resume_group;  // the running group to put back (resume.hpp, enter_group)
  std::coroutine_handle<> m_handle;
  bool m_seen_done = false;  // a done() of this thread read the group done (await_resume)
};

}  // namespace heist::detail
