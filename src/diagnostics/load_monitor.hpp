// load_monitor: an executor's statistics and traces. Per-slot counters live in the slots
// (slot.hpp) and are written by their owners; this keeps what no slot holds (the counts of
// threads that help without a slot, reset_stats() baselines, the trace buffers and the
// spans of slotless helpers) and reads everything into executor_stats and Chrome Trace Event
// output. Every figure is a statistic: relaxed reads, a moment old at most.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <vector>

#include "heist/detail/diagnostics/trace.hpp"
#include "heist/stats.hpp"

namespace heist::detail {

class executor_impl;

class load_monitor {
 public:
  // Gives every slot of `exec` a trace buffer when executor_options::trace is set.
  explicit load_monitor(executor_impl& exec);
  load_monitor(const load_monitor&) = delete;
  load_monitor& operator=(const load_monitor&) = delete;

  // A thread that holds no slot ran a task / tried to steal.
  void count_external_executed() noexcept {
    // relaxed: a statistic.
    m_external_executed.fetch_add(1, std::memory_order_relaxed);
  }
  void count_external_steal(bool success) noexcept {
    // relaxed: statistics.
    m_external_attempts.fetch_add(1, std::memory_order_relaxed);
    (success ? m_external_stolen : m_external_failed).fetch_add(1, std::memory_order_relaxed);
  }
  void record_external_span(std::uint64_t start, std::uint64_t end, bool stolen) noexcept;

  executor_stats stats() const;
  void reset_stats();
  void write_trace(std::ostream& out) const;

 private:
  worker_stats raw_external_stats() const;

  executor_impl& m_exec;
  // Stats of threads that hold no slot (RMW counters: several threads may help at once).
  alignas(k_cache_line) std::atomic<std::uint64_t> m_external_executed{0};
  std::atomic<std::uint64_t> m_external_stolen{0};
  std::atomic<std::uint64_t> m_external_attempts{0};
  std::atomic<std::uint64_t> m_external_failed{0};
  // reset_stats() baselines (the counters themselves only grow).
  mutable std::mutex m_stats_lock;
  std::vector<worker_stats> m_baseline;
  worker_stats m_external_baseline;
  std::vector<std::unique_ptr<trace_buffer>> m_traces;  // one per slot, when tracing
  std::uint64_t m_trace_origin = 0;
  mutable std::mutex m_external_trace_lock;
  trace_buffer m_external_trace;  // spans of helpers without a slot, guarded by the lock
};

}  // namespace heist::detail
