// search: how a thread out of local work finds a task, and parks when there is none.
// (Glossary: scheduler_internal.hpp.)
//
// Search: the injection queue, then steal attempts at victims chosen by the policy
//      (sticky_random: the last victim first, then random ones; random; round_robin from
//      the next index; none). A round makes 2x(victims) attempts. Then task arenas that
//      have work and a free slot are visited, in rotating order. Between empty rounds the
//      thread spins, then yields, then parks: sleep/idle_budget.hpp decides which and how
//      many rounds (per slot, adaptive), park.cpp parks (idle_state.hpp's protocol).
// A thief that took a task and sees more work behind it, while it was the last
//      searcher and somebody sleeps, wakes one more thread: work spreads one wake-up at a
//      time without waking threads for a trickle of single tasks. (That is L2, so only a
//      counted searcher does it: a woken thread, or one whose first look found nothing.)
// The first look: a thread out of local work makes its first round before it counts as a
//      searcher (begin_search). Most searches of a busy pool end in that round (a waiter
//      whose child was stolen, a thief between stolen tasks), and then the search writes
//      nothing shared: the idle word, which every spawn reads, stays in the spawners'
//      caches. Until it counts, the thread is to publishers what a busy thread is: it
//      suppresses no wake-up and owes no last look (L2). On 16 cores this took fib(30) from
//      4.2-4.8 to 3.9-4.2 ms.
//
// Parking (S1-S4 of idle_state.hpp's protocol) is in park.cpp.
#include <utility>

#include "core/scheduler_internal.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/platform/topology.hpp"
#include "heist/detail/sleep/wake_placement.hpp"
#include "sleep/idle_budget.hpp"

namespace heist::detail {

// Pushes back tasks the thread popped from its own deque and will not run (an isolated
// waiter's of other regions, a finished wait's, a coroutine join's non-members), linked
// through m_next, the most recently popped first, so that pushing in list order restores the
// deque's order; and the rest of a batch taken from the injection queue (search_once), the
// newest first, so that the oldest is popped first. A push into an empty deque is a
// publication: a thief may have found the deque empty meanwhile and gone to sleep, so it
// wakes a sleeper as a spawn would.
void push_back_foreign(thread_context& c, task* list) noexcept {
  arena& a = *c.current_arena();
  bool woke = false;
  while (list != nullptr) {
    task* t = list;
    // relaxed: the list is this thread's (its tasks popped or taken by it); the push below
    // publishes each task.
    list = t->m_next.load(std::memory_order_relaxed);
    // The slots these tasks came from are free (a batch: the deque was empty and the batch
    // is smaller than any deque), so the push cannot need to grow: it cannot throw.
    const bool was_empty = c.current_slot()->m_deque.push(t);
    if (was_empty && !woke) {
      woke = true;
      publish_push_into_empty(a);
    }
  }
}

// An isolated waiter's own deque may hold tasks of outer regions above tasks of its own
// (a task of another region spawned onto it in between). Pops until a task of the waiter's
// region or the bottom, then puts the others back in their order: a task of the region is
// found wherever it lies (oneTBB scans the local deque the same way).
HEIST_NOINLINE task* dig_for_region(thread_context& c, const task_filter& f, task* t) noexcept {
  task* foreign = nullptr;  // popped tasks of other regions, the latest first
  while (t != nullptr && !f.accepts(t)) {
    HEIST_PERTURB_POINT(isolate_rejected);
    // relaxed: the task is this thread's until it is pushed back (the push publishes).
    t->m_next.store(foreign, std::memory_order_relaxed);
    foreign = t;
    t = c.current_slot()->m_deque.pop();
  }
  // Reverse, so that the task popped last (the deepest) goes back first.
  task* in_order = nullptr;
  while (foreign != nullptr) {
    // relaxed: tasks this thread popped; only it touches them until they are pushed back.
    task* next = foreign->m_next.load(std::memory_order_relaxed);
    foreign->m_next.store(in_order, std::memory_order_relaxed);
    in_order = foreign;
    foreign = next;
  }
  push_back_foreign(c, in_order);
  return t;
}

std::size_t pick_victim(thread_context& c, std::size_t n, slot* self, std::size_t attempt,
                        steal_policy policy) noexcept {
  std::uint64_t& rng = self != nullptr ? self->m_rng : c.m_rng;
  const std::size_t victims = self != nullptr ? n - 1 : n;
  std::size_t v;
  switch (policy) {
    case steal_policy::round_robin: {
      const std::size_t base = self != nullptr ? self->m_index + 1 : rng % n;
      v = (base + attempt % victims) % n;
      if (self != nullptr && v == self->m_index) v = (v + 1) % n;
      return v;
    }
    case steal_policy::sticky_random:
      if (attempt == 0 && self != nullptr && self->m_last_victim != self->m_index &&
          self->m_last_victim < n) {
        return self->m_last_victim;
      }
      [[fallthrough]];
    case steal_policy::random:
    case steal_policy::none:
    default:
      v = static_cast<std::size_t>(next_random(rng) % victims);
      if (self != nullptr && v >= self->m_index) ++v;
      return v;
  }
}

// A steal attempt in arena `a`: in the thread's own counters if it has a slot (stats_slot),
// else in `a`'s executor's external ones. Not c.exec(): a thread outside the pool that helps
// without a slot (all leasable slots taken) may not have run a task of any executor yet, and
// then has none (a steal from a worker's deque crashed there: Stats.AHelperWithoutASlot...).
void count_steal(thread_context& c, arena& a, slot* self, bool ok, std::size_t victim) noexcept {
  if (slot* stats = stats_slot(c)) {
    stats->m_counters.steal_attempts.bump();
    (ok ? stats->m_counters.stolen : stats->m_counters.failed_steals).bump();
  } else {
    a.exec().monitor().count_external_steal(ok);
  }
  if (ok && self != nullptr) self->m_last_victim = static_cast<std::uint32_t>(victim);
}

namespace {
// One attempt at victim `v` for search_once and steal_near.
found_task try_steal_at(thread_context& c, arena& a, slot* self, std::size_t v,
                        const task_filter& f, bool& saw_contention) noexcept {
  slot& victim = a.slot_at(v);
  // A leasable slot nobody occupies holds no work (leases hand leftovers to the injection
  // queue): skip it without counting an attempt. relaxed: a hint; a slot taken meanwhile is
  // empty at first, and one given back meanwhile has handed its work on.
  if (v >= a.first_leasable() && !victim.m_occupied.load(std::memory_order_relaxed)) return {};
  const steal_result<task*> r =
      victim.m_deque.steal_if([&f](const task* x) noexcept { return f.accepts(x); });
  const bool ok = r.status == steal_status::success;
  count_steal(c, a, self, ok, v);
  if (ok) return {r.value, true};
  if (r.status == steal_status::lost_race) saw_contention = true;
  return {};
}

// Topology-aware stealing (topology.hpp), machines with several cache domains only: the
// sticky victim, then every victim that last searched from the thief's cache domain, from a
// random start; the random attempts of search_once come after.
found_task steal_near(thread_context& c, arena& a, slot& self, std::size_t n, const task_filter& f,
                      bool& saw_contention) noexcept {
  // relaxed: placement hints (slot::m_domain).
  const std::uint32_t mine = self.m_domain.load(std::memory_order_relaxed);
  found_task found;
  if (self.m_last_victim != self.m_index && self.m_last_victim < n) {
    found = try_steal_at(c, a, &self, self.m_last_victim, f, saw_contention);
    if (found.t != nullptr) return found;
  }
  try_near_victims(
      self.m_index, n, mine, static_cast<std::size_t>(next_random(self.m_rng) % n),
      // relaxed: as above.
      [&a](std::size_t v) { return a.slot_at(v).m_domain.load(std::memory_order_relaxed); },
      [&](std::size_t v) {
        found = try_steal_at(c, a, &self, v, f, saw_contention);
        return found.t != nullptr;
      });
  return found;
}
}  // namespace

static_assert(static_cast<std::int64_t>(k_inject_batch) <= k_slot_deque_first_capacity,
              "a batch's rest must fit an empty deque without growing it");
static_assert(k_inject_batch < k_inject_check_interval,
              "a worker runs a batch before its next periodic look at the injection queue");

// One search round in arena `a`: its injection queue, then steal attempts.
found_task search_once(thread_context& c, arena& a, const task_filter& f,
                       bool& saw_contention) noexcept {
  slot* const self = (c.current_arena() == &a) ? c.current_slot() : nullptr;
  executor_impl& exec = a.exec();
  injection_queue& inject = a.inject();
  const std::size_t start = self != nullptr ? self->m_index : static_cast<std::size_t>(c.m_rng);
  const steal_policy policy = exec.policy();
  if (self != nullptr && self->m_index < a.first_leasable() && !f.restricted() &&
      policy != steal_policy::none && self->m_deque.empty()) {
    // A batch: its share of the bucket, up to k_inject_batch, the rest kept in this thread's
    // deque for the others to steal. Only on a worker's own slot, which it keeps for life: a
    // leased slot (a task arena's, an outside waiter's, a stand-in's) gives its leftovers
    // back to the injection queue when its thread leaves, oldest last, and enqueue() is FIFO
    // (docs/reference/api.md); and not where nobody steals, or the others could not take them.
    // (Task arenas have no worker slots: a.first_leasable() is 0 there.) Taking them one at a time,
    // two workers fetched every task across the producers' cache lines: 3.1 million posts a second
    // from one thread, 8 with batches. The deque is empty and holds more than the batch's rest
    // (below), so these pushes cannot grow it: they cannot throw.
    task* rest = nullptr;
    if (task* t = inject.pop_batch(start, k_inject_batch, a.active_slots(), rest)) {
      if (rest != nullptr) {
        // The batch's other tasks are in neither the queue nor a deque until pushed: this
        // thread is busy to publishers, or a searcher that owes L2
        // (include/heist/detail/sleep/README.md).
        HEIST_PERTURB_POINT(inject_batch_taken);
        push_back_foreign(c, rest);
        // The batch is injected work that was queued first: a worker's periodic look at the
        // injection queue (worker_loop.cpp, every k_inject_check_interval tasks, more than a
        // batch) starts counting again, so that it does not run a later post before them.
        self->m_tick = 0;
      }
      return {t, false};
    }
  } else if (task* t =
                 inject.pop_if(start, [&f](const task* x) noexcept { return f.accepts(x); })) {
    return {t, false};
  }
  if (policy == steal_policy::none) return {};
  const std::size_t n = a.active_slots();
  const std::size_t victims = self != nullptr ? n - 1 : n;
  if (victims == 0) return {};
  if (policy == steal_policy::sticky_random && self != nullptr && HEIST_UNLIKELY(multi_domain())) {
    if (found_task near = steal_near(c, a, *self, n, f, saw_contention); near.t != nullptr) {
      return near;
    }
  }
  const std::size_t attempts = policy == steal_policy::round_robin ? victims : 2 * victims;
  for (std::size_t k = 0; k < attempts; ++k) {
    const std::size_t v = pick_victim(c, n, self, k, policy);
    if (found_task found = try_steal_at(c, a, self, v, f, saw_contention); found.t != nullptr) {
      return found;
    }
  }
  return {};
}

// Work that the calling thread could take in `a`, for the re-check before sleeping (S3).
bool work_visible(thread_context& c, arena& a) noexcept {
  if (a.inject().size() != 0) return true;
  if (a.exec().policy() == steal_policy::none) return false;
  slot* const self = (c.current_arena() == &a) ? c.current_slot() : nullptr;
  const std::size_t n = a.active_slots();
  for (std::size_t i = 0; i < n; ++i) {
    slot& s = a.slot_at(i);
    if (&s != self && !s.m_deque.empty()) return true;
  }
  return false;
}

// Is this thread a top-level searcher of its executor's default arena (a worker or spare
// between tasks)? Only those visit task arenas, and they also re-check them before sleeping.
bool visits_arenas(const thread_context& c, arena& a, wait_context* w) noexcept {
  return w == nullptr && !a.strict() && c.worker_of() == &a.exec();
}

// The idle kind a registered searcher of `a` counts as (idle_state.hpp).
idle_kind kind_of(const thread_context& c, arena& a, wait_context* w) noexcept {
  if (!visits_arenas(c, a, w)) return idle_kind::helper;
  return record_of(c).worker().stand_in() ? idle_kind::stand_in : idle_kind::roamer;
}

// L1-L2 of the protocol (idle_state.hpp): the caller stops searching `a`. If it was the last
// searcher of its kind and threads of that kind sleep, it looks once more, after a fence, at
// what they could take, and wakes one if anything is there: a publisher that saw it
// searching woke nobody.
void leave_search(arena& a, idle_kind k) noexcept {
  HEIST_PERTURB_POINT(search_leaving);
  const idle_state::last_look look = a.idle().end_search(k);
  if (HEIST_LIKELY(!look.needed())) return;
  // L2: pairs with the publishers' fence P2 (and attract_visitor's).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (look.any && a.has_queued_work()) a.idle().wake_one(false, true);
  if (look.visitors &&
      (a.exec().registry().needs_thread() || (a.exec().poll_pending() && !a.strict()))) {
    a.idle().wake_one(true);
  }
}

// The end condition of a search: `w` done, or (no w) the executor stopping.
bool search_over(executor_impl& exec, wait_context* w) noexcept {
  return w != nullptr ? w->done() : exec.stopping();
}

// Searches arena `a` until a task is found, or `w` is done (w != null), or the executor
// stops (w == null). Spins, then yields, then parks (idle_budget.hpp). A top-level searcher of the
// default arena also visits task arenas that need a thread.
found_task search(thread_context& c, arena& a, wait_context* w, const task_filter& f) {
  executor_impl& exec = a.exec();
  idle_state& idle = a.idle();
  const bool registered = !f.restricted();
  const bool visitor = visits_arenas(c, a, w);
  // Who drives polled completions (poller.hpp): registered searchers of the default arena
  // (workers, stand-ins, and threads helping in a wait there).
  const bool polls = registered && &a == &exec.default_arena();
  const idle_kind kind = kind_of(c, a, w);
  if (w == nullptr) exec.admission().note_idle();
  slot* const self = c.current_arena() == &a ? c.current_slot() : nullptr;
  // Where this thread searches from now (topology.hpp; workers are not pinned).
  if (self != nullptr && HEIST_UNLIKELY(multi_domain())) {
    // relaxed: a placement hint (slot::m_domain).
    self->m_domain.store(current_domain(), std::memory_order_relaxed);
  }
  // Finding work while searching grows the slot's spin budget (parking halves it).
  std::uint32_t* const adaptive_budget = self != nullptr ? &self->m_idle_rounds : nullptr;
  const auto found_work = [adaptive_budget] { idle_budget::found_work(adaptive_budget); };
  // The first look: one round before counting as a searcher (see the file comment). Not
  // for a thread a waker or a restart already counted, nor where high-priority task arenas
  // come first (the loop serves them before this arena's work).
  if (registered && !record_of(c).search().counted_by_waker() &&
      !(visitor && HEIST_UNLIKELY(exec.registry().wants_above(arena::k_normal)))) {
    bool contention = false;
    if (found_task found = search_once(c, a, f, contention); found.t != nullptr) {
      found_work();
      return found;  // never counted: no L1, no L2 owed
    }
    HEIST_PERTURB_POINT(search_registering);
  }
  // A restarted worker's wake-up counted it already (worker_threads.cpp, R3).
  if (registered && !record_of(c).search().take_counted_by_waker()) idle.begin_search(kind);
  // Every exit below stops searching: a registered searcher goes through leave_search.
  auto leave = [&] {
    if (registered) leave_search(a, kind);
  };
  idle_budget budget(adaptive_budget);
  for (;; budget.next_round()) {
    if (visitor && HEIST_UNLIKELY(exec.registry().wants_above(arena::k_normal))) {
      // High-priority task arenas before the default arena's own work (priority.cpp).
      pending_leave leaving{&a, kind};
      exec.serve_higher_priority(c, arena::k_normal, budget.round(),
                                 registered ? &leaving : nullptr);
      idle.begin_search(kind);
    }
    bool contention = false;
    found_task found = search_once(c, a, f, contention);
    if (found.t != nullptr) {
      found_work();
      leave();
      return found;
    }
    if (search_over(exec, w)) {
      leave();
      return {};
    }
    if (polls && HEIST_UNLIKELY(exec.poll_pending())) {
      // Polled completions (poller.hpp): ask every round while anything is pending (a poll
      // is non-blocking; the poller try-locks). A completion publishes its continuations as
      // tasks, which this round or the next finds.
      if (exec.poll_once()) {
        record_of(c).search().poll_found_completions();
        // A completion run here may have spawned its continuation into this thread's own
        // deque, which search_once does not look at (and S3 does not either): take it.
        if (self != nullptr) {
          if (task* t = self->m_deque.pop()) {
            leave();
            return {t, false};
          }
        }
        budget.restart();
        continue;
      }
    }
    if (visitor && exec.registry().any()) {
      const std::uint32_t round = budget.round();
      if (arena* x = exec.registry().to_visit(self != nullptr ? self->m_tick + round : round)) {
        // Busy while visiting: not a searcher of the home arena meanwhile.
        HEIST_PERTURB_POINT(visit_entering);
        pending_leave leaving{&a, kind};
        visit(c, *x, registered ? &leaving : nullptr);
        idle.begin_search(kind);
        budget.restart();
        continue;
      }
    }
    if (budget.wait_for_next_round(a, contention)) continue;
    // A surplus stand-in retires instead of parking (its worker is back, and nothing is left
    // to do): spare_main hands its slot back.
    if (w == nullptr && record_of(c).worker().stand_in() && exec.standins().should_retire()) {
      leave();
      return {};
    }
    if (!registered) {
      if (!park_restricted(c, *w)) {
        leave();
        return {};
      }
    } else {
      const park_outcome parked = park_registered(c, a, w);
      if (parked == park_outcome::retired) return {};  // counted by its placeholder now
      if (parked == park_outcome::wait_over) {
        leave();
        return {};
      }
    }
    // Woken for new work: search with the full budget again.
    budget.woken();
  }
}

}  // namespace heist::detail
