// Stack extensions: how helping recursion goes deeper than one thread's stack.
//
// Deep helping recursion
//   Helping nests: wait -> run task -> task waits -> run task ... One child per level for
//   100,000 levels needs far more than an 8 MiB stack. Before running a task inline, a
//   helping thread checks its headroom (a quarter of its stack, at least 256 KiB, and at
//   most k_max_help_depth nested tasks). Without headroom it hands the task to a stack
//   extension: a fresh thread with its own 8 MiB stack that copies the caller's scheduling
//   state (its slot, arena, group, isolation), runs the task, and ends; the caller blocks in
//   pthread_join meanwhile. The nesting is strict (the caller resumes only when the
//   extension is done, and only one of them touches the slot at a time), so it behaves like
//   a segmented stack: no slot changes hands for good and no new deadlock can arise.
#include "wait/stack_extension.hpp"

#include <pthread.h>

#include <algorithm>
#include <exception>

#include "heist/detail/core/spawn.hpp"
#include "heist/detail/core/thread_record.hpp"

namespace heist::detail {

void init_stack_bounds(thread_context& c) noexcept {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* addr = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
    // Below this address a helping wait hands its next task to a stack extension: keep a
    // quarter of the stack (at least 256 KiB) for the task bodies themselves.
    const std::size_t headroom = std::max<std::size_t>(std::size_t{256} << 10, size / 4);
    const auto bottom = reinterpret_cast<std::uintptr_t>(addr);
    const std::uintptr_t limit = bottom + std::min(headroom, size);
    // A loop of awaits in a build whose transfers keep frames (resume.hpp): TSan's call
    // stacks overflow at 65,536 frames, before the stack does, so there it stops 256 KiB
    // below the top (at least 4 bytes a frame; a frame holds a return address).
    const std::uintptr_t top = bottom + size;
    const std::uintptr_t tsan_mark = top - std::min<std::size_t>(std::size_t{256} << 10, size);
    c.set_stack_bounds(limit, HEIST_TSAN ? std::max(limit, tsan_mark) : limit);
  }
  pthread_attr_destroy(&attr);
}

namespace {
constexpr std::size_t k_extension_stack_size = std::size_t{8} << 20;
}  // namespace

struct extension_call {
  const thread_context* caller;
  void (*fn)(void*);
  void* arg;
  std::exception_ptr error;
};

void* stack_extension_main(void* p) {
  auto& call = *static_cast<extension_call*>(p);
  {
    thread_record c;
    static_cast<scheduling_state&>(c) = static_cast<const scheduling_state&>(*call.caller);
    c.take_identity_of(*call.caller);
    record_of(c).worker() = record_of(*call.caller).worker();
    init_stack_bounds(c);
    t_context = &c;
    try {
      call.fn(call.arg);
    } catch (...) {
      call.error = std::current_exception();
    }
    t_context = nullptr;
  }
  return nullptr;
}

bool run_on_stack_extension(thread_context& c, void (*fn)(void*), void* arg) {
  extension_call call{&c, fn, arg, nullptr};
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_attr_setstacksize(&attr, k_extension_stack_size);
  pthread_t thread;
  const int rc = pthread_create(&thread, &attr, &stack_extension_main, &call);
  pthread_attr_destroy(&attr);
  if (rc != 0) return false;
  pthread_join(thread, nullptr);  // happens-before: everything the extension did
  if (call.error) std::rethrow_exception(call.error);
  return true;
}

void call_with_stack_headroom(void (*fn)(void*), void* arg) {
  thread_context& c = current_context();
  if (HEIST_UNLIKELY(stack_is_low(c)) && run_on_stack_extension(c, fn, arg)) return;
  depth_guard depth(c);
  fn(arg);
}

}  // namespace heist::detail
