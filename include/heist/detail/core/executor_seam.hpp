// executor_seam: what the public headers ask of an executor, as exported entry points. The
// executor's state (executor_impl and its parts: admission, the arena registry, stand-ins,
// the load monitor, worker threads) is private to the library (src/core/executor_impl.hpp);
// a header reaches it only through these calls and through arena.hpp's inline fields.
#pragma once

#include <cstdint>

#include "heist/detail/config.hpp"

namespace heist::detail {

class executor_impl;
struct thread_context;

// A task enters `exec` from a thread that holds no slot of the target arena: counts it as in
// flight, then throws executor_closed if shutdown began, unless the caller runs a task of
// `exec`. And its undo, when building the task failed.
HEIST_API void admit_external(executor_impl& exec, const thread_context& c);
HEIST_API void cancel_admission(executor_impl& exec, const thread_context& c) noexcept;

// A loop, pipeline or graph run started after shutdown began, by a thread that runs no task
// of `exec`: executor_closed naming `where`.
HEIST_API void refuse_if_closed(const executor_impl& exec, const char* where);

// A thread of `exec` is about to block / has stopped blocking (heist::blocking).
HEIST_API void enter_blocking(executor_impl& exec) noexcept;
HEIST_API void leave_blocking(executor_impl& exec) noexcept;

// The idle word (idle_state::snapshot) of `exec`'s default arena: whether its workers search
// or sleep. A hint, read relaxed.
HEIST_API std::uint64_t default_idle_snapshot(executor_impl& exec) noexcept;

}  // namespace heist::detail
