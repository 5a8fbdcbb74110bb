// arena_visit: work entering an arena from a thread that holds none of its slots
// (inject), leases of a slot for a scope (arena_lease.hpp), and visits: a worker with nothing
// to do at home leases a slot of a task_arena that has work. (Glossary:
// scheduler_internal.hpp.)
#include <algorithm>

#include "core/scheduler_internal.hpp"
#include "heist/detail/core/arena_lease.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/platform/cpu.hpp"
#include "heist/detail/sleep/backoff.hpp"

namespace heist::detail {

bool visit(thread_context& c, arena& x, pending_leave* leaving) {
  bool ran = false;
  {
    arena_lease lease(c, x);
    if (c.current_arena() == &x && c.current_slot() != nullptr) {
      const task_filter anything{};
      for (;;) {
        found_task found;
        found.t = pop_own(c, anything);
        if (found.t == nullptr) {
          bool contention = false;
          for (int round = 0; round < 4 && found.t == nullptr; ++round) {
            found = search_once(c, x, anything, contention);
            if (found.t == nullptr) cpu_relax();
          }
        }
        if (found.t == nullptr) break;  // the arena ran dry: go home
        if (leaving != nullptr) leaving->leave();
        execute_task(c, found.t, found.stolen);
        ran = true;
        // Higher-priority work waits for a thread: go back and serve it (priority.cpp).
        if (x.exec().visit_preempted(x)) break;
      }
    }
  }
  if (leaving != nullptr) leaving->leave();
  // release: pairs with arena_registry::remove's acquire; nothing of `x` is touched after this.
  x.m_visitors.fetch_sub(1, std::memory_order_release);
  return ran;
}

// --- spawning into arenas ---------------------------------------------------------------------
void attract_visitor(arena& a) noexcept {
  // New work in strict arena `a`: if it has a free slot, wake a roamer of the executor (a
  // worker or stand-in between tasks: only they visit) to come and help.
  HEIST_PERTURB_POINT(visitor_attracting);
  // P2 for roamers: pairs with their S2 (their S3 re-check includes arena_registry::needs_thread)
  // and their L2; and with end_lease's fence after a slot is given back (the store-buffer
  // pair "publish work, then read the occupants" against "free the slot, then read the
  // queues": one of the two sides sees the other's write).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!a.has_free_slot()) return;
  a.exec().registry().note_wanted(a);  // busy threads of lower priority look at task boundaries
  a.exec().idle().notify_visitor_wanted();
}

void publish_push_into_empty(arena& a) noexcept {
  a.idle().notify_after_spawn();
  if (HEIST_UNLIKELY(a.strict())) attract_visitor(a);
}

namespace {
// A task built for a spawn that was refused: its closure is destroyed unrun and its block
// goes back; it was counted nowhere yet.
void discard_built_task(thread_context& c, task* t) noexcept {
  t->m_invoke(t, false);
  c.m_pool.deallocate(t);
}
}  // namespace

void abandon_task(thread_context& c, task* t) noexcept {
  wait_context* const group = group_of(t);
  const bool counted_by_owner = owner_counted(t);
  discard_built_task(c, t);  // then undo the counts its queueing made
  c.current_slot()->m_counters.finished.bump_release();
  if (group != nullptr) group->finish_task(&c, counted_by_owner);
}

void spawn_built_from_lease(arena& a, thread_context& c, wait_context* group, task* t) {
  try {
    a.exec().admission().admit_leased(*c.current_slot());  // counts it as created, or throws
  } catch (...) {
    discard_built_task(c, t);
    throw;
  }
  queue_on_own_slot(a, c, *c.current_slot(), group, t, false);
}

void spawn_built_from_outside(arena& a, thread_context& c, wait_context* group, task* t) {
  try {
    a.exec().admission().admit_external(c);
  } catch (...) {
    discard_built_task(c, t);
    throw;
  }
  t->m_group = group;
  if (group != nullptr) group->add(1);
  inject(a, c, t);
}

void spawn_built(arena& a, task* t) {
  thread_context& c = current_context();
  if (analysing()) analysis_spawned(c, a.exec(), t);
  if (holds_slot_of(c, a)) {
    if (c.task_depth() == 0) {
      a.exec().admission().admit_leased(
          *c.current_slot());  // an outsider on a leased slot (see spawn)
    } else {
      c.current_slot()->m_counters.created.bump();
    }
    bool was_empty;
    try {
      was_empty = c.current_slot()->m_deque.push(t);
    } catch (...) {  // out of memory growing the deque: the injection queue needs none
      inject(a, c, t);
      return;
    }
    HEIST_PERTURB_POINT(spawn_pushed);
    if (was_empty) publish_push_into_empty(a);
    return;
  }
  a.exec().admission().admit_external(c);
  inject(a, c, t);
}

void inject(arena& a, const thread_context& c, task* t) noexcept {
  // Thread contexts sit in thread-local storage, megabytes apart: mix the address so that
  // producers spread over the buckets.
  const auto h =
      static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&c)) * 0x9E3779B97F4A7C15ULL;
  const auto hint = static_cast<std::size_t>(h >> 40);
  a.begin_injection(hint);
  if (a.strict()) a.count_injected();
  a.inject().push(t, hint);
  HEIST_PERTURB_POINT(inject_pushed);
  a.idle().notify_after_inject();
  if (a.strict()) attract_visitor(a);
  a.end_injection(hint);  // the last touch of `a`: it may be destroyed from here on
}

void arena::wait_for_injectors() const noexcept {
  for (spin_backoff b; inject().producers_inside();)
    b.pause();
}

void arena_lifetime::close() noexcept {
  // acq_rel: the release half has nothing to publish to pins (they take nothing once they
  // see the bit); the acquire half and the loads below pair with unpin's release.
  m_word.fetch_or(k_closed, std::memory_order_acq_rel);
  HEIST_PERTURB_POINT(arena_closing);
  // Pins are short (a spawn or a helping wait on a future); a holder may be waiting for a
  // value, so this sleeps rather than spins.
  for (sleep_backoff b(1); (m_word.load(std::memory_order_acquire) & ~k_closed) != 0;)
    b.pause();
}

slot* begin_lease(thread_context& c, arena& a) noexcept {
  slot* s = a.try_lease();
  if (s == nullptr) return nullptr;
  c.occupy(&a.exec(), &a, s);  // depth 0 unless inside a task of this executor
  return s;
}

void end_lease(thread_context& c, arena& a, slot& s, const scheduling_state& saved) noexcept {
  // Leftovers (tasks spawned in the scope and not waited for there) go to the injection
  // queue, oldest first, so that an unoccupied slot never holds work (with steal_policy
  // none nobody would take it).
  HEIST_PERTURB_POINT(lease_draining);
  bool moved = false;
  // The common case, nothing left, is seen without the two read-modify-writes a steal costs
  // (it registers with the owner, m_thieves): this thread is the deque's owner until
  // give_back and pushes nothing meanwhile, so `empty()` (relaxed bottom and top) cannot say
  // empty while a task is left: bottom is its own, and top only grows, so a stale top can
  // only make the deque look fuller (then the steal finds out). No thief's write is read on
  // the strength of the answer.
  while (!s.m_deque.empty()) {
    const steal_result<task*> r = s.m_deque.steal();
    if (r.status == steal_status::empty) break;
    if (r.status != steal_status::success) continue;
    a.inject().push(r.value, s.m_index);
    moved = true;
  }
  static_cast<scheduling_state&>(c) = saved;
  a.give_back(s);
  HEIST_PERTURB_POINT(lease_returned);
  if (moved) a.idle().notify_after_inject();
  bool fenced = false;  // a seq_cst fence since this thread's last write
  if (a.strict()) {
    // A task arena that still has work gets a visitor for the slot just freed. seq_cst
    // fence between giving the slot back (an RMW of the occupant count) and reading the
    // queues: pairs with attract_visitor's fence between publishing and reading the
    // occupants. Without it both sides could read the old values (x86's locked RMW hides
    // this; ARM would not), and the work would wait for the next publication.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    fenced = true;
    if (moved || a.has_queued_work()) {
      attract_visitor(a);
      fenced = false;
    }
  }
  // This thread stops running the executor's tasks without searching first (an outside
  // helper whose wait is over, a retiring stand-in, the end of task_arena::execute). If it
  // ran the last task in flight after every worker went idle, nobody else would ever tell
  // a wait_idle()/shutdown() caller: check for it here, as a searcher does. The fence above,
  // with only reads after it, already separates this thread's finished counts from its read
  // of the waiter count, which is all note_idle's own fence is for.
  a.exec().admission().note_idle(fenced);
}

}  // namespace heist::detail
