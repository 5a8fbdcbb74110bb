// parallel_for_each: f(item) for every item of [first, last), or f(item, feeder) where the
// feeder adds more items that run in the same call.
//
// How items reach threads depends on the iterator:
//  random access  the range is split like a blocked_range of grainsize 1 (auto partitioner:
//                 leaves sized by time, halves given to idle threads);
//  forward, input one cursor under a lock hands out blocks of items, one block per
//                 participating thread at a time, so nothing is read ahead that no thread is
//                 about to run. A thread's blocks start at one item and double (up to 256)
//                 while a block takes under 20 us, and halve when one takes over 200 us, so
//                 cheap items pay one lock per block and costly ones are not hoarded.
//                 Forward iterators are handed out as iterators (f may modify the item);
//                 input iterators' items are copied out under the lock.
// An item added through the feeder becomes a task on the adding thread's deque, where an idle
// thread steals it, counted in a group of the adding thread (item_runner below); it runs
// before the call returns and may add more. An exception from f cancels the items not yet
// started (fed ones included) and is rethrown by the call.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <iterator>
#include <mutex>
#include <ranges>
#include <type_traits>
#include <utility>
#include <vector>

#include "heist/blocked_range.hpp"
#include "heist/detail/loops/loop.hpp"
#include "heist/executor.hpp"
#include "heist/task_arena.hpp"
#include "heist/task_group.hpp"

namespace heist {

// Adds items to a running parallel_for_each. Passed to f as its second argument; valid only
// while the call runs. Thread-safe.
template <class T>
class feeder {
 public:
  void add(const T& item) { push(T(item)); }
  void add(T&& item) { push(std::move(item)); }

 protected:
  feeder() = default;
  ~feeder() = default;
  feeder(const feeder&) = delete;
  feeder& operator=(const feeder&) = delete;

 private:
  virtual void push(T&& item) = 0;
};

namespace detail {

template <class F, class Ref, class T>
inline constexpr bool takes_feeder = std::is_invocable_v<F&, Ref, heist::feeder<T>&>;

// Calls f with one item, and its feeder if f takes one.
//
// Where fed items are counted: in a task_group of the thread that adds them (`scoped`). The
// first piece of this call's work a thread runs (a leaf of the random-access loop, a drain of
// the cursor, a stolen fed item) opens a group on that thread, owned by it, and waits for it
// before the piece ends; everything the thread feeds meanwhile, and everything it runs while
// it waits, counts in that group. A thread then counts its own spawns and finishes with plain
// stores (owner counting), and only a thief's finish of a stolen item is an atomic add on
// another thread's group. Counted in the call's one group instead, every item fed or finished
// by a thread other than the caller was an atomic add on one shared cache line.
template <class T, class F>
class item_runner final : public heist::feeder<T> {
 public:
  item_runner(const loop_base& loop, F& f) : m_loop(loop), m_f(f) {}

  template <class Ref>
  void run(Ref&& item) {
    if constexpr (takes_feeder<F, Ref&&, T>) {
      m_f(std::forward<Ref>(item), static_cast<heist::feeder<T>&>(*this));
    } else {
      m_f(std::forward<Ref>(item));
    }
  }
  bool cancelled() const noexcept { return m_loop.cancelled(); }

  // Runs piece() with the calling thread's group for fed items open (opening it, and waiting
  // for it afterwards, unless the thread is already inside one of this call's pieces).
  template <class Piece>
  void scoped(Piece&& piece) {
    if (!takes_feeder<F, T&, T> || t_open.runner == this) {
      piece();
      return;
    }
    const open_group outer = t_open;
    struct restore {
      open_group saved;
      ~restore() { t_open = saved; }
    } put_back{outer};
    heist::task_group fed;  // declared after put_back: waited for (or cancelled) before it
    t_open = {this, &fed};
    piece();
    fed.wait();  // rethrows a fed item's exception into the piece's group
  }

 private:
  struct fed_item {
    item_runner* runner;
    T item;
    void operator()() {
      runner->scoped([this] { runner->run(item); });
    }
  };
  void push(T&& item) override {
    if (t_open.runner == this) {
      t_open.group->run(fed_item{this, std::move(item)});
    } else {
      // A thread outside this call's pieces (a thread the user started inside f): the call's
      // own group counts it.
      spawn_in(m_loop, *m_loop.m_ctx, fed_item{this, std::move(item)});
    }
  }

  // The group the calling thread's fed items go to, and the call it belongs to.
  struct open_group {
    item_runner* runner = nullptr;
    heist::task_group* group = nullptr;
  };
  static inline thread_local open_group t_open;

  loop_base m_loop;
  F& m_f;
};

// Forward and input iterators: the shared cursor, and one participant's drain of it.
template <class It, class T>
class item_source {
 public:
  item_source(It first, It last) : m_next(std::move(first)), m_last(std::move(last)) {}

  // Moves up to `want` items (iterators for forward iterators, copies for input ones) into
  // `out`; false when none is left.
  template <class Out>
  bool take(Out& out, std::size_t want) {
    std::lock_guard<std::mutex> hold(m_lock);
    for (std::size_t k = 0; k < want && m_next != m_last; ++k, ++m_next) {
      if constexpr (std::forward_iterator<It>) {
        out.push_back(m_next);
      } else {
        out.emplace_back(*m_next);
      }
    }
    return !out.empty();
  }

 private:
  std::mutex m_lock;
  It m_next;
  It m_last;
};

// One participant's blocks, until the cursor is empty.
template <class It, class T, class F>
void drain_blocks(item_source<It, T>& source, item_runner<T, F>& runner) {
  constexpr std::size_t k_max_block = 256;
  constexpr std::uint64_t k_grow_below_ns = 20'000, k_shrink_above_ns = 200'000;
  using held = std::conditional_t<std::forward_iterator<It>, It, T>;
  std::vector<held> block;
  block.reserve(k_max_block);
  std::size_t want = 1;
  while (!runner.cancelled() && source.take(block, want)) {
    const std::uint64_t start = loop_clock();
    for (held& h : block) {
      if constexpr (std::forward_iterator<It>) {
        runner.run(*h);
      } else {
        runner.run(h);
      }
    }
    block.clear();
    const std::uint64_t took = loop_clock() - start;
    if (took < k_grow_below_ns) {
      want = std::min(want * 2, k_max_block);
    } else if (took > k_shrink_above_ns) {
      want = std::max<std::size_t>(want / 2, 1);
    }
  }
}

// One participant's share of a forward or input range: blocks until the cursor is empty.
template <class It, class T, class F>
void drain(item_source<It, T>& source, item_runner<T, F>& runner) {
  runner.scoped([&] { drain_blocks(source, runner); });
}

template <class It, class F>
void for_each_in(arena& a, It first, It last, F& f) {
  using T = std::iter_value_t<It>;
  static_assert(std::is_invocable_v<F&, std::iter_reference_t<It>> ||
                    std::is_invocable_v<F&, std::iter_reference_t<It>, heist::feeder<T>&> ||
                    std::is_invocable_v<F&, T&> || std::is_invocable_v<F&, T&, heist::feeder<T>&>,
                "parallel_for_each: f must be callable as f(item) or f(item, heist::feeder<T>&)");
  if (first == last) return;
  loop_scope scope(a, "heist::parallel_for_each");
  const loop_base loop = scope.base();
  item_runner<T, F> runner(loop, f);
  if constexpr (std::random_access_iterator<It>) {
    auto body = [&runner](const blocked_range<It>& r) {
      runner.scoped([&] {
        for (It it = r.begin(); it != r.end(); ++it)
          runner.run(*it);
      });
    };
    auto_partitioner p;
    scope.run([&] { run_for(a, blocked_range<It>(first, last), body, p); });
  } else {
    item_source<It, T> source(std::move(first), std::move(last));
    const std::size_t helpers = loop_participants(a) - 1;
    scope.run([&] {
      for (std::size_t k = 0; k < helpers; ++k) {
        give_piece(loop, *loop.m_ctx, [&source, &runner] { drain(source, runner); });
      }
      drain(source, runner);
    });
  }
}

}  // namespace detail

// f(item) or f(item, feeder) for every item of [first, last), and for every item fed.
template <std::input_iterator It, class F>
void parallel_for_each(It first, It last, F&& f) {
  detail::for_each_in(detail::current_arena(), std::move(first), std::move(last), f);
}
template <std::input_iterator It, class F>
void parallel_for_each(executor& ex, It first, It last, F&& f) {
  detail::for_each_in(detail::default_arena_of(ex), std::move(first), std::move(last), f);
}
template <std::input_iterator It, class F>
void parallel_for_each(task_arena& ta, It first, It last, F&& f) {
  ta.execute(
      [&] { detail::for_each_in(detail::arena_of(ta), std::move(first), std::move(last), f); });
}

// Over a whole container or range: parallel_for_each(v, f).
template <std::ranges::input_range R, class F>
requires std::ranges::common_range<R>
void parallel_for_each(R&& r, F&& f) {
  detail::for_each_in(detail::current_arena(), std::ranges::begin(r), std::ranges::end(r), f);
}
template <std::ranges::input_range R, class F>
requires std::ranges::common_range<R>
void parallel_for_each(executor& ex, R&& r, F&& f) {
  detail::for_each_in(detail::default_arena_of(ex), std::ranges::begin(r), std::ranges::end(r), f);
}
template <std::ranges::input_range R, class F>
requires std::ranges::common_range<R>
void parallel_for_each(task_arena& ta, R&& r, F&& f) {
  ta.execute([&] {
    detail::for_each_in(detail::arena_of(ta), std::ranges::begin(r), std::ranges::end(r), f);
  });
}

}  // namespace heist
