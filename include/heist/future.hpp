// future<T>: the result of executor::submit, a promise, a graph run
// or a continuation. Waiting helps: the waiting thread runs other tasks of the executor until
// the result is ready. then() attaches a continuation that runs as a task when the value
// arrives, so nothing waits at all (detail/compose/future_state.hpp has the protocol).
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "heist/detail/compose/future_state.hpp"
#include "heist/detail/compose/resume.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/core/arena.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/wait/wait_context.hpp"
#include "heist/executor_options.hpp"

namespace heist {

template <class T>
class future;
template <class T>
class promise;
class task_graph;
class executor;

namespace detail {

// Throws std::future_error(no_state): a moved-from or consumed future or task was used.
[[noreturn]] HEIST_API void throw_no_state();

// How heist's own code (when_all, coroutines) reaches a future's state and makes futures.
struct future_access {
  template <class T>
  static future_state<T>* state(future<T>& f) noexcept {
    return f.m_state;
  }
  template <class T>
  static future_state<T>* take(future<T>& f) noexcept {
    return std::exchange(f.m_state, nullptr);
  }
  template <class T>
  static future<T> make(future_state<T>* s) noexcept {
    return future<T>(s);
  }
};

template <class F, class T>
class submit_job {
 public:
  template <class A>
  submit_job(A&& fn, future_state<T>* state) : m_fn(std::forward<A>(fn)), m_state(state) {
    m_state->add_ref();
  }
  submit_job(const submit_job&) = delete;
  submit_job& operator=(const submit_job&) = delete;
  ~submit_job() { m_state->release(); }

  void operator()(task*) noexcept {
    try {
      if constexpr (std::is_void_v<T>) {
        std::invoke(m_fn);
        m_state->m_value.emplace('\0');
      } else {
        m_state->m_value.emplace(std::invoke(m_fn));
      }
    } catch (...) {
      m_state->m_error = std::current_exception();
    }
    // publishes the value or the error (release), fires a callback; the task's last act, so a
    // continuation it queues may run next here (spawn.hpp, task_end_scope)
    task_end_scope last_act;
    m_state->complete();
  }

 private:
  F m_fn;
  future_state<T>* m_state;
};

// What then(f) makes of a future<T>: f(T) (f() for void).
template <class T, class F>
struct then_result {
  using type = std::invoke_result_t<std::decay_t<F>&, T>;
};
template <class F>
struct then_result<void, F> {
  using type = std::invoke_result_t<std::decay_t<F>&>;
};
template <class T, class F>
using then_result_t = typename then_result<T, F>::type;

// A continuation: the closure of a task built at then() time (from the calling thread's task
// pool: no heap allocation for small f) and queued when the source completes (fire(), on the
// completing thread). Holds a reference to the source and to the result.
template <class T, class F>
class then_job final : public completion_callback {
 public:
  using R = then_result_t<T, F>;
  template <class A>
  then_job(future_state<T>* src, future_state<R>* dst, arena_ref target, A&& f)
      : m_fn(std::forward<A>(f)), m_src(src), m_dst(dst), m_target(std::move(target)) {}
  then_job(const then_job&) = delete;
  then_job& operator=(const then_job&) = delete;
  ~then_job() {
    m_src->release();
    m_dst->release();
  }

  void set_task(task* t) noexcept { m_task = t; }

  void fire() noexcept override {
    // then(ex, f): ex's arena; else where the completing thread runs, or the source's home.
    // The arena may be gone by now (its executor destroyed): then, as when its executor
    // refuses the task (shut down, and this thread outside it), the continuation cannot run,
    // and its future gets executor_closed instead of never completing.
    std::exception_ptr refused;  // why the continuation cannot run, if it cannot
    bool reached;
    if (m_target) {
      arena_in_use target(m_target);
      reached = target.get() != nullptr;
      if (reached) refused = queue(*target.get());
    } else {
      reached = with_continuation_arena(m_src->m_home, [&](arena& a) { refused = queue(a); });
    }
    if (!reached) refused = std::make_exception_ptr(executor_closed(k_gone));
    if (!refused) return;
    // f would be skipped anyway for a source that holds an exception: that exception passes
    // through (moved, as operator() does), not the executor's refusal.
    abandon(m_src->m_error ? std::move(m_src->m_error) : std::move(refused));
  }

  void operator()(task*) noexcept {
    try {
      if (m_src->m_error) {
        // f is skipped: the exception passes through. Moved, not copied: this thread
        // frees the source after completing the result, and a reference left in the
        // source would make it the exception's destroyer once the result's caller has
        // handled it, ordered after the handler's reads only through libstdc++'s
        // uninstrumented count (which ThreadSanitizer cannot see). Nothing else reads the
        // source's error: then() consumed its future.
        m_dst->m_error = std::move(m_src->m_error);
      } else if constexpr (std::is_void_v<T>) {
        store(m_dst, [&]() -> decltype(auto) { return std::invoke(m_fn); });
      } else {
        store(m_dst,
              [&]() -> decltype(auto) { return std::invoke(m_fn, std::move(*m_src->m_value)); });
      }
    } catch (...) {
      m_dst->m_error = std::current_exception();
    }
    task_end_scope last_act;  // as submit_job's
    m_dst->complete();
  }

 private:
  template <class Call>
  static void store(future_state<R>* dst, Call&& call) {
    if constexpr (std::is_void_v<R>) {
      call();
      dst->m_value.emplace('\0');
    } else {
      dst->m_value.emplace(call());
    }
  }

  static constexpr const char* k_gone =
      "heist::future::then: the continuation's executor is shut down or destroyed";

  // Queues the continuation's task in `a`. If `a`'s executor refuses it (shut down, and this
  // thread outside it), returns why; the task is still ours.
  std::exception_ptr queue(arena& a) noexcept {
    if (try_bypass(a, m_task)) return nullptr;
    try {
      spawn_built(a, m_task);
      return nullptr;
    } catch (...) {
      return std::current_exception();
    }
  }

  // Completes the result with `e` without running f, and frees the task.
  void abandon(std::exception_ptr e) noexcept {
    m_dst->m_error = std::move(e);
    m_dst->complete();
    task* const t = m_task;
    t->m_invoke(t, false);  // destroys this closure
    current_context().m_pool.deallocate(t);
  }

  std::decay_t<F> m_fn;
  future_state<T>* m_src;
  future_state<R>* m_dst;
  arena_ref m_target;
  task* m_task = nullptr;
};

// then(): consumes `src` (its reference moves into the continuation).
// A future already consumed by another consumer (a broken invariant: future_state.hpp).
[[noreturn, gnu::cold]] inline void throw_future_taken(const char* where) {
  throw std::logic_error(std::string(where) +
                         ": the future is already being awaited by another consumer");
}

template <class T, class F>
future_state<then_result_t<T, F>>* attach_then(future_state<T>* src, arena_ref target, F&& f) {
  using R = then_result_t<T, F>;
  using job = then_job<T, std::decay_t<F>>;
  if (src->taken()) throw_future_taken("heist::future::then");
  auto* dst = new future_state<R>(target ? target : src->m_home);
  dst->add_ref();  // the continuation's; the caller's future keeps the first
  thread_context& c = current_context();
  task* t;
  try {
    t = build_task<job>(c, nullptr, src, dst, std::move(target), std::forward<F>(f));
  } catch (...) {
    dst->release();
    dst->release();
    throw;  // src untouched: the caller still owns it
  }
  job& j = task_closure<job>(t);
  j.set_task(t);
  // ready: already complete, queue it now. taken is ruled out above (the caller owns src).
  if (src->on_complete(&j) != registration::registered) {
    // A running analysis: the continuation starts after the producer that completed src.
    if (analysing()) analysis_joined(src);
    j.fire();
  }
  return dst;
}

}  // namespace detail

template <class T>
class future {
 public:
  future() noexcept = default;
  future(future&& other) noexcept : m_state(std::exchange(other.m_state, nullptr)) {}
  future& operator=(future&& other) noexcept {
    if (this != &other) {
      if (m_state != nullptr) m_state->release();
      m_state = std::exchange(other.m_state, nullptr);
    }
    return *this;
  }
  future(const future&) = delete;
  future& operator=(const future&) = delete;
  ~future() {
    if (m_state != nullptr) m_state->release();
  }

  bool valid() const noexcept { return m_state != nullptr; }
  bool is_ready() const noexcept { return m_state != nullptr && m_state->ready(); }

  // Blocks until the result is ready, running other tasks meanwhile.
  // Helps in the future's home executor (the one its producer ran in); if it has none, or
  // it is gone, in the calling thread's own (the default executor outside every executor).
  void wait() const {
    check_valid();
    if (!detail::wait_until_ready(*m_state)) detail::throw_future_taken("heist::future::wait");
    if (detail::analysing()) detail::analysis_joined(m_state);
  }

  // Attaches f, which runs as a task with the value (f(T), or f() for void) once it is ready:
  // on the executor that completed the future (the future's own if the completing thread
  // is outside every executor), or on `ex`. No thread waits. If the future holds an
  // exception, f is skipped and the result holds the exception. Consumes this future.
  template <class F>
  auto then(F&& f) -> future<detail::then_result_t<T, F>> {
    check_valid();
    auto* dst = detail::attach_then(m_state, detail::arena_ref(), std::forward<F>(f));
    m_state = nullptr;
    return future<detail::then_result_t<T, F>>(dst);
  }
  template <class F>
  auto then(executor& ex, F&& f) -> future<detail::then_result_t<T, F>>;

  // Waits, then returns the result or rethrows the task's exception. Consumes the future.
  T get() {
    wait();
    struct releaser {
      detail::future_state<T>* s;
      ~releaser() { s->release(); }
    } hold{std::exchange(m_state, nullptr)};
    // The exception leaves the shared state here: the producer may drop the state's last
    // reference on its own thread, and the exception object (whose reference counts live
    // in the uninstrumented C++ runtime) must not be destroyed there while this thread
    // still reads it (ThreadSanitizer saw exactly that).
    if (hold.s->m_error) std::rethrow_exception(std::exchange(hold.s->m_error, nullptr));
    if constexpr (!std::is_void_v<T>) return std::move(*hold.s->m_value);
  }

 private:
  friend class executor;
  friend class task_graph;
  template <class U>
  friend class future;
  template <class U>
  friend class promise;
  friend struct detail::future_access;
  explicit future(detail::future_state<T>* state) noexcept : m_state(state) {}

  void check_valid() const {
    if (m_state == nullptr) detail::throw_no_state();
  }

  detail::future_state<T>* m_state = nullptr;
};

}  // namespace heist
