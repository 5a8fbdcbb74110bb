// thread_context: what heist knows about each OS thread (thread_context.hpp). Workers
// build theirs on their own stack (worker_loop.cpp); any other thread gets one lazily.
#include "heist/detail/thread_context.hpp"

#include "heist/executor.hpp"
#include "scheduler_internal.hpp"

namespace heist::detail {

constinit thread_local thread_context* t_context HEIST_TLS_MODEL = nullptr;

namespace {
struct external_context_holder {
  thread_context context;
  external_context_holder() noexcept {
    init_stack_bounds(context);
    t_context = &context;
  }
  ~external_context_holder() { t_context = nullptr; }
};
}  // namespace

// --- thread contexts ---------------------------------------------------------------------
thread_context::thread_context() noexcept {
  m_rng = reinterpret_cast<std::uintptr_t>(this) * 0x9E3779B97F4A7C15ULL + 1;
  m_sleeper.m_parker = &m_parker;
}

thread_context& make_external_context() {
  static thread_local bool t_holder_gone = false;
  if (HEIST_UNLIKELY(t_holder_gone)) {
    // A thread_local destructor running after ours uses heist: give it a context that
    // lives until the thread ends (it is reclaimed with the process).
    static thread_local thread_context* late = nullptr;
    if (late == nullptr) late = new thread_context();
    t_context = late;
    return *late;
  }
  struct holder_guard : external_context_holder {
    ~holder_guard() { t_holder_gone = true; }
  };
  static thread_local holder_guard holder;
  return holder.context;
}

arena& default_executor_arena() {
  return detail_impl(default_executor()).default_arena();
}

}  // namespace heist::detail
