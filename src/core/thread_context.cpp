// thread_context: what heist knows about each OS thread (thread_context.hpp). Workers
// build theirs on their own stack (worker_loop.cpp); any other thread gets one lazily.
#include "heist/detail/core/frame_region.hpp"
#include "heist/detail/core/thread_record.hpp"

#include <pthread.h>

#include <optional>

#include "core/scheduler_internal.hpp"
#include "heist/executor.hpp"

namespace heist::detail {

constinit thread_local thread_context* t_context HEIST_TLS_MODEL = nullptr;

namespace {
struct external_context_holder {
  thread_record context;
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
}

thread_record::~thread_record() {
  give_back_frame_region();
}

namespace {
// The context of a thread whose thread_local destructors use heist after its own holder is
// gone (below). Freed by a pthread key's destructor: the C library runs those after every
// thread_local destructor (C++ ones included) of an ending thread, and runs them again if one
// of them sets the key once more, so a key destructor of another library that uses heist later
// gets a fresh one. Without the key (its creation failed) the context is left to the process.
constinit thread_local thread_record* t_late_context = nullptr;

void free_late_context(void* p) noexcept {
  t_late_context = nullptr;
  t_context = nullptr;
  delete static_cast<thread_record*>(p);
}

const std::optional<pthread_key_t>& late_context_key() {
  static const std::optional<pthread_key_t> key = []() -> std::optional<pthread_key_t> {
    pthread_key_t k;
    if (pthread_key_create(&k, &free_late_context) != 0) return std::nullopt;
    return k;
  }();
  return key;
}

thread_context& make_late_context() {
  if (t_late_context == nullptr) {
    auto* c = new thread_record();
    init_stack_bounds(*c);
    if (const auto& key = late_context_key()) pthread_setspecific(*key, c);
    t_late_context = c;
  }
  t_context = t_late_context;
  return *t_late_context;
}
}  // namespace

thread_context& make_external_context() {
  static thread_local bool t_holder_gone = false;
  // A thread_local destructor running after ours uses heist: it gets a context that lives
  // until the thread's last key destructor.
  if (HEIST_UNLIKELY(t_holder_gone)) return make_late_context();
  struct holder_guard : external_context_holder {
    ~holder_guard() { t_holder_gone = true; }
  };
  static thread_local holder_guard holder;
  return holder.context;
}

arena& default_executor_arena() {
  return default_arena_of(default_executor());
}

}  // namespace heist::detail
