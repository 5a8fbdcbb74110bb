// executor: the work-stealing thread pool. The pool itself (detail::executor_impl) lives in
// the compiled library; this header keeps only what submit() and post() inline: the pool's
// default arena, where their tasks go.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <type_traits>
#include <utility>

#include "heist/detail/config.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/executor_options.hpp"
#include "heist/future.hpp"
#include "heist/stats.hpp"

namespace heist {

class executor;

namespace detail {
class executor_impl;
class arena;
// The executor's default arena: where submit(), post(), task_group(executor&) and the
// algorithms' executor overloads put their tasks.
HEIST_API arena& default_arena_of(executor& ex) noexcept;
}  // namespace detail

class HEIST_API executor {
 public:
  executor();                                  // available_parallelism() workers
  explicit executor(std::size_t num_workers);  // 1..4096, else std::invalid_argument
  explicit executor(executor_options options);
  ~executor();  // shutdown(); from one of its own workers: terminates the process
  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  std::size_t num_workers() const noexcept;

  // Runs f on the pool; the future yields its result or rethrows its exception.
  template <class F>
  future<std::invoke_result_t<std::decay_t<F>>> submit(F&& f) {
    using result = std::invoke_result_t<std::decay_t<F>>;
    detail::arena& a = *m_default_arena;
    future<result> fut(new detail::future_state<result>(&a));
    detail::spawn<detail::submit_job<std::decay_t<F>, result>>(a, nullptr, std::forward<F>(f),
                                                               fut.m_state);
    return fut;
  }

  // Runs f on the pool, fire and forget. An exception goes to on_unhandled_exception.
  template <class F>
  void post(F&& f) {
    detail::spawn<detail::post_job<std::decay_t<F>>>(*m_default_arena, nullptr, std::forward<F>(f));
  }

  // Blocks until every task submitted so far (and every task those spawned) has finished.
  // From inside a task of this executor it would wait for itself: std::logic_error.
  void wait_idle();
  // Stops accepting external submissions, runs everything already accepted, joins the
  // workers. Idempotent. From one of its own workers: std::logic_error.
  void shutdown();

  executor_stats stats() const;
  void reset_stats();
  // Chrome Trace Event JSON of the recorded task spans (executor_options::trace).
  void write_trace(std::ostream& out) const;

 private:
  friend detail::executor_impl& detail_impl(executor& ex) noexcept;
  friend detail::arena& detail::default_arena_of(executor& ex) noexcept;
  friend executor& default_executor();
  // The default executor's: `caller_seats` outside threads take part at once; others wait.
  executor(executor_options options, std::size_t caller_seats);
  std::unique_ptr<detail::executor_impl> m_impl;
  detail::arena* m_default_arena;  // m_impl's default arena, for the inline spawns
};

// The process-wide executor, created on first use, never destroyed (its threads end with the
// process). Its callers count in its concurrency: at most available_parallelism() threads run
// its work at once, the threads that call into it (a loop, a wait, get()) included. It has
// max(1, available_parallelism() - 1) workers; a caller that would go past the limit queues
// its work and waits without running any.
HEIST_API executor& default_executor();

inline detail::executor_impl& detail_impl(executor& ex) noexcept {
  return *ex.m_impl;
}
inline detail::arena& detail::default_arena_of(executor& ex) noexcept {
  return *ex.m_default_arena;
}

template <class T>
template <class F>
auto future<T>::then(executor& ex, F&& f) -> future<detail::then_result_t<T, F>> {
  check_valid();
  auto* dst =
      detail::attach_then(m_state, detail::default_arena_of(ex).lifetime(), std::forward<F>(f));
  m_state = nullptr;
  return future<detail::then_result_t<T, F>>(dst);
}

}  // namespace heist
