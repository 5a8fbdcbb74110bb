// Sizing: how many CPUs this process may use.
#pragma once

#include <cstddef>

#include "heist/detail/config.hpp"

namespace heist {

// CPUs this process may use: HEIST_NUM_THREADS if set (1..4096; anything else, empty
// included, is std::invalid_argument naming HEIST_NUM_THREADS); else the smallest of the
// CPU affinity mask's count and the cgroup CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us /
// cpu.cfs_period_us, of the process's own cgroup and its ancestors), rounded up; at least 1,
// at most 4096. A cgroup file that is missing or unreadable means no limit, never an error.
// Read again at every call (the affinity mask and the quota can change at run time).
HEIST_API std::size_t available_parallelism();

}  // namespace heist
