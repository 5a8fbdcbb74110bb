// Build-wide constants and portability macros shared by every heist header.
#pragma once

#if __cplusplus < 202002L
#error "heist needs C++20 or newer: compile with -std=c++20 (or a later standard)"
#endif

#include <cstddef>

namespace heist::detail {

// Size of a destructive-interference unit. std::hardware_destructive_interference_size is
// not stable across compilers (GCC warns when it is used in headers), so it is fixed here.
// 128 covers the adjacent-line prefetcher of x86 and the 128-byte lines of Apple M-series.
inline constexpr std::size_t k_cache_line = 128;

// Most workers a single executor accepts.
inline constexpr std::size_t k_max_workers = 4096;

}  // namespace heist::detail

#if defined(__GNUC__) || defined(__clang__)
#define HEIST_LIKELY(x) __builtin_expect(!!(x), 1)
#define HEIST_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HEIST_NOINLINE __attribute__((noinline))
#define HEIST_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define HEIST_LIKELY(x) (x)
#define HEIST_UNLIKELY(x) (x)
#define HEIST_NOINLINE
#define HEIST_ALWAYS_INLINE inline
#endif

// What the compiled library exports. It builds with hidden visibility (a shared build exports
// only this): every class, function and variable of a header that is defined in the library,
// or shared between the library and the code including the header, is marked HEIST_API.
#if defined(__GNUC__) || defined(__clang__)
#define HEIST_API __attribute__((visibility("default")))
#else
#define HEIST_API
#endif

// Thread-local variables of the library: initial-exec, one %fs-relative load even in
// position-independent code (a static library built with -fPIC, or a shared one), instead
// of a call to __tls_get_addr per access.
#if defined(__GNUC__) || defined(__clang__)
#define HEIST_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define HEIST_TLS_MODEL
#endif

// Sanitizer detection: GCC defines __SANITIZE_*__, clang answers __has_feature.
#if defined(__SANITIZE_THREAD__)
#define HEIST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HEIST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HEIST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEIST_ASAN 1
#endif
#endif
#ifndef HEIST_TSAN
#define HEIST_TSAN 0
#endif
#ifndef HEIST_ASAN
#define HEIST_ASAN 0
#endif

// Whether an await checks the stack before its symmetric transfer. co_await on a heist::task
// starts the task, and its end continues the awaiter, by symmetric transfer: a tail call only
// where the compiler makes sibling calls (GCC at -O2 and above). In unoptimized and sanitizer
// builds each transfer keeps a stack frame, and a loop of awaits (or a deep chain of them)
// grows the stack by a frame or two per await until it overflows. With the guard on, a
// transfer below the stack's mark is queued as a task instead, which resumes the coroutine
// on a fresh stack (resume.hpp, transfer_or_queue; docs/design/async.md). Define
// HEIST_AWAIT_STACK_GUARD to 1 for optimized builds without sibling calls (GCC -O1, -Og), or
// to 0 to drop the check.
#ifndef HEIST_AWAIT_STACK_GUARD
#if !defined(__OPTIMIZE__) || HEIST_TSAN || HEIST_ASAN
#define HEIST_AWAIT_STACK_GUARD 1
#else
#define HEIST_AWAIT_STACK_GUARD 0
#endif
#endif

// The perturbation build (-DHEIST_PERTURB=ON, diagnostics/perturb.hpp): every named protocol
// step, HEIST_PERTURB_POINT(name), calls a hook. In every other build a point is nothing and
// that header is not read.
#ifndef HEIST_PERTURB
#define HEIST_PERTURB 0
#endif
#if HEIST_PERTURB
#include "heist/detail/diagnostics/perturb.hpp"
#else
#define HEIST_PERTURB_POINT(p) ((void)0)
#endif
