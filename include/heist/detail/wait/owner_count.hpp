// Owner-counted joins: the owner's side of a wait_context's count (wait_context.hpp holds the
// class; this file, included at its end, the member functions of the protocol below).
//
// Most children of a task_group are popped back and run by the thread that spawned them,
// which is also the thread that waits. Such a group (opted in: task_group, the loops' child groups)
// records its creator, the *owner*; the owner counts its own spawns in m_local, a count only it
// writes, with plain loads and stores (no lock prefix), and a child it runs itself is counted out
// of m_local the same way. Any other thread that finishes an owner-counted child (a thief) counts
// it out of m_state instead, which may then go below zero. The group is done when m_local + count
// is zero; only the owner can read that sum, so:
//   - The owner folds m_local into m_state before it sleeps on the group (then the count
//     alone is exact while it sleeps: a sleeping owner writes nothing).
//   - Any other thread that looks at the count (wait(), join(), done() from a thread that is
//     not the owner) first *claims* the group, once: it clears m_owner, forces a memory
//     barrier on every thread of the process (membarrier), and takes m_local (once the owner
//     is not in the middle of a change: its busy mark is in m_local itself) into m_state
//     (change_owned has the proof). After a claim the group counts in m_state only, like a
//     plain group.
//   - A coroutine's join gives the group up the same way (its thread runs on meanwhile).
// Without membarrier (not Linux, or refused by a seccomp filter) no group is owner-counted.
// docs/design/protocols.md, "Owner-counted joins", has the proof sketch.
#pragma once

#include <atomic>
#include <cstdint>

#include "heist/detail/config.hpp"
#include "heist/detail/wait/wait_context.hpp"

namespace heist::detail {

// The rest of done() for the owner, whose part of the count is `local` (just read, or just
// stored at O3): the shared count, then m_owner re-read. A re-read that still finds the owner
// ran before any claim's barrier point on this CPU, so no claim had folded m_local into the
// count that was read (its C3 comes after the barrier): the sum is exact. Otherwise the group
// was claimed meanwhile and the claimed count alone is the count.
HEIST_ALWAYS_INLINE bool wait_context::done_with_owned_part(const thread_context* self,
                                                            std::int64_t local) noexcept {
  // acquire: pairs with the release part of the finishing RMWs (count_change), so the
  // effects of tasks that other threads finished are visible once the sum is zero.
  const std::int64_t shared = count_of(m_state.load(std::memory_order_acquire));
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (HEIST_LIKELY(m_owner.load(std::memory_order_relaxed) == self)) return local + shared == 0;
  return claimed_done();
}
// done() for a thread that does not own the group (or no longer does): claims it first.
inline bool wait_context::claimed_done() noexcept {
  claim();
  // acquire: as in done_with_owned_part.
  return count_of(m_state.load(std::memory_order_acquire)) == 0;
}

// The owner's change of m_local by d (+1 a spawn, -1 a finish of an owner-counted child it
// ran itself). False if `self` does not own the group: the caller counts in m_state.
//   O1 m_local = v + k_busy    O2 re-read m_owner: still ours?
//   O3 m_local = v + d (release), or v if O2 saw a claim
// The busy mark rides in m_local itself, so a change is two stores to one word. A claimer
// (claim_slow) clears m_owner (C1), runs process_wide_barrier() (C2), and takes m_local by a
// CAS to k_claimed from a value without the mark only (C3). The barrier makes O1/O2 against
// C1/C3 a Dekker pair: either O2 sees the claim and we back out (restoring v, which is what
// a claimer took or will take), or C3 sees O1 and retries until O3, whose release makes it
// the value taken. So the claimer never misses an owner's change, and the owner never
// touches the group after O3: a waiter that sees the group done through the claim cannot
// destroy it under an owner still inside this function.
// `now`, if given, receives the value stored at O3 (on success).
HEIST_ALWAYS_INLINE bool wait_context::change_owned(const thread_context* self, std::int64_t d,
                                                    std::int64_t* now) noexcept {
  // relaxed: only a claimer writes m_owner after construction; O2 is what the barrier orders.
  if (HEIST_UNLIKELY(m_owner.load(std::memory_order_relaxed) != self)) return false;
  // Only we write m_local while we own the group, apart from a claimer's C3 (after which the
  // O2 below fails).
  const std::int64_t v = m_local.load(std::memory_order_relaxed);
  m_local.store(v + k_busy, std::memory_order_relaxed);  // O1
  // A compiler barrier only: the claimer's process_wide_barrier() orders the CPU.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (HEIST_UNLIKELY(m_owner.load(std::memory_order_relaxed) != self)) {  // O2
    // Claimed between the two reads: count in m_state. The child this finish counts out
    // (or the spawn being counted) keeps the group alive, so m_local is still ours to
    // restore. release: as O3 (pairs with C3's acquire).
    m_local.store(v, std::memory_order_release);
    return false;
  }
  HEIST_PERTURB_POINT(owner_count_confirmed);
  // O3. release: a claimer's acquire at C3 that reads it sees the effects of the task this
  // finish counts out, and passes them on through its release RMW on m_state.
  m_local.store(v + d, std::memory_order_release);
  if (now != nullptr) *now = v + d;
  return true;
}

// Before a thread that does not own the group reads the count: after this the count in
// m_state is the whole count. Once per group (m_claimed); cheap afterwards.
inline void wait_context::claim() noexcept {
  // acquire: pairs with the release store below; the fold's RMW is visible after it.
  if (HEIST_LIKELY(m_claimed.load(std::memory_order_acquire))) return;
  claim_slow();
}

}  // namespace heist::detail
