// parallel_scan: a parallel prefix computation with oneTBB's two-pass contract.
//   scan: T scan(const Range& piece, T running, bool is_final)  returns running folded over
//         the piece; writes its outputs only when is_final.
//   combine: T combine(T left, T right), associative.
// The result is the same as one serial call scan(r, identity, true) for an associative combine,
// every output is written once (by the one final pass over its piece), and the call returns
// the total.
//
// How: the range is cut into pieces (about eight per participating thread, never below the
// range's divisibility). The calling thread walks the pieces from the front with final passes,
// carrying the running value, which needs no second pass. The other threads take pieces from
// the back and pre-scan them (is_final false, from identity) for their totals. When the walk
// meets the pre-scanned pieces, their starting values follow from the running value and the
// totals (one combine each, in order) and their final passes run in parallel. On one thread
// (or when no other thread comes) this is one serial pass; on two threads of equal speed the
// walk covers about half the range while the other half is pre-scanned, and the final passes
// of that half take a quarter each: 0.75 of the serial time. Each element is read once or
// twice and written once.
// An exception from scan or combine cancels the rest and is rethrown by the call.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "heist/blocked_range.hpp"
#include "heist/detail/loops/loop_core.hpp"
#include "heist/executor.hpp"
#include "heist/task_arena.hpp"

namespace heist {

namespace detail {

// r cut into at most about `target` pieces, in order, each piece split only while divisible.
template <class Range>
std::vector<Range> cut_in_order(const Range& r, std::size_t target) {
  std::vector<Range> pieces{r};
  std::vector<Range> next;
  while (pieces.size() < target) {
    bool split_any = false;
    next.clear();
    next.reserve(pieces.size() * 2);
    for (Range& p : pieces) {
      if (p.is_divisible()) {
        Range right(p, heist::split{});
        next.push_back(p);
        next.push_back(std::move(right));
        split_any = true;
      } else {
        next.push_back(p);
      }
    }
    pieces.swap(next);
    if (!split_any) break;
  }
  return pieces;
}

// Which pieces the walk (front) and the pre-scans (back) have claimed: [0, front) walked or
// being walked, [back, count) pre-scanned or being pre-scanned, front <= back.
class scan_claims {
 public:
  explicit scan_claims(std::size_t count) : m_back(count) {}
  // The next piece for the walk, or false once the pre-scans have taken the rest.
  bool claim_front(std::size_t& i) {
    std::lock_guard<std::mutex> hold(m_lock);
    if (m_front == m_back) return false;
    i = m_front++;
    return true;
  }
  bool claim_back(std::size_t& i) {
    std::lock_guard<std::mutex> hold(m_lock);
    if (m_front == m_back) return false;
    i = --m_back;
    return true;
  }
  // After both sides stopped: the first pre-scanned piece.
  std::size_t meeting_point() {
    std::lock_guard<std::mutex> hold(m_lock);
    return m_back;
  }

 private:
  std::mutex m_lock;
  std::size_t m_front = 0;
  std::size_t m_back;
};

template <class Range, class T, class Scan, class Combine>
T scan_in(arena& a, const Range& r, const T& identity, const Scan& scan, const Combine& combine) {
  static_assert(std::is_invocable_r_v<T, const Scan&, const Range&, T, bool>,
                "parallel_scan: scan must be callable as T scan(const Range&, T, bool is_final)");
  static_assert(std::is_invocable_r_v<T, const Combine&, T, T>,
                "parallel_scan: combine must be callable as T combine(T, T)");
  if (r.empty()) return identity;
  const std::size_t participants = loop_participants(a);
  if (participants <= 1 || !r.is_divisible()) return scan(r, identity, true);

  const std::vector<Range> pieces = cut_in_order(r, 8 * participants);
  const std::size_t count = pieces.size();
  std::vector<std::optional<T>> sums(count);  // pre-scan totals; running values after the meet
  scan_claims claims(count);
  std::optional<T> running;  // the walk's value after its last piece
  std::size_t walked = 0;    // pieces the walk finished

  {
    loop_scope scope(a, "heist::parallel_scan");
    const loop_base loop = scope.base();
    auto prescan = [&] {
      std::size_t i = 0;
      while (!loop.cancelled() && claims.claim_back(i))
        sums[i].emplace(scan(pieces[i], identity, false));
    };
    scope.run([&] {
      for (std::size_t k = 1; k < participants; ++k)
        give_piece(loop, *loop.m_ctx, prescan);
      T value = identity;
      std::size_t i = 0;
      while (!loop.cancelled() && claims.claim_front(i)) {
        value = scan(pieces[i], std::move(value), true);
        ++walked;
      }
      running.emplace(std::move(value));
    });
  }

  const std::size_t meet = claims.meeting_point();
  // An enclosing group cancelled the scan (an exception would have been rethrown above): its
  // result is never used, and some pieces were not scanned.
  if (walked != meet) return identity;
  for (std::size_t i = meet; i < count; ++i) {
    if (!sums[i]) return identity;
  }
  if (meet == count) return std::move(*running);
  // The pre-scanned pieces' starting values, in order; then their final passes, in parallel.
  T start = std::move(*running);
  for (std::size_t i = meet; i < count; ++i) {
    T next = combine(start, std::move(*sums[i]));
    sums[i].emplace(std::move(start));
    start = std::move(next);
  }
  std::optional<T> last_total;
  {
    loop_scope scope(a, "heist::parallel_scan");
    const loop_base loop = scope.base();
    scope.run([&] {
      for (std::size_t i = meet + 1; i < count; ++i) {
        spawn_in(loop, *loop.m_ctx, [&, i] {
          T total = scan(pieces[i], std::move(*sums[i]), true);
          if (i == count - 1) last_total.emplace(std::move(total));
        });
      }
      T total = scan(pieces[meet], std::move(*sums[meet]), true);
      if (meet == count - 1) last_total.emplace(std::move(total));
    });
  }
  if (!last_total) return identity;  // cancelled by an enclosing group, as above
  return std::move(*last_total);
}

}  // namespace detail

// A parallel inclusive scan of r; returns the total (identity for an empty range).
template <detail::splittable_range Range, class T, class Scan, class Combine>
T parallel_scan(const Range& r, T identity, Scan&& scan, Combine&& combine) {
  return detail::scan_in(detail::current_arena(), r, identity, scan, combine);
}
template <detail::splittable_range Range, class T, class Scan, class Combine>
T parallel_scan(executor& ex, const Range& r, T identity, Scan&& scan, Combine&& combine) {
  return detail::scan_in(detail::default_arena_of(ex), r, identity, scan, combine);
}
// Inside task arena `ta` (as if called from ta.execute).
template <detail::splittable_range Range, class T, class Scan, class Combine>
T parallel_scan(task_arena& ta, const Range& r, T identity, Scan&& scan, Combine&& combine) {
  return ta.execute(
      [&] { return detail::scan_in(detail::arena_of(ta), r, identity, scan, combine); });
}

}  // namespace heist
