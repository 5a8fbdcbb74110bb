// executor and executor_impl: construction, admission of external tasks, quiescence
// (wait_idle, shutdown) and task arenas. Statistics and traces are in executor_stats.cpp,
// blocking() stand-ins in blocking.cpp.
#include "heist/executor.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>

#include "core/executor_impl.hpp"
#include "heist/detail/diagnostics/perturb.hpp"
#include "heist/detail/diagnostics/trace.hpp"
#include "heist/detail/platform/topology.hpp"
#include "heist/detail/sleep/backoff.hpp"
#include "heist/detail/sleep/wake_placement.hpp"
#include "heist/detail/core/executor_seam.hpp"
#include "heist/sizing.hpp"
#include "heist/task_group.hpp"

namespace heist {
namespace detail {

// The name of worker `index`'s thread (also its trace track, executor_stats.cpp): Linux
// limits thread names to 15 characters.
std::string worker_thread_name(const std::string& base, std::size_t index) {
  // Linux limits thread names to 15 characters: shorten the base, keep the index.
  char suffix[24];
  const int n = std::snprintf(suffix, sizeof suffix, "-%zu", index);
  const std::size_t room = n >= 15 ? 0 : 15 - static_cast<std::size_t>(n);
  char name[40];
  std::snprintf(name, sizeof name, "%.*s%s", static_cast<int>(std::min(room, base.size())),
                base.c_str(), suffix);
  return name;
}

// --- executor_impl -------------------------------------------------------------------------
namespace {

std::int64_t resolve_idle_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) {
    throw std::invalid_argument("heist::executor: idle_timeout must not be negative, got " +
                                std::to_string(timeout.count()) + " ms");
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
}

std::size_t resolve_worker_count(std::size_t requested) {
  std::size_t n = requested;
  if (n == 0) n = available_parallelism();
  if (n > k_max_workers) {
    throw std::invalid_argument("heist::executor: num_workers must be between 1 and " +
                                std::to_string(k_max_workers) + ", got " + std::to_string(n));
  }
  return n;
}

}  // namespace

executor_impl::executor_impl(executor_options options, callers c)
    : m_options(std::move(options)),
      m_leasable_slots(c.seats),
      m_num_workers(resolve_worker_count(m_options.num_workers)) {
  m_idle_timeout_ns = resolve_idle_timeout(m_options.idle_timeout);
  enable_owner_counting();  // before any worker runs a task (wait_context.hpp)
  // The topology table is a function-local static: build it here, on the creating thread,
  // not lazily in a worker's first search. A fork() that lands while a worker is inside its
  // initialisation leaves the child with a guard that is never released (every child
  // worker then blocks in __cxa_guard_acquire: Fork.ForkWhileParentMovesTaskMemory...).
  (void)multi_domain();
  m_num_slots = m_num_workers + m_leasable_slots + m_options.max_blocking_threads;
  m_slots = std::make_unique<slot[]>(m_num_slots);
  for (std::size_t i = 0; i < m_num_slots; ++i) {
    m_slots[i].prepare(static_cast<std::uint32_t>(i), (i + 1) * 0x9E3779B97F4A7C15ULL,
                       m_num_workers);
  }
  // Injection buckets: enough that a few external producers rarely share one.
  m_arena = std::make_unique<arena_record>(
      *this, m_slots.get(),
      arena::layout{m_num_slots, m_num_workers, m_num_workers + m_leasable_slots,
                    std::max<std::size_t>(4, m_num_workers), false, spread_wakes(m_num_workers),
                    c.others_wait});
  m_baseline.resize(m_num_workers);
  m_trace_origin = trace_clock();
  if (m_options.trace) {
    for (std::size_t i = 0; i < m_num_slots; ++i) {
      m_traces.push_back(std::make_unique<trace_buffer>());
      m_slots[i].m_trace = m_traces.back().get();
    }
  }
  start_workers();
}

executor_impl::~executor_impl() {
  {
    // executor::~executor called shutdown(); this only covers a failed construction path.
    std::lock_guard<std::mutex> lock(m_lifecycle_lock);
    if (!m_joined) {
      // seq_cst store, then wake_all takes the idle lock (see shutdown).
      m_stop.store(true, std::memory_order_seq_cst);
      idle().wake_all();
      join_workers();
    }
  }
  // Futures, continuations and coroutines that outlive the executor reach its arena only
  // through a pin (arena_lifetime.hpp): none is taken after this, and those held end first.
  m_arena->close_lifetime();
  // An outside thread whose task already ran may still be inside inject() (arena.hpp).
  m_arena->wait_for_injectors();
}

void executor_impl::worker_started(std::size_t index) noexcept {
  const std::string name = worker_thread_name(m_options.name, index);
  pthread_setname_np(pthread_self(), name.c_str());
  if (m_options.on_worker_start) {
    try {
      m_options.on_worker_start(index);
    } catch (...) {
      report_unhandled(std::current_exception());
    }
  }
}

void executor_impl::worker_stopping(std::size_t index) noexcept {
  if (m_options.on_worker_stop) {
    try {
      m_options.on_worker_stop(index);
    } catch (...) {
      report_unhandled(std::current_exception());
    }
  }
}

void executor_impl::admit_external(const thread_context& c) {
  external_shard& shard = shard_for(c);
  // seq_cst RMW then seq_cst load, against shutdown's seq_cst store of m_closed followed
  // by its in-flight count (wait_quiescent): either this thread sees m_closed, or
  // shutdown sees this task in flight and waits for it. Nothing accepted is lost.
  shard.created.fetch_add(1, std::memory_order_seq_cst);
  HEIST_PERTURB_POINT(admit_counted);
  if (HEIST_UNLIKELY(m_closed.load(std::memory_order_seq_cst)) &&
      !(c.m_exec == this && c.m_task_depth > 0)) {
    cancel_admission(c);
    throw executor_closed("heist::executor: shut down, no new tasks are accepted");
  }
}

void executor_impl::refuse_outsider(const char* where) const {
  const thread_context* const c = t_context;
  if (c != nullptr && c->m_exec == this && c->m_task_depth > 0) return;
  throw executor_closed(std::string(where) + ": the executor is shut down");
}

void executor_impl::cancel_admission(const thread_context& c) noexcept {
  // release: see in_flight().
  shard_for(c).finished.fetch_add(1, std::memory_order_release);
  note_idle();
}

void executor_impl::admit_leased(slot& s) {
  // seq_cst store then seq_cst load, against shutdown's seq_cst store of m_closed followed
  // by its fence and its read of the counters (wait_quiescent): either this thread sees
  // m_closed, or shutdown's in-flight count includes this task and waits for it.
  s.m_counters.created.bump_seq_cst();
  HEIST_PERTURB_POINT(admit_counted);
  if (HEIST_UNLIKELY(m_closed.load(std::memory_order_seq_cst))) {
    cancel_leased_admission(s);
    throw executor_closed("heist::executor: shut down, no new tasks are accepted");
  }
}

void executor_impl::cancel_leased_admission(slot& s) noexcept {
  // The counters only grow (in_flight's argument): undo the creation by counting a finish.
  s.m_counters.finished.bump_release();
  note_idle();
}

void executor_impl::count_external_finished(const thread_context& c, bool executed) noexcept {
  if (executed) count_external_executed();
  // release: see in_flight().
  shard_for(c).finished.fetch_add(1, std::memory_order_release);
}

void executor_impl::count_external_steal(bool success) noexcept {
  // relaxed: statistics.
  m_external_attempts.fetch_add(1, std::memory_order_relaxed);
  (success ? m_external_stolen : m_external_failed).fetch_add(1, std::memory_order_relaxed);
}

void executor_impl::record_external_span(std::uint64_t start, std::uint64_t end,
                                         bool stolen) noexcept {
  std::lock_guard<std::mutex> lock(m_external_trace_lock);
  m_external_trace.record(start, end, stolen);
}

// Created minus finished, over every arena. Reads every "finished" counter first (acquire),
// then every "created" counter. A task counted as finished was created before it finished, and the
// acquire load of its finish makes that creation visible to the later reads, so the
// difference never goes negative; and a task admitted before the call and unfinished is
// either counted as created, or was spawned by a task that was unfinished when the
// finished counters were read (and is counted as created): zero means quiescent.
std::uint64_t executor_impl::in_flight() const noexcept {
  // The arenas lock keeps the set of arenas (and the counters folded in when one is
  // destroyed) fixed while the sums are taken.
  std::lock_guard<std::mutex> lock(m_arenas_lock);
  auto slots_sum = [](const arena& a, auto count) {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < a.num_slots(); ++i)
      n += count(a.slot_at(i).m_counters);
    return n;
  };
  // acquire (every counter below): pairs with the bumps' release (owner_counter), as the
  // comment above says.
  const auto finished_of = [](const slot_counters& k) {
    return k.finished_total(std::memory_order_acquire);
  };
  const auto created_of = [](const slot_counters& k) {
    return k.created.load(std::memory_order_acquire);
  };
  std::uint64_t finished = m_retired_finished + slots_sum(*m_arena, finished_of);
  for (const arena* a : m_task_arenas)
    finished += slots_sum(*a, finished_of);
  for (const external_shard& s : m_external)
    finished += s.finished.load(std::memory_order_acquire);
  std::uint64_t created = m_retired_created + slots_sum(*m_arena, created_of);
  for (const arena* a : m_task_arenas)
    created += slots_sum(*a, created_of);
  for (const external_shard& s : m_external)
    created += s.created.load(std::memory_order_acquire);
  return created - finished;
}

void executor_impl::check_quiescent() noexcept {
  if (in_flight() != 0) return;
  std::lock_guard<std::mutex> lock(m_quiescence_lock);
  m_quiescence_cv.notify_all();
}

void executor_impl::wait_quiescent() {
  // seq_cst RMW + fence: pairs with the fence in note_idle (a Dekker pair): either the
  // finishing thread sees this waiter, or this waiter's count sees its finish.
  m_quiescence_waiters.fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(m_quiescence_lock);
    m_quiescence_cv.wait(lock, [this] { return in_flight() == 0; });
  }
  // relaxed: a late decrement only makes a finishing thread take the lock and notify once
  // more for nobody.
  m_quiescence_waiters.fetch_sub(1, std::memory_order_relaxed);
}

void executor_impl::refuse_self_wait(const char* what) const {
  const thread_context* c = t_context;
  if (c != nullptr && (c->m_worker_of == this || (c->m_exec == this && c->m_task_depth > 0))) {
    throw std::logic_error(std::string("heist::executor::") + what +
                           "() called from a worker or task of the same executor: it would "
                           "wait for itself");
  }
}

void executor_impl::shutdown() {
  refuse_self_wait("shutdown");
  // seq_cst: see admit_external.
  m_closed.store(true, std::memory_order_seq_cst);
  wait_quiescent();
  std::lock_guard<std::mutex> lock(m_lifecycle_lock);
  if (m_joined) return;
  // seq_cst store, then wake_all takes the idle lock: a worker either sees m_stop in its
  // re-check after prepare_sleep, or is in the sleeper list and gets woken.
  m_stop.store(true, std::memory_order_seq_cst);
  idle().wake_all();
  join_workers();
  // Stand-ins: those on duty left with the wake-up above; parked ones are told here. They
  // are detached threads: wait until the last one is gone.
  {
    std::unique_lock<std::mutex> spares(m_spares_lock);
    m_spares_cv.notify_all();
    m_spares_cv.wait(spares, [this] { return m_spare_threads == 0; });
  }
  m_joined = true;
}

void executor_impl::wait_idle() {
  refuse_self_wait("wait_idle");
  wait_quiescent();
}

// --- task arenas --------------------------------------------------------------------------
void executor_impl::register_arena(arena& a) {
  std::lock_guard<std::mutex> lock(m_arenas_lock);
  // relaxed under the lock: poller_or_install stores it under the same lock.
  a.set_poller(m_poller.load(std::memory_order_relaxed));
  m_task_arenas.push_back(&a);
  // release: pairs with has_task_arenas' acquire (a hint that makes searchers look; the list
  // itself is read under the lock).
  m_task_arena_count.store(m_task_arenas.size(), std::memory_order_release);
}

void executor_impl::unregister_arena(arena& a) {
  {
    std::lock_guard<std::mutex> lock(m_arenas_lock);
    m_task_arenas.erase(std::find(m_task_arenas.begin(), m_task_arenas.end(), &a));
    // release: as in register_arena.
    m_task_arena_count.store(m_task_arenas.size(), std::memory_order_release);
    // Keep its counts: in_flight's sums and the external statistics must not move back.
    // acquire: as in in_flight (the arena has no task in flight by now).
    for (std::size_t i = 0; i < a.num_slots(); ++i) {
      const slot_counters& k = a.slot_at(i).m_counters;
      m_retired_created += k.created.load(std::memory_order_acquire);
      m_retired_finished += k.finished_total(std::memory_order_acquire);
      m_retired_stats.executed += k.executed_total();
      m_retired_stats.stolen += k.stolen.load();
      m_retired_stats.steal_attempts += k.steal_attempts.load();
      m_retired_stats.failed_steals += k.failed_steals.load();
      m_retired_stats.sleeps += k.sleeps.load();
    }
  }
  // A worker that picked the arena before it left the list may still be inside. acquire:
  // pairs with the visitor's release decrement (arena_visit.cpp).
  for (spin_backoff b; a.m_visitors.load(std::memory_order_acquire) != 0;)
    b.pause();
}

// Under m_arenas_lock: the first arena, highest priority first and rotating from `start`
// within a level, that has work a visitor can take and a free slot.
arena* executor_impl::find_arena_locked(std::size_t start, int min_level) noexcept {
  const bool can_steal = policy() != steal_policy::none;
  const std::size_t n = m_task_arenas.size();
  for (int level = arena::k_high; level >= min_level; --level) {
    for (std::size_t k = 0; k < n; ++k) {
      arena* a = m_task_arenas[(start + k) % n];
      if (a->level() == level && a->has_free_slot() && a->has_work_for_visitor(can_steal)) {
        return a;
      }
    }
  }
  return nullptr;
}

arena* executor_impl::arena_to_visit(std::size_t start, int min_level) noexcept {
  // Every search round of every idle worker asks: never wait for the lock here.
  std::unique_lock<std::mutex> lock(m_arenas_lock, std::try_to_lock);
  if (!lock.owns_lock()) return nullptr;
  arena* a = find_arena_locked(start, min_level);
  // relaxed under the lock: unregister_arena takes the lock before it waits for zero.
  if (a != nullptr) a->m_visitors.fetch_add(1, std::memory_order_relaxed);
  return a;
}

bool executor_impl::task_arena_needs_thread(int min_level) noexcept {
  if (!has_task_arenas()) return false;
  std::lock_guard<std::mutex> lock(m_arenas_lock);
  return find_arena_locked(0, min_level) != nullptr;
}

// --- the seam (executor_seam.hpp) -------------------------------------------------------------
void admit_external(executor_impl& exec, const thread_context& c) {
  exec.admit_external(c);
}
void cancel_admission(executor_impl& exec, const thread_context& c) noexcept {
  exec.cancel_admission(c);
}
void refuse_if_closed(const executor_impl& exec, const char* where) {
  exec.refuse_if_closed(where);
}
void enter_blocking(executor_impl& exec) noexcept {
  exec.enter_blocking();
}
void leave_blocking(executor_impl& exec) noexcept {
  exec.leave_blocking();
}
std::uint64_t default_idle_snapshot(executor_impl& exec) noexcept {
  return exec.idle().snapshot();
}

void executor_impl::report_unhandled(std::exception_ptr e) noexcept {
  if (m_options.on_unhandled_exception) {
    try {
      m_options.on_unhandled_exception(e);
      return;
    } catch (...) {
      std::fputs("heist: on_unhandled_exception threw; the exception is dropped\n", stderr);
      return;
    }
  }
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "heist: unhandled exception in a post() task: %s\n", ex.what());
  } catch (...) {
    std::fputs("heist: unhandled exception in a post() task (not a std::exception)\n", stderr);
  }
}

}  // namespace detail

// --- executor --------------------------------------------------------------------------------
namespace {
executor_options options_with_workers(std::size_t n) {
  if (n == 0) {
    throw std::invalid_argument("heist::executor: num_workers must be between 1 and " +
                                std::to_string(detail::k_max_workers) + ", got 0");
  }
  executor_options o;
  o.num_workers = n;
  return o;
}
}  // namespace

executor::executor() : executor(executor_options{}) {}
executor::executor(std::size_t num_workers) : executor(options_with_workers(num_workers)) {}
executor::executor(executor_options options)
    : m_impl(std::make_unique<detail::executor_impl>(std::move(options))),
      m_default_arena(&m_impl->default_arena()) {}

executor::~executor() {
  if (!m_impl) return;
  const detail::thread_context* c = detail::t_context;
  if (c != nullptr &&
      (c->m_worker_of == m_impl.get() || (c->m_exec == m_impl.get() && c->m_task_depth > 0))) {
    std::fputs(
        "heist: an executor was destroyed from one of its own workers or tasks, which would "
        "wait for itself; terminating\n",
        stderr);
    std::terminate();
  }
  m_impl->shutdown();
}

std::size_t executor::num_workers() const noexcept {
  return m_impl->num_workers();
}
void executor::wait_idle() {
  m_impl->wait_idle();
}
void executor::shutdown() {
  m_impl->shutdown();
}
executor_stats executor::stats() const {
  return m_impl->stats();
}
void executor::reset_stats() {
  m_impl->reset_stats();
}
void executor::write_trace(std::ostream& out) const {
  m_impl->write_trace(out);
}

executor::executor(executor_options options, std::size_t caller_seats)
    : m_impl(std::make_unique<detail::executor_impl>(
          std::move(options), detail::executor_impl::callers{caller_seats, true})),
      m_default_arena(&m_impl->default_arena()) {}

task_group::task_group(executor& ex) : task_group(detail::default_arena_of(ex)) {}

executor& default_executor() {
  // Never destroyed: its threads end with the process, so tasks still running at exit
  // never meet destroyed statics, and exit() from a task cannot deadlock on a join.
  // Its concurrency counts its callers: at most available_parallelism() threads run its
  // work at once. max(1, p - 1) workers, and the rest of p as seats for outside threads
  // (one for p >= 2, none for p == 1); a caller that finds no free seat queues its work and
  // waits without running any (arena::slotless_threads_wait).
  static executor* const instance = [] {
    const std::size_t p = available_parallelism();
    const std::size_t workers = std::max<std::size_t>(1, p - 1);
    executor_options options;
    options.num_workers = workers;
    return new executor(std::move(options), p - workers);
  }();
  return *instance;
}

}  // namespace heist
