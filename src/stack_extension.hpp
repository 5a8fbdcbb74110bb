// stack_extension (private to the library): the headroom check of helping waits and the
// stack-extension threads that take over when a stack is nearly used up. The design is at
// the top of stack_extension.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/thread_context.hpp"

namespace heist::detail {

// Nested helping executions per stack before a stack extension takes over. TSan keeps a
// shadow call stack of fixed size per thread, so its limit is lower.
constexpr std::uint32_t k_max_help_depth = HEIST_TSAN ? 256 : 4096;

// Records where the calling thread's stack ends (thread_context::m_stack_limit).
void init_stack_bounds(thread_context& c) noexcept;

HEIST_ALWAYS_INLINE bool stack_is_low(const thread_context& c) noexcept {
  // m_stack_limit is 0 when the bounds are unknown: then only the depth limit applies.
  return c.m_help_depth >= k_max_help_depth ||
         reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) < c.m_stack_limit;
}

// Runs fn(arg) on a stack-extension thread while the caller blocks. Returns false if no
// thread could be started (the caller then runs fn itself: a deep stack beats a lost task).
bool run_on_stack_extension(thread_context& c, void (*fn)(void*), void* arg);

// Counts a helping wait (for all the tasks it runs inline) or an inline group call
// (call_with_stack_headroom) on this stack: one level of nesting each.
struct depth_guard {
  thread_context& c;
  explicit depth_guard(thread_context& ctx) noexcept : c(ctx) { ++c.m_help_depth; }
  ~depth_guard() { --c.m_help_depth; }
};

}  // namespace heist::detail
