// stack_headroom: how a helping wait knows it may run one more task on this stack. Every
// helping wait (and inline group call) counts one level of nesting in its help depth; a task is
// run inline only while the stack has room (its stack limit) and the nesting is under
// k_max_help_depth, else it moves to a stack extension (src/wait/stack_extension.cpp). Inline:
// task_group::wait checks it before running its own child in the caller's frame, with the
// address check alone where the stack's bounds are known (inline_stack_is_low).
#pragma once

#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/core/thread_context.hpp"

namespace heist::detail {

// Nested helping executions per stack before a stack extension takes over. TSan keeps a
// shadow call stack of fixed size per thread, so its limit is lower.
constexpr std::uint32_t k_max_help_depth = HEIST_TSAN ? 256 : 4096;

// The calling thread's stack pointer, or near it. Read from the register where the compiler
// lets us: __builtin_frame_address(0) makes every function it is inlined into keep a frame
// pointer (a push, a move and a pop per call of a user's fork-join function, and one
// register less), which the register read does not.
HEIST_ALWAYS_INLINE std::uintptr_t stack_address() noexcept {
  std::uintptr_t sp;
#if defined(__x86_64__)
  asm("movq %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
  asm("mov %0, sp" : "=r"(sp));
#else
  sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
#endif
  return sp;
}

HEIST_ALWAYS_INLINE bool stack_is_low(const thread_context& c) noexcept {
  // The stack limit is 0 when the bounds are unknown: then only the depth limit applies.
  return c.help_depth() >= k_max_help_depth || stack_address() < c.stack_limit();
}

// The same for the wait's inline step (run_task.hpp, try_run_own_child), which counts no
// nesting where the stack's bounds are known: the address check alone bounds it, and a
// fork-join function then pays no increment and decrement of the help depth per join. Under
// TSan (a shadow call stack of fixed depth) the step counts like every helping wait
// (inline_depth_guard). Bounds unknown: every address reads low (the limit's 0 wraps to the
// top of the unsigned range), so the step is left to the helping wait, which counts.
HEIST_ALWAYS_INLINE bool inline_stack_is_low(const thread_context& c) noexcept {
  if constexpr (HEIST_TSAN) {
    return stack_is_low(c);
  } else {
    return stack_address() <= c.stack_limit() - 1;
  }
}

// Counts a helping wait (for all the tasks it runs inline) or an inline group call
// (call_with_stack_headroom) on this stack: one level of nesting each.
struct depth_guard {
  thread_context& c;
  explicit depth_guard(thread_context& ctx) noexcept : c(ctx) { c.enter_help(); }
  ~depth_guard() { c.leave_help(); }
  depth_guard(const depth_guard&) = delete;
  depth_guard& operator=(const depth_guard&) = delete;
};

// Counts the wait's inline step as one level of nesting where inline_stack_is_low reads the
// depth (TSan); elsewhere nothing.
struct inline_depth_guard {
  thread_context& c;
  explicit inline_depth_guard(thread_context& ctx) noexcept : c(ctx) {
    if constexpr (HEIST_TSAN) c.enter_help();
  }
  ~inline_depth_guard() {
    if constexpr (HEIST_TSAN) c.leave_help();
  }
  inline_depth_guard(const inline_depth_guard&) = delete;
  inline_depth_guard& operator=(const inline_depth_guard&) = delete;
};

}  // namespace heist::detail
