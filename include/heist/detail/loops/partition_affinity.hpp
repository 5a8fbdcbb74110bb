// The affinity partitioner: per-participant shares in chunk queues, replayed
// when the same partitioner runs a loop of the same size again; own chunks front to back,
// then halves of the most loaded share moved into its own (work stealing between shares).
#pragma once

#include "heist/detail/config.hpp"
#include "heist/detail/loops/loop_core.hpp"

namespace heist::detail {

struct alignas(k_cache_line) affinity_share {
  spin_lock m_lock;
  std::size_t m_front = 0;  // next iteration of the owner (guarded by m_lock)
  std::size_t m_back = 0;   // one past the last iteration left (guarded by m_lock)
  // back - front, readable without the lock: thieves look for the most loaded share. Every
  // access is relaxed and pairs with nothing: it is stored under m_lock and read only as a
  // hint to pick a victim, whose lock (acquire/release) then orders the indices themselves.
  std::atomic<std::size_t> m_remaining{0};
};

struct affinity_state {
  std::size_t m_participants = 0;
  std::size_t m_size = 0;
  std::unique_ptr<affinity_share[]> m_shares;
  // Halves moved during the last loop. Relaxed everywhere: layout() resets it before the
  // loop's tasks are spawned (the spawn publishes it), thieves only add, and last_steals()
  // reads it after the loop's join, whose release/acquire orders every add before the read.
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
      // relaxed (this and every store of m_remaining): a hint for thieves choosing a victim,
      // kept under the share's lock; the lock decides what is taken.
      s.m_remaining.store(s.m_back - s.m_front, std::memory_order_relaxed);
    }
    // relaxed: a statistic, read after the loop (last_steals).
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
    s.m_remaining.store(s.m_back - s.m_front, std::memory_order_relaxed);  // a hint (layout)
    return true;
  }

  // Work stealing between shares: moves the back half (rounded up) of the share with the most
  // left into share `me`, which its owner has run out, so that the stolen iterations stay
  // stealable: on an imbalanced loop a thief that ran a stolen chunk whole held every
  // expensive iteration in it while the others went idle (EPCC loop 2 emulated on 16 threads:
  // a thief took rows 23-45 of share 0, eleven 1.2 ms rows, and the loop took 16.5 rows' time
  // where a 5-row split exists). The thief then runs its new share front to back in leaves
  // sized afresh, and other thieves take halves of its back. Returns `stolen` when the half is
  // in share `me`; `unshared` when share `me` was not empty (another thread with the same
  // participant index, a helper, filled it first): the caller runs [lo, hi) itself; and
  // `none` when every other share is empty.
  enum class steal_result { stolen, unshared, none };
  steal_result steal_into(std::size_t me, std::size_t& lo, std::size_t& hi) noexcept {
    if (!steal_half(me, lo, hi)) return steal_result::none;
    // Other thieves see neither share holding [lo, hi) here and may leave the loop: the
    // iterations are this thread's to run, and the loop's group waits for this task.
    HEIST_PERTURB_POINT(affinity_half_taken);
    affinity_share& mine = m_shares[me];
    const std::lock_guard<spin_lock> lock(mine.m_lock);
    if (mine.m_front != mine.m_back) return steal_result::unshared;
    mine.m_front = lo;
    mine.m_back = hi;
    mine.m_remaining.store(hi - lo, std::memory_order_relaxed);  // a hint (layout)
    return steal_result::stolen;
  }

 private:
  // Takes the back half (rounded up) of the share other than `me` with the most left.
  bool steal_half(std::size_t me, std::size_t& lo, std::size_t& hi) noexcept {
    for (;;) {
      std::size_t victim = m_participants, most = 0;
      for (std::size_t p = 0; p < m_participants; ++p) {
        // relaxed: a hint to pick a victim; the lock below decides.
        const std::size_t left = m_shares[p].m_remaining.load(std::memory_order_relaxed);
        if (p != me && left > most) {
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
      lo = s.m_back - (left + 1) / 2;
      s.m_back = lo;
      s.m_remaining.store(s.m_back - s.m_front, std::memory_order_relaxed);  // a hint (layout)
      m_steals.fetch_add(1, std::memory_order_relaxed);                      // a statistic
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

// One participant of an affinity loop: its own share front to back, then halves stolen from
// the most loaded share into its own, each front to back too. `run(lo, hi)` runs [lo, hi).
template <class Run>
void affinity_participate(const loop_base& loop, affinity_state& st, std::size_t grain, Run&& run) {
  const std::size_t me = participant_index(*loop.m_arena, st.m_participants);
  std::size_t lo = 0, hi = 0;
  for (;;) {
    // A fresh sizer for each share: leaves learnt on the cheap iterations of one share would
    // swallow the expensive ones of the next whole.
    leaf_sizer sizer(grain, grain, false, leaf_growth::doubling);  // why: leaf_growth
    while (!loop.cancelled() && st.take_front(me, sizer.leaf(), lo, hi)) {
      run(lo, hi);
      sizer.leaf_done(hi - lo);
    }
    if (loop.cancelled()) return;
    switch (st.steal_into(me, lo, hi)) {
      case affinity_state::steal_result::stolen:
        continue;
      case affinity_state::steal_result::unshared:
        for (std::size_t at = lo; at < hi && !loop.cancelled();) {
          const std::size_t end = std::min(hi, at + sizer.leaf());
          run(at, end);
          sizer.leaf_done(end - at);
          at = end;
        }
        continue;
      case affinity_state::steal_result::none:
        return;
    }
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
