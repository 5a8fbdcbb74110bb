// cpu_limits: the pieces of available_parallelism() (src/platform/sizing.cpp), exposed for the
// tests and for heist-bench's report of why it chose its sizes.
//
// The cgroup quota. A process's cgroups are named in /proc/self/cgroup ("0::/path" for v2,
// "N:cpu,cpuacct:/path" for v1); where each hierarchy is mounted comes from
// /proc/self/mountinfo (filesystem type cgroup2, or cgroup with the cpu controller among the
// super options; the mount's root field says which part of the hierarchy it shows, as in a
// container that sees its own cgroup as "/"). A limit set on any ancestor applies too, so the
// effective quota is the smallest over the cgroup and its ancestors up to the mount point.
// v2: cpu.max is "max PERIOD" or "QUOTA PERIOD"; v1: cpu.cfs_quota_us (-1: none) over
// cpu.cfs_period_us. Hybrid machines have both; the smaller quota wins. Every missing,
// unreadable or malformed file means "no limit here", never an error: sizing must not fail
// because of an exotic /proc.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "heist/detail/config.hpp"

namespace heist::detail {

// The CPU quota (in CPUs, fractional) of the cgroups the files under `root` describe: root
// is prepended to /proc/self/cgroup, /proc/self/mountinfo and the mount points they name
// ("" for the real system; a fixture directory in the tests). nullopt: no quota.
HEIST_API std::optional<double> cgroup_cpu_quota(const std::string& root);

// The number of CPUs in this thread's affinity mask (sched_getaffinity); nullopt if the call
// failed.
HEIST_API std::optional<std::size_t> affinity_cpu_count();

// HEIST_NUM_THREADS's value parsed: nullopt when `value` is null (unset); 1..4096 else;
// std::invalid_argument naming HEIST_NUM_THREADS for anything else.
HEIST_API std::optional<std::size_t> parse_num_threads(const char* value);

// What available_parallelism() saw and chose, for reports.
struct parallelism_report {
  std::optional<std::size_t> env;       // HEIST_NUM_THREADS
  std::optional<std::size_t> affinity;  // CPUs in the affinity mask
  std::optional<double> quota;          // cgroup CPU quota, in CPUs
  std::size_t hardware = 0;             // std::thread::hardware_concurrency()
  std::size_t chosen = 0;               // available_parallelism()
  const char* reason = "";              // "HEIST_NUM_THREADS", "affinity mask", ...
};
// Root of the cgroup files: HEIST_CGROUP_ROOT if set (a test hook), else "".
HEIST_API parallelism_report explain_parallelism();

}  // namespace heist::detail
