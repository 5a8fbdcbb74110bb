// A task run with its span recorded, or measured by a scalability analysis (run_task.hpp's
// invoke_traced).
#include "core/executor_impl.hpp"
#include "heist/detail/core/run_task.hpp"
#include "heist/detail/diagnostics/analysis_hooks.hpp"
#include "heist/detail/diagnostics/trace.hpp"

namespace heist::detail {

void invoke_traced(thread_context& c, task* t, bool run, bool stolen,
                   const wait_context* group) noexcept {
  const bool analysed = analysing();
  analysis_frame before;
  if (analysed) before = analysis_task_begin(c, t, group);
  trace_buffer* const trace = c.current_slot() != nullptr ? c.current_slot()->m_trace : nullptr;
  if (trace != nullptr || (c.current_slot() == nullptr && c.exec()->tracing())) {
    const std::uint64_t start = trace_clock();
    t->m_invoke(t, run);
    if (trace != nullptr) {
      trace->record(start, trace_clock(), stolen);
    } else {
      c.exec()->monitor().record_external_span(start, trace_clock(), stolen);
    }
  } else {
    t->m_invoke(t, run);
  }
  if (analysed) analysis_task_end(c, group, before);
}

bool traces_spans(const executor_impl& exec) noexcept {
  return exec.tracing();
}

}  // namespace heist::detail
