// wait_context's slow paths (include/heist/detail/wait/wait_context.hpp and owner_count.hpp have
// the design): the claim of an owner-counted group by a thread that does not own it, the
// owner's fold before it sleeps or gives the group up, and the walk over the ancestors after a
// cancel. Each runs at most once per group and wait, so they stay out of the header that every
// fork inlines.
#include <mutex>

#include "heist/detail/platform/process_barrier.hpp"
#include "heist/detail/sleep/backoff.hpp"
#include "heist/detail/wait/wait_context.hpp"

namespace heist::detail {

void wait_context::claim_slow() noexcept {
  const std::lock_guard<spin_lock> guard(m_claim_lock);
  // relaxed: set under this lock by an earlier claim (the lock orders what it folded), or
  // by an owner that gave up with nothing to fold (make_count_exact).
  if (m_claimed.load(std::memory_order_relaxed)) return;
  // C1. relaxed: the barrier C2 orders it before C3 for every thread, the owner included.
  m_owner.store(nullptr, std::memory_order_relaxed);
  HEIST_PERTURB_POINT(group_claiming);
  // C2: every thread of the process executes a full barrier (see change_owned).
  process_wide_barrier();
  // C3: take m_local's last value, one without the owner's busy mark: after it no owner
  // changes it (O2 fails), but an owner inside O1..O3 finishes first. acquire, on success and
  // on failure alike: pairs with O3's release (and the back-out's), and a failed CAS's value
  // is the one the next try takes.
  std::int64_t local = m_local.load(std::memory_order_acquire);
  for (spin_backoff b;;) {
    if (is_busy(local)) {
      b.pause();  // the owner is inside O1..O3 (and may have been preempted there)
      local = m_local.load(std::memory_order_acquire);
      continue;
    }
    if (m_local.compare_exchange_weak(local, k_claimed, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      break;
    }
  }
  fold(local);
  // release: pairs with claim()'s acquire.
  m_claimed.store(true, std::memory_order_release);
}

void wait_context::fold(std::int64_t local) noexcept {
  if (local != 0 && local != k_claimed && count_change(local)) wake_waiter();
}

// Before arming: the owner moves m_local into m_state itself (it sleeps or, for a join,
// `give_up`s the group for good); any other thread claims the group.
void wait_context::make_count_exact(bool give_up) noexcept {
  const thread_context* const self = t_context;
  // relaxed: only this thread can have stored itself there (the group's creation), and only
  // a claim clears it; a stale non-null value here is another thread's (this one claims).
  if (self == nullptr || m_owner.load(std::memory_order_relaxed) != self) {
    claim();
    return;
  }
  // relaxed: the owner reads its own count.
  if (give_up && m_local.load(std::memory_order_relaxed) == 0) {
    // Nothing counted here (a coroutine's group: its members are counted in m_state), so
    // there is nothing to fold: no lock. A concurrent claimer's exchange also reads 0 and
    // folds nothing, so marking the group claimed now cannot hide a fold from a reader.
    m_owner.store(nullptr, std::memory_order_relaxed);
    m_claimed.store(true, std::memory_order_release);  // pairs with claim()'s acquire
    return;
  }
  const std::lock_guard<spin_lock> guard(m_claim_lock);
  if (m_owner.load(std::memory_order_relaxed) != self) return;  // a claim came first
  if (give_up) {
    // Only this thread writes m_local and reads m_owner as the owner: no barrier needed.
    m_owner.store(nullptr, std::memory_order_relaxed);
    fold(m_local.exchange(k_claimed, std::memory_order_acq_rel));
    m_claimed.store(true, std::memory_order_release);  // pairs with claim()'s acquire
  } else {
    fold(m_local.exchange(0, std::memory_order_acq_rel));
  }
}

bool wait_context::check_cancelled(std::uint64_t epoch) noexcept {
  // relaxed, read after the caller's acquire of `epoch`: a cancel() whose bump that load saw
  // set this flag before it (release/acquire), so a validation below cannot hide it.
  if (m_cancel.load(std::memory_order_relaxed)) return true;
  // Iterative (chains can be 100,000 deep). Stops at a cancelled ancestor (we are
  // cancelled) or at one already checked in this epoch, or at the root (we are not).
  bool cancelled = false;
  for (wait_context* a = m_parent; a != nullptr; a = a->m_parent) {
    if (a->m_cancel.load(std::memory_order_relaxed)) {
      cancelled = true;
      break;
    }
    // acquire: pairs with the release store below (see the constructor).
    if (a->m_seen_epoch.load(std::memory_order_acquire) == epoch) break;
  }
  if (cancelled) {
    m_cancel.store(true, std::memory_order_relaxed);
    return true;
  }
  // Everything up to the stopping point, this context included (its flag read above), is
  // uncancelled as of `epoch`.
  for (wait_context* a = this; a != nullptr; a = a->m_parent) {
    if (a->m_seen_epoch.load(std::memory_order_relaxed) == epoch) break;
    // release: publishes "uncancelled as of epoch" together with the epoch's acquire that
    // made every earlier cancel flag visible to this thread.
    a->m_seen_epoch.store(epoch, std::memory_order_release);
  }
  return false;
}

void wait_context::wake_waiter() noexcept {
  // relaxed, both: the caller's RMW that took the count to zero (count_change, acq_rel) read
  // the armed bit set by the waiter's release CAS, after its store of m_waiter / m_resumer.
  if (completion_callback* r = m_resumer.load(std::memory_order_relaxed)) {
    r->fire();
  } else {
    m_waiter.load(std::memory_order_relaxed)->signal(parker::k_group);
  }
}

}  // namespace heist::detail
