// executor and executor_impl: construction, the lifecycle (wait_idle, shutdown), in_flight's
// sums over the roles, the user's hooks and the seam's entry points. The roles have their own
// files: admission_control.cpp, arena_registry.cpp, standin_pool.cpp,
// diagnostics/load_monitor.cpp, sleep/worker_threads.cpp.
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
#include "heist/detail/core/executor_seam.hpp"
#include "heist/detail/diagnostics/perturb.hpp"
#include "heist/detail/diagnostics/trace.hpp"
#include "heist/detail/platform/topology.hpp"
#include "heist/detail/sleep/backoff.hpp"
#include "heist/detail/sleep/wake_placement.hpp"
#include "heist/sizing.hpp"
#include "heist/task_group.hpp"

namespace heist {
namespace detail {

// The name of worker `index`'s thread (also its trace track, load_monitor.cpp): Linux
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

// The options, once those checked before anything is built are valid.
executor_options checked(executor_options options) {
  if (options.idle_timeout.count() < 0) {
    throw std::invalid_argument("heist::executor: idle_timeout must not be negative, got " +
                                std::to_string(options.idle_timeout.count()) + " ms");
  }
  return options;
}

std::int64_t idle_timeout_ns(std::chrono::milliseconds timeout) {
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

// The executor's slots (slot::prepare registers the process-wide barrier its deque's
// fence-free pops need, through fence_free_retry_pops).
std::unique_ptr<slot[]> make_slots(std::size_t n, std::size_t workers) {
  enable_owner_counting();  // before any worker runs a task (wait_context.hpp)
  // The topology table is a function-local static: build it here, on the creating thread,
  // not lazily in a worker's first search. A fork() that lands while a worker is inside its
  // initialisation leaves the child with a guard that is never released (every child
  // worker then blocks in __cxa_guard_acquire: Fork.ForkWhileParentMovesTaskMemory...).
  (void)multi_domain();
  auto slots = std::make_unique<slot[]>(n);
  for (std::size_t i = 0; i < n; ++i)
    slots[i].prepare(static_cast<std::uint32_t>(i), (i + 1) * 0x9E3779B97F4A7C15ULL, workers);
  return slots;
}

}  // namespace

executor_impl::executor_impl(executor_options options, callers c)
    : m_options(checked(std::move(options))),
      m_leasable_slots(c.seats),
      m_num_workers(resolve_worker_count(m_options.num_workers)),
      m_num_slots(m_num_workers + m_leasable_slots + m_options.max_blocking_threads),
      m_slots(make_slots(m_num_slots, m_num_workers)),
      // Injection buckets: enough that a few external producers rarely share one.
      m_arena(std::make_unique<arena_record>(
          *this, m_slots.get(),
          arena::layout{m_num_slots, m_num_workers, m_num_workers + m_leasable_slots,
                        std::max<std::size_t>(4, m_num_workers), false, spread_wakes(m_num_workers),
                        c.others_wait})),
      m_admission(*this),
      m_registry(*m_arena, m_options.policy),
      m_standins(*this, m_options.max_blocking_threads),
      m_monitor(*this),
      m_threads(*this, idle_timeout_ns(m_options.idle_timeout)) {
  m_threads.start();
}

executor_impl::~executor_impl() {
  {
    // executor::~executor called shutdown(); this only covers a failed construction path.
    std::lock_guard<std::mutex> lock(m_lifecycle_lock);
    if (!m_joined) stop_workers();
  }
  // Futures, continuations and coroutines that outlive the executor reach its arena only
  // through a pin (arena_lifetime.hpp): none is taken after this, and those held end first.
  m_arena->close_lifetime();
  // An outside thread whose task already ran may still be inside inject() (arena.hpp).
  m_arena->wait_for_injectors();
}

void executor_impl::stop_workers() noexcept {
  // seq_cst store, then wake_all takes the idle lock: a worker either sees m_stop in its
  // re-check after prepare_sleep, or is in the sleeper list and gets woken.
  m_stop.store(true, std::memory_order_seq_cst);
  idle().wake_all();
  m_threads.join();
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

void executor_impl::refuse_outsider(const char* where) const {
  const thread_context* const c = t_context;
  if (c != nullptr && runs_task_of_this(*c)) return;
  throw executor_closed(std::string(where) + ": the executor is shut down");
}

// Created minus finished, over every arena. Reads every "finished" counter first (acquire),
// then every "created" counter. A task counted as finished was created before it finished, and the
// acquire load of its finish makes that creation visible to the later reads, so the
// difference never goes negative; and a task admitted before the call and unfinished is
// either counted as created, or was spawned by a task that was unfinished when the
// finished counters were read (and is counted as created): zero means quiescent.
std::uint64_t executor_impl::in_flight() const noexcept {
  // The registry's lock keeps the set of arenas (and the counts folded in when one is
  // removed) fixed while the sums are taken.
  const arena_registry::locked_view arenas(m_registry);
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
  std::uint64_t finished = arenas.removed_finished() + slots_sum(*m_arena, finished_of);
  for (const arena* a : arenas.arenas())
    finished += slots_sum(*a, finished_of);
  finished += m_admission.external_finished();
  std::uint64_t created = arenas.removed_created() + slots_sum(*m_arena, created_of);
  for (const arena* a : arenas.arenas())
    created += slots_sum(*a, created_of);
  created += m_admission.external_created();
  return created - finished;
}

void executor_impl::refuse_self_wait(const char* what) const {
  const thread_context* c = t_context;
  if (c != nullptr && (c->worker_of() == this || runs_task_of_this(*c))) {
    throw std::logic_error(std::string("heist::executor::") + what +
                           "() called from a worker or task of the same executor: it would "
                           "wait for itself");
  }
}

void executor_impl::shutdown() {
  refuse_self_wait("shutdown");
  m_admission.close();
  m_admission.wait_quiescent();
  std::lock_guard<std::mutex> lock(m_lifecycle_lock);
  if (m_joined) return;
  stop_workers();
  // Stand-ins: those on duty left with the wake-up above; parked ones are told here. They
  // are detached threads: wait until the last one is gone.
  m_standins.wait_all_exited();
  m_joined = true;
}

void executor_impl::wait_idle() {
  refuse_self_wait("wait_idle");
  m_admission.wait_quiescent();
}

// --- the seam (executor_seam.hpp) -------------------------------------------------------------
void admit_external(executor_impl& exec, const thread_context& c) {
  exec.admission().admit_external(c);
}
void cancel_admission(executor_impl& exec, const thread_context& c) noexcept {
  exec.admission().cancel_external(c);
}
// run_task.hpp: a thread without a slot finished a task it took.
void count_external_finished(executor_impl& exec, const thread_context& c, bool executed) noexcept {
  if (executed) exec.monitor().count_external_executed();
  exec.admission().count_external_finished(c);
}
void refuse_if_closed(const executor_impl& exec, const char* where) {
  exec.refuse_if_closed(where);
}
void enter_blocking(executor_impl& exec) noexcept {
  exec.standins().enter_blocking();
}
void leave_blocking(executor_impl& exec) noexcept {
  exec.standins().leave_blocking();
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
      (c->worker_of() == m_impl.get() || (c->exec() == m_impl.get() && c->task_depth() > 0))) {
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
  return m_impl->monitor().stats();
}
void executor::reset_stats() {
  m_impl->monitor().reset_stats();
}
void executor::write_trace(std::ostream& out) const {
  m_impl->monitor().write_trace(out);
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
