// thread_context: what heist knows about the calling OS thread that the inline paths of a
// spawn and a wait read (its scheduling state, its task pool, its waits' bookkeeping). Every
// context is the first part of a thread_record (thread_record.hpp), which adds the parts only
// sleeping and small-object memory use. Workers create theirs on their own stack; any other
// thread gets one lazily, the first time it spawns, waits or runs a task (an "external"
// thread). Reached through one thread_local pointer, so the spawn fast path costs a single
// %fs-relative load.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/core/task_pool.hpp"

namespace heist::detail {

class arena;
class executor_impl;
class wait_context;
struct slot;

// What the thread is doing right now: where it runs (its executor, arena and slot), the
// group and isolation region of the task it runs, and how many tasks of its executor run on
// this logical stack. Read anywhere; written only through the operations below, each by the
// module that owns that step: a thread starts or stops running an arena's tasks (worker
// loops, leases and visits: occupy, restart_in; a saved state is put back by assignment),
// starts and ends a task (run_task.hpp: begin_task, end_task), runs a function as a member of
// a group (exchange_group) or opens an isolated region (isolate: exchange_isolation). A
// stack-extension stand-in (stack_extension.cpp) copies it whole, because it continues the
// same logical work on another stack.
class scheduling_state {
 public:
  executor_impl* exec() const noexcept { return m_exec; }            // of the running task / worker
  arena* current_arena() const noexcept { return m_arena; }          // whose tasks it runs
  slot* current_slot() const noexcept { return m_slot; }             // its deque there, or null
  wait_context* running_group() const noexcept { return m_group; }   // parent of new groups
  std::uintptr_t isolation() const noexcept { return m_isolation; }  // 0: none
  std::uint32_t task_depth() const noexcept { return m_task_depth; }

  // The thread runs the tasks of arena `a` of executor `e` from now on, on slot `s` (null:
  // its spawns are injected). Its task depth counts tasks of one executor: it restarts at 0
  // when the executor changes.
  void occupy(executor_impl* e, arena* a, slot* s) noexcept {
    if (m_exec != e) m_task_depth = 0;
    m_exec = e;
    m_arena = a;
    m_slot = s;
  }
  // As occupy, as a thread that runs no task of `e` yet (a guest's run, a stand-in's turn).
  void restart_in(executor_impl* e, arena* a, slot* s) noexcept {
    m_exec = e;
    m_arena = a;
    m_slot = s;
    m_task_depth = 0;
  }
  // A task of isolation region `isolation` starts on this stack; returns the region to give
  // back to end_task.
  std::uintptr_t begin_task(std::uintptr_t isolation) noexcept {
    const std::uintptr_t saved = m_isolation;
    m_isolation = isolation;
    ++m_task_depth;
    return saved;
  }
  void end_task(std::uintptr_t saved_isolation) noexcept {
    --m_task_depth;
    m_isolation = saved_isolation;
  }
  // Makes `g` the running group (new groups are its children, an exception cancels it);
  // returns the one to put back.
  wait_context* exchange_group(wait_context* g) noexcept {
    wait_context* const saved = m_group;
    m_group = g;
    return saved;
  }
  // Makes `tag` the isolation region; returns the one to put back.
  std::uintptr_t exchange_isolation(std::uintptr_t tag) noexcept {
    const std::uintptr_t saved = m_isolation;
    m_isolation = tag;
    return saved;
  }

 private:
  executor_impl* m_exec = nullptr;
  arena* m_arena = nullptr;
  slot* m_slot = nullptr;
  wait_context* m_group = nullptr;
  std::uintptr_t m_isolation = 0;
  std::uint32_t m_task_depth = 0;
};

// Which executor the thread works for and where its statistics go. Set by the executor's
// thread loops (worker_loop.cpp: work_for, set_home; park.cpp: retire); a stack-extension
// stand-in takes its caller's (take_identity_of), because it continues the caller's work.
class worker_identity {
 public:
  // Set on the executor's own threads (workers, spares); null elsewhere.
  executor_impl* worker_of() const noexcept { return m_worker_of; }
  // Where this thread's load-monitor statistics go: a worker's own slot, a stand-in's spare
  // slot; null for other threads (then the slot it occupies, or the executor's counters for
  // threads that hold none).
  slot* home() const noexcept { return m_home; }
  // The worker's park timed out and its thread is ending.
  bool retired() const noexcept { return m_retired; }

  void work_for(executor_impl* e, slot* home) noexcept {
    m_worker_of = e;
    m_home = home;
  }
  void set_home(slot* home) noexcept { m_home = home; }
  void retire() noexcept { m_retired = true; }
  void take_identity_of(const worker_identity& caller) noexcept {
    m_worker_of = caller.m_worker_of;
    m_home = caller.m_home;
  }

 private:
  executor_impl* m_worker_of = nullptr;
  slot* m_home = nullptr;
  bool m_retired = false;
};

// How deep and how low on its stack the thread runs work inline: the helping waits' nesting
// (wait/stack_headroom.hpp: depth_guard) and the stack's bounds (src/wait/stack_extension.cpp:
// set_stack_bounds, when the thread first runs heist work).
class stack_bounds {
 public:
  // Helping waits (and inline group calls) on this stack.
  std::uint32_t help_depth() const noexcept { return m_help_depth; }
  // Helping waits run tasks inline only above this address (0: stack bounds unknown).
  std::uintptr_t stack_limit() const noexcept { return m_stack_limit; }
  // Where transfers keep stack frames (HEIST_AWAIT_STACK_GUARD), an await's transfer below
  // this address is queued as a task (resume.hpp, transfer_or_queue): the stack limit, or
  // under ThreadSanitizer, whose call stacks hold at most 65,536 frames, 256 KiB below the
  // stack's top (0: bounds unknown).
  std::uintptr_t await_stack_mark() const noexcept { return m_await_stack_mark; }

  void enter_help() noexcept { ++m_help_depth; }
  void leave_help() noexcept { --m_help_depth; }
  void set_stack_bounds(std::uintptr_t limit, std::uintptr_t await_mark) noexcept {
    m_stack_limit = limit;
    m_await_stack_mark = await_mark;
  }

 private:
  std::uint32_t m_help_depth = 0;
  std::uintptr_t m_stack_limit = 0;
  std::uintptr_t m_await_stack_mark = 0;
};

// The bypass (spawn.hpp, try_bypass): a continuation queued by the running task's last act
// (completing the future it waits for), which execute_task runs next on this thread instead
// of pushing it on the deque. Written by spawn.hpp (the last act's scope, the hand-over) and
// run_task.hpp (taking it).
class task_bypass {
 public:
  // The running task is in its last act (task_end_scope).
  bool at_task_end() const noexcept { return m_at_task_end; }
  void set_at_task_end(bool on) noexcept { m_at_task_end = on; }
  // Whether a continuation is handed over already (one at most).
  bool bypass_taken() const noexcept { return m_bypass != nullptr; }
  void hand_over(task* t) noexcept { m_bypass = t; }
  // The continuation handed over, or null; taken.
  task* take_bypass() noexcept {
    task* const t = m_bypass;
    if (HEIST_UNLIKELY(t != nullptr)) m_bypass = nullptr;
    return t;
  }

 private:
  task* m_bypass = nullptr;
  bool m_at_task_end = false;
};

// Isolation tags this thread hands out without touching the shared counter: [next, end),
// reserved from the shared counter a block at a time (new_isolation_tag, task_arena.hpp).
class isolation_tags {
 public:
  bool tags_left() const noexcept { return m_isolation_next != m_isolation_end; }
  std::uintptr_t take_tag() noexcept { return m_isolation_next++; }
  void refill_tags(std::uintptr_t first, std::uintptr_t count) noexcept {
    m_isolation_next = first;
    m_isolation_end = first + count;
  }

 private:
  std::uintptr_t m_isolation_next = 0;
  std::uintptr_t m_isolation_end = 0;
};

struct HEIST_API thread_context : scheduling_state,
                                  worker_identity,
                                  stack_bounds,
                                  task_bypass,
                                  isolation_tags {
  thread_context(const thread_context&) = delete;
  thread_context& operator=(const thread_context&) = delete;

  std::uint64_t m_rng;  // victim selection for threads without a slot (search.cpp)
  task_pool m_pool;     // where this thread's tasks come from (task_pool.hpp)

 protected:
  thread_context() noexcept;  // only as part of a thread_record
};

// True if the thread of context `c` holds a slot (a deque) of arena `a`: it runs `a`'s tasks
// as a worker or on a leased slot, so its spawns go to its own deque and a lease has nothing
// to do. The one test for it (the lease, parallel_invoke, spawn_built, the waits, the loops,
// task_arena::execute).
HEIST_ALWAYS_INLINE bool holds_slot_of(const thread_context& c, const arena& a) noexcept {
  return c.current_slot() != nullptr && c.current_arena() == &a;
}

// The calling thread's context, or nullptr if it never touched heist (HEIST_TLS_MODEL:
// config.hpp).
extern HEIST_API constinit thread_local thread_context* t_context HEIST_TLS_MODEL;

HEIST_API thread_context& make_external_context();

HEIST_ALWAYS_INLINE thread_context& current_context() {
  thread_context* c = t_context;
  if (HEIST_LIKELY(c != nullptr)) return *c;
  return make_external_context();
}

}  // namespace heist::detail
