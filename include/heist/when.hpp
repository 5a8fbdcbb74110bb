// when_all and when_any: futures that become ready when every input, or
// the first input, is. They cost no thread: each input gets a completion callback (a "link")
// that runs on the thread completing that input. The inputs come back ready (for when_any:
// the first one is; the others are free to be consumed again, pending or ready), so each
// keeps its own value or exception.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "heist/detail/compose/future_state.hpp"
#include "heist/future.hpp"

namespace heist {

template <class T>
struct when_any_result {
  std::size_t index = static_cast<std::size_t>(-1);  // the first input ready (-1: none given)
  std::vector<future<T>> futures;
};

namespace detail {

// Shared by the links of one when_all: the inputs, a countdown, the result's state.
template <class Inputs>
class when_all_state {
 public:
  struct link final : completion_callback {
    when_all_state* owner = nullptr;
    void fire() noexcept override { owner->one_ready(); }
  };

  when_all_state(Inputs inputs, std::size_t n) : m_inputs(std::move(inputs)), m_links(n) {
    // Every link counts down once, and so does start() when it has registered them all.
    // relaxed: the state is published to the links' threads by registering them (each
    // input's completion protocol orders its callback after that).
    m_remaining.store(n + 1, std::memory_order_relaxed);
    for (link& l : m_links)
      l.owner = this;
    m_result = new future_state<Inputs>(nullptr);  // this state's reference
  }
  ~when_all_state() { m_result->release(); }

  // Registers a link on every input; returns the result's future. The state deletes itself
  // when the last input is ready.
  future<Inputs> start() {
    m_result->add_ref();  // the caller's future
    future<Inputs> f = future_access::make(m_result);
    if constexpr (requires { m_inputs.size(); }) {
      for (std::size_t i = 0; i < m_inputs.size(); ++i)
        watch(i, m_inputs[i]);
    } else {
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (watch(I, std::get<I>(m_inputs)), ...);
      }
      (std::make_index_sequence<std::tuple_size_v<Inputs>>{});
    }
    one_ready();  // start()'s own count: the result may complete only after this
    return f;
  }

 private:
  template <class T>
  void watch(std::size_t i, future<T>& input) {
    future_state<T>* s = future_access::state(input);
    // ready (or no state): counts now. taken was refused before start (refuse_taken).
    if (s == nullptr || s->on_complete(&m_links[i]) != registration::registered) {
      // A running analysis: the input's producer path, which fired before this registered.
      if (s != nullptr && analysing()) analysis_forwarded(s, this);
      m_links[i].fire();
    }
  }

  void one_ready() noexcept {
    // A running analysis: each input's producer path; the last one's thread joins them all.
    const bool analysed = analysing();
    if (analysed) analysis_completed(this);
    // acq_rel: the last one to count down sees every input's completion (their values).
    if (m_remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (analysed) analysis_joined(this);
    future_state<Inputs>* const r = m_result;
    r->m_value.emplace(std::move(m_inputs));
    r->add_ref();  // held across complete(): the destructor below drops this state's
    delete this;
    r->complete();
    r->release();
  }

  Inputs m_inputs;
  std::vector<link> m_links;
  std::atomic<std::size_t> m_remaining{0};
  future_state<Inputs>* m_result = nullptr;
};

// The links of one when_any. The first link to fire names the winner; the result is delivered
// once both the winner is known and start() has registered every link (a gate of two
// arrivals), so that delivery can take back (withdraw) the links still registered on the
// other inputs before it hands them to the caller: a leftover future is then free for its
// next consumer (then, co_await, another when_any), never left with this when_any's
// callback. A link that could not be taken back fires later, finds the winner named, and
// only drops its reference. The state lives until every link has fired or been withdrawn (a
// reference each, plus start()'s).
template <class T>
class when_any_state {
 public:
  struct link final : completion_callback {
    when_any_state* owner = nullptr;
    std::size_t index = 0;
    void fire() noexcept override { owner->one_ready(index); }
  };

  explicit when_any_state(std::vector<future<T>> inputs)
      : m_inputs(std::move(inputs)), m_links(m_inputs.size()), m_states(m_inputs.size()) {
    // relaxed: as in when_all_state (published by registering the links).
    m_refs.store(m_inputs.size() + 1, std::memory_order_relaxed);
    for (std::size_t i = 0; i < m_links.size(); ++i) {
      m_links[i].owner = this;
      m_links[i].index = i;
      // Read before any registration: the delivery moves m_inputs into the result.
      m_states[i] = future_access::state(m_inputs[i]);
    }
    m_result = new future_state<when_any_result<T>>(nullptr);  // this state's reference
  }

  future<when_any_result<T>> start() {
    m_result->add_ref();  // the caller's future
    future<when_any_result<T>> f = future_access::make(m_result);
    for (std::size_t i = 0; i < m_states.size(); ++i) {
      // ready (or no state): fires now; taken was refused before start (refuse_taken).
      if (m_states[i] == nullptr ||
          m_states[i]->on_complete(&m_links[i]) != registration::registered) {
        m_links[i].fire();
      }
    }
    arrive();  // every link is registered (or fired)
    drop();
    return f;
  }

 private:
  static constexpr std::size_t k_none = static_cast<std::size_t>(-1);

  void one_ready(std::size_t index) noexcept {
    std::size_t none = k_none;
    // acq_rel: one CAS among the links decides; the gate below orders the rest.
    if (m_winner.compare_exchange_strong(none, index, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
      arrive();
    }
    drop();
  }

  // Two arrivals: the winner's and start()'s. The second delivers.
  void arrive() noexcept {
    // acq_rel: the deliverer sees the winner's index and every registration start() made.
    if (m_gate.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // relaxed: the winner's CAS came before its arrival, which the gate's acq_rel orders.
    const std::size_t winner = m_winner.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < m_states.size(); ++i) {
      // The inputs still hold their states here (they move into the result below). A link
      // withdrawn never fires: its reference is dropped here; the caller of arrive() holds
      // another, so this is never the last.
      if (i != winner && m_states[i] != nullptr && m_states[i]->withdraw(&m_links[i])) {
        m_refs.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    m_result->m_value.emplace(when_any_result<T>{winner, std::move(m_inputs)});
    m_result->complete();
    m_result->release();
  }
  void drop() noexcept {
    // acq_rel: the last holder deletes, after every other holder's writes.
    if (m_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  std::vector<future<T>> m_inputs;
  std::vector<link> m_links;
  std::vector<future_state<T>*> m_states;
  std::atomic<std::size_t> m_refs{0};
  std::atomic<std::size_t> m_winner{k_none};
  std::atomic<int> m_gate{2};
  future_state<when_any_result<T>>* m_result;
};

// A future already awaited by another consumer cannot join a combinator (future_state.hpp).
template <class T>
void refuse_taken(future<T>& f, const char* where) {
  future_state<T>* s = future_access::state(f);
  if (s != nullptr && s->taken()) throw_future_taken(where);
}

}  // namespace detail

// Ready when every input is; yields the inputs, all ready (an invalid input counts as
// ready). An empty vector gives a ready future of an empty vector.
template <class T>
future<std::vector<future<T>>> when_all(std::vector<future<T>> futures) {
  for (future<T>& f : futures)
    detail::refuse_taken(f, "heist::when_all");
  const std::size_t n = futures.size();
  return (new detail::when_all_state<std::vector<future<T>>>(std::move(futures), n))->start();
}

template <class... T>
future<std::tuple<future<T>...>> when_all(future<T>... futures) {
  using inputs = std::tuple<future<T>...>;
  (detail::refuse_taken(futures, "heist::when_all"), ...);
  return (new detail::when_all_state<inputs>(inputs(std::move(futures)...), sizeof...(T)))->start();
}

// Ready when the first input is; `index` names it. An empty vector gives a ready result
// with index -1 (as the Concurrency TS).
template <class T>
future<when_any_result<T>> when_any(std::vector<future<T>> futures) {
  if (futures.empty()) {
    auto* s = new detail::future_state<when_any_result<T>>(nullptr);
    s->m_value.emplace(when_any_result<T>{});
    s->add_ref();
    s->complete();
    s->release();
    return detail::future_access::make(s);
  }
  for (future<T>& f : futures)
    detail::refuse_taken(f, "heist::when_any");
  return (new detail::when_any_state<T>(std::move(futures)))->start();
}

}  // namespace heist
