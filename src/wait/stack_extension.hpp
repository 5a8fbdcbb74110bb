// stack_extension (private to the library): the stack-extension threads that take over when
// a stack is nearly used up (the headroom check itself: stack_headroom.hpp). The design is
// at the top of stack_extension.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/wait/stack_headroom.hpp"

namespace heist::detail {

// Records where the calling thread's stack ends (thread_context::stack_limit()).
void init_stack_bounds(thread_context& c) noexcept;

// Runs fn(arg) on a stack-extension thread while the caller blocks. Returns false if no
// thread could be started (the caller then runs fn itself: a deep stack beats a lost task).
bool run_on_stack_extension(thread_context& c, void (*fn)(void*), void* arg);

}  // namespace heist::detail
