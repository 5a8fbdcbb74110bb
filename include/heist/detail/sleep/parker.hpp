// parker: the one place a heist thread blocks its OS thread. Each thread owns one parker;
// wakers set bits in its 32-bit word and wake it through a futex (Linux) or
// std::atomic::wait (elsewhere). Two independent reasons share the word:
//   k_work  - the executor's sleep protocol handed this thread new work to look for;
//   k_group - the wait_context this thread sleeps on finished (see wait_context.hpp).
// Keeping them apart lets a waiter tell "go look for work" from "your wait is over", which
// the wait_context protocol needs to know when the group may be destroyed.
#pragma once

#include <atomic>
#include <cstdint>

#include "heist/detail/config.hpp"

namespace heist::detail {

HEIST_API void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept;
// As futex_wait, but returns after at most `timeout_ns` nanoseconds.
HEIST_API void futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                              std::int64_t timeout_ns) noexcept;
HEIST_API void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept;

class HEIST_API parker {
 public:
  static constexpr std::uint32_t k_work = 1;
  static constexpr std::uint32_t k_group = 2;

  // Waker side. release: pairs with the acquire in wait_for/take, so what the waker wrote
  // before signalling (queued work, a finished group's results) is visible to the woken.
  void signal(std::uint32_t reason) noexcept {
    m_word.fetch_or(reason, std::memory_order_release);
    futex_wake_one(m_word);
  }

  // Owner side: block until one of `reasons` is set; returns and clears the set bits among
  // them. Bits outside `reasons` are left for a later call.
  std::uint32_t wait_for(std::uint32_t reasons) noexcept {
    for (;;) {
      // acquire: pairs with signal().
      std::uint32_t w = m_word.load(std::memory_order_acquire);
      if ((w & reasons) != 0) {
        // acq_rel: the clear must not lose a concurrent fetch_or of another reason.
        m_word.fetch_and(~(w & reasons), std::memory_order_acq_rel);
        return w & reasons;
      }
      futex_wait(m_word, w);
    }
  }

  // As wait_for, but gives up after about `timeout_ns`; returns 0 then.
  std::uint32_t wait_for(std::uint32_t reasons, std::int64_t timeout_ns) noexcept {
    // acquire: pairs with signal().
    std::uint32_t w = m_word.load(std::memory_order_acquire);
    if ((w & reasons) == 0) {
      futex_wait_for(m_word, w, timeout_ns);
      w = m_word.load(std::memory_order_acquire);  // acquire: as above
    }
    if ((w & reasons) == 0) return 0;
    // acq_rel: as in wait_for above (an RMW, so a concurrent signal's bit is kept).
    m_word.fetch_and(~(w & reasons), std::memory_order_acq_rel);
    return w & reasons;
  }

  // Owner side, non-blocking: clears and returns the set bits among `reasons`.
  std::uint32_t take(std::uint32_t reasons) noexcept {
    // acq_rel: acquire pairs with signal(); the RMW cannot lose another reason's bit.
    return m_word.fetch_and(~reasons, std::memory_order_acq_rel) & reasons;
  }

 private:
  std::atomic<std::uint32_t> m_word{0};
};

}  // namespace heist::detail
