// The engine behind parallel_for / parallel_reduce: how each partitioner cuts a range into
// tasks. docs/design.md ("Parallel loops") explains the choices; in short:
//
//  auto     Lazy binary splitting with a range pool (after oneTBB's auto_partitioner and
//           Tzannes et al.'s LBS). A task keeps its range in a small stack of halves, runs the
//           leftmost piece leaf by leaf, and before each leaf, if its own deque is empty,
//           pushes the rightmost (largest) piece there as a new task, for a thread that turns
//           idle to steal at once (loop_demand). Leaf sizes adapt to time (leaf_sizer), so
//           cheap iterations run in long leaves and the deque is refilled often.
//  simple   Recursive halving to the grainsize; every right half is a task.
//  static   One contiguous block per participant, no further splitting.
//  affinity Seed note 002: per-participant shares in chunk queues; own chunks front to
//           back, then chunks from the back of the share with the most iterations left.
//  deterministic reduce: the simple partitioner's fixed split tree, joined in tree order,
//           so results are bit-identical whatever the thread count.
//
// Reductions join results in index order: a task that gives pieces away joins their results
// in reverse order of giving (each piece given is to the left of the previous ones).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "heist/blocked_range.hpp"
#include "heist/detail/arena_lease.hpp"
#include "heist/detail/executor_impl.hpp"
#include "heist/detail/spawn.hpp"
#include "heist/detail/spin_lock.hpp"
#include "heist/detail/wait_context.hpp"
#include "heist/partitioner.hpp"

namespace heist::detail {

// The oneTBB range concept: empty(), is_divisible(), and a splitting constructor.
template <class R>
concept splittable_range = std::copy_constructible<R> && requires(R& r, const R& cr) {
  { cr.empty() } -> std::convertible_to<bool>;
  { cr.is_divisible() } -> std::convertible_to<bool>;
  R(r, heist::split{});
};

template <class R>
concept sized_range = requires(const R& r) {
  { r.size() } -> std::convertible_to<std::size_t>;
};

template <class R>
struct is_blocked_range : std::false_type {};
template <class T>
struct is_blocked_range<heist::blocked_range<T>> : std::true_type {};

// [whole.begin() + lo, whole.begin() + hi) with whole's grainsize.
template <class T>
heist::blocked_range<T> subrange(const heist::blocked_range<T>& whole, std::size_t lo,
                                 std::size_t hi) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    const auto at = [&](std::size_t k) {
      return static_cast<T>(static_cast<U>(static_cast<U>(whole.begin()) + static_cast<U>(k)));
    };
    return heist::blocked_range<T>(at(lo), at(hi), whole.grainsize());
  } else {
    using D = std::iter_difference_t<T>;
    return heist::blocked_range<T>(whole.begin() + static_cast<D>(lo),
                                   whole.begin() + static_cast<D>(hi), whole.grainsize());
  }
}

inline std::uint64_t loop_clock() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Leaf size in iterations, adapted so that a leaf takes about k_target_ns: long enough that
// the clock reads and body calls cost nothing, short enough that a thread that becomes idle
// finds work to take within microseconds.
class leaf_sizer {
 public:
  static constexpr std::uint64_t k_target_ns = 16'000;

  // A task given a piece of another task's range starts from that task's leaf size.
  leaf_sizer(std::size_t grain, std::size_t start) noexcept
      : m_grain(grain), m_leaf(std::max(grain, start)) {}
  std::size_t leaf() const noexcept { return m_leaf; }
  void observed(std::size_t iterations, std::uint64_t ns) noexcept {
    if (iterations == 0) return;
    if (ns < k_target_ns / 2) {
      // Only a leaf of at least half the current size says something about bigger ones
      // (halving odd sizes makes pieces just under the leaf size, so not "full size").
      if (2 * iterations > m_leaf && m_leaf < (std::size_t{1} << 40)) m_leaf *= 2;
    } else if (ns > 2 * k_target_ns) {
      const double per_iteration = static_cast<double>(ns) / static_cast<double>(iterations);
      const auto fit = static_cast<std::size_t>(static_cast<double>(k_target_ns) / per_iteration);
      m_leaf = std::max(m_grain, std::min(m_leaf, fit));
    }
  }

 private:
  std::size_t m_grain;
  std::size_t m_leaf;
};

template <class R>
std::size_t grain_of(const R& r) noexcept {
  if constexpr (is_blocked_range<R>::value) {
    return r.grainsize();
  } else {
    return 1;
  }
}

// The pieces a loop task still has to run, as a stack of halves: the top is the leftmost
// (next to run, smallest), the bottom the rightmost (largest, the one to give away).
template <class R>
class range_pool {
 public:
  static constexpr std::size_t k_capacity = 64;

  explicit range_pool(const R& r) { push_top(R(r)); }
  range_pool(const range_pool&) = delete;
  range_pool& operator=(const range_pool&) = delete;
  ~range_pool() {
    while (m_size != 0)
      pop_top();
  }

  bool empty() const noexcept { return m_size == 0; }
  R& top() noexcept { return at(m_size - 1); }

  // Is there a piece worth a task of its own: more than one leaf of work?
  bool can_give(std::size_t leaf) noexcept {
    if (m_size == 0) return false;
    R& candidate = m_size > 1 ? at(0) : top();
    if (!candidate.is_divisible() && m_size == 1) return false;
    if constexpr (sized_range<R>) {
      const auto size = static_cast<std::size_t>(candidate.size());
      return m_size > 1 ? size > leaf : size > 2 * leaf;
    } else {
      return true;
    }
  }

  // Removes and returns the rightmost piece (splitting the only piece if need be).
  R give() {
    if (m_size == 1) return R(top(), heist::split{});
    R piece(std::move(at(0)));
    at(0).~R();
    ++m_bottom;
    --m_size;
    return piece;
  }

  // Splits the top until it has at most `leaf` iterations (sized ranges), keeping the left
  // half on top.
  void split_top_to(std::size_t leaf) {
    while (m_size < k_capacity && top().is_divisible()) {
      if constexpr (sized_range<R>) {
        if (static_cast<std::size_t>(top().size()) <= leaf) return;
      } else {
        if (m_size >= 8) return;  // unsized ranges: a fixed depth
      }
      R right(top(), heist::split{});  // top keeps the left half
      R left(std::move(top()));
      top() = std::move(right);
      push_top(std::move(left));
    }
  }

  R pop_top() {
    R r(std::move(top()));
    top().~R();
    --m_size;
    return r;
  }

 private:
  void push_top(R&& r) {
    if (m_bottom + m_size == k_capacity) compact();
    ::new (static_cast<void*>(&m_items[m_bottom + m_size])) R(std::move(r));
    ++m_size;
  }
  void compact() {
    for (std::size_t i = 0; i < m_size; ++i) {
      ::new (static_cast<void*>(&m_items[i])) R(std::move(at(i)));
      at(i).~R();
    }
    m_bottom = 0;
  }
  R& at(std::size_t i) noexcept {
    return *std::launder(reinterpret_cast<R*>(&m_items[m_bottom + i]));
  }

  struct alignas(R) storage {
    std::byte bytes[sizeof(R)];
  };
  storage m_items[k_capacity];
  std::size_t m_bottom = 0;  // index of the bottom piece
  std::size_t m_size = 0;
};

// Should a loop task give a piece of its range away now? A thread with a slot does whenever
// its deque is empty: the piece waits there for a thread that turns idle, which steals it at
// once instead of waiting for this task's next leaf boundary (a leaf of EPCC loop 2 takes
// 1.2 ms), and a piece nobody steals costs one spawn, popped back by this task later. A
// thread without a slot (its spawns go to the injection queue) gives only when another
// thread is idle that could take work of arena `a` (for a task arena, an idle worker of the
// executor counts too if the arena has a free slot for it).
inline bool loop_demand(arena& a) noexcept {
  const thread_context* c = t_context;
  if (c != nullptr && c->m_slot != nullptr && c->m_arena == &a) return c->m_slot->m_deque.empty();
  if (a.idle().snapshot() != 0) return true;  // somebody is searching or sleeping
  return a.strict() && a.has_free_slot() && a.exec().idle().snapshot() != 0;
}

// Participants of static and affinity loops: in the default arena, the executor's workers
// plus the calling thread when it is not one of them; in a task arena, one per slot.
inline std::size_t loop_participants(arena& a) noexcept {
  if (a.strict()) return a.num_slots();
  const thread_context* c = t_context;
  const bool caller_is_worker = c != nullptr && c->m_arena == &a && c->m_slot != nullptr &&
                                c->m_slot->m_index < a.first_leasable();
  return a.first_leasable() + (caller_is_worker ? 0 : 1);
}
inline std::size_t participant_index(arena& a, std::size_t participants) noexcept {
  const thread_context* c = t_context;
  if (c != nullptr && c->m_arena == &a && c->m_slot != nullptr) {
    const std::size_t i = c->m_slot->m_index;
    if (a.strict() && i < participants) return i;
    if (i < a.first_leasable() && i < participants) return i;
  }
  return participants - 1;  // the calling thread, or any other helper
}

// What every task of one loop shares; lives on the calling thread's stack for the loop.
struct loop_base {
  arena* m_arena;
  wait_context* m_ctx;  // the loop's group: its tasks, cancellation, first exception
  bool cancelled() const noexcept { return m_ctx->is_cancelled(); }
};

// The frame of one loop call. Owns the loop's group (bound to the caller's group, so that
// cancelling an enclosing group cancels the loop) and, for a thread outside the pool, a leased
// slot so that it takes part like a worker. Everything the loop's tasks refer to must live in
// the frame that owns the loop_scope, because finish() is where the tasks are waited for.
class loop_scope {
 public:
  explicit loop_scope(arena& a)
      : m_arena(a), m_thread(current_context()), m_lease(m_thread, a), m_ctx(m_thread.m_group) {
    m_arena.loop_started();
  }
  loop_scope(const loop_scope&) = delete;
  loop_scope& operator=(const loop_scope&) = delete;
  ~loop_scope() {
    // Only reached early if building the loop threw: still never leave tasks behind.
    if (!m_ctx.done()) {
      try {
        help_until(m_arena, m_ctx);
      } catch (...) {
      }
    }
    m_arena.loop_finished();
  }

  loop_base base() noexcept { return {&m_arena, &m_ctx}; }

  // Runs root() on this thread as a member of the loop's group (an exception cancels the
  // loop), then helps until every task of the loop is done; rethrows the first exception.
  template <class Root>
  void run(Root&& root) {
    run_inline_in_group(m_ctx, root);
    if (!m_ctx.done()) help_until(m_arena, m_ctx);
    m_ctx.reset();
    if (m_ctx.has_exception()) std::rethrow_exception(m_ctx.take_exception());
  }

 private:
  arena& m_arena;
  thread_context& m_thread;
  arena_lease m_lease;
  wait_context m_ctx;
};

// Spawns fn as a task of the loop's group. Loops give work away from an empty deque (see
// loop_demand), so the push is the seq_cst one that a thread falling asleep cannot miss.
template <class Fn>
void spawn_in(const loop_base& loop, wait_context& group, Fn&& fn) {
  spawn<group_job<std::decay_t<Fn>>>(*loop.m_arena, &group, std::forward<Fn>(fn));
}

// Runs `body(leaf)` and feeds the time it took to `sizer`.
template <class R, class F>
void timed_leaf(leaf_sizer& sizer, R& leaf, F&& body) {
  std::size_t n = 1;
  if constexpr (sized_range<R>) n = static_cast<std::size_t>(leaf.size());
  const std::uint64_t t0 = loop_clock();
  body(leaf);
  sizer.observed(n, loop_clock() - t0);
}

// ------------------------------------------------------------------------------------------
// parallel_for

template <class Body>
struct for_loop : loop_base {
  const Body* m_body;
};

template <class R, class Body>
void auto_for(const for_loop<Body>& loop, const R& range, std::size_t start_leaf) {
  range_pool<R> pool(range);
  leaf_sizer sizer(grain_of(range), start_leaf);
  while (!pool.empty()) {
    if (loop.cancelled()) return;
    if (pool.can_give(sizer.leaf()) && loop_demand(*loop.m_arena)) {
      spawn_in(loop, *loop.m_ctx,
               [&loop, piece = pool.give(), leaf = sizer.leaf()] { auto_for(loop, piece, leaf); });
      continue;
    }
    pool.split_top_to(sizer.leaf());
    R leaf = pool.pop_top();
    timed_leaf(sizer, leaf, [&](const R& r) { (*loop.m_body)(r); });
  }
}

template <class R, class Body>
void simple_for(const for_loop<Body>& loop, R range) {
  while (range.is_divisible()) {
    spawn_in(loop, *loop.m_ctx,
             [&loop, right = R(range, heist::split{})] { simple_for(loop, right); });
  }
  if (!loop.cancelled()) (*loop.m_body)(range);
}

// Cuts a blocked_range into `parts` contiguous blocks, as equal as possible.
template <class T>
heist::blocked_range<T> block_of(const heist::blocked_range<T>& whole, std::size_t parts,
                                 std::size_t k) {
  const std::size_t n = whole.size();
  return subrange(whole, n / parts * k + std::min(k, n % parts),
                  n / parts * (k + 1) + std::min(k + 1, n % parts));
}

template <class R, class Body>
void static_for(const for_loop<Body>& loop, const R& range) {
  static_assert(is_blocked_range<R>::value,
                "static_partitioner works on blocked_range (it cuts exact blocks)");
  const std::size_t parts =
      std::max<std::size_t>(1, std::min(loop_participants(*loop.m_arena), range.size()));
  for (std::size_t k = parts; k-- > 1;) {
    spawn_in(loop, *loop.m_ctx, [&loop, block = block_of(range, parts, k)] {
      if (!loop.cancelled()) (*loop.m_body)(block);
    });
  }
  (*loop.m_body)(block_of(range, parts, 0));
}

// ------------------------------------------------------------------------------------------
// affinity scheduling (seed note 002)

struct alignas(k_cache_line) affinity_share {
  spin_lock m_lock;
  std::size_t m_front = 0;  // next iteration of the owner (guarded by m_lock)
  std::size_t m_back = 0;   // one past the last iteration left (guarded by m_lock)
  // back - front, readable without the lock: thieves look for the most loaded share.
  std::atomic<std::size_t> m_remaining{0};
};

}  // namespace heist::detail

namespace heist::detail {

struct affinity_state {
  std::size_t m_participants = 0;
  std::size_t m_size = 0;
  std::unique_ptr<affinity_share[]> m_shares;
  std::atomic<std::size_t> m_steals{0};

  // Equal contiguous shares of [0, n): the same layout again for the same n and P.
  void layout(std::size_t participants, std::size_t n) {
    if (participants != m_participants || !m_shares) {
      m_shares = std::make_unique<affinity_share[]>(participants);
      m_participants = participants;
    }
    m_size = n;
    for (std::size_t p = 0; p < participants; ++p) {
      affinity_share& s = m_shares[p];
      s.m_front = n / participants * p + std::min(p, n % participants);
      s.m_back = n / participants * (p + 1) + std::min(p + 1, n % participants);
      s.m_remaining.store(s.m_back - s.m_front, std::memory_order_relaxed);
    }
    m_steals.store(0, std::memory_order_relaxed);
  }

  // Takes up to `want` iterations from the front of share `p`; false when it is empty.
  bool take_front(std::size_t p, std::size_t want, std::size_t& lo, std::size_t& hi) noexcept {
    affinity_share& s = m_shares[p];
    std::lock_guard<spin_lock> lock(s.m_lock);
    if (s.m_front == s.m_back) return false;
    lo = s.m_front;
    hi = std::min(s.m_back, s.m_front + want);
    s.m_front = hi;
    s.m_remaining.store(s.m_back - s.m_front, std::memory_order_relaxed);
    return true;
  }

  // Takes up to `want` iterations from the back of the share with the most left; false
  // when every share is empty.
  bool steal_back(std::size_t want, std::size_t& lo, std::size_t& hi) noexcept {
    for (;;) {
      std::size_t victim = m_participants, most = 0;
      for (std::size_t p = 0; p < m_participants; ++p) {
        // relaxed: a hint to pick a victim; the lock below decides.
        const std::size_t left = m_shares[p].m_remaining.load(std::memory_order_relaxed);
        if (left > most) {
          most = left;
          victim = p;
        }
      }
      if (victim == m_participants) return false;
      affinity_share& s = m_shares[victim];
      // Note 002: a queue being worked on at this instant is skipped, not waited for.
      if (!s.m_lock.try_lock()) continue;
      std::lock_guard<spin_lock> lock(s.m_lock, std::adopt_lock);
      if (s.m_front == s.m_back) continue;
      hi = s.m_back;
      lo = s.m_back - std::min(want, s.m_back - s.m_front);
      s.m_back = lo;
      s.m_remaining.store(s.m_back - s.m_front, std::memory_order_relaxed);
      m_steals.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
};

struct affinity_access {
  static affinity_state& state(heist::affinity_partitioner& p) {
    if (!p.m_state) p.m_state = std::make_unique<affinity_state>();
    return *p.m_state;
  }
};

// One participant of an affinity loop: its own share front to back, then the back of the
// most loaded share. `run(lo, hi)` runs iterations [lo, hi).
template <class Run>
void affinity_participate(const loop_base& loop, affinity_state& st, std::size_t grain, Run&& run) {
  const std::size_t me = participant_index(*loop.m_arena, st.m_participants);
  leaf_sizer sizer(grain, grain);
  std::size_t lo = 0, hi = 0;
  while (!loop.cancelled() && st.take_front(me, sizer.leaf(), lo, hi)) {
    const std::uint64_t t0 = loop_clock();
    run(lo, hi);
    sizer.observed(hi - lo, loop_clock() - t0);
  }
  while (!loop.cancelled() && st.steal_back(sizer.leaf(), lo, hi)) {
    const std::uint64_t t0 = loop_clock();
    run(lo, hi);
    sizer.observed(hi - lo, loop_clock() - t0);
  }
}

// Starts every participant: P - 1 tasks, and the calling thread itself.
template <class Run>
void affinity_start(const loop_base& loop, affinity_state& st, std::size_t grain, Run& run) {
  for (std::size_t k = 1; k < st.m_participants; ++k) {
    spawn_in(loop, *loop.m_ctx,
             [&loop, &st, grain, &run] { affinity_participate(loop, st, grain, run); });
  }
  affinity_participate(loop, st, grain, run);
}

template <class R, class Body, class Partitioner>
void run_for(arena& a, const R& range, const Body& body, Partitioner& p) {
  static_assert(std::is_invocable_v<const Body&, const R&>,
                "parallel_for: the body must be callable as body(const Range&) const");
  if (range.empty()) return;
  using P = std::remove_cvref_t<Partitioner>;
  loop_scope scope(a);
  const for_loop<Body> loop{scope.base(), &body};
  if constexpr (std::is_same_v<P, heist::simple_partitioner>) {
    scope.run([&] { simple_for(loop, range); });
  } else if constexpr (std::is_same_v<P, heist::static_partitioner>) {
    scope.run([&] { static_for(loop, range); });
  } else if constexpr (std::is_same_v<P, heist::affinity_partitioner>) {
    static_assert(is_blocked_range<R>::value,
                  "affinity_partitioner works on blocked_range (its shares are index ranges)");
    affinity_state& st = affinity_access::state(p);
    st.layout(loop_participants(a), range.size());
    auto run = [&](std::size_t lo, std::size_t hi) { body(subrange(range, lo, hi)); };
    scope.run([&] { affinity_start(loop, st, range.grainsize(), run); });
  } else {
    static_assert(std::is_same_v<P, heist::auto_partitioner>, "unknown partitioner");
    scope.run([&] { auto_for(loop, range, grain_of(range)); });
  }
}

// ------------------------------------------------------------------------------------------
// parallel_reduce

template <class T, class Body, class Join>
struct reduce_loop : loop_base {
  const T* m_identity;
  const Body* m_body;
  const Join* m_join;
  T leaf(const auto& r, T running) const { return (*m_body)(r, std::move(running)); }
  T join(T left, T right) const { return (*m_join)(std::move(left), std::move(right)); }
};

// Waits for the pieces a task gave away (their group `kids`), rethrowing their exception.
inline void join_children(const loop_base& loop, wait_context& kids) {
  if (!kids.done()) help_until(*loop.m_arena, kids);
  kids.reset();
  if (kids.has_exception()) std::rethrow_exception(kids.take_exception());
}

template <class R, class T, class Body, class Join>
T auto_reduce(const reduce_loop<T, Body, Join>& loop, const R& range, std::size_t start_leaf) {
  static constexpr std::size_t k_max_children = 64;
  T acc = *loop.m_identity;
  std::optional<T> results[k_max_children];
  std::size_t children = 0;
  wait_context kids(current_group());
  // Children refer to `results`: whatever happens here, wait for them before leaving. A
  // leaf's exception goes to `kids` (cancelling the children) and is rethrown by the join.
  try {
    range_pool<R> pool(range);
    leaf_sizer sizer(grain_of(range), start_leaf);
    while (!pool.empty() && !loop.cancelled()) {
      if (children < k_max_children && pool.can_give(sizer.leaf()) && loop_demand(*loop.m_arena)) {
        std::optional<T>* out = &results[children++];
        spawn_in(loop, kids, [&loop, out, piece = pool.give(), leaf = sizer.leaf()] {
          out->emplace(auto_reduce(loop, piece, leaf));
        });
        continue;
      }
      pool.split_top_to(sizer.leaf());
      R leaf = pool.pop_top();
      timed_leaf(sizer, leaf, [&](const R& r) { acc = loop.leaf(r, std::move(acc)); });
    }
  } catch (...) {
    kids.capture_exception(std::current_exception());
  }
  join_children(loop, kids);
  // Each piece given away lies left of the previous ones: join in reverse order of giving.
  for (std::size_t k = children; k-- > 0;) {
    if (!results[k]) return acc;  // skipped by a cancellation: the result is unspecified
    acc = loop.join(std::move(acc), std::move(*results[k]));
  }
  return acc;
}

// The fixed split tree (simple partitioner, deterministic reduce): split while divisible,
// right halves as tasks, join(left, right) at every node.
template <class R, class T, class Body, class Join>
T tree_reduce(const reduce_loop<T, Body, Join>& loop, R range) {
  if (loop.cancelled()) return *loop.m_identity;
  if (!range.is_divisible()) return loop.leaf(range, *loop.m_identity);
  R right(range, heist::split{});
  std::optional<T> right_result;
  wait_context kids(current_group());
  spawn_in(loop, kids,
           [&loop, &right, &right_result] { right_result.emplace(tree_reduce(loop, right)); });
  // The child refers to `right` and `right_result`: wait for it even if the left side throws.
  std::optional<T> left;
  try {
    left.emplace(tree_reduce(loop, std::move(range)));
  } catch (...) {
    kids.capture_exception(std::current_exception());
  }
  join_children(loop, kids);
  if (!right_result) return std::move(*left);  // the right side was cancelled
  return loop.join(std::move(*left), std::move(*right_result));
}

// Static and affinity reductions: each block or chunk is reduced from the identity and
// recorded with its offset; the results are joined in offset order at the end.
template <class T>
class offset_results {
 public:
  void add(std::size_t offset, T value) {
    std::lock_guard<spin_lock> lock(m_lock);
    m_items.emplace_back(offset, std::move(value));
  }
  template <class Join>
  T fold(T identity, const Join& join) {
    std::sort(m_items.begin(), m_items.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    T acc = std::move(identity);
    for (auto& item : m_items)
      acc = join(std::move(acc), std::move(item.second));
    return acc;
  }

 private:
  spin_lock m_lock;
  std::vector<std::pair<std::size_t, T>> m_items;
};

template <class R, class T, class Body, class Join, class Partitioner>
T run_reduce(arena& a, const R& range, const T& identity, const Body& body, const Join& join,
             Partitioner& p) {
  static_assert(std::is_invocable_r_v<T, const Body&, const R&, T>,
                "parallel_reduce: the body must be callable as T body(const Range&, T) const");
  static_assert(std::is_invocable_r_v<T, const Join&, T, T>,
                "parallel_reduce: join must be callable as T join(T, T) const");
  if (range.empty()) return identity;
  using P = std::remove_cvref_t<Partitioner>;
  std::optional<T> result;
  loop_scope scope(a);
  const reduce_loop<T, Body, Join> loop{scope.base(), &identity, &body, &join};
  if constexpr (std::is_same_v<P, heist::simple_partitioner>) {
    scope.run([&] { result.emplace(tree_reduce(loop, range)); });
  } else if constexpr (std::is_same_v<P, heist::static_partitioner> ||
                       std::is_same_v<P, heist::affinity_partitioner>) {
    static_assert(is_blocked_range<R>::value,
                  "static and affinity partitioners work on blocked_range");
    offset_results<T> parts;
    auto run = [&](std::size_t lo, std::size_t hi) {
      parts.add(lo, loop.leaf(subrange(range, lo, hi), identity));
    };
    if constexpr (std::is_same_v<P, heist::static_partitioner>) {
      const std::size_t n = std::max<std::size_t>(1, std::min(loop_participants(a), range.size()));
      auto block = [&](std::size_t k) {
        const std::size_t size = range.size();
        run(size / n * k + std::min(k, size % n), size / n * (k + 1) + std::min(k + 1, size % n));
      };
      scope.run([&] {
        for (std::size_t k = n; k-- > 1;) {
          spawn_in(loop, *loop.m_ctx, [&loop, &block, k] {
            if (!loop.cancelled()) block(k);
          });
        }
        block(0);
      });
    } else {
      affinity_state& st = affinity_access::state(p);
      st.layout(loop_participants(a), range.size());
      scope.run([&] { affinity_start(loop, st, range.grainsize(), run); });
    }
    return parts.fold(identity, join);
  } else {
    static_assert(std::is_same_v<P, heist::auto_partitioner>, "unknown partitioner");
    scope.run([&] { result.emplace(auto_reduce(loop, range, grain_of(range))); });
  }
  return std::move(*result);
}

template <class R, class T, class Body, class Join>
T run_deterministic_reduce(arena& a, const R& range, const T& identity, const Body& body,
                           const Join& join) {
  heist::simple_partitioner p;
  return run_reduce(a, range, identity, body, join, p);
}

}  // namespace heist::detail
