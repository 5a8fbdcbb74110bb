// The scheduler: the worker loop, the search for work, sleeping, helping waits, visits to
// task arenas and blocking() stand-ins. The stack extension that lets helping recursion go
// deeper than one stack is in stack_extension.cpp. docs/design.md has the long version with
// diagrams.
//
// Glossary
//   worker   a thread the executor started; it occupies one slot (deque) of its arena.
//   owner    the thread occupying a slot: the only one that pushes and pops its deque.
//   thief    any thread stealing from the top of another slot's deque.
//   inject   queue a task from a thread that holds no slot of the target arena.
//   help     run other tasks while waiting for a task_group or a future.
//   park     block the OS thread on its parker (idle_state.hpp has the sleep protocol).
//   visit    a worker with nothing to do at home leases a slot of a task_arena with work.
//   spare    a stand-in thread that runs in place of a thread blocked in heist::blocking().
//
// The worker loop
//   1. Every 64th task, look at the injection queue first, so a worker busy with its own
//      recursion cannot starve external submissions (Go's scheduler does the same every
//      61 ticks).
//   2. Pop the own deque (LIFO: the most recently spawned, cache-hot task).
//   3. Search: the injection queue, then steal attempts at victims chosen by the policy
//      (sticky_random: the last victim first, then random ones; random; round_robin from
//      the next index; none). A round makes 2x(victims) attempts. Then task arenas that
//      have work and a free slot are visited, in rotating order. The first rounds spin
//      (pause), the next ones yield, then the thread parks (idle_state.hpp); how many rounds
//      adapts per slot (parking halves it, finding work while spinning grows it).
//   4. A thief that took a task and sees more work behind it, while it was the last
//      searcher and somebody sleeps, wakes one more thread: work spreads one wake-up at a
//      time without waking threads for a trickle of single tasks.
//
// Helping waits (task_group::wait, future::get)
//   A waiting thread runs tasks until its wait_context is done: its own deque first (its
//   group's tasks are on top, LIFO), then the same search as an idle worker (in the waited
//   arena only), then it parks until the group finishes (k_group) or the arena has new work
//   (k_work). A worker therefore never blocks its OS thread while it can run something, so
//   nested waits cannot deadlock, even on one worker. A thread inside isolate()
//   ("restricted") only takes tasks of its isolation region; it stays out of the idle
//   accounting (a wake-up for work it may not run would be lost) and parks with a 1 ms
//   timeout instead. A thread without a slot of a task_arena never runs that arena's tasks
//   (its concurrency limit); it only waits.
//
// Rejected alternatives: a global queue with a condition variable (note 000; every spawn
// would take a lock); waking all sleepers on new work (burns CPU under a trickle); switching
// stacks with ucontext (sanitizers lose track of fiber switches without annotations, and a
// thread per 4096 levels costs ~50 us, i.e. nothing).
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <system_error>
#include <thread>

#include "heist/detail/arena.hpp"
#include "heist/detail/arena_lease.hpp"
#include "heist/detail/executor_impl.hpp"
#include "heist/detail/perturb.hpp"
#include "heist/detail/spawn.hpp"
#include "heist/detail/thread_context.hpp"
#include "heist/detail/trace.hpp"
#include "heist/detail/wait_context.hpp"
#include "heist/executor.hpp"
#include "stack_extension.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace heist::detail {

constinit thread_local thread_context* t_context HEIST_TLS_MODEL = nullptr;

namespace {

// --- tuning ------------------------------------------------------------------------------
// A searcher makes up to k_max_idle_rounds search rounds before it parks: the first
// k_spin_rounds separated by a short pause, the rest by sched_yield. Each slot adapts its own
// budget (slot::m_idle_rounds): a search that ends in parking halves it, one that found work
// while spinning raises it, so a trickle of lone tasks converges to parking almost at once
// (little CPU per task) while bursty fork-join keeps spinning through short gaps.
constexpr std::uint32_t k_spin_rounds = 2;
constexpr std::uint32_t k_max_idle_rounds = 6;
constexpr unsigned k_pause_per_round = 32;
// While a parallel loop runs in the arena, a searcher that used up its budget keeps yielding
// for up to this long before it parks (arena::loops_running).
constexpr std::int64_t k_loop_linger_ns = 100'000;
constexpr std::uint32_t k_inject_check_interval = 64;
constexpr std::int64_t k_restricted_park_ns = 1'000'000;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

inline std::uint64_t next_random(std::uint64_t& state) noexcept {
  // xorshift64*: fast, and good enough to spread victims.
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

// Which tasks a thread may take: anything, or only those of its isolation region.
struct task_filter {
  std::uintptr_t isolation = 0;
  bool restricted() const noexcept { return isolation != 0; }
  // May see a stale or null pointer (chase_lev_deque::steal_if); reads only an atomic.
  bool accepts(const task* t) const noexcept {
    if (isolation == 0) return true;
    return t != nullptr && t->m_isolation.load(std::memory_order_relaxed) == isolation;
  }
};

struct found_task {
  task* t = nullptr;
  bool stolen = false;
  bool more = false;  // more work was visible where this one came from
};

struct external_context_holder {
  thread_context context;
  external_context_holder() noexcept {
    init_stack_bounds(context);
    t_context = &context;
  }
  ~external_context_holder() { t_context = nullptr; }
};

// The counters a thread's statistics go to (slot_counters: flow by location, statistics by
// thread): a worker's or spare's own slot, else the slot it occupies; null: the executor's.
inline slot* stats_slot(const thread_context& c) noexcept {
  return c.m_home != nullptr ? c.m_home : c.m_slot;
}

}  // namespace

// --- thread contexts ---------------------------------------------------------------------
thread_context::thread_context() noexcept {
  m_rng = reinterpret_cast<std::uintptr_t>(this) * 0x9E3779B97F4A7C15ULL + 1;
  m_sleeper.m_parker = &m_parker;
}

thread_context& make_external_context() {
  static thread_local bool t_holder_gone = false;
  if (HEIST_UNLIKELY(t_holder_gone)) {
    // A thread_local destructor running after ours uses heist: give it a context that
    // lives until the thread ends (it is reclaimed with the process).
    static thread_local thread_context* late = nullptr;
    if (late == nullptr) late = new thread_context();
    t_context = late;
    return *late;
  }
  struct holder_guard : external_context_holder {
    ~holder_guard() { t_holder_gone = true; }
  };
  static thread_local holder_guard holder;
  return holder.context;
}

arena& default_executor_arena() {
  return detail_impl(default_executor()).default_arena();
}

// --- running a task ------------------------------------------------------------------------
namespace {

void execute_task(thread_context& c, task* t, bool stolen) noexcept {
  wait_context* const group = t->m_group;
  const bool run = group == nullptr || !group->is_cancelled();
  wait_context* const saved_group = c.m_group;
  const std::uintptr_t saved_isolation = c.m_isolation;
  const bool saved_stolen = c.m_stolen;
  c.m_group = group;
  c.m_isolation = t->m_isolation.load(std::memory_order_relaxed);
  c.m_stolen = stolen;
  ++c.m_task_depth;
  slot* const s = c.m_slot;
  trace_buffer* const trace = s != nullptr ? s->m_trace : nullptr;
  const bool external_trace = s == nullptr && c.m_exec->tracing();
  const std::uint64_t start = (trace != nullptr || external_trace) ? trace_clock() : 0;
  t->m_invoke(t, run);
  if (trace != nullptr) {
    trace->record(start, trace_clock(), stolen);
  } else if (external_trace) {
    c.m_exec->record_external_span(start, trace_clock(), stolen);
  }
  --c.m_task_depth;
  c.m_stolen = saved_stolen;
  c.m_isolation = saved_isolation;
  c.m_group = saved_group;
  c.m_pool.deallocate(t);
  if (s != nullptr) {
    if (run) {
      if (slot* stats = stats_slot(c)) stats->m_counters.executed.bump();
    }
    // release: see owner_counter::bump_release and executor_impl::in_flight.
    s->m_counters.finished.bump_release();
  } else {
    c.m_exec->count_external_finished(c, run);
  }
  if (group != nullptr) group->finish_one();
}

// Runs `t` of arena `a` on the calling thread. A thread without a slot in `a` (an external
// helper of a non-strict arena) runs it as a guest: spawns inside go to `a`'s injection
// queue.
void execute_in(thread_context& c, arena& a, task* t, bool stolen) noexcept {
  if (c.m_arena == &a) {
    execute_task(c, t, stolen);
    return;
  }
  const scheduling_state saved = c;
  c.m_exec = &a.exec();
  c.m_arena = &a;
  c.m_slot = nullptr;
  c.m_task_depth = 0;
  execute_task(c, t, stolen);
  static_cast<scheduling_state&>(c) = saved;
}

struct nested_run {
  arena* a;
  task* t;
  bool stolen;
};

// A helping wait runs `t` inline, or on a stack extension when the stack is nearly used up.
void execute_nested(thread_context& c, arena& a, task* t, bool stolen) {
  if (HEIST_UNLIKELY(stack_is_low(c))) {
    nested_run run{&a, t, stolen};
    const bool handed_over = run_on_stack_extension(
        c,
        [](void* p) {
          auto& r = *static_cast<nested_run*>(p);
          execute_in(*t_context, *r.a, r.t, r.stolen);
        },
        &run);
    if (handed_over) return;
  }
  depth_guard depth(c);
  execute_in(c, a, t, stolen);
}

// --- finding a task ------------------------------------------------------------------------
// Pushes back tasks an isolated waiter popped and may not run (linked through m_next, the
// most recently popped first, so pushing in list order restores the deque's order). A push
// into an empty deque is a publication: a thief may have found the deque empty meanwhile and
// gone to sleep, so it wakes a sleeper as a spawn would (issue 9, bug 4).
void push_back_foreign(thread_context& c, task* list) noexcept {
  arena& a = *c.m_arena;
  bool woke = false;
  while (list != nullptr) {
    task* t = list;
    list = t->m_next.load(std::memory_order_relaxed);
    // The slots these tasks came from are free, so the push cannot need to grow: it cannot
    // throw.
    const bool was_empty = c.m_slot->m_deque.push(t);
    if (was_empty && !woke) {
      woke = true;
      a.idle().notify_after_spawn(true);
      if (a.strict()) attract_visitor(a);
    }
  }
}

// An isolated waiter's own deque may hold tasks of outer regions above tasks of its own
// (a task of another region spawned onto it in between). Pops until a task of the waiter's
// region or the bottom, then puts the others back in their order: a task of the region is
// found wherever it lies (oneTBB scans the local deque the same way). Issue 9, bug 3.
HEIST_NOINLINE task* dig_for_region(thread_context& c, const task_filter& f, task* t) noexcept {
  task* foreign = nullptr;  // popped tasks of other regions, the latest first
  while (t != nullptr && !f.accepts(t)) {
    HEIST_PERTURB_POINT(isolate_rejected);
    // relaxed: the task is this thread's until it is pushed back (the push publishes).
    t->m_next.store(foreign, std::memory_order_relaxed);
    foreign = t;
    t = c.m_slot->m_deque.pop();
  }
  // Reverse, so that the task popped last (the deepest) goes back first.
  task* in_order = nullptr;
  while (foreign != nullptr) {
    task* next = foreign->m_next.load(std::memory_order_relaxed);
    foreign->m_next.store(in_order, std::memory_order_relaxed);
    in_order = foreign;
    foreign = next;
  }
  push_back_foreign(c, in_order);
  return t;
}

task* pop_own(thread_context& c, const task_filter& f) noexcept {
  task* t = c.m_slot->m_deque.pop();
  if (HEIST_UNLIKELY(t != nullptr && !f.accepts(t))) return dig_for_region(c, f, t);
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

void count_steal(thread_context& c, slot* self, bool ok, std::size_t victim) noexcept {
  if (slot* stats = stats_slot(c)) {
    stats->m_counters.steal_attempts.bump();
    (ok ? stats->m_counters.stolen : stats->m_counters.failed_steals).bump();
  } else {
    c.m_exec->count_external_steal(ok);
  }
  if (ok && self != nullptr) self->m_last_victim = static_cast<std::uint32_t>(victim);
}

// One search round in arena `a`: its injection queue, then steal attempts.
found_task search_once(thread_context& c, arena& a, const task_filter& f,
                       bool& saw_contention) noexcept {
  slot* const self = (c.m_arena == &a) ? c.m_slot : nullptr;
  executor_impl& exec = a.exec();
  injection_queue& inject = a.inject();
  const std::size_t start = self != nullptr ? self->m_index : static_cast<std::size_t>(c.m_rng);
  if (task* t = inject.pop_if(start, [&f](const task* x) noexcept { return f.accepts(x); })) {
    return {t, false, inject.size() != 0};
  }
  const steal_policy policy = exec.policy();
  if (policy == steal_policy::none) return {};
  const std::size_t n = a.active_slots();
  const std::size_t victims = self != nullptr ? n - 1 : n;
  if (victims == 0) return {};
  const std::size_t attempts = policy == steal_policy::round_robin ? victims : 2 * victims;
  for (std::size_t k = 0; k < attempts; ++k) {
    const std::size_t v = pick_victim(c, n, self, k, policy);
    slot& victim = a.slot_at(v);
    // A leasable slot nobody occupies holds no work (leases hand leftovers to the
    // injection queue): skip it without counting an attempt.
    if (v >= a.first_leasable() && !victim.m_occupied.load(std::memory_order_relaxed)) continue;
    const steal_result<task*> r =
        victim.m_deque.steal_if([&f](const task* x) noexcept { return f.accepts(x); });
    const bool ok = r.status == steal_status::success;
    count_steal(c, self, ok, v);
    if (ok) return {r.value, true, !victim.m_deque.empty()};
    if (r.status == steal_status::lost_race) saw_contention = true;
  }
  return {};
}

// Work that the calling thread could take in `a`, for the re-check before sleeping (S3).
bool work_visible(thread_context& c, arena& a) noexcept {
  if (a.inject().size() != 0) return true;
  if (a.exec().policy() == steal_policy::none) return false;
  slot* const self = (c.m_arena == &a) ? c.m_slot : nullptr;
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
  return w == nullptr && !a.strict() && c.m_worker_of == &a.exec();
}

// The idle kind a registered searcher of `a` counts as (idle_state.hpp).
idle_kind kind_of(const thread_context& c, arena& a, wait_context* w) noexcept {
  if (!visits_arenas(c, a, w)) return idle_kind::helper;
  return c.m_spare ? idle_kind::stand_in : idle_kind::roamer;
}

// L1-L2 of the protocol (idle_state.hpp): the caller stops searching `a`. If it was the last
// searcher of its kind and threads of that kind sleep, it looks once more, after a fence, at
// what they could take, and wakes one if anything is there: a publisher that saw it
// searching woke nobody (issue 9, bug 5).
void leave_search(arena& a, idle_kind k) noexcept {
  HEIST_PERTURB_POINT(search_leaving);
  const idle_state::last_look look = a.idle().end_search(k);
  if (HEIST_LIKELY(!look.needed())) return;
  // L2: pairs with the publishers' fence P2 (and attract_visitor's).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (look.any && a.has_queued_work()) a.idle().wake_one(false);
  if (look.visitors && a.exec().task_arena_needs_thread()) a.idle().wake_one(true);
}

// The end condition of a search: `w` done, or (no w) the executor stopping.
bool search_over(executor_impl& exec, wait_context* w) noexcept {
  return w != nullptr ? w->done() : exec.stopping();
}

// Runs tasks of task arena `x` (already counted in x.m_visitors) on a leased slot until it
// has none left; returns whether it ran any.
bool visit(thread_context& c, arena& x);

// Arms `w` to wake this thread's parker when it finishes, before a waiter parks.
enum class arm_outcome {
  armed,     // park now
  finished,  // `w` is done: stop waiting
  poll,      // another thread already sleeps on `w`: paused briefly, search again
};
arm_outcome arm_waiter(thread_context& c, wait_context& w) {
  HEIST_PERTURB_POINT(group_arming);
  switch (w.arm(&c.m_parker)) {
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

// Parks a registered searcher of arena `a` (S1-S4). Returns false if `w` finished (the
// caller stops searching), true to search again. On return the thread counts as a searcher.
bool park_registered(thread_context& c, arena& a, wait_context* w) {
  executor_impl& exec = a.exec();
  idle_state& idle = a.idle();
  if (w != nullptr) {
    const arm_outcome armed = arm_waiter(c, *w);
    if (armed != arm_outcome::armed) return armed == arm_outcome::poll;
  }
  idle.prepare_sleep(c.m_sleeper, kind_of(c, a, w));  // S1, S2
  if (work_visible(c, a) || search_over(exec, w) ||   // S3
      (visits_arenas(c, a, w) && exec.task_arena_needs_thread()) ||
      (w == nullptr && c.m_spare && exec.spares_surplus())) {  // go back and retire
    if (!idle.cancel_sleep(c.m_sleeper)) c.m_parker.wait_for(parker::k_work);
    return w == nullptr || w->disarm(c.m_parker);
  }
  if (slot* stats = stats_slot(c)) stats->m_counters.sleeps.bump();
  HEIST_PERTURB_POINT(sleep_before_park);
  // S4
  const std::uint32_t why =
      c.m_parker.wait_for(parker::k_work | (w != nullptr ? parker::k_group : 0));
  if ((why & parker::k_group) != 0) {
    HEIST_PERTURB_POINT(group_waiter_woken);
    // The wait is over. Leave the list, or consume the k_work of a waker who took us.
    if ((why & parker::k_work) == 0 && !idle.cancel_sleep(c.m_sleeper)) {
      c.m_parker.wait_for(parker::k_work);
    }
    return false;
  }
  // k_work: a waker took us out of the list and made us a searcher.
  return w == nullptr || w->disarm(c.m_parker);
}

// Parks a waiter that may not take the arena's work (isolated, or without a slot of a
// task_arena): only until `w` finishes, at most k_restricted_park_ns. Returns false if `w`
// finished.
bool park_restricted(thread_context& c, wait_context& w) {
  const arm_outcome armed = arm_waiter(c, w);
  if (armed != arm_outcome::armed) return armed == arm_outcome::poll;
  if (c.m_parker.wait_for(parker::k_group, k_restricted_park_ns) != 0) {
    HEIST_PERTURB_POINT(group_waiter_woken);
    return false;
  }
  return w.disarm(c.m_parker);
}

// Should a searcher that used up its budget keep yielding instead of parking? While a loop
// runs in `a`, for up to k_loop_linger_ns from the first time this search asked.
bool lingers_for_loop(const arena& a, std::int64_t& until) noexcept {
  if (until == 0 && !a.loops_running()) return false;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  if (until == 0) until = now + k_loop_linger_ns;
  return now < until;
}

// Searches arena `a` until a task is found, or `w` is done (w != null), or the executor
// stops (w == null). Spins, then yields, then parks. A top-level searcher of the default
// arena also visits task arenas that need a thread.
found_task search(thread_context& c, arena& a, wait_context* w, const task_filter& f) {
  executor_impl& exec = a.exec();
  idle_state& idle = a.idle();
  const bool registered = !f.restricted();
  const bool visitor = visits_arenas(c, a, w);
  const idle_kind kind = kind_of(c, a, w);
  if (registered) idle.begin_search(kind);
  // Every exit below stops searching: a registered searcher goes through leave_search.
  auto leave = [&] {
    if (registered) leave_search(a, kind);
  };
  if (w == nullptr) exec.note_idle();
  slot* const self = c.m_arena == &a ? c.m_slot : nullptr;
  std::uint32_t budget = self != nullptr ? self->m_idle_rounds : k_max_idle_rounds;
  std::int64_t linger_until = 0;
  for (std::uint32_t round = 0;; ++round) {
    bool contention = false;
    found_task found = search_once(c, a, f, contention);
    if (found.t != nullptr) {
      if (self != nullptr && self->m_idle_rounds < k_max_idle_rounds) ++self->m_idle_rounds;
      leave();
      return found;
    }
    if (search_over(exec, w)) {
      leave();
      return {};
    }
    if (visitor && exec.has_task_arenas()) {
      if (arena* x = exec.arena_to_visit(self != nullptr ? self->m_tick + round : round)) {
        // Busy while visiting: not a searcher of the home arena meanwhile.
        HEIST_PERTURB_POINT(visit_entering);
        leave();
        visit(c, *x);
        idle.begin_search(kind);
        round = 0;
        continue;
      }
    }
    if (contention || round < std::min(budget, k_spin_rounds)) {
      for (unsigned i = 0; i < k_pause_per_round; ++i)
        cpu_relax();
      continue;
    }
    if (round < budget || lingers_for_loop(a, linger_until)) {
      std::this_thread::yield();
      continue;
    }
    if (self != nullptr) self->m_idle_rounds = std::max<std::uint32_t>(1, budget / 2);
    // A surplus stand-in retires instead of parking (its worker is back, and nothing is left
    // to do): spare_main hands its slot back.
    if (w == nullptr && c.m_spare && exec.spare_should_retire()) {
      leave();
      return {};
    }
    const bool again = registered ? park_registered(c, a, w) : park_restricted(c, *w);
    if (!again) {
      leave();
      return {};
    }
    // Woken for new work: search with the full budget again.
    budget = k_max_idle_rounds;
    round = 0;
    linger_until = 0;
  }
}

bool visit(thread_context& c, arena& x) {
  bool ran = false;
  {
    arena_lease lease(c, x);
    if (c.m_arena == &x && c.m_slot != nullptr) {
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
        execute_task(c, found.t, found.stolen);
        ran = true;
      }
    }
  }
  // release: pairs with unregister_arena's acquire; nothing of `x` is touched after this.
  x.m_visitors.fetch_sub(1, std::memory_order_release);
  return ran;
}

}  // namespace

// --- spawning into arenas ---------------------------------------------------------------------
void attract_visitor(arena& a) noexcept {
  // New work in strict arena `a`: if it has a free slot, wake a roamer of the executor (a
  // worker or stand-in between tasks: only they visit) to come and help.
  HEIST_PERTURB_POINT(visitor_attracting);
  // P2 for roamers: pairs with their S2 (their S3 re-check includes task_arena_needs_thread)
  // and their L2; and with end_lease's fence after a slot is given back (the store-buffer
  // pair "publish work, then read the occupants" against "free the slot, then read the
  // queues": one of the two sides sees the other's write).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!a.has_free_slot()) return;
  a.exec().idle().notify_visitor_wanted();
}

void abandon_task(thread_context& c, task* t) noexcept {
  wait_context* const group = t->m_group;
  t->m_invoke(t, false);
  c.m_pool.deallocate(t);
  c.m_slot->m_counters.finished.bump_release();
  if (group != nullptr) group->finish_one();
}

void inject(arena& a, const thread_context& c, task* t) noexcept {
  // Thread contexts sit in thread-local storage, megabytes apart: mix the address so that
  // producers spread over the buckets.
  const auto h =
      static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&c)) * 0x9E3779B97F4A7C15ULL;
  if (a.strict()) a.count_injected();
  a.inject().push(t, static_cast<std::size_t>(h >> 40));
  HEIST_PERTURB_POINT(inject_pushed);
  a.idle().notify_after_inject();
  if (a.strict()) attract_visitor(a);
}

slot* begin_lease(thread_context& c, arena& a) noexcept {
  slot* s = a.try_lease();
  if (s == nullptr) return nullptr;
  if (c.m_exec != &a.exec()) c.m_task_depth = 0;  // not inside a task of this executor
  c.m_exec = &a.exec();
  c.m_arena = &a;
  c.m_slot = s;
  return s;
}

void end_lease(thread_context& c, arena& a, slot& s, const scheduling_state& saved) noexcept {
  // Leftovers (tasks spawned in the scope and not waited for there) go to the injection
  // queue, oldest first, so that an unoccupied slot never holds work (with steal_policy
  // none nobody would take it).
  HEIST_PERTURB_POINT(lease_draining);
  bool moved = false;
  for (;;) {
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
  if (a.strict()) {
    // A task arena that still has work gets a visitor for the slot just freed. seq_cst
    // fence between giving the slot back (an RMW of the occupant count) and reading the
    // queues: pairs with attract_visitor's fence between publishing and reading the
    // occupants. Without it both sides could read the old values (x86's locked RMW hides
    // this; ARM would not), and the work would wait for the next publication.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (moved || a.has_queued_work()) attract_visitor(a);
  }
  // This thread stops running the executor's tasks without searching first (an outside
  // helper whose wait is over, a retiring stand-in, the end of task_arena::execute). If it
  // ran the last task in flight after every worker went idle, nobody else would ever tell
  // a wait_idle()/shutdown() caller: check for it here, as a searcher does.
  a.exec().note_idle();
}

namespace {
// The helping loop proper; `own` says whether the thread holds a slot of `a`.
void help_loop(thread_context& c, arena& a, wait_context& w, bool own) {
  const task_filter f{c.m_isolation};
  while (!w.done()) {
    found_task found;
    if (own) {
      found.t = pop_own(c, f);
    } else if (a.strict()) {
      // No slot of a task_arena: running its tasks would exceed its concurrency limit.
      park_restricted(c, w);
      continue;
    }
    if (found.t == nullptr) {
      found = search(c, a, &w, f);
      // w is done. Leave through the loop condition: its acquire load of the count is what
      // makes the tasks' effects visible (search may have seen zero through a relaxed load).
      if (found.t == nullptr) continue;
    }
    execute_nested(c, a, found.t, found.stolen);
    if (!own) a.exec().note_idle();
  }
}
}  // namespace

void help_until(arena& a, wait_context& w) {
  thread_context& c = current_context();
  if (HEIST_LIKELY(c.m_slot != nullptr && c.m_arena == &a)) {
    help_loop(c, a, w, true);
    return;
  }
  arena_lease lease(c, a);
  help_loop(c, a, w, c.m_slot != nullptr && c.m_arena == &a);
}

void report_unhandled_exception(std::exception_ptr e) noexcept {
  thread_context* c = t_context;
  if (c != nullptr && c->m_exec != nullptr) {
    c->m_exec->report_unhandled(std::move(e));
    return;
  }
  std::fputs("heist: unhandled exception in a task outside any executor\n", stderr);
}

// --- the loops of the executor's own threads --------------------------------------------------
namespace {
// Runs tasks of the default arena (and visits task arenas) until `stop_after_task` says so
// or the executor stops. The caller has set up the context and its slot.
template <class StopAfterTask>
void run_tasks(thread_context& c, arena& a, StopAfterTask&& stop_after_task) {
  slot& self = *c.m_slot;
  const task_filter anything{};
  for (;;) {
    found_task found;
    if (HEIST_UNLIKELY(++self.m_tick >= k_inject_check_interval)) {
      self.m_tick = 0;
      found.t = a.inject().pop(self.m_index);
    }
    if (found.t == nullptr) found.t = self.m_deque.pop();
    if (found.t == nullptr) {
      found = search(c, a, nullptr, anything);
      if (found.t == nullptr) return;  // stopping: every accepted task has finished
    }
    execute_task(c, found.t, found.stolen);
    if (stop_after_task()) return;
  }
}
}  // namespace

void worker_main(executor_impl& exec, std::size_t index) {
  thread_context c;
  arena& a = exec.default_arena();
  c.m_exec = &exec;
  c.m_arena = &a;
  c.m_slot = &a.slot_at(index);
  c.m_home = c.m_slot;
  c.m_worker_of = &exec;
  c.m_worker_index = index;
  init_stack_bounds(c);
  t_context = &c;
  exec.worker_started(index);
  run_tasks(c, a, [] { return false; });
  exec.worker_stopping(index);
  t_context = nullptr;
}

// A stand-in for threads blocked in heist::blocking(): on duty, it runs tasks like a worker
// on a spare slot of the default arena, and retires at a task boundary once fewer threads
// block than spares stand in. Retired, it waits a keep-alive period to be called again.
void spare_main(executor_impl& exec) {
  {
    thread_context c;
    init_stack_bounds(c);
    c.m_worker_of = &exec;
    c.m_worker_index = exec.num_workers();
    c.m_spare = true;
    t_context = &c;
    arena& a = exec.default_arena();
    const std::string name = exec.options().name.substr(0, 9) + "-spare";
    pthread_setname_np(pthread_self(), name.c_str());
    do {
      // There is one spare slot per allowed spare; a spare that just retired may still be
      // handing its slot back, for a few instructions.
      slot* s = a.try_lease_spare();
      while (s == nullptr && !exec.stopping()) {
        std::this_thread::yield();
        s = a.try_lease_spare();
      }
      if (s == nullptr) break;
      c.m_exec = &exec;
      c.m_arena = &a;
      c.m_slot = s;
      c.m_home = s;
      c.m_task_depth = 0;
      // Run at least the task it may have been woken for, then check at every boundary (and
      // before parking, in search).
      run_tasks(c, a, [&exec] { return exec.spare_should_retire(); });
      const scheduling_state saved{};
      end_lease(c, a, *s, saved);
      c.m_home = nullptr;
      if (exec.stopping()) break;
    } while (exec.park_spare());
    t_context = nullptr;
  }
  exec.spare_exited();
}

}  // namespace heist::detail
