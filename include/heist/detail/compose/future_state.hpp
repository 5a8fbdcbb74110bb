// future_state: what a future<T> and its producer (a submitted task, a promise, a graph run
// a continuation) share: the value or exception and one completion callback. The callback is
// how nothing ever waits for a future in heist's asynchronous half: then(), when_all/when_any
// and co_await register one, and the producer fires it when it completes the state. A thread
// that blocks (future::get, wait) registers one too: a signal on its own stack that counts
// down a wait_context there, which it waits on, helping (wait_until_ready). The state itself
// is five words, so a million suspended coroutines and the futures they wait on stay small.
//
// The callback word: null (pending, nobody registered), a callback (pending, registered), or
// the ready marker. complete() exchanges in the marker; on_complete() CASes null -> callback;
// withdraw() CASes a callback -> null. Exactly one of complete() and the registrant sees the
// other's write: either the completer gets the callback and fires it, or the registrant sees
// the marker and runs the callback itself. Likewise either withdraw() takes the callback back
// (it will never fire) or the completer took it first (it fires, or has fired). acq_rel on
// every side: the completer's release publishes the value to a registrant that sees the
// marker, the registrant's release publishes the callback's fields to the completer.
//
// One registrant at a time: a future's consumer (then, co_await, a combinator) owns it. A
// combinator that hands futures back to the caller while they are still pending (when_any's
// leftovers) withdraws its callbacks from them first, so a future the caller holds is always
// free or ready, never registered.
//
// The home arena (where helping waiters help and where a continuation completed from outside
// every executor runs) is held as an arena_ref: a future may outlive its executor
// (arena_lifetime.hpp).
#pragma once

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "heist/detail/config.hpp"
#include "heist/detail/core/arena_lifetime.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/detail/core/thread_record.hpp"
#include "heist/detail/diagnostics/analysis_hooks.hpp"
#include "heist/detail/wait/completion_callback.hpp"

namespace heist::detail {

template <class T>
using stored_t = std::conditional_t<std::is_void_v<T>, char, T>;

// What on_complete() found: the callback is now registered (it fires on completion), or the
// state is already complete (the caller runs the callback itself), or another consumer's
// callback is registered (nothing changed: a future is consumed by one consumer at a time).
enum class registration { registered, ready, taken };

// What every future_state<T> shares, whatever T is: the callback word, the references, the
// home and the exception. The waits and registrations take it, so they are compiled once.
class future_state_base {
 public:
  // `home`: where helping waiters help and where continuations run when the completing
  // thread is outside every executor; empty for a promise made outside (then: the current
  // arena of the waiter, or the default executor's).
  explicit future_state_base(arena_ref home) noexcept : m_home(std::move(home)) {}
  future_state_base(const future_state_base&) = delete;
  future_state_base& operator=(const future_state_base&) = delete;

  void add_ref() noexcept {
    // relaxed: taking a new reference needs no ordering (the caller already holds one).
    m_refs.fetch_add(1, std::memory_order_relaxed);
  }

  // The producer, after storing m_value or m_error: fires the callback (a continuation, an
  // awaiting coroutine's resumer, a blocked waiter's signal). The caller holds a reference
  // across the call.
  void complete() noexcept { (void)complete_and_take(false); }
  // complete(), for a completer that can continue a coroutine by symmetric transfer: a
  // registered callback that is a coroutine's resumer (completion_callback::coroutine) is not
  // fired; its coroutine is returned, for the caller to continue now, on this thread.
  std::coroutine_handle<> complete_taking_coroutine() noexcept { return complete_and_take(true); }
  // Registers `cb` (at most one per state). ready: the state is already complete; the caller
  // runs cb itself (and sees the value: the CAS failure is an acquire).
  registration on_complete(completion_callback* cb) noexcept {
    completion_callback* expected = nullptr;
    if (m_callback.compare_exchange_strong(expected, cb, std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
      return registration::registered;
    }
    return expected == ready_marker() ? registration::ready : registration::taken;
  }
  // Takes `cb` back. True: it will never fire, and the state is free for another consumer.
  // False: the state completed first; cb fires (or has fired) on the completing thread.
  bool withdraw(completion_callback* cb) noexcept {
    completion_callback* expected = cb;
    HEIST_PERTURB_POINT(future_withdrawing);
    return m_callback.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel,
                                              std::memory_order_acquire);
  }
  // Another consumer's callback is registered (a broken invariant: see the file comment).
  bool taken() const noexcept {
    // acquire: as ready().
    completion_callback* cb = m_callback.load(std::memory_order_acquire);
    return cb != nullptr && cb != ready_marker();
  }
  bool ready() const noexcept {
    // acquire: pairs with complete()'s exchange.
    return m_callback.load(std::memory_order_acquire) == ready_marker();
  }
  bool done() const noexcept { return ready(); }

  // promise<T>: set once (promise_already_satisfied otherwise), retrieved once. The
  // exchanges decide who wins among racing setters (or getters); acq_rel so that the winner
  // also orders after whatever the losers did before. satisfied()'s acquire pairs with the
  // winning exchange (a promise's destructor reads it to decide on broken_promise).
  bool claim_satisfaction() noexcept {
    return !m_satisfied.exchange(true, std::memory_order_acq_rel);
  }
  bool claim_retrieval() noexcept { return !m_retrieved.exchange(true, std::memory_order_acq_rel); }
  bool satisfied() const noexcept { return m_satisfied.load(std::memory_order_acquire); }

  arena_ref m_home;
  std::exception_ptr m_error;

 protected:
  ~future_state_base() = default;
  // Drops a reference; true: it was the last (the caller deletes the state).
  bool drop_ref() noexcept {
    // acq_rel: the last releaser must see every write of the other holders before delete.
    return m_refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }

 private:
  HEIST_ALWAYS_INLINE std::coroutine_handle<> complete_and_take(bool take_coroutine) noexcept {
    if (analysing()) analysis_completed(this);
    HEIST_PERTURB_POINT(future_completing);
    // acq_rel: the release publishes the value to a registrant that then sees the marker (its
    // CAS failure acquires); the acquire takes the registered callback's fields (its CAS
    // released them).
    completion_callback* cb = m_callback.exchange(ready_marker(), std::memory_order_acq_rel);
    std::coroutine_handle<> h;
    if (cb != nullptr) {
      if (take_coroutine) {
        if (void* const frame = cb->continuation())
          h = std::coroutine_handle<>::from_address(frame);
      }
      if (!h) cb->fire();
    }
    HEIST_PERTURB_POINT(future_completed);
    return h;
  }
  static completion_callback* ready_marker() noexcept {
    // Never a callback's address (callbacks are at least pointer-aligned).
    return reinterpret_cast<completion_callback*>(std::uintptr_t{1});
  }

  std::atomic<completion_callback*> m_callback{nullptr};
  std::atomic<int> m_refs{1};  // with the two flags: one 8-byte word
  std::atomic<bool> m_satisfied{false};
  std::atomic<bool> m_retrieved{false};
};

// Shared by one future and its producer.
template <class T>
class future_state final : public future_state_base {
 public:
  explicit future_state(arena* a) noexcept
      : future_state_base(a != nullptr ? a->lifetime() : arena_ref()) {}
  explicit future_state(const arena_ref& home) noexcept : future_state_base(home) {}

  // From the calling thread's small-object pool (thread_context.hpp): a then() link makes
  // one state, and malloc's cost was most of a link's.
  static void* operator new(std::size_t n) { return allocate_small(n); }
  static void operator delete(void* p, std::size_t n) noexcept { deallocate_small(p, n); }

  void release() noexcept {
    if (drop_ref()) delete this;
  }

  std::optional<stored_t<T>> m_value;
};

// Blocks until `s` is ready, running tasks meanwhile: in its home arena if that is alive, else
// in the calling thread's own (the default executor's outside every executor). Registers a
// signal on this thread's stack as the state's callback and helps until it fires. False,
// without waiting: another consumer's callback is registered. src/wait/future_wait.cpp.
HEIST_API bool wait_until_ready(future_state_base& s);

}  // namespace heist::detail
