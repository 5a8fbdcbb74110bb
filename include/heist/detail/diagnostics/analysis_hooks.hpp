// analysis_hooks: where the scheduler tells a running scalability analysis (analysis.hpp,
// src/diagnostics/analysis.cpp) about the program's DAG. Each hook point costs one relaxed load of
// a process-wide count and a branch predicted not taken while no analysis runs:
//   spawn      a task is queued (spawn_from, spawn_built, the bypass): its path so far
//   run        a task's body runs (run_task_of takes the traced path while analysing): its
//              strand starts from the path recorded at its spawn and ends into its group
//   join       a group is joined (after the wait of task_group, a loop, a pipeline, a graph
//              run, a coroutine's join): the joiner's path becomes the longest of its own
//              and its children's; task_group::wait takes wait_for_group_analysed
//   wait       a helping wait pauses the waiting strand (help_until*, out of line)
//   future     a producer's completion records its path; the consumer's wait joins it
//   graph      a node's release of a successor and its end record its path; a node's start
//              joins its predecessors' (src/compose/graph_runner.cpp)
// Built with HEIST_ANALYSIS=0 every hook compiles to nothing.
#pragma once

#include <atomic>
#include <cstdint>

#include "heist/detail/config.hpp"

#ifndef HEIST_ANALYSIS
#define HEIST_ANALYSIS 1
#endif

namespace heist::detail {

class executor_impl;
class wait_context;
struct task;
struct thread_context;

// The calling thread's position in an analysed DAG: the longest path (plain and burdened)
// up to the start of its running strand, and when that strand started. Written only by its
// thread.
struct analysis_frame {
  std::uint64_t span = 0;      // ns of strands on the longest path before this strand
  std::uint64_t burdened = 0;  // the same with a steal's cost per spawn edge
  std::uint64_t start = 0;     // when the running strand started (ns, steady clock)
  bool active = false;         // the thread runs a strand of the analysed program
  bool running = false;        // the strand runs (not paused in a wait or by a nested task)
  // A task without a group that has not completed anything yet (a future, a graph run): if
  // the analysis ends first, it was not joined.
  bool unjoined = false;
  std::uint64_t session = 0;  // the analysis it belongs to (one per executor at a time)
};

// Analyses running in the process (at most one per executor).
// On a cache line of its own: read on every spawn and join, written twice per analysis.
alignas(64) inline HEIST_API std::atomic<std::uint32_t> g_analyses_running{0};

HEIST_ALWAYS_INLINE bool analysing() noexcept {
#if HEIST_ANALYSIS
  // relaxed: a hint read on every hook point; analysis_begin publishes the session under its
  // lock, which every hook takes before it reads anything of it.
  return HEIST_UNLIKELY(g_analyses_running.load(std::memory_order_relaxed) != 0);
#else
  return false;
#endif
}

// The hooks (src/diagnostics/analysis.cpp), called only when analysing() is true.
HEIST_API void analysis_spawned(thread_context& c, const executor_impl& exec,
                                const task* t) noexcept;
// Returns the thread's frame before the task, to hand back to analysis_task_end.
HEIST_API analysis_frame analysis_task_begin(thread_context& c, const task* t,
                                             const wait_context* group) noexcept;
HEIST_API void analysis_task_end(thread_context& c, const wait_context* group,
                                 const analysis_frame& before) noexcept;
// The calling thread joins `key` (a group, a future's state, a graph node): its path becomes
// the longest of its own and those recorded for the key.
HEIST_API void analysis_joined(const void* key) noexcept;
// The calling thread's path so far is recorded for `key`, for whoever joins it (a future's
// producer completing it, a graph node releasing a successor, a node ending in its run).
HEIST_API void analysis_completed(const void* key) noexcept;
// What was recorded for `from` is recorded for `to` as well (an input already complete when
// when_all registers on it).
HEIST_API void analysis_forwarded(const void* from, const void* to) noexcept;
// Pauses the calling thread's strand for a wait; true if it did (then resume it after).
HEIST_API bool analysis_pause() noexcept;
HEIST_API void analysis_resume() noexcept;

// Pauses the calling thread's strand for the scope of a helping wait.
class analysis_wait_scope {
 public:
  analysis_wait_scope() noexcept : m_paused(analysing() && analysis_pause()) {}
  ~analysis_wait_scope() {
    if (m_paused) analysis_resume();
  }
  analysis_wait_scope(const analysis_wait_scope&) = delete;
  analysis_wait_scope& operator=(const analysis_wait_scope&) = delete;

 private:
  bool m_paused;
};

}  // namespace heist::detail
