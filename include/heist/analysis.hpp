// Scalability analysis: how a program's parallelism will scale, from one run on any machine.
//
//   heist::scalability_report r = heist::analyze([&] { my_parallel_code(); });
//   r.parallelism();          // work / span: the most threads the program can keep busy
//   r.predicted_speedup(64);  // work / (work / 64 + burdened span)
//
// analyze runs f once on the calling thread, inside the executor, and measures the DAG that f
// creates through heist: every task_group run and wait, parallel_invoke, loop, reduction and
// algorithm, task graph, pipeline, future and coroutine. Its *work* (T1) is the time spent in
// strands (pieces of serial code between spawns and joins); its *span* (T-infinity) is the
// longest chain of strands that depend on each other; the *burdened span* adds, for every
// spawn on that chain, the cost of a steal and a wake-up measured on this machine. A strand's
// time is its own code's: time its thread spends helping other tasks, waiting or parked is
// not counted, so work and span do not depend on how many threads ran f.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <utility>
#include <vector>

#include "heist/detail/config.hpp"
#include "heist/executor.hpp"
#include "heist/task_group.hpp"

namespace heist {

struct HEIST_API scalability_report {
  std::chrono::nanoseconds work{0};           // time in strands, summed (T1)
  std::chrono::nanoseconds span{0};           // the longest chain of dependent strands (T-inf)
  std::chrono::nanoseconds burdened_span{0};  // the same with steal_cost per spawn on the chain
  std::uint64_t strands = 0;                  // pieces of serial code counted
  // Tasks f queued that no wait joined and that had not finished when f returned (posted and
  // left running): their strands count until f returned.
  std::uint64_t not_joined = 0;
  std::chrono::nanoseconds steal_cost{0};  // the cost added per spawn edge (measured)
  // Measured speedups to draw beside the prediction (threads, speedup): filled by the caller.
  std::vector<std::pair<std::size_t, double>> measured;

  double parallelism() const noexcept;           // work / span (1 for an empty program)
  double burdened_parallelism() const noexcept;  // work / burdened_span
  // min(p, parallelism()); p of 0: std::invalid_argument naming p.
  double speedup_bound(std::size_t p) const;
  // work / (work / p + burdened_span): a lower estimate; p of 0: std::invalid_argument.
  double predicted_speedup(std::size_t p) const;
  // The figures above as one JSON object, keys as the fields' names, durations in ns, with
  // predicted_speedup and speedup_bound at 1, 2, 4, ... 256 threads.
  void write_json(std::ostream& out) const;
  // An SVG chart of speedup against threads, 1 to max_threads on log axes: the bound, the
  // burdened prediction and the measured points. max_threads below 2 or above 65,536:
  // std::invalid_argument naming max_threads.
  void write_svg(std::ostream& out, std::size_t max_threads = 256) const;
};

namespace detail {
class executor_impl;
// One analysis: begun by the constructor (std::logic_error inside another analysis, or while
// one of the same executor runs), ended by finish() or, if f threw, by the destructor.
class HEIST_API analysis_session {
 public:
  explicit analysis_session(executor_impl& exec);
  ~analysis_session();
  analysis_session(const analysis_session&) = delete;
  analysis_session& operator=(const analysis_session&) = delete;
  scalability_report finish();

 private:
  bool m_finished = false;
  std::uint64_t m_id = 0;
};
}  // namespace detail

// Runs f() once on the calling thread as the root of a task group of `ex` (a thread outside
// the pool takes a slot for the call, as task_group::run_and_wait) and measures its DAG. An
// exception from f ends the analysis and is rethrown. analyze inside f, or a second analysis of
// the same executor while one runs: std::logic_error (analyses of other executors may run at
// the same time).
template <class F>
scalability_report analyze(executor& ex, F&& f) {
  detail::analysis_session session(detail_impl(ex));
  task_group root(ex);
  auto call = [&f] { std::invoke(f); };  // f may be a const object
  root.run_and_wait(call);
  return session.finish();
}
// On default_executor().
template <class F>
scalability_report analyze(F&& f) {
  return analyze(default_executor(), std::forward<F>(f));
}

}  // namespace heist
