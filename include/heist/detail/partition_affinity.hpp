// The affinity partitioner (seed note 002): per-participant shares in chunk queues, replayed
// when the same partitioner runs a loop of the same size again; own chunks front to back,
// then chunks from the back of the most loaded share.
#pragma once

#include "heist/detail/loop_core.hpp"

namespace heist::detail {

struct alignas(k_cache_line) affinity_share {
  spin_lock m_lock;
  std::size_t m_front = 0;  // next iteration of the owner (guarded by m_lock)
  std::size_t m_back = 0;   // one past the last iteration left (guarded by m_lock)
  // back - front, readable without the lock: thieves look for the most loaded share.
  std::atomic<std::size_t> m_remaining{0};
};

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

  // Takes up to `want` iterations, and at most half of what is left (rounded up), from the
  // back of the share with the most left; false when every share is empty. The cap matters
  // on imbalanced loops: a thief's leaf size was learnt on the cheap iterations of its own
  // share, and taking a whole leaf of that size from the expensive end of another share
  // (EPCC loop 2: 32 rows where one row is 1.2 ms) would leave the victim idle while the
  // thief works through most of what was left. Halving keeps the two within one leaf.
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
      const std::size_t left = s.m_back - s.m_front;
      hi = s.m_back;
      lo = s.m_back - std::min(want, (left + 1) / 2);
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
  leaf_sizer sizer(grain, grain, false, leaf_growth::doubling);  // why: leaf_growth
  std::size_t lo = 0, hi = 0;
  while (!loop.cancelled() && st.take_front(me, sizer.leaf(), lo, hi)) {
    run(lo, hi);
    sizer.leaf_done(hi - lo);
  }
  while (!loop.cancelled() && st.steal_back(sizer.leaf(), lo, hi)) {
    run(lo, hi);
    sizer.leaf_done(hi - lo);
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

}  // namespace heist::detail
