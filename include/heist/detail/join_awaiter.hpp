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
// read-modify-write is needed at all. docs/design-async.md "Inline joins" has the proof sketch.
//
// The step that takes a member (take_member) is inline here, with the task that starts a
// member (group_start_job) and the member's record of its group (group_membership): the
// coroutine's promise type (coroutine.hpp) derives from that record, so this file needs no
// promise type, and a join costs no call into the library (issue 13, twenty-fourth round).
#pragma once

#include <coroutine>
#include <exception>
#include <thread>

#include "heist/detail/arena.hpp"
#include "heist/detail/completion_callback.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/perturb.hpp"
#include "heist/detail/resume.hpp"
#include "heist/detail/run_task.hpp"
#include "heist/detail/spawn.hpp"
#include "heist/detail/stack_headroom.hpp"
#include "heist/detail/task.hpp"
#include "heist/detail/thread_context.hpp"
#include "heist/detail/wait_context.hpp"

namespace heist::detail {

void help_until(arena& a, wait_context& w);

class join_awaiter;

// What a coroutine member of a task_group knows of its group; the coroutine's promise
// (coroutine.hpp, task_promise_base) is one. Written before the member's body first runs (by
// the task that starts it, or by the join that takes it inline), read at its end.
struct group_membership {
  wait_context* m_group = nullptr;       // set when run as a member of a task_group
  join_awaiter* m_inlined_by = nullptr;  // the join that runs this member inline, if any
  bool m_owner_counted = false;          // the member's run() was counted by the owner
};

// The task that starts a member of a task_group (run(task<void>), coroutine.hpp): the
// coroutine owns its frame from then on and frees it at its end (final_suspend), which also
// counts it out of the group. The member is counted in its group until it ends, not until it
// first suspends: by its owner without an RMW (owner_counted) when run() was called on the
// group's owner thread, like a spawn (wait_context.hpp). Three plain words and a flag,
// trivially destructible: a join that takes it inline copies it out and frees the block.
struct group_start_job {
  std::coroutine_handle<> handle;
  group_membership* membership;  // in the member's promise
  wait_context* group;
  bool owner_counted;
  void operator()(task*) noexcept {
    if (group->is_cancelled()) {
      handle.destroy();
      group->finish_member(t_context, owner_counted);
      return;
    }
    membership->m_group = group;
    membership->m_owner_counted = owner_counted;
    enter_group(group);  // its body runs in its group; run_task_of puts the task's back
    handle.resume();
  }
};
static_assert(std::is_trivially_destructible_v<group_start_job>);

// A task a join popped that it does not run (not a member of its group, or of another
// isolation region): back on top of the deque, waking a thief that found the deque empty
// meanwhile (src/coroutine_join.cpp).
void put_back_popped(thread_context& c, task* t) noexcept;
// A member a join popped and found its group cancelled: destroyed and counted out, unstarted
// (src/coroutine_join.cpp).
void skip_cancelled_member(const group_start_job& job, thread_context& c) noexcept;

// co_await group.join(): suspends until the group's tasks are done; the last one resumes it.
class join_awaiter final : public completion_callback {
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
          while (!m_ctx.done())
            std::this_thread::yield();
        }
        return m_handle;
    }
    return m_handle;
  }

  void fire() noexcept override { resume_in(continuation_arena(&m_arena), m_handle); }
  std::coroutine_handle<> coroutine() const noexcept override { return m_handle; }
  void await_resume() {
    // An inline member ran in its group, and a resume task in none: back to the joiner's.
    enter_group(m_resume_group);
    // acquire: the tasks' effects (done() pairs with their finish_one). Already read on this
    // thread when the join ended in a done() here (await_ready, or next() that then
    // transferred to the joiner): the common inline join reads the group once.
    if (!m_seen_done) (void)m_ctx.done();
    m_ctx.reset();
    if (m_ctx.has_exception()) std::rethrow_exception(m_ctx.take_exception());
  }

 private:
  // If the top of the calling thread's deque is a coroutine member of this group, pops it and
  // returns it, ready to run as inlined by this join; members found cancelled are destroyed and
  // counted out on the way. Null otherwise (a task popped that is not one goes back on top).
  // Only the deque's owner pops, and what it pops is its own to run (Chase-Lev: a task is
  // popped or stolen, never both), so the member is checked after the pop.
  std::coroutine_handle<> take_member() noexcept {
    thread_context* const c = t_context;
    if (c == nullptr) return {};
    slot* const own = c->m_slot;
    if (own == nullptr) return {};
    // Symmetric transfer is a tail call in optimized builds, and a chain of inline joins runs
    // on one stack frame; in sanitizer and unoptimized builds each transfer keeps its frame,
    // so a fork-join tree of coroutines joined inline would grow the stack by the tree's size
    // (ASan overflowed at fib(22)). Below the helping waits' headroom mark the join arms
    // instead: the coroutine suspends and every transfer on the stack returns.
    if (HEIST_UNLIKELY(stack_is_low(*c))) return {};
    for (;;) {
      task* const t = own->m_deque.pop();
      if (t == nullptr) return {};
      // relaxed: a task of our own deque, pushed by this thread (or by an earlier occupant of
      // the slot, whose pushes the slot hand-off ordered before ours).
      if (HEIST_UNLIKELY(t->m_invoke != &invoke_job<group_start_job> ||
                         task_closure<group_start_job>(t).group != &m_ctx ||
                         t->m_isolation.load(std::memory_order_relaxed) != c->m_isolation)) {
        // Not ours (or of another isolation region than the running task, which an isolated
        // waiter below us must not run: the scheduler will).
        put_back_popped(*c, t);
        return {};
      }
      HEIST_PERTURB_POINT(member_inlined);
      // Copied out, the block goes straight back to the pool, without the indirect call that
      // would destroy the closure (trivially destructible).
      const group_start_job job = task_closure<group_start_job>(t);
      c->m_pool.deallocate(t);
      // release: as execute_task's (executor_impl::in_flight). A popped member counts as run
      // here for executor accounting (wait_idle, statistics), as execute_task would count it.
      finish_counter(*c, *own, true).bump_release();
      if (HEIST_UNLIKELY(m_ctx.is_cancelled())) {
        skip_cancelled_member(job, *c);
        continue;
      }
      job.membership->m_group = &m_ctx;
      job.membership->m_owner_counted = job.owner_counted;
      job.membership->m_inlined_by = this;
      c->m_group = &m_ctx;  // the member's body runs in its group (resume.hpp, enter_group)
      return job.handle;
    }
  }

  wait_context& m_ctx;
  arena& m_arena;
  wait_context* m_resume_group;  // the running group to put back (resume.hpp, enter_group)
  std::coroutine_handle<> m_handle;
  bool m_seen_done = false;  // a done() of this thread read the group done (await_resume)
};

}  // namespace heist::detail
