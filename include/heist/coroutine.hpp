// C++20 coroutines on heist: task<T>, a lazy coroutine; co_await on a
// task (symmetric transfer: chains of awaits use no stack), on a heist future, on
// schedule(ex) and on task_group::join(); start() and sync_wait(). A suspended coroutine holds
// no thread: it is resumed as a task, on the executor that completed what it waited for
// (docs/design/async.md, "Coroutines"). On a heist thread its frame comes from the thread's
// frame region, handed out like a stack (frame_region.hpp), when it is at most 1 KiB.
//
// A task ends in one of three ways (final_awaiter): awaited, it continues its awaiter; a
// task_group member, it counts itself out of the group; started (start()), it moves its result
// into its future's state, frees its frame, and completes the state, continuing a coroutine
// that awaits that future right there, by symmetric transfer.
//
// A member run() from inside a task is queued by its own frame: a task header in its promise
// is the deque entry, so a fork takes no block of the task pool (docs/design/async.md, "A
// member's deque entry is its own frame"). How members start, are queued and are joined inline
// is detail/compose/coroutine_member.hpp, included at the end of this file.
#pragma once

#include <cassert>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "heist/detail/compose/future_state.hpp"
#include "heist/detail/compose/join_awaiter.hpp"
#include "heist/detail/compose/resume.hpp"
#include "heist/detail/config.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/detail/core/frame_region.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/core/thread_record.hpp"
#include "heist/executor.hpp"
#include "heist/future.hpp"
#include "heist/task_group.hpp"

namespace heist {

inline detail::join_awaiter task_group::join() noexcept {
  return detail::join_awaiter(m_context, *m_arena);
}

template <class T = void>
class task;

namespace detail {

// The end of a started task whose result is in `state` (or whose exception is `error`, moved
// into it here): frees the frame, then completes the state, so nothing of the frame outlives
// the delivery. The coroutine awaiting the future, if one is registered and this thread runs
// in an arena, continues right here by symmetric transfer: what its resumption as a task of
// this arena would do next on this thread (future_awaiter::fire), without the task.
template <class T>
std::coroutine_handle<> end_started_task(std::coroutine_handle<> h, future_state<T>& state,
                                         std::exception_ptr& error) noexcept {
  if (error) state.m_error = std::exchange(error, nullptr);
  h.destroy();
  const thread_context* const c = t_context;
  std::coroutine_handle<> next;
  if (c != nullptr && c->current_arena() != nullptr) {
    next = state.complete_taking_coroutine();
  } else {
    state.complete();
  }
  state.release();
  HEIST_PERTURB_POINT(started_task_ending);
  return next ? transfer_or_queue(next) : std::noop_coroutine();
}

// The promise's first 16 bytes are its continuation and the start of a member's deque entry
// (m_member_task): 16-aligned, so that entry sits at an address of 8 mod 16, which no block of
// the task pool has (task.hpp, frame_task_address); a thief that must not read it
// speculatively tells it by its address alone (run_task.hpp, task_filter).
template <class T>
class alignas(16) task_promise_base : public heist_promise_tag {
 public:
  std::suspend_always initial_suspend() noexcept { return {}; }
  struct final_awaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      P& p = h.promise();
      // Symmetric transfer to the awaiting coroutine: no stack grows along a chain (where a
      // transfer keeps a frame, not below the stack's mark: resume.hpp, transfer_or_queue).
      if (p.m_continuation) return transfer_or_queue(p.m_continuation);
      if (p.m_member_of != nullptr) {
        // A member of a task_group (run(task)): its exception goes to the group, its frame
        // goes away, and if it is the group's last member while a coroutine waits in
        // join(), that coroutine continues here, by symmetric transfer. A member its joiner
        // ran inline (join_awaiter.hpp) continues that join instead.
        wait_context* const group = p.group();
        const bool owner_counted = p.owner_counted();
        if (p.m_error) group->capture_exception(p.m_error);
        join_awaiter* const joiner = p.m_inlined_by;
        h.destroy();
        const thread_context* const self = t_context;
        if (joiner != nullptr) return joiner->member_ended(self, owner_counted);
        if (completion_callback* const r = group->finish_member_taking_resumer(self, owner_counted))
          return take_over(r);
        return std::noop_coroutine();
      }
      return p.end_started(h);
    }
    void await_resume() noexcept {}
  };
  final_awaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { m_error = std::current_exception(); }

  static void* operator new(std::size_t n) { return allocate_frame(n); }
  static void operator delete(void* p, std::size_t n) noexcept { deallocate_frame(p, n); }

  // A member of `g` (task_group::run); `owner_counted`: its run() was counted by the owner.
  void make_member_of(wait_context* g, bool owner_counted) noexcept {
    m_member_of = tag_group(g, owner_counted);
  }
  wait_context* group() const noexcept {
    return reinterpret_cast<wait_context*>(reinterpret_cast<std::uintptr_t>(m_member_of) &
                                           ~k_owner_counted_bit);
  }
  bool owner_counted() const noexcept {
    return (reinterpret_cast<std::uintptr_t>(m_member_of) & k_owner_counted_bit) != 0;
  }

  std::coroutine_handle<> m_continuation;
  // A member queued on its runner's own deque: this header is the deque entry (frame_member,
  // below). Raw storage: constructed by that queueing only.
  alignas(task) std::byte m_member_task[sizeof(task)];
  // The group it is a member of, bit 0 set if its owner counted it; null: not a member.
  wait_context* m_member_of = nullptr;
  // A member is never started and a started task is never a member: one word for both.
  union {
    join_awaiter* m_inlined_by = nullptr;  // a member: the join that runs it inline, if any
    void* m_started;  // started: its future's state (a future_state<T>), set by start_job
  };
  std::exception_ptr m_error;
};

// Where a member's deque entry lies in its promise (frame_member finds the promise from it).
inline constexpr std::size_t k_member_task_offset = sizeof(std::coroutine_handle<>);

template <class T>
class task_promise : public task_promise_base<T> {
 public:
  heist::task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& v) {
    m_value.emplace(std::forward<U>(v));
  }
  // Consumes the result (a task is awaited once). The error is taken out, not copied: a
  // reference left in the frame would make whoever frees the frame a holder of the exception
  // the awaiter is handling (a started task moves it on, end_started_task; a destroyer on
  // another thread would be ordered after the handler's reads only through libstdc++'s
  // uninstrumented count, which ThreadSanitizer cannot see).
  T result() {
    if (this->m_error) std::rethrow_exception(std::exchange(this->m_error, nullptr));
    return std::move(*m_value);
  }
  // The end of a started task (final_awaiter): see end_started_task.
  std::coroutine_handle<> end_started(std::coroutine_handle<> h) noexcept {
    assert(this->m_started != nullptr && "a task ended neither awaited, a member nor started");
    auto* const state = static_cast<future_state<T>*>(this->m_started);
    if (!this->m_error) {
      try {
        state->m_value.emplace(std::move(*m_value));
      } catch (...) {  // T's move threw: that is the result
        this->m_error = std::current_exception();
      }
    }
    return end_started_task(h, *state, this->m_error);
  }

 private:
  std::optional<T> m_value;
};

template <>
class task_promise<void> : public task_promise_base<void> {
 public:
  heist::task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void result() {  // as task_promise<T>::result
    if (m_error) std::rethrow_exception(std::exchange(m_error, nullptr));
  }
  std::coroutine_handle<> end_started(std::coroutine_handle<> h) noexcept {
    assert(m_started != nullptr && "a task ended neither awaited, a member nor started");
    auto* const state = static_cast<future_state<void>*>(m_started);
    if (!m_error) state->m_value.emplace('\0');
    return end_started_task(h, *state, m_error);
  }
};

// co_await on a task (task::operator co_await). The task runs in the awaiting heist
// coroutine's group (resume.hpp, enter_group): its body starts in it, every resumption inside
// it puts that group back, and its end hands the thread back in it, so nothing is noted or put
// back here. A coroutine that is not heist's gets its task started in no group.
template <class T>
struct task_awaiter {
  std::coroutine_handle<task_promise<T>> handle;
  bool await_ready() const noexcept { return false; }
  template <class P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> awaiting) noexcept {
    handle.promise().m_continuation = awaiting;
    if constexpr (!k_heist_promise<P>) enter_group(nullptr);
    return transfer_or_queue(handle);  // the task starts here (resume.hpp)
  }
  T await_resume() { return handle.promise().result(); }
};

// An empty task (default-constructed, moved from, or already handed to run/start) has no
// coroutine to run: every entry point refuses it, naming itself. The throw is out of line and
// cold, so the check adds no stack to the coroutine bodies that await tasks (sanitizer builds
// keep a frame per symmetric transfer).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_empty_task(const char* where) {
  throw std::invalid_argument(std::string(where) +
                              ": task is empty (default-constructed, moved from or already "
                              "started)");
}
inline void refuse_empty_task(bool valid, const char* where) {
  if (!valid) [[unlikely]]
    throw_empty_task(where);
}

// Takes the frame out of a task (it then frees itself at its end).
struct task_access {
  template <class T>
  static std::coroutine_handle<task_promise<T>> release(heist::task<T>& t) noexcept {
    return std::exchange(t.m_handle, nullptr);
  }
};

}  // namespace detail

// A lazy coroutine: runs nothing until awaited (co_await on it starts it) or started.
template <class T>
class [[nodiscard]] task {
 public:
  using promise_type = detail::task_promise<T>;

  task() noexcept = default;
  task(task&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  task& operator=(task&& other) noexcept {
    if (this != &other) {
      if (m_handle) m_handle.destroy();
      m_handle = std::exchange(other.m_handle, nullptr);
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() {
    if (m_handle) m_handle.destroy();
  }
  bool valid() const noexcept { return static_cast<bool>(m_handle); }

  // Starts this task on the awaiting coroutine's thread (symmetric transfer) and resumes the
  // awaiter with its result when it ends, or rethrows its exception there.
  // An empty task: std::invalid_argument at the co_await.
  detail::task_awaiter<T> operator co_await() && {
    detail::refuse_empty_task(valid(), "co_await on a heist::task");
    return detail::task_awaiter<T>{m_handle};
  }

 private:
  friend class detail::task_promise<T>;
  friend struct detail::task_access;
  explicit task(std::coroutine_handle<promise_type> h) noexcept : m_handle(h) {}
  std::coroutine_handle<promise_type> m_handle;
};

namespace detail {
template <class T>
heist::task<T> task_promise<T>::get_return_object() noexcept {
  return heist::task<T>(std::coroutine_handle<task_promise<T>>::from_promise(*this));
}
inline heist::task<void> task_promise<void>::get_return_object() noexcept {
  return heist::task<void>(std::coroutine_handle<task_promise<void>>::from_promise(*this));
}

// The task that starts a started task (start()): the task ends by completing `state`
// (task_promise::end_started). Discarded unrun, it destroys the frame (the task's destructor).
template <class T>
struct start_job {
  start_job(heist::task<T>&& t, future_state<T>* s) noexcept : work(std::move(t)), state(s) {}
  heist::task<T> work;
  future_state<T>* state;
  void operator()(task*) noexcept {
    const std::coroutine_handle<task_promise<T>> h = task_access::release(work);
    h.promise().m_started = state;
    enter_group(nullptr);  // a started task runs in no group
    h.resume();
  }
};

// co_await on a future: suspends until it is ready, then resumes as a task.
template <class T>
class future_awaiter final : public completion_callback {
 public:
  explicit future_awaiter(future_state<T>* s) noexcept
      : m_state(s), m_resume_group(current_group()) {}
  future_awaiter(const future_awaiter&) = delete;
  future_awaiter& operator=(const future_awaiter&) = delete;
  ~future_awaiter() {
    if (m_state != nullptr) m_state->release();
  }
  bool await_ready() const {
    if (m_state == nullptr) detail::throw_no_state();
    return m_state->ready();
  }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    // Another consumer's callback (a broken invariant, future_state.hpp): refused before
    // anything is changed, so the coroutine resumes with the error.
    if (m_state->taken()) throw_future_taken("co_await on a heist::future");
    m_handle = h;
    m_resume_group = group_to_resume_in<P>(m_resume_group);
    // Where the coroutine runs now: it resumes there if the future is completed by a thread
    // outside every executor (otherwise on the completing thread's executor). Held as a
    // reference: that executor may be destroyed before the future completes.
    const thread_context* c = t_context;
    m_home = c != nullptr && c->current_arena() != nullptr ? c->current_arena()->lifetime()
                                                           : m_state->m_home;
    // ready: completed meanwhile, go on at once.
    return m_state->on_complete(this) == registration::registered;
  }
  // A started task completing the future on a thread in an arena continues the coroutine
  // itself (end_started_task): what fire() would run next on that thread.
  void* continuation() const noexcept override { return m_handle.address(); }
  // The home is gone (its executor or task_arena destroyed): the coroutine goes on here, on
  // the completing thread, as it does when its executor refuses it.
  void fire() noexcept override {
    if (!with_continuation_arena(m_home, [&](arena& a) { resume_in(a, m_handle); })) {
      resume_here(m_handle);
    }
  }
  T await_resume() {
    enter_group(m_resume_group);
    // A running analysis: the coroutine goes on after the future's producer.
    if (analysing()) analysis_joined(m_state);
    // Moved out, not copied: the producer may drop the state's last reference on its own
    // thread, and the exception must not be destroyed there while this coroutine handles it
    // (as future::get).
    if (m_state->m_error) std::rethrow_exception(std::exchange(m_state->m_error, nullptr));
    if constexpr (!std::is_void_v<T>) return std::move(*m_state->m_value);
  }

 private:
  future_state<T>* m_state;
  wait_context* m_resume_group;  // the running group to put back (resume.hpp, enter_group)
  arena_ref m_home;
  std::coroutine_handle<> m_handle;
};

struct schedule_awaitable {
  arena* target;
  wait_context* resume_group = current_group();  // put back on resuming (resume.hpp)
  bool await_ready() const noexcept { return false; }
  template <class P>
  void await_suspend(std::coroutine_handle<P> h) {
    // Before the spawn: from then on the coroutine may resume on another thread.
    resume_group = group_to_resume_in<P>(resume_group);
    spawn<resume_job>(*target, nullptr, h);  // executor_closed propagates to the awaiter
  }
  void await_resume() const noexcept { enter_group(resume_group); }
};

}  // namespace detail

// co_await on a heist future (lvalue or rvalue; consumes it).
template <class T>
detail::future_awaiter<T> operator co_await(future<T>&& f) {
  return detail::future_awaiter<T>(detail::future_access::take(f));
}
template <class T>
detail::future_awaiter<T> operator co_await(future<T>& f) {
  return detail::future_awaiter<T>(detail::future_access::take(f));
}

// What schedule() returns (part of the public API).
using schedule_awaitable = detail::schedule_awaitable;

// co_await schedule(ex): the coroutine continues as a task of `ex`.
inline schedule_awaitable schedule(executor& ex) {
  return {&detail::default_arena_of(ex)};
}

namespace detail {
template <class T>
future<T> start_in(arena& a, heist::task<T> t, const char* where) {
  refuse_empty_task(t.valid(), where);
  auto* state = new future_state<T>(&a);
  state->add_ref();  // the started task's
  future<T> f = future_access::make(state);
  try {
    spawn<start_job<T>>(a, nullptr, std::move(t), state);
  } catch (...) {
    state->release();
    throw;
  }
  return f;
}
}  // namespace detail

// Runs t as a task on the current executor (or `ex`); the future yields its result.
template <class T>
future<T> start(executor& ex, heist::task<T> t) {
  return detail::start_in(detail::default_arena_of(ex), std::move(t), "heist::start");
}
template <class T>
future<T> start(heist::task<T> t) {
  return detail::start_in(detail::current_arena(), std::move(t), "heist::start");
}

// Starts t and waits for it, helping (like future::get); rethrows its exception.
template <class T>
T sync_wait(heist::task<T> t) {
  return detail::start_in(detail::current_arena(), std::move(t), "heist::sync_wait").get();
}

}  // namespace heist

// task_group members: started, queued and joined inline (uses the promise above).
#include "heist/detail/compose/coroutine_member.hpp"  // IWYU pragma: export
