// parallel_pipeline: items flow through a chain of filters, at most
// max_live_tokens of them at once. Filters are serial_in_order (one item at a time, in the
// order the first filter made them), serial_out_of_order (one at a time, any order) or
// parallel. An item that reaches a serial filter while it is busy, or ahead of its turn, is
// parked there and its thread goes on with other work. How items move: src/compose/pipeline.cpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "heist/detail/config.hpp"
#include "heist/executor.hpp"

namespace heist {

class task_arena;

enum class filter_mode { serial_in_order, serial_out_of_order, parallel };

// Passed to the first filter: stop() ends the input; what that call returns is discarded.
class flow_control {
 public:
  void stop() noexcept { m_stopped = true; }
  bool is_stopped() const noexcept { return m_stopped; }

 private:
  bool m_stopped = false;
};

namespace detail {

// One filter with its types erased. Every item lives in one buffer (its token) for its whole
// trip: a stage takes its input out of the buffer and puts its output there.
class pipeline_stage {
 public:
  pipeline_stage(filter_mode mode, std::size_t size, std::size_t align) noexcept
      : m_mode(mode), m_size(size), m_align(align) {}
  virtual ~pipeline_stage() = default;

  filter_mode mode() const noexcept { return m_mode; }
  std::size_t buffer_size() const noexcept { return m_size; }
  std::size_t buffer_align() const noexcept { return m_align; }
  // Usable as the first filter: called with a flow_control, no input.
  virtual bool can_start() const noexcept = 0;
  // Usable after another filter (takes the previous output, or nothing if that is void).
  virtual bool can_follow() const noexcept = 0;

  // First filter: makes one item in `buf`; false (and nothing in buf) if fc.stop() was called.
  virtual bool produce(void* buf, flow_control& fc) = 0;
  // Later filters: the input in `buf` becomes the output. If it throws, `buf` holds nothing.
  virtual void process(void* buf) = 0;
  // Destroys an input left in `buf` (an item dropped by a cancelled pipeline).
  virtual void destroy_input(void* buf) noexcept = 0;

 private:
  filter_mode m_mode;
  std::size_t m_size;
  std::size_t m_align;
};

template <class T>
struct stored_size {
  static constexpr std::size_t size = sizeof(T);
  static constexpr std::size_t align = alignof(T);
};
template <>
struct stored_size<void> {
  static constexpr std::size_t size = 0;
  static constexpr std::size_t align = 1;
};

template <class In, class Out, class F>
class pipeline_stage_of final : public pipeline_stage {
 public:
  template <class A>
  pipeline_stage_of(filter_mode mode, A&& f)
      : pipeline_stage(mode, std::max(stored_size<In>::size, stored_size<Out>::size),
                       std::max(stored_size<In>::align, stored_size<Out>::align)),
        m_fn(std::forward<A>(f)) {}

  bool can_start() const noexcept override {
    return std::is_void_v<In> && std::is_invocable_v<F&, flow_control&>;
  }
  bool can_follow() const noexcept override {
    if constexpr (std::is_void_v<In>) {
      return std::is_invocable_v<F&>;
    } else {
      return std::is_invocable_v<F&, In&&>;
    }
  }

  bool produce(void* buf, flow_control& fc) override {
    if constexpr (std::is_void_v<In> && std::is_invocable_v<F&, flow_control&>) {
      if constexpr (std::is_void_v<Out>) {
        std::invoke(m_fn, fc);
        return !fc.is_stopped();
      } else {
        Out out = std::invoke(m_fn, fc);
        if (fc.is_stopped()) return false;
        ::new (buf) Out(std::move(out));
        return true;
      }
    } else {
      (void)buf;
      (void)fc;
      return false;  // never called: parallel_pipeline checks can_start()
    }
  }

  void process(void* buf) override {
    if constexpr (std::is_void_v<In>) {
      if constexpr (std::is_invocable_v<F&>) {
        emit(buf, [&]() -> decltype(auto) { return std::invoke(m_fn); });
      }
    } else if constexpr (std::is_invocable_v<F&, In&&>) {
      In* slot = std::launder(static_cast<In*>(buf));
      In in(std::move(*slot));
      slot->~In();
      emit(buf, [&]() -> decltype(auto) { return std::invoke(m_fn, std::move(in)); });
    }
  }

  void destroy_input(void* buf) noexcept override {
    if constexpr (!std::is_void_v<In>) std::launder(static_cast<In*>(buf))->~In();
  }

 private:
  template <class Call>
  static void emit(void* buf, Call&& call) {
    if constexpr (std::is_void_v<Out>) {
      call();
    } else {
      ::new (buf) Out(call());
    }
  }

  F m_fn;
};

HEIST_API void run_pipeline(executor* ex, task_arena* ta, std::size_t max_live_tokens,
                            const std::vector<std::shared_ptr<pipeline_stage>>& stages);

}  // namespace detail

// A chain of one or more filters taking In and producing Out. Copies share the filters.
template <class In, class Out>
class filter {
 public:
  filter() = default;
  bool empty() const noexcept { return m_stages.empty(); }

 private:
  template <class I, class O, class F>
  friend filter<I, O> make_filter(filter_mode m, F&& f);
  template <class A, class B, class C>
  friend filter<A, C> operator&(const filter<A, B>& left, const filter<B, C>& right);
  friend void parallel_pipeline(std::size_t, const filter<void, void>&);
  friend void parallel_pipeline(executor&, std::size_t, const filter<void, void>&);
  friend void parallel_pipeline(task_arena&, std::size_t, const filter<void, void>&);

  std::vector<std::shared_ptr<detail::pipeline_stage>> m_stages;
};

// The first filter: Out f(flow_control&). A middle one: Out f(In). The last: void f(In).
template <class In, class Out, class F>
filter<In, Out> make_filter(filter_mode m, F&& f) {
  using fn = std::decay_t<F>;
  if constexpr (std::is_void_v<In>) {
    static_assert(std::is_invocable_v<fn&, flow_control&> || std::is_invocable_v<fn&>,
                  "make_filter<void, Out>: f(flow_control&) (a first filter) or f()");
  } else {
    static_assert(std::is_invocable_v<fn&, In&&>, "make_filter<In, Out>: f must take an In");
  }
  filter<In, Out> result;
  result.m_stages.push_back(
      std::make_shared<detail::pipeline_stage_of<In, Out, fn>>(m, std::forward<F>(f)));
  return result;
}

// Chains two filters: left's output is right's input.
template <class A, class B, class C>
filter<A, C> operator&(const filter<A, B>& left, const filter<B, C>& right) {
  filter<A, C> result;
  result.m_stages = left.m_stages;
  result.m_stages.insert(result.m_stages.end(), right.m_stages.begin(), right.m_stages.end());
  return result;
}

// Runs the pipeline until the first filter calls fc.stop() and every item made before has
// left the last filter. The calling thread takes part. On the current executor, or `ex`, or
// inside task arena `ta`. max_live_tokens 0: std::invalid_argument. The first exception a
// filter throws stops the input, drops the items in flight, and is rethrown here.
inline void parallel_pipeline(std::size_t max_live_tokens, const filter<void, void>& chain) {
  detail::run_pipeline(nullptr, nullptr, max_live_tokens, chain.m_stages);
}
inline void parallel_pipeline(executor& ex, std::size_t max_live_tokens,
                              const filter<void, void>& chain) {
  detail::run_pipeline(&ex, nullptr, max_live_tokens, chain.m_stages);
}
inline void parallel_pipeline(task_arena& ta, std::size_t max_live_tokens,
                              const filter<void, void>& chain) {
  detail::run_pipeline(nullptr, &ta, max_live_tokens, chain.m_stages);
}

}  // namespace heist
