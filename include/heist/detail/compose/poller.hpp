// poller: completions that arrive outside heist and must be asked for (MPI requests through
// heist::mpi). The core library knows nothing of MPI; it gives an executor
// one optional poller, and its idle threads drive it:
//   - a worker (or stand-in) searching for a task polls at each search round;
//   - while pending() is nonzero it parks with a timeout (20 us, doubling to 1 ms while polls
//     find nothing) instead of indefinitely, and polls again when it wakes;
//   - a busy worker polls at a task boundary at most every 20 us, so requests progress
//     while every worker computes;
//   - a thread helping in a wait on the executor's default arena polls at each search round;
//   - with nothing pending, nothing changes: workers park as before, no CPU.
// Registering an item is a publication (docs/design/async.md, "Polled completions"): the registrant
// raises pending() (seq_cst RMW), fences, and wakes a roamer if none searches and one sleeps
// (notify_poll_pending below); a parking worker reads pending() after its S2 fence.
// poll() must never block: it is called on worker threads between tasks.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "heist/detail/config.hpp"

namespace heist::detail {

class HEIST_API poller {
 public:
  virtual ~poller() = default;
  // Asks once for completions and delivers them; true if any completed. May be called by
  // several threads at once (an implementation that must serialize uses a try-lock and
  // returns false when busy). Never blocks, never throws.
  virtual bool poll() noexcept = 0;
  // Items registered and not yet completed. acquire: pairs with the seq_cst RMWs of
  // add_pending/remove_pending.
  std::size_t pending() const noexcept { return m_pending.load(std::memory_order_acquire); }
  // The count itself, which each arena of the executor reads between tasks
  // (arena::poll_pending).
  const std::atomic<std::size_t>& pending_count() const noexcept { return m_pending; }

 protected:
  // seq_cst: the registrant's half of the Dekker pair with a parking worker (the file comment).
  void add_pending(std::size_t n) noexcept { m_pending.fetch_add(n, std::memory_order_seq_cst); }
  void remove_pending(std::size_t n) noexcept { m_pending.fetch_sub(n, std::memory_order_seq_cst); }

 private:
  std::atomic<std::size_t> m_pending{0};
};

class executor_impl;

// The executor's poller, created by `make` on first use (one per executor, owned by it).
HEIST_API poller& install_poller(executor_impl& exec,
                                 std::unique_ptr<poller> (*make)(executor_impl&));
// The poller install_poller created, or nullptr.
HEIST_API poller* installed_poller(executor_impl& exec) noexcept;
// After a registrant raised pending(): wakes a roamer to poll if none searches (P2-P4).
HEIST_API void notify_poll_pending(executor_impl& exec) noexcept;

}  // namespace heist::detail
