// wait_context: what a helping wait waits for. It is the state of a task_group (a count
// of unfinished tasks, cancellation, the first exception) and of a future (count 1).
//
// The count and a "waiter sleeps" bit share one atomic word, so that the task finishing
// last learns in the same RMW whether somebody must be woken, and clears the bit in that
// same RMW:
//   waiter:  m_waiter = my parker; CAS count -> count|k_sleeping (only while count > 0);
//            re-check for work; block on the parker until k_group (or k_work) is set.
//   last:    CAS (k_sleeping|1) -> 0; then signal m_waiter with k_group.
// One signal per arming: the bit goes away in the RMW that takes the count to zero, so a
// task added after that (a run() concurrent with the end of wait()) finishes against a
// word without the bit and signals nobody. (Clearing it later, in a second step, let such a
// task signal the waiter a second time; the stale k_group then ended a later wait while that
// wait's real finisher had yet to read m_waiter on a dead frame: issue 9, bug 6.)
// A waiter that armed must not return before it consumed its k_group signal whenever the bit
// is gone (the finishing task still reads m_waiter after its RMW, so the context, often on
// the waiter's stack, must outlive that read). disarm() enforces this.
//
// Cancellation is hierarchical like oneTBB's bound contexts: a group created inside a task
// of group P is cancelled when P is. Walking the ancestor chain on every task start would
// cost O(depth), so cancel() bumps a global epoch and each context caches the epoch at
// which it last found its ancestors uncancelled; the walk happens only after some group
// somewhere was cancelled, and stops at the first ancestor already checked in this epoch.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <exception>

#include "heist/detail/config.hpp"
#include "heist/detail/parker.hpp"
#include "heist/detail/perturb.hpp"

namespace heist::detail {

// Runs once, on the thread that completes what it was registered on (a future's state, or a
// group whose coroutine waits in co_await group.join()). Must not throw.
class completion_callback {
 public:
  virtual void fire() noexcept = 0;
  // A coroutine's resumer (co_await group.join()) returns the coroutine, so that the task
  // finishing the group last may continue it by symmetric transfer instead of firing.
  virtual std::coroutine_handle<> coroutine() const noexcept { return {}; }

 protected:
  ~completion_callback() = default;
};

// Bumped by every cancel(); see the file comment.
inline std::atomic<std::uint64_t> g_cancel_epoch{1};

class wait_context {
 public:
  static constexpr std::uint64_t k_sleeping = std::uint64_t{1} << 63;
  static constexpr std::uint64_t k_never_checked = ~std::uint64_t{0};

  explicit wait_context(wait_context* parent = nullptr, std::uint64_t initial = 0) noexcept
      : m_state(initial), m_parent(parent) {
    // Inherit the parent's validation: if the parent's ancestors were uncancelled at epoch e
    // and the parent itself is not cancelled, so are ours (the same chain plus the parent).
    // A cancel after this point bumps the epoch past e, so the copy can only be stale-safe.
    if (parent != nullptr) {
      // acquire: pairs with the release store in check_ancestors. If the parent was validated
      // at epoch e by a thread that had acquired e (and so saw every cancel flag set before
      // e's bump), this thread sees those flags too: reading e and then a stale "not
      // cancelled" is impossible even on weak memory.
      const std::uint64_t e = parent->m_seen_epoch.load(std::memory_order_acquire);
      if (!parent->m_cancel.load(std::memory_order_relaxed)) {
        m_seen_epoch.store(e, std::memory_order_relaxed);
      }
    }
  }
  wait_context(const wait_context&) = delete;
  wait_context& operator=(const wait_context&) = delete;

  // --- the count -----------------------------------------------------------------------
  void add(std::uint64_t n) noexcept {
    // relaxed: the increment is sequenced before the push that publishes the task (a
    // release store), so whoever runs the task and decrements sees it in the RMW order.
    m_state.fetch_add(n, std::memory_order_relaxed);
  }

  // A task of this context finished (or was skipped).
  void finish_one() noexcept {
    if (HEIST_UNLIKELY(count_down())) {
      HEIST_PERTURB_POINT(group_finish_counted);
      wake_waiter();
    }
  }

  // finish_one for a coroutine member of a task_group ending (coroutine.hpp): if this ends
  // the group and a coroutine waits in join(), returns it for the caller to resume by
  // symmetric transfer (the caller is that member's final suspension: no new task, no stack);
  // otherwise does what finish_one does and returns null.
  std::coroutine_handle<> finish_one_for_coroutine() noexcept {
    if (HEIST_LIKELY(!count_down())) return {};
    HEIST_PERTURB_POINT(group_finish_counted);
    if (completion_callback* r = m_resumer.load(std::memory_order_relaxed)) {
      if (std::coroutine_handle<> h = r->coroutine()) return h;
    }
    wake_waiter();
    return {};
  }

  bool done() const noexcept {
    // acquire: pairs with the release part of finish_one, so the tasks' effects are
    // visible to whoever sees the count reach zero.
    return (m_state.load(std::memory_order_acquire) & ~k_sleeping) == 0;
  }

  std::uint64_t pending() const noexcept {
    return m_state.load(std::memory_order_relaxed) & ~k_sleeping;
  }

  // --- the sleeping waiter ---------------------------------------------------------------
  enum class arm_result { armed, done, busy };
  // Announces that `p`'s owner will sleep until the count reaches zero. `busy`: another
  // thread already sleeps on this context; the caller must poll instead.
  arm_result arm(parker* p) noexcept {
    return arm_with([&] {
      m_waiter.store(p, std::memory_order_relaxed);
      m_resumer.store(nullptr, std::memory_order_relaxed);
    });
  }

  // As arm(), for a coroutine suspended in co_await group.join(): the task that takes the
  // count to zero fires `r` (which resumes the coroutine as a task) instead of signalling a
  // parker. An armed resumer is never withdrawn: the coroutine stays suspended until then.
  arm_result arm_resumer(completion_callback* r) noexcept {
    return arm_with([&] { m_resumer.store(r, std::memory_order_relaxed); });
  }

  // Withdraws an armed waiter. Returns true if it withdrew the bit itself (the count is still
  // above zero: the waiter may go on helping). Returns false if the last task took the bit
  // with the count to zero meanwhile: then that task owes this waiter a k_group signal, and
  // disarm waits for it before returning.
  bool disarm(parker& p) noexcept {
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

  // Waits for the k_group signal an arming is owed (the bit is gone: the last task is
  // signalling). Exactly one signal per arming, so this consumes that one and no other.
  static void consume_signal(parker& p) noexcept {
    p.wait_for(parker::k_group);
    HEIST_PERTURB_POINT(group_waiter_woken);
  }

  // --- cancellation and exceptions (task groups) ------------------------------------------
  void cancel() noexcept {
    // relaxed store, then a release bump of the epoch: a context that acquires the new
    // epoch and walks its ancestors sees this flag.
    m_cancel.store(true, std::memory_order_relaxed);
    g_cancel_epoch.fetch_add(1, std::memory_order_release);
  }

  bool is_cancelled() noexcept {
    // relaxed: a hint checked at task start; skipping a task a moment late is allowed.
    if (m_cancel.load(std::memory_order_relaxed)) return true;
    if (m_parent == nullptr) return false;
    // acquire: pairs with the release bump in cancel(); see the walk in check_ancestors.
    const std::uint64_t epoch = g_cancel_epoch.load(std::memory_order_acquire);
    if (HEIST_LIKELY(m_seen_epoch.load(std::memory_order_relaxed) == epoch)) return false;
    return check_ancestors(epoch);
  }

  // The first exception wins; later ones are dropped. The group cancels itself.
  void capture_exception(std::exception_ptr e) noexcept {
    // One winner moves the flag none -> writing, stores the exception, then publishes it
    // (release, pairs with the acquire loads below). A capture that loses is dropped, also
    // while a waiter is taking the previous one: m_exception has one writer at a time.
    std::uint8_t expected = k_no_exception;
    if (m_exception_state.compare_exchange_strong(
            expected, k_writing_exception, std::memory_order_acquire, std::memory_order_relaxed)) {
      m_exception = std::move(e);
      m_exception_state.store(k_has_exception, std::memory_order_release);
    }
    cancel();
  }

  bool has_exception() const noexcept {
    // acquire: pairs with capture_exception's release store.
    return m_exception_state.load(std::memory_order_acquire) == k_has_exception;
  }

  // Called by the waiter once the count is zero: makes the context reusable. Returns the
  // first exception a task threw, or a null exception_ptr. The common case (no exception,
  // no cancel) touches no exception_ptr at all: constructing and destroying one is an
  // out-of-line call in libstdc++.
  void reset() noexcept {
    m_cancel.store(false, std::memory_order_relaxed);
    m_seen_epoch.store(k_never_checked, std::memory_order_relaxed);
  }
  std::exception_ptr take_exception() noexcept {
    // acquire: pairs with capture_exception's release store. While the state reads
    // k_has_exception no capture writes m_exception (its CAS from none fails), so the move
    // below races with nobody; a capture still writing belongs to a later wait.
    if (m_exception_state.load(std::memory_order_acquire) != k_has_exception) return nullptr;
    std::exception_ptr e = std::move(m_exception);
    m_exception = nullptr;
    // release: a later capture's acquire CAS sees m_exception emptied before it writes.
    m_exception_state.store(k_no_exception, std::memory_order_release);
    return e;
  }

  wait_context* parent() const noexcept { return m_parent; }

 private:
  // The count goes down by one; true if this took it to zero with a waiter armed. acq_rel:
  // release publishes the task's effects (and a captured exception) to the waiter's acquire
  // in done(); acquire makes the waiter's m_waiter / m_resumer store (sequenced before its
  // arming CAS) visible to wake_waiter(). The last task with a waiter armed clears the bit
  // in this same RMW (see the file comment).
  HEIST_ALWAYS_INLINE bool count_down() noexcept {
    std::uint64_t s = m_state.load(std::memory_order_relaxed);
    while (!m_state.compare_exchange_weak(s, s == (k_sleeping | 1) ? 0 : s - 1,
                                          std::memory_order_acq_rel, std::memory_order_relaxed)) {
    }
    return s == (k_sleeping | 1);
  }

  // The waiter is blocked (or its coroutine suspended) until this, so `this` is still alive
  // here; a suspended coroutine's resumer takes the place of the parker.
  void wake_waiter() noexcept {
    if (completion_callback* r = m_resumer.load(std::memory_order_relaxed)) {
      r->fire();
    } else {
      m_waiter.load(std::memory_order_relaxed)->signal(parker::k_group);
    }
  }

  // Arming: `store` publishes who waits; then the sleeping bit is set while the count is
  // above zero. done: nothing to wait for; busy: another waiter is armed.
  template <class Store>
  arm_result arm_with(Store&& store) noexcept {
    std::uint64_t s = m_state.load(std::memory_order_relaxed);
    for (;;) {
      if ((s & ~k_sleeping) == 0) return arm_result::done;
      if ((s & k_sleeping) != 0) return arm_result::busy;
      store();
      // release: publishes the store to the finishing task's acquire RMW.
      if (m_state.compare_exchange_weak(s, s | k_sleeping, std::memory_order_release,
                                        std::memory_order_relaxed)) {
        return arm_result::armed;
      }
    }
  }

  HEIST_NOINLINE bool check_ancestors(std::uint64_t epoch) noexcept {
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
    // Everything up to the stopping point is uncancelled as of `epoch`.
    for (wait_context* a = this; a != nullptr; a = a->m_parent) {
      if (a->m_seen_epoch.load(std::memory_order_relaxed) == epoch) break;
      // release: publishes "uncancelled as of epoch" together with the epoch's acquire that
      // made every earlier cancel flag visible to this thread.
      a->m_seen_epoch.store(epoch, std::memory_order_release);
    }
    return false;
  }

  alignas(64) std::atomic<std::uint64_t> m_state;
  std::atomic<parker*> m_waiter{nullptr};
  std::atomic<completion_callback*> m_resumer{nullptr};
  wait_context* m_parent;
  std::atomic<bool> m_cancel{false};
  static constexpr std::uint8_t k_no_exception = 0;
  static constexpr std::uint8_t k_writing_exception = 1;
  static constexpr std::uint8_t k_has_exception = 2;
  std::atomic<std::uint8_t> m_exception_state{k_no_exception};
  std::atomic<std::uint64_t> m_seen_epoch{k_never_checked};
  std::exception_ptr m_exception;
};

}  // namespace heist::detail
