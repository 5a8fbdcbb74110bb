// topology: which CPUs share a last-level cache (a "cache domain") and which NUMA node each
// CPU is on, read from Linux's sysfs (/sys/devices/system/cpu/cpuN/cache/indexK and
// /sys/devices/system/node/nodeN/cpulist: the files hwloc itself reads; heist's core keeps
// no dependency, so it reads them directly). Anything missing means "one domain".
//
// What the scheduler does with it (docs/design/loops-arenas.md, "Topology"): when the machine has
// more than one cache domain, each worker notes the domain of the CPU it runs on when it starts
// searching (workers are not pinned: the OS may move them, so the note is refreshed at every
// search); a thief with steal_policy::sticky_random tries its sticky victim, then every victim
// noted in its own domain (from a random start), and only then random victims anywhere; and
// a publisher that wakes a sleeper prefers one that slept in its own domain. With one domain
// (this machine, most laptops, most containers) none of it runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "heist/detail/config.hpp"

namespace heist::detail {

struct HEIST_API cpu_topology {
  // Per CPU number: the cache domain (the smallest CPU number sharing its last-level cache)
  // and the NUMA node; empty when unknown.
  std::vector<std::uint32_t> llc_of_cpu;
  std::vector<std::uint32_t> node_of_cpu;
  std::size_t llc_domains() const;
  std::size_t numa_nodes() const;
  // The cache domain of `cpu`; 0 when unknown.
  std::uint32_t domain_of(int cpu) const noexcept {
    return cpu >= 0 && static_cast<std::size_t>(cpu) < llc_of_cpu.size() ? llc_of_cpu[cpu] : 0;
  }
};

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; malformed parts are skipped.
HEIST_API std::vector<std::uint32_t> parse_cpu_list(const std::string& text);
// Reads the topology below `root` ("" for the machine; a fixture tree in the tests).
HEIST_API cpu_topology read_topology(const std::string& root);
// The machine's topology, read once (HEIST_SYSFS_ROOT, a test hook, replaces the root).
HEIST_API const cpu_topology& machine_topology();
// Whether the scheduler's topology paths run at all (more than one cache domain).
HEIST_API bool multi_domain() noexcept;
// The cache domain of the CPU the calling thread runs on now (0 with one domain).
HEIST_API std::uint32_t current_domain() noexcept;

// One round of a topology-aware thief (the file comment): calls try_victim(v) for every
// victim v != self in [0, n) whose domain_of(v) is `mine`, starting at `start` and walking
// around, until try_victim returns true; then returns that victim, or n if none agreed.
template <class DomainOf, class TryVictim>
std::size_t try_near_victims(std::size_t self, std::size_t n, std::uint32_t mine, std::size_t start,
                             DomainOf&& domain_of, TryVictim&& try_victim) {
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = (start + k) % n;
    if (v == self || domain_of(v) != mine) continue;
    if (try_victim(v)) return v;
  }
  return n;
}

}  // namespace heist::detail
