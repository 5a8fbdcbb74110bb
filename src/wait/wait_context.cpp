// wait_context's slow paths (include/heist/detail/wait/wait_context.hpp and owner_count.hpp have
// the design): the claim of an owner-counted group by a thread that does not own it, the
// owner's fold before it sleeps or gives the group up, and the walk over the ancestors after a
// cancel. Each runs at most once per group and wait, so they stay out of the header that every
// fork inlines.
#include <array>
#include <cstdint>
#include <mutex>

#include "heist/detail/platform/cpu.hpp"
#include "heist/detail/platform/spin_lock.hpp"
#include "heist/detail/sleep/backoff.hpp"
#include "heist/detail/sleep/parker.hpp"
#include "heist/detail/wait/completion_callback.hpp"
#include "heist/detail/wait/wait_context.hpp"

namespace heist::detail {

namespace {
// The locks claims and folds take (wait_context::m_claimed has why a table): one group always
// maps to the same lock; groups that share one only take turns in steps that are rare anyway.
struct alignas(k_cache_line) claim_lock {
  spin_lock lock;
};
constexpr std::size_t k_claim_locks = 64;
std::array<claim_lock, k_claim_locks> g_claim_locks;

spin_lock& claim_lock_of(const wait_context* w) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(w);
  return g_claim_locks[(a >> 6 ^ a >> 12) % k_claim_locks].lock;
}
}  // namespace

bool wait_context::disarm(parker& p) noexcept {
  // relaxed: the CAS below carries the order; a stale value only fails it.
  std::uint64_t s = m_state.load(std::memory_order_relaxed);
  for (;;) {
    if ((s & k_sleeping) == 0) {
      consume_signal(p);
      return false;
    }
    // acquire: keeps this RMW ordered before our later reads of the count.
    if (m_state.compare_exchange_weak(s, s & ~k_sleeping, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      return true;
    }
  }
}

void wait_context::consume_signal(parker& p) noexcept {
  p.wait_for(parker::k_group);
  HEIST_PERTURB_POINT(group_waiter_woken);
}

void wait_context::claim_slow() noexcept {
  bool wake;
  {
    const std::lock_guard<spin_lock> guard(claim_lock_of(this));
    // relaxed: set under this lock by an earlier claim (the lock orders what it folded), or
    // by an owner that gave up with nothing to fold (make_count_exact).
    if (m_claimed.load(std::memory_order_relaxed)) return;
    // C1. relaxed: the barrier C2 orders it before C3 for every thread, the owner included.
    m_owner.store(nullptr, std::memory_order_relaxed);
    HEIST_PERTURB_POINT(group_claiming);
    // C2: every thread of the process executes a full barrier (see change_owned).
    process_wide_barrier();
    // C3: take m_local's last value, one without the owner's busy mark: after it no owner
    // changes it (O2 fails), but an owner inside O1..O3 finishes first. acquire, on success
    // and on failure alike: pairs with O3's release (and the back-out's), and a failed CAS's
    // value is the one the next try takes.
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
    wake = fold(local);
    // release: pairs with claim()'s acquire.
    m_claimed.store(true, std::memory_order_release);
  }
  // Outside the lock, which other groups share: the waiter may run code (a resumed
  // coroutine, when its executor refuses the resume task) that claims one of them. The group
  // is still alive: its waiter has not had the signal this call owes it.
  if (wake) wake_waiter();
}

// Adds the owner's part `local` to the count; true if that ended the group with a waiter
// armed (the caller wakes it: wake_waiter, once out of the claim lock).
bool wait_context::fold(std::int64_t local) noexcept {
  return local != 0 && local != k_claimed && count_change(local);
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
  bool wake;
  {
    const std::lock_guard<spin_lock> guard(claim_lock_of(this));
    if (m_owner.load(std::memory_order_relaxed) != self) return;  // a claim came first
    if (give_up) {
      // Only this thread writes m_local and reads m_owner as the owner: no barrier needed.
      m_owner.store(nullptr, std::memory_order_relaxed);
      wake = fold(m_local.exchange(k_claimed, std::memory_order_acq_rel));
      m_claimed.store(true, std::memory_order_release);  // pairs with claim()'s acquire
    } else {
      wake = fold(m_local.exchange(0, std::memory_order_acq_rel));
    }
  }
  if (wake) wake_waiter();  // as in claim_slow
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
