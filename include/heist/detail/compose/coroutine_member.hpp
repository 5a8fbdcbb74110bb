// Coroutine members of a task_group (task_group::run(task<void>)): how a member starts, how
// run() queues it (its own frame's header as the deque entry, or a pool block where that is
// not allowed), and the inline join's common case (join_awaiter::take_member). Part of
// coroutine.hpp, which includes it at its end: it needs the promise defined there
// (docs/design/async.md, "Inline joins" and "A member's deque entry is its own frame").
#pragma once

#include <cassert>
#include <coroutine>
#include <cstddef>
#include <new>
#include <type_traits>

#include "heist/coroutine.hpp"
#include "heist/detail/compose/join_awaiter.hpp"
#include "heist/detail/compose/resume.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/core/spawn.hpp"

namespace heist::detail {

// Starts a member of a task_group (run(task<void>)), its group and counting already in its
// promise: the coroutine owns its frame from now on and frees it at its end (final_awaiter),
// which also counts it out of the group. The member is counted in its group until it ends,
// not until it first suspends: by its owner without an RMW (owner_counted) when run() was
// called on the group's owner thread, like a spawn (owner_count.hpp). A member found
// cancelled is destroyed unrun and counted out.
inline void start_member(std::coroutine_handle<task_promise<void>> h) noexcept {
  task_promise<void>& p = h.promise();
  wait_context* const group = p.group();
  if (group->is_cancelled()) {
    const bool owner_counted = p.owner_counted();
    h.destroy();
    group->finish_member(t_context, owner_counted);
    return;
  }
  enter_group(group);  // its body runs in its group; run_task_of puts the task's back
  h.resume();
}

// The promise of the member whose deque entry is `t` (run_task_in_group).
inline task_promise<void>& member_promise(task* t) noexcept {
  return *std::launder(reinterpret_cast<task_promise<void>*>(reinterpret_cast<std::byte*>(t) -
                                                             k_member_task_offset));
}

// The task of a member queued on its runner's own deque (run_task_in_group): the header in its
// promise (task_promise_base::m_member_task), run by a thief or a helping wait like any task,
// or taken by its joiner inline (join_awaiter::take_member).
inline void frame_member(task* self, bool) noexcept {
  start_member(std::coroutine_handle<task_promise<void>>::from_promise(member_promise(self)));
}

// Stack: symmetric transfer is a tail call in optimized builds, and a chain of inline joins
// runs on one stack frame; in sanitizer and unoptimized builds each transfer keeps its frame,
// so a fork-join tree of coroutines joined inline would grow the stack by the tree's size
// (ASan overflowed at fib(22)). Below the helping waits' headroom mark the join arms instead:
// the coroutine suspends and every transfer on the stack returns.
// Only the deque's owner pops, and what it pops is its own to run (Chase-Lev: a task is popped
// or stolen, never both), so the member is checked after the pop.
HEIST_ALWAYS_INLINE std::coroutine_handle<> join_awaiter::take_member() noexcept {
  thread_context* const c = t_context;
  if (c == nullptr || c->current_slot() == nullptr || HEIST_UNLIKELY(stack_is_low(*c))) return {};
  slot& s = *c->current_slot();
  task* const t = s.m_deque.pop();
  if (t == nullptr) return {};
  // relaxed (m_isolation): a task of our own deque, pushed by this thread (or by an earlier
  // occupant of the slot, whose pushes the slot hand-off ordered before ours).
  if (HEIST_LIKELY(t->m_invoke == &frame_member)) {
    task_promise<void>& p = member_promise(t);
    if (HEIST_LIKELY(p.group() == &m_ctx &&
                     t->m_isolation.load(std::memory_order_relaxed) == c->isolation() &&
                     !m_ctx.is_cancelled())) {
      return inline_member(*c, s, p);
    }
  }
  return take_member_after_pop(*c, s, t);
}

// The task of a member queued any other way (into the injection queue, from a leased slot,
// while an analysis runs): a block of the pool around the handle.
struct group_start_job {
  explicit group_start_job(std::coroutine_handle<task_promise<void>> h) noexcept : handle(h) {}
  std::coroutine_handle<task_promise<void>> handle;
  void operator()(task*) noexcept { start_member(handle); }
};

template <class Task>
HEIST_ALWAYS_INLINE void run_task_in_group(arena& a, wait_context& group, Task&& t) {
  static_assert(std::is_same_v<std::decay_t<Task>, heist::task<void>>,
                "task_group::run takes a callable or a heist::task<void>");
  refuse_empty_task(t.valid(), "heist::task_group::run");
  thread_context& c = current_context();
  const bool owner_counted = group.try_add_owned(&c);
  if (!owner_counted) group.add(1);
  // The task owns the frame once it is queued.
  const std::coroutine_handle<task_promise<void>> h = task_access::release(t);
  task_promise<void>& p = h.promise();
  p.make_member_of(&group, owner_counted);
  slot* const own = c.current_slot();
  if (HEIST_LIKELY(own != nullptr && c.current_arena() == &a && c.task_depth() != 0 &&
                   c.isolation() == 0 && !analysing())) {
    // On the thread's own deque, from inside a task and no isolated region: the frame's own
    // header is the entry (isolation 0: task_filter never reads it speculatively).
    task* const entry = ::new (static_cast<void*>(p.m_member_task)) task;
    assert(&member_promise(entry) == &p && frame_task_address(entry) &&
           "a member's entry is found by its address");
    entry->m_invoke = &frame_member;
    entry->m_group = reinterpret_cast<wait_context*>(k_frame_task_bit);
    // relaxed: published to thieves by the push (release).
    entry->m_isolation.store(0, std::memory_order_relaxed);
    own->m_counters.created.bump();
    bool was_empty;
    try {
      was_empty = own->m_deque.push(entry);
    } catch (...) {  // no memory to grow the deque: not queued, counted nowhere
      own->m_counters.finished.bump_release();
      h.destroy();
      group.finish_member(&c, owner_counted);
      throw;
    }
    HEIST_PERTURB_POINT(spawn_pushed);
    if (was_empty) publish_push_into_empty(a);
    return;
  }
  try {
    spawn_from<group_start_job>(c, a, nullptr, h);
  } catch (...) {
    // Not queued (no memory for the block or the deque, or the executor refused it): the
    // block, if built, was discarded unrun, and a job's discard leaves the frame alone.
    h.destroy();
    group.finish_member(&c, owner_counted);
    throw;
  }
}

}  // namespace heist::detail
