// stack_headroom: how a helping wait knows it may run one more task on this stack. Every
// helping wait (and inline group call) counts one level of nesting in m_help_depth; a task is
// run inline only while the stack has room (m_stack_limit) and the nesting is under
// k_max_help_depth, else it moves to a stack extension (src/stack_extension.cpp). Inline:
// task_group::wait checks it before running its own child in the caller's frame.
#pragma once

#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/thread_context.hpp"

namespace heist::detail {

// Nested helping executions per stack before a stack extension takes over. TSan keeps a
// shadow call stack of fixed size per thread, so its limit is lower.
constexpr std::uint32_t k_max_help_depth = HEIST_TSAN ? 256 : 4096;

HEIST_ALWAYS_INLINE bool stack_is_low(const thread_context& c) noexcept {
  // m_stack_limit is 0 when the bounds are unknown: then only the depth limit applies.
  return c.m_help_depth >= k_max_help_depth ||
         reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) < c.m_stack_limit;
}

// Counts a helping wait (for all the tasks it runs inline) or an inline group call
// (call_with_stack_headroom) on this stack: one level of nesting each.
struct depth_guard {
  thread_context& c;
  explicit depth_guard(thread_context& ctx) noexcept : c(ctx) { ++c.m_help_depth; }
  ~depth_guard() { --c.m_help_depth; }
  depth_guard(const depth_guard&) = delete;
  depth_guard& operator=(const depth_guard&) = delete;
};

}  // namespace heist::detail
