// wait_context: what a helping wait waits for. It is the state of a task_group (a count
// of unfinished tasks, cancellation, the first exception), and with a count of 1 the signal a
// thread blocked on a future waits for (src/wait/future_wait.cpp).
//
// The count and a "waiter sleeps" bit share one atomic word, so that the task finishing
// last learns in the same RMW whether somebody must be woken, and clears the bit in that
// same RMW:
//   waiter:  make the count exact (the owner folds m_local in, anyone else claims: below);
//            m_waiter = my parker; CAS count -> count|k_sleeping (only while count > 0);
//            re-check for work; block on the parker until k_group (or k_work) is set.
//   last:    CAS (count 1 | k_sleeping) -> 0; then signal m_waiter with k_group.
// One signal per arming: the bit goes away in the RMW that takes the count to zero, so a
// task added after that (a run() concurrent with the end of wait()) finishes against a
// word without the bit and signals nobody. (Clearing it later, in a second step, let such a
// task signal the waiter a second time; the stale k_group then ended a later wait while that
// wait's real finisher had yet to read m_waiter on a dead frame.)
// A waiter that armed must not return before it consumed its k_group signal whenever the bit
// is gone (the finishing task still reads m_waiter after its RMW, so the context, often on
// the waiter's stack, must outlive that read). disarm() enforces this.
//
// Owner-counted joins: most of a task_group's children are counted by the thread that spawns
// and waits, with plain stores; owner_count.hpp has how, and the member functions behind it.
//
// Cancellation is hierarchical like oneTBB's bound contexts: a group created inside a task
// of group P is cancelled when P is. Walking the ancestor chain on every task start would
// cost O(depth), so cancel() bumps a global epoch (after setting its flag) and each context
// caches the epoch at which it last found itself and its ancestors uncancelled; while the
// epoch still reads that value, a check reads only the own flag, the epoch and that copy. The
// walk happens only after some group somewhere was cancelled, and stops at the first ancestor
// already checked in this epoch.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <exception>

#include "heist/detail/config.hpp"
#include "heist/detail/diagnostics/analysis_hooks.hpp"

namespace heist::detail {

struct thread_context;
class parker;               // sleep/parker.hpp: how a blocked waiter sleeps
class completion_callback;  // wait/completion_callback.hpp: what a suspended waiter left
extern HEIST_API constinit thread_local thread_context* t_context HEIST_TLS_MODEL;

// Whether owner-counted joins are on (the process-wide barrier they need is available), set
// once when the first executor starts (src/wait/owner_counting.cpp). relaxed: a group created
// before it is set simply counts in m_state only.
inline HEIST_API std::atomic<bool> g_owner_counting{false};
// Turns owner counting on if the barrier is available; every executor calls it at start.
HEIST_API void enable_owner_counting() noexcept;

// Which counting a wait_context uses (see the file comment).
enum class join_counting : std::uint8_t { shared, owner };

// Bumped by every cancel(); see the file comment.
inline std::atomic<std::uint64_t> g_cancel_epoch{1};

class HEIST_API wait_context {
 public:
  // m_state: bit 0 says a waiter sleeps (k_sleeping); bits 1..63 hold a signed count in units
  // of k_one (a thief's finish of an owner-counted child may take it below zero).
  static constexpr std::uint64_t k_sleeping = 1;
  static constexpr std::uint64_t k_one = 2;
  static constexpr std::uint64_t k_never_checked = ~std::uint64_t{0};

  // `creator`: the calling thread's context (may be null), for a caller that read it
  // already; owner counting makes it the owner.
  explicit wait_context(wait_context* parent = nullptr, std::uint64_t initial = 0,
                        join_counting counting = join_counting::shared,
                        const thread_context* creator = t_context) noexcept
      : wait_context(parent, initial, owner_for(counting, creator)) {}
  wait_context(const wait_context&) = delete;
  wait_context& operator=(const wait_context&) = delete;

  // --- the count -----------------------------------------------------------------------
  void add(std::uint64_t n) noexcept {
    // relaxed: the increment is sequenced before the push that publishes the task (a
    // release store), so whoever runs the task and decrements sees it in the RMW order.
    m_state.fetch_add(n * k_one, std::memory_order_relaxed);
  }

  // A spawn by thread `self`: counts it in m_local if `self` owns the group (returns true;
  // the task is then "owner-counted" and must be finished with finish_task(.., true)),
  // else returns false and the caller uses add(1).
  HEIST_ALWAYS_INLINE bool try_add_owned(const thread_context* self) noexcept {
    return change_owned(self, +1);
  }

  // A task of this context finished (or was skipped) on thread `self`; `owner_counted`: it
  // was counted by try_add_owned.
  HEIST_ALWAYS_INLINE void finish_task(const thread_context* self, bool owner_counted) noexcept {
    if (owner_counted && change_owned(self, -1)) return;
    finish_one();
  }

  // The owner-counted child that thread `self` (holding its context) ran itself has finished:
  // finish_task(self, true) and then done(self), in one. The owner's part of the sum is the
  // value it has just stored at O3, not a reload (done_with_owned_part says why that is exact):
  // done()'s owner check and its load of m_local are saved.
  HEIST_ALWAYS_INLINE bool finish_own_child_then_done(const thread_context* self) noexcept {
    std::int64_t local;
    if (HEIST_LIKELY(change_owned(self, -1, &local))) return done_with_owned_part(self, local);
    finish_one();
    return done(self);
  }

  // A task counted with add() finished (or was skipped).
  void finish_one() noexcept {
    if (HEIST_UNLIKELY(count_change(-1))) {
      HEIST_PERTURB_POINT(group_finish_counted);
      wake_waiter();
    }
  }

  // A member of the group ended on thread `self` (null: a thread outside heist);
  // `owner_counted`: it was counted by try_add_owned. As finish_member, except that if this
  // ends the group while a resumer is armed (arm_resumer), the resumer is returned instead of
  // fired: the caller takes it over (runs its continuation itself, or fires it). A parked
  // waiter is signalled here. Null otherwise. (A coroutine member's final suspension takes
  // its joiner over this way: no new task, no stack.)
  completion_callback* finish_member_taking_resumer(const thread_context* self,
                                                    bool owner_counted) noexcept {
    if (owner_counted && self != nullptr && change_owned(self, -1)) return nullptr;
    if (HEIST_LIKELY(!count_change(-1))) return nullptr;
    HEIST_PERTURB_POINT(group_finish_counted);
    // relaxed: as in wake_waiter (count_change's acquire RMW read the arming CAS that
    // published it).
    if (completion_callback* r = m_resumer.load(std::memory_order_relaxed)) return r;
    wake_waiter();
    return nullptr;
  }
  // A coroutine member ended, was skipped (cancelled) or could not be spawned, on thread
  // `self` (null: outside heist); a coroutine waiting in join() is fired (resumed as a task).
  // Also for a member its joiner popped to run inline and found cancelled
  // (join_awaiter::take_member): that joiner has not armed, so a resumer armed meanwhile is
  // another joiner's.
  void finish_member(const thread_context* self, bool owner_counted) noexcept {
    if (owner_counted && self != nullptr && change_owned(self, -1)) return;
    finish_one();
  }

  // Any thread. The owner reads m_local + count; any other thread claims the group first.
  bool done() noexcept { return done(t_context); }
  // The same, for a caller that holds its thread's context (`self`, never another
  // thread's) and so saves reading the thread_local again.
  HEIST_ALWAYS_INLINE bool done(const thread_context* self) noexcept {
    // Another thread's context would let a non-owner read m_local as if it owned the group.
    assert(self == t_context && "done(self) with another thread's context");
    // relaxed: only this thread stores itself there and only a claim clears it (see
    // make_count_exact); the owner path re-checks it in done_with_owned_part.
    if (self != nullptr && m_owner.load(std::memory_order_relaxed) == self) {
      // Only this thread writes m_local (or a claimer, which first clears m_owner: then the
      // re-check in done_with_owned_part fails and the claimed count is read). relaxed: the
      // owner reads its own stores.
      return done_with_owned_part(self, m_local.load(std::memory_order_relaxed));
    }
    return claimed_done();
  }

  // True if both parts of the count read zero: nothing of the group is counted anywhere.
  // task_group's destructor skips its wait on it. Only the group's owner, or a thread that
  // every run() into the group happened-before, may rely on a true (the tasks it counted have
  // finished, or it would read a part that counts them); a false is never wrong, only slower
  // (after a wait in which thieves finished some of the owner's children, the two parts add
  // up to zero without being zero; a claimed group keeps its marker in m_local): the caller
  // then waits properly. m_local relaxed: the owner's own word (a claim leaves its marker).
  // m_state acquire: pairs with the release part of the finishing RMWs (count_change), so a
  // task another thread finished is over, its last touch of the group included, before the
  // caller frees the group (without it TSan saw the next group, built on the same stack
  // memory, race with the RMW of a child finished by a worker).
  HEIST_ALWAYS_INLINE bool quiet() const noexcept {
    return (m_local.load(std::memory_order_relaxed) |
            static_cast<std::int64_t>(m_state.load(std::memory_order_acquire))) == 0;
  }

  // --- the sleeping waiter ---------------------------------------------------------------
  enum class arm_result { armed, done, busy };
  // Announces that `p`'s owner will sleep until the count reaches zero. `busy`: another
  // thread already sleeps on this context; the caller must poll instead.
  arm_result arm(parker* p) noexcept {
    make_count_exact(false);
    // relaxed (both): arm_with's release CAS publishes them.
    return arm_with([&] {
      m_waiter.store(p, std::memory_order_relaxed);
      m_resumer.store(nullptr, std::memory_order_relaxed);
    });
  }

  // As arm(), for a coroutine suspended in co_await group.join(): the task that takes the
  // count to zero fires `r` (which resumes the coroutine as a task) instead of signalling a
  // parker. An armed resumer is never withdrawn: the coroutine stays suspended until then.
  // The calling thread goes on running tasks after the suspension, so even the owner gives
  // the group up to shared counting here (its later finishes must reach m_state).
  arm_result arm_resumer(completion_callback* r) noexcept {
    make_count_exact(true);
    // relaxed: arm_with's release CAS publishes it.
    return arm_with([&] { m_resumer.store(r, std::memory_order_relaxed); });
  }

  // Withdraws an armed waiter. Returns true if it withdrew the bit itself (the count is still
  // above zero: the waiter may go on helping). Returns false if the last task took the bit
  // with the count to zero meanwhile: then that task owes this waiter a k_group signal, and
  // disarm waits for it before returning.
  // Out of line (src/wait/wait_context.cpp): only a parked waiter's way out calls it.
  bool disarm(parker& p) noexcept;

  // Waits for the k_group signal an arming is owed (the bit is gone: the last task is
  // signalling). Exactly one signal per arming, so this consumes that one and no other.
  static void consume_signal(parker& p) noexcept;

  // --- cancellation and exceptions (task groups) ------------------------------------------
  void cancel() noexcept {
    // relaxed store, then a release bump of the epoch: a context that acquires the new
    // epoch and walks its ancestors sees this flag.
    m_cancel.store(true, std::memory_order_relaxed);
    HEIST_PERTURB_POINT(cancel_flagged);
    g_cancel_epoch.fetch_add(1, std::memory_order_release);
  }

  // m_seen_epoch == e says: this context and all its ancestors were uncancelled as of epoch
  // e. Every cancel() bumps the epoch after it sets its flag, so while the epoch still reads
  // e no ancestor was cancelled since: three loads (the own flag, the epoch, the validated
  // copy), no walk, no read of the parent pointer. A check a moment late (the epoch read
  // before a concurrent bump) skips a task late, which is allowed.
  HEIST_ALWAYS_INLINE bool is_cancelled() noexcept {
    // The own flag first, relaxed: a hint checked at task start. It is not left to the epoch:
    // between cancel()'s flag store and its bump, a thread that saw the flag (here, or in a
    // nested group's walk, which then skipped that group's tasks) must not read the group as
    // uncancelled from a validation at the epoch not yet bumped (the soak's check "nested
    // group lost a task" caught exactly that).
    if (m_cancel.load(std::memory_order_relaxed)) return true;
    // acquire: pairs with the release bump in cancel(), so that a walk (check_cancelled) sees
    // every flag set before the epoch it read.
    const std::uint64_t epoch = g_cancel_epoch.load(std::memory_order_acquire);
    if (HEIST_LIKELY(m_seen_epoch.load(std::memory_order_relaxed) == epoch)) return false;
    return check_cancelled(epoch);
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
    // relaxed: the waiter's own flag check; a cancel() racing with the end of a wait may
    // land on either side of it, as it could before. A context that was not cancelled keeps
    // its validation: it and its ancestors were uncancelled as of m_seen_epoch, still true,
    // and a later cancel bumps the epoch past it. Nothing is written then (one fewer store per
    // fork of a fork-join program).
    if (HEIST_UNLIKELY(m_cancel.load(std::memory_order_relaxed))) {
      m_cancel.store(false, std::memory_order_relaxed);
      m_seen_epoch.store(k_never_checked, std::memory_order_relaxed);
    }
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
  static constexpr std::int64_t k_claimed = INT64_MIN;  // m_local after a claim
  // Added to m_local by the owner while it changes it (change_owned); counts stay far below.
  static constexpr std::int64_t k_busy = std::int64_t{1} << 62;
  static bool is_busy(std::int64_t local) noexcept { return local >= k_busy / 2; }

  // The owner decided once (owner_for), so that m_claimed follows from it without a load.
  wait_context(wait_context* parent, std::uint64_t initial, const thread_context* owner) noexcept
      : m_state(initial * k_one),
        m_owner(owner),
        m_parent(parent),
        m_claimed(owner == nullptr),
        m_seen_epoch(epoch_inherited_from(parent)) {}

  // The owner of a new context counted by `counting`: the calling thread if owner counting
  // is on (and it runs in heist), else null (shared counting). Every field is initialised in
  // the member initialisers: this constructor runs once per fork of a fork-join program, and
  // the compiler does not merge a default initialiser's atomic store with a later one.
  static const thread_context* owner_for(join_counting counting,
                                         const thread_context* creator) noexcept {
    // relaxed: the group is not shared yet; whoever gets a reference to it later gets it
    // through a synchronizing operation. A group created before owner counting is turned on
    // simply counts in m_state only.
    if (counting == join_counting::owner && g_owner_counting.load(std::memory_order_relaxed)) {
      return creator;
    }
    return nullptr;
  }

  // A new child of `parent` inherits the parent's validation: if the parent and its ancestors
  // were uncancelled at epoch e, so are the child's (the same chain plus the parent), and the
  // child itself is new. A cancel after this point bumps the epoch past e, so the copy can
  // only be stale-safe.
  static std::uint64_t epoch_inherited_from(const wait_context* parent) noexcept {
    if (parent == nullptr) return k_never_checked;
    // acquire: pairs with the release store in check_cancelled. If the parent was validated
    // at epoch e by a thread that had acquired e (and so saw every cancel flag set before
    // e's bump), this thread sees those flags too: reading e and then a stale "not
    // cancelled" is impossible even on weak memory.
    const std::uint64_t e = parent->m_seen_epoch.load(std::memory_order_acquire);
    return parent->m_cancel.load(std::memory_order_relaxed) ? k_never_checked : e;
  }

  static std::int64_t count_of(std::uint64_t s) noexcept {
    return static_cast<std::int64_t>(s) >> 1;  // arithmetic shift (C++20): the signed count
  }

  // Adds d to the count; true if this took it to zero with a waiter armed (the bit goes away
  // in this same RMW; the caller wakes the waiter, see the file comment). acq_rel: release
  // publishes the task's effects (and a captured exception) to the waiter's acquire in done();
  // acquire makes the waiter's m_waiter / m_resumer store (sequenced before its arming CAS)
  // visible to wake_waiter().
  HEIST_ALWAYS_INLINE bool count_change(std::int64_t d) noexcept {
    // relaxed: the CAS carries the order (above); a stale value only fails it.
    std::uint64_t s = m_state.load(std::memory_order_relaxed);
    for (;;) {
      std::uint64_t n = s + static_cast<std::uint64_t>(d) * k_one;
      const bool last = (s & k_sleeping) != 0 && count_of(n) == 0;
      if (last) n = 0;
      if (m_state.compare_exchange_weak(s, n, std::memory_order_acq_rel,
                                        std::memory_order_relaxed)) {
        return last;
      }
    }
  }

  // --- owner counting (owner_count.hpp) ----------------------------------------------------
  // The rest of done() for the owner, whose part of the count is `local`.
  HEIST_ALWAYS_INLINE bool done_with_owned_part(const thread_context* self,
                                                std::int64_t local) noexcept;
  // done() for a thread that does not own the group (or no longer does): claims it first.
  bool claimed_done() noexcept;
  // The owner's change of m_local by d; false if `self` does not own the group.
  HEIST_ALWAYS_INLINE bool change_owned(const thread_context* self, std::int64_t d,
                                        std::int64_t* now = nullptr) noexcept;
  // Before a thread that does not own the group reads the count.
  void claim() noexcept;
  // The claim itself, once per group (src/wait/wait_context.cpp has the steps C1-C3).
  HEIST_NOINLINE void claim_slow() noexcept;
  bool fold(std::int64_t local) noexcept;
  // Before arming: the owner moves m_local into m_state itself (it sleeps or, for a join,
  // `give_up`s the group for good); any other thread claims the group.
  void make_count_exact(bool give_up) noexcept;

  // The waiter is blocked (or its coroutine suspended) until this, so `this` is still alive
  // here; a suspended coroutine's resumer takes the place of the parker. Out of line
  // (src/wait/wait_context.cpp): only a task that ends a group somebody sleeps on calls it, and
  // every finish (inline in every wait) would otherwise carry the futex wake-up.
  HEIST_NOINLINE void wake_waiter() noexcept;

  // Arming: `store` publishes who waits; then the sleeping bit is set while the count is
  // above zero. done: nothing to wait for; busy: another waiter is armed.
  template <class Store>
  arm_result arm_with(Store&& store) noexcept {
    // relaxed: the CAS below carries the order; a stale value only fails it.
    std::uint64_t s = m_state.load(std::memory_order_relaxed);
    for (;;) {
      const std::int64_t n = count_of(s);
      if (n == 0) return arm_result::done;
      if ((s & k_sleeping) != 0) return arm_result::busy;
      assert(n > 0 && "an exact count below zero: a finish without its spawn");
      store();
      // release: publishes the store to the finishing task's acquire RMW.
      if (m_state.compare_exchange_weak(s, s | k_sleeping, std::memory_order_release,
                                        std::memory_order_relaxed)) {
        return arm_result::armed;
      }
    }
  }

  // After some cancel (or before the first check of a context without a validated parent):
  // reads the own flag, then walks the ancestors; validates the chain at `epoch` if none is
  // cancelled (src/wait/wait_context.cpp).
  HEIST_NOINLINE bool check_cancelled(std::uint64_t epoch) noexcept;

  // Not over-aligned here: a task_group in a coroutine lives in its frame, 16-byte-aligned
  // pool memory. The groups that count many stolen tasks (the loops' child groups, a graph run) put
  // their wait_context on a cache line of its own (alignas(64) where they declare it), so that
  // thieves' RMWs on m_state do not share a line with the owner's other data. A task_group
  // does not: it lives in the frame of a fork-join function, one per fork, whose children are
  // mostly popped back by the owner (owner-counted, no RMW); an over-aligned member made every
  // such frame realign the stack and cost fib(30) 11-15%.
  std::atomic<std::uint64_t> m_state;
  // The owner (see the file comment), or null: counted in m_state only.
  std::atomic<const thread_context*> m_owner;
  std::atomic<std::int64_t> m_local{0};  // the owner's part of the count
  std::atomic<parker*> m_waiter{nullptr};
  std::atomic<completion_callback*> m_resumer{nullptr};
  wait_context* m_parent;
  // The one-byte fields together (a task_group is part of every fork-join coroutine's frame).
  std::atomic<bool> m_cancel{false};
  static constexpr std::uint8_t k_no_exception = 0;
  static constexpr std::uint8_t k_writing_exception = 1;
  static constexpr std::uint8_t k_has_exception = 2;
  std::atomic<std::uint8_t> m_exception_state{k_no_exception};
  // false while an owner may hold part of the count. Claims and the owner's folds of one
  // group take turns under a lock of a small table, picked by the group's address
  // (src/wait/wait_context.cpp, claim_lock_of): both happen at most once per group and wait.
  std::atomic<bool> m_claimed;
  std::atomic<std::uint64_t> m_seen_epoch;
  std::exception_ptr m_exception;
};

}  // namespace heist::detail

#include "heist/detail/wait/owner_count.hpp"  // the owner-counting members' definitions
