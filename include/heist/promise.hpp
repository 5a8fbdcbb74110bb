// promise<T>: the producer side of a future, completable from any thread,
// including threads outside every executor. Completing it wakes a helping waiter and starts
// the continuation attached with then() or co_await (detail/compose/future_state.hpp).
#pragma once

#include <exception>
#include <future>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "heist/detail/compose/future_state.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/future.hpp"

namespace heist {

template <class T>
class promise {
 public:
  // The future's arena (for helping waits and continuations completed from outside) is the
  // current one if the calling thread runs inside an executor; none otherwise (then the
  // waiter's, or the default executor's).
  promise() : m_state(new detail::future_state<T>(current_arena_or_null())) {}
  promise(promise&& other) noexcept : m_state(std::exchange(other.m_state, nullptr)) {}
  promise& operator=(promise&& other) noexcept {
    if (this != &other) {
      abandon();
      m_state = std::exchange(other.m_state, nullptr);
    }
    return *this;
  }
  promise(const promise&) = delete;
  promise& operator=(const promise&) = delete;
  // Unsatisfied: the future gets std::future_error(broken_promise).
  ~promise() { abandon(); }

  // Once: a second call throws std::future_error(future_already_retrieved).
  future<T> get_future() {
    check_state();
    if (!m_state->claim_retrieval()) {
      throw std::future_error(std::future_errc::future_already_retrieved);
    }
    m_state->add_ref();
    return detail::future_access::make(m_state);
  }

  template <class U = T>
  requires(!std::is_void_v<U>) void set_value(U value) {
    claim();
    m_state->m_value.emplace(std::move(value));
    m_state->complete();
  }
  template <class U = T>
  requires std::is_void_v<U>
  void set_value() {
    claim();
    m_state->m_value.emplace('\0');
    m_state->complete();
  }
  // A null `e` would satisfy the promise with neither a value nor an exception (get() would
  // read a value never set): std::invalid_argument, and the promise stays unsatisfied.
  void set_exception(std::exception_ptr e) {
    if (e == nullptr) {
      throw std::invalid_argument("heist::promise::set_exception: the exception_ptr is null");
    }
    claim();
    m_state->m_error = std::move(e);
    m_state->complete();
  }

 private:
  static detail::arena* current_arena_or_null() noexcept {
    const detail::thread_context* c = detail::t_context;
    return c != nullptr ? c->current_arena() : nullptr;
  }
  void check_state() const {
    if (m_state == nullptr) throw std::future_error(std::future_errc::no_state);
  }
  // A second set_*: std::future_error(promise_already_satisfied).
  void claim() {
    check_state();
    if (!m_state->claim_satisfaction()) {
      throw std::future_error(std::future_errc::promise_already_satisfied);
    }
  }
  void abandon() noexcept {
    if (m_state == nullptr) return;
    if (m_state->claim_satisfaction()) {
      m_state->m_error =
          std::make_exception_ptr(std::future_error(std::future_errc::broken_promise));
      m_state->complete();
    }
    std::exchange(m_state, nullptr)->release();
  }

  detail::future_state<T>* m_state;
};

}  // namespace heist
