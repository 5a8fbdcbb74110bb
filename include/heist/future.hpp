// future<T> (SPEC section 2): the result of executor::submit. Waiting helps: the waiting
// thread runs other tasks of the executor until the result is ready.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <future>
#include <optional>
#include <type_traits>
#include <utility>

#include "heist/detail/arena.hpp"
#include "heist/detail/spawn.hpp"
#include "heist/detail/wait_context.hpp"

namespace heist {

template <class T>
class future;
class task_graph;

namespace detail {

// Shared by one future and one task. The wait_context count is 1 until the task finishes.
template <class T>
class future_state : public wait_context {
 public:
  explicit future_state(arena& a) noexcept : wait_context(nullptr, 1), m_arena(&a) {}

  void add_ref() noexcept {
    // relaxed: taking a new reference needs no ordering (the caller already holds one).
    m_refs.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    // acq_rel: the last releaser must see every write of the other holder before delete.
    if (m_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  arena* m_arena;
  std::exception_ptr m_error;
  std::optional<std::conditional_t<std::is_void_v<T>, char, T>> m_value;

 private:
  std::atomic<int> m_refs{1};
};

template <class F, class T>
class submit_job {
 public:
  template <class A>
  submit_job(A&& fn, future_state<T>* state) : m_fn(std::forward<A>(fn)), m_state(state) {
    m_state->add_ref();
  }
  submit_job(const submit_job&) = delete;
  submit_job& operator=(const submit_job&) = delete;
  ~submit_job() { m_state->release(); }

  void operator()(task*) noexcept {
    try {
      if constexpr (std::is_void_v<T>) {
        std::invoke(m_fn);
        m_state->m_value.emplace('\0');
      } else {
        m_state->m_value.emplace(std::invoke(m_fn));
      }
    } catch (...) {
      m_state->m_error = std::current_exception();
    }
    m_state->finish_one();  // publishes the value or the error (release)
  }

 private:
  F m_fn;
  future_state<T>* m_state;
};

}  // namespace detail

template <class T>
class future {
 public:
  future() noexcept = default;
  future(future&& other) noexcept : m_state(std::exchange(other.m_state, nullptr)) {}
  future& operator=(future&& other) noexcept {
    if (this != &other) {
      if (m_state != nullptr) m_state->release();
      m_state = std::exchange(other.m_state, nullptr);
    }
    return *this;
  }
  future(const future&) = delete;
  future& operator=(const future&) = delete;
  ~future() {
    if (m_state != nullptr) m_state->release();
  }

  bool valid() const noexcept { return m_state != nullptr; }
  bool is_ready() const noexcept { return m_state != nullptr && m_state->done(); }

  // Blocks until the result is ready, running other tasks meanwhile.
  void wait() const {
    check_valid();
    if (!m_state->done()) detail::help_until(*m_state->m_arena, *m_state);
  }

  // Waits, then returns the result or rethrows the task's exception. Consumes the future.
  T get() {
    wait();
    struct releaser {
      detail::future_state<T>* s;
      ~releaser() { s->release(); }
    } hold{std::exchange(m_state, nullptr)};
    if (hold.s->m_error) std::rethrow_exception(hold.s->m_error);
    if constexpr (!std::is_void_v<T>) return std::move(*hold.s->m_value);
  }

 private:
  friend class executor;
  friend class task_graph;
  explicit future(detail::future_state<T>* state) noexcept : m_state(state) {}

  void check_valid() const {
    if (m_state == nullptr) throw std::future_error(std::future_errc::no_state);
  }

  detail::future_state<T>* m_state = nullptr;
};

}  // namespace heist
