// loop_core: what every partitioner of parallel_for / parallel_reduce shares (loop.hpp has
// the overview): the range concept, the range pool of lazy binary splitting, leaf sizing by
// time, the demand signal, a loop's scope (its group, its arena lease) and the shapes of a
// for loop and a reduction.
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
#include "heist/detail/core/arena_lease.hpp"
#include "heist/detail/core/arena_record.hpp"
#include "heist/detail/core/executor_seam.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/platform/spin_lock.hpp"
#include "heist/detail/wait/wait_context.hpp"
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
//
// One clock read per leaf: the sizer's clock starts when it is made, and each leaf is timed
// from the end of the one before (leaf_done). What runs between two leaves (a split, a
// spawn, a look at the deque, taking a chunk) is tens of nanoseconds against the 8 and 32 us
// the sizer compares with, while a second read per leaf cost 25-46 ns (steady_clock on the
// test VM), about 1% of EPCC loop 1 with its 300 leaves per 1.2 ms call.
//
// How a leaf that ran fast grows the next (observed): `fast` by the largest power of two, 2 to
// 64, that keeps the next leaf under half the target, so that a loop of tiny bodies whose first
// leaf is one grain reaches its size in a few leaves (auto loops); `doubling` by two. An affinity
// participant doubles: it takes its leaves from the front of its own share without the cap its
// steals have, and a leaf grown 64-fold over cheap iterations swallows the expensive ones that
// follow in one piece. On EPCC loop 2 (its heavy rows among nearly free ones) that left one
// participant with several heavy rows at the end while the other had run out: affinity / static
// 0.642-0.650 at two threads with fast growth, 0.618-0.624 doubling, where a perfect split of the
// rows is 0.618 (BENCHMARKS.md).
enum class leaf_growth : std::uint8_t { fast, doubling };

class leaf_sizer {
 public:
  static constexpr std::uint64_t k_target_ns = 16'000;

  // A task given a piece of another task's range starts from that task's leaf size and
  // knows whether its leaves were long.
  leaf_sizer(std::size_t grain, std::size_t start, bool long_leaves = false,
             leaf_growth growth = leaf_growth::fast) noexcept
      : m_grain(grain),
        m_leaf(std::max(grain, start)),
        m_mark(loop_clock()),
        m_long(long_leaves),
        m_max_factor(growth == leaf_growth::fast ? 64 : 2) {}
  std::size_t leaf() const noexcept { return m_leaf; }
  // Did the last leaf take at least a sixteenth of the target, 1 us, about what a piece
  // given and stolen for nothing costs (leaves of a sized loop take 8-32 us; a loop whose
  // whole range runs in a few microseconds has shorter ones)? loop_demand keeps a piece
  // ready for the next idle thread only then: with shorter leaves the next boundary is
  // nearer than that.
  bool long_leaves() const noexcept { return m_long; }
  // Has a leaf been timed yet? Until then nobody knows that leaves are short.
  bool timed() const noexcept { return m_timed; }
  bool may_be_long() const noexcept { return m_long || !m_timed; }

  // A leaf of `iterations` has just run: time it since the previous mark.
  void leaf_done(std::size_t iterations) noexcept {
    const std::uint64_t now = loop_clock();
    observed(iterations, now - m_mark);
    m_mark = now;
  }
  void observed(std::size_t iterations, std::uint64_t ns) noexcept {
    if (iterations == 0) return;
    m_timed = true;
    m_long = ns >= k_target_ns / 16;
    if (ns < k_target_ns / 2) {
      // Only a leaf of at least half the current size says something about bigger ones
      // (halving odd sizes makes pieces just under the leaf size, so not "full size").
      // Grows by the largest power of two that keeps the next leaf under half the target
      // (at least 2, at most m_max_factor: leaf_growth).
      if (2 * iterations > m_leaf && m_leaf < (std::size_t{1} << 40)) {
        std::size_t factor = 2;
        while (factor < m_max_factor && (2 * factor) * ns < k_target_ns / 2)
          factor *= 2;
        m_leaf *= factor;
      }
    } else if (ns > 2 * k_target_ns) {
      const double per_iteration = static_cast<double>(ns) / static_cast<double>(iterations);
      const auto fit = static_cast<std::size_t>(static_cast<double>(k_target_ns) / per_iteration);
      m_leaf = std::max(m_grain, std::min(m_leaf, fit));
    }
  }

 private:
  std::size_t m_grain;
  std::size_t m_leaf;
  std::uint64_t m_mark;  // loop_clock() at the end of the last leaf (or at construction)
  bool m_long;
  bool m_timed = false;
  std::size_t m_max_factor;  // 64 or 2 (leaf_growth)
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

  // Is there a piece worth a task of its own: more than one leaf of work? A lone piece is
  // halved for it only if it holds more than two leaves, unless leaves may be long (they are,
  // or none has been timed yet): then two leaves are split too, or the last two long leaves of
  // a range run one after the other while a thread is idle (EPCC loop 2 at 16 threads: pairs
  // of 1.2 ms rows at the end of a call; a loop over two big items ran both on one thread).
  bool can_give(std::size_t leaf, bool long_leaves = false) noexcept {
    if (m_size == 0) return false;
    R& candidate = m_size > 1 ? at(0) : top();
    if (!candidate.is_divisible() && m_size == 1) return false;
    if constexpr (sized_range<R>) {
      const auto size = static_cast<std::size_t>(candidate.size());
      return m_size > 1 || long_leaves ? size > leaf : size > 2 * leaf;
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

// Should a loop task give a piece of its range away now? A thread with a slot does while its
// deque holds fewer pieces than the arena has idle threads (searching or sleeping), and, while
// its leaves are long (`long_leaves`: leaf_sizer), always when its deque is empty: each piece
// waits there for a thread that turns idle, which steals it at once instead of waiting for
// this task's next leaf boundary (a leaf of EPCC loop 2 takes 1.2 ms), and a piece nobody
// steals costs one spawn, popped back by this task later. With short leaves the next boundary
// comes within microseconds, and a piece kept ready only makes busy threads trade halves of a
// small range (a 256-iteration loop of 2 ns bodies made 7 tasks and 5.5 steals per call on
// two workers). One piece per idle thread, not one in all: when a leaf is long and many
// threads are idle (the start of each repetition of EPCC loop 2 on 16 cores, where they parked
// while the previous one ended), the task exposes its range's halves before its first leaf
// instead of one per leaf boundary, so the heavy rows reach every thread in one round of steals
// rather than spreading a hop per leaf. Each give halves what the task keeps, so it gives at most
// log2(range / leaf) pieces at once. With one other thread (two workers) this is the rule
// "give when the deque is empty". A thread without a slot (its spawns go to the injection
// queue) gives only when another thread is idle that could take work of arena `a` (for a
// task arena, an idle worker of the executor counts too if the arena has a free slot).
// The idle word is read relaxed: a hint; a stale count costs a spawn or a leaf's delay.
inline bool loop_demand(arena& a, bool long_leaves) noexcept {
  const thread_context* c = t_context;
  const std::uint64_t idle = a.idle().snapshot();
  if (c != nullptr && holds_slot_of(*c, a)) {
    const std::size_t wanted =
        std::max<std::size_t>(long_leaves ? 1 : 0, std::size_t{idle_state::searching(idle)} +
                                                       std::size_t{idle_state::sleeping(idle)});
    return c->current_slot()->m_deque.size() < wanted;
  }
  if (idle != 0) return true;  // somebody is searching or sleeping
  return a.strict() && a.has_free_slot() && default_idle_snapshot(a.exec()) != 0;
}

// Participants of static and affinity loops: in the default arena, the executor's workers
// plus the calling thread when it is not one of them; in a task arena, one per slot.
inline std::size_t loop_participants(arena& a) noexcept {
  if (a.strict()) return a.num_slots();
  const thread_context* c = t_context;
  const bool caller_is_worker =
      c != nullptr && holds_slot_of(*c, a) && c->current_slot()->m_index < a.first_leasable();
  return a.first_leasable() + (caller_is_worker ? 0 : 1);
}
inline std::size_t participant_index(arena& a, std::size_t participants) noexcept {
  const thread_context* c = t_context;
  if (c != nullptr && holds_slot_of(*c, a)) {
    const std::size_t i = c->current_slot()->m_index;
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
  // Before the lease: a refused loop takes no slot.
  static arena& refused_if_closed(arena& a, const char* where) {
    refuse_if_closed(a.exec(), where);
    return a;
  }

 public:
  // `where`: the algorithm's name, for the refusal after shutdown (refuse_if_closed).
  loop_scope(arena& a, const char* where)
      : m_arena(refused_if_closed(a, where)),
        m_thread(current_context()),
        m_lease(m_thread, a),
        m_ctx(m_thread.running_group(), 0, join_counting::owner) {
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
    if (runs_work_of(m_thread, m_arena)) {
      run_inline_in_group(m_thread, m_ctx, root);
    } else {
      // No slot, and the arena counts its callers (arena::slotless_threads_wait): the root
      // runs as a task of the loop's group, on a thread of the pool; this one only waits.
      using root_t = std::remove_reference_t<Root>;
      spawn<group_job<call_by_reference<root_t>>>(m_arena, &m_ctx,
                                                  call_by_reference<root_t>{std::addressof(root)});
    }
    if (!m_ctx.done()) help_until_pending(m_arena, m_ctx);
    if (analysing()) analysis_joined(&m_ctx);
    m_ctx.reset();
    if (m_ctx.has_exception()) std::rethrow_exception(m_ctx.take_exception());
  }

 private:
  arena& m_arena;
  thread_context& m_thread;
  arena_lease m_lease;
  alignas(64) wait_context m_ctx;
};

// Spawns fn as a task of the loop's group.
template <class Fn>
void spawn_in(const loop_base& loop, wait_context& group, Fn&& fn) {
  spawn<group_job<std::decay_t<Fn>>>(*loop.m_arena, &group, std::forward<Fn>(fn));
}

// An auto loop's give (loop_demand): spawn_in, then a full publication, P2-P4 of the sleep
// protocol as for a task submitted from outside (idle_state.hpp). A give may go onto a
// non-empty deque (one piece per idle thread), and the spawn path fences only a push into an
// empty one: enough for the protocol's claim (the giver is busy and pops the piece itself),
// not for the loop's, since a thief that empties the deque between the giver's read of its
// top and the push (one on its first look owes no L2) would leave this piece behind the
// giver's next leaf while other threads sleep. With the fence every piece is seen by a
// sleeper's re-check (S3) or sees the sleeper (P3). A give comes at most a few times per
// leaf, so the fence costs nothing measurable; the other partitioners' spawns do not fence.
template <class Fn>
void give_piece(const loop_base& loop, wait_context& group, Fn&& fn) {
  spawn_in(loop, group, std::forward<Fn>(fn));
  loop.m_arena->idle().notify_after_inject();
}

// Runs `body(leaf)` and feeds the time it took to `sizer`.
template <class R, class F>
void timed_leaf(leaf_sizer& sizer, R& leaf, F&& body) {
  std::size_t n = 1;
  if constexpr (sized_range<R>) n = static_cast<std::size_t>(leaf.size());
  body(leaf);
  sizer.leaf_done(n);
}

// --- the two loop shapes -----------------------------------------------------------------
template <class Body>
struct for_loop : loop_base {
  const Body* m_body;
};

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
  if (!kids.done()) help_until_pending(*loop.m_arena, kids);
  if (analysing()) analysis_joined(&kids);
  kids.reset();
  if (kids.has_exception()) std::rethrow_exception(kids.take_exception());
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

}  // namespace heist::detail
