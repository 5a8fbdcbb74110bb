// process_barrier: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) behind a function, for the
// asymmetric protocols that let a hot path run without a fence while a rare path pays for
// both sides (owner-counted joins, wait_context.hpp; fence-free pops, chase_lev_deque.hpp).
// Defined in src/wait/owner_counting.cpp, which registers it once when the first executor starts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"

namespace heist::detail {

// Executes a full memory barrier on every CPU that is running a thread of this process. Only
// called once enable_owner_counting() found it available (g_owner_counting, wait_context.hpp).
HEIST_API void process_wide_barrier() noexcept;
// How many times process_wide_barrier() ran in this process (for tests and statistics).
HEIST_API std::uint64_t process_wide_barriers_run() noexcept;

// The retry_pops to give chase_lev_deque::enable_fence_free_pops (max_retry_pops: 1024 times
// it) for the deques of an executor with `workers` workers, or 0 to keep its pops fenced: where the
// barrier is available, the executor small enough that a barrier interrupting every CPU of the
// process now and then is cheap (k_fence_free_max_workers), and HEIST_FENCE_FREE_POPS is not "0".
// Valid once enable_owner_counting() ran.
inline constexpr std::size_t k_fence_free_max_workers = 8;
inline constexpr std::uint32_t k_fence_free_max_retry_factor = 1024;
HEIST_API std::uint32_t fence_free_retry_pops(std::size_t workers) noexcept;

}  // namespace heist::detail
