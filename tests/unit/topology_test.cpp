// Topology: the cache and NUMA layout read from sysfs fixtures, the victim order
// of a topology-aware thief, the choice of a near sleeper, and a whole executor running on
// an injected two-domain topology (HEIST_SYSFS_ROOT is set before anything reads it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "heist/detail/platform/topology.hpp"
#include "heist/detail/sleep/idle_state.hpp"
#include "heist/heist.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using heist::detail::parse_cpu_list;
using heist::detail::read_topology;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A two-socket machine: `cpus` CPUs, each socket one L3 and one NUMA node; per-core L1d,
// L1i and L2 (which must not be mistaken for the last level).
fs::path make_two_socket(const std::string& name, unsigned cpus) {
  const fs::path root = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()));
  fs::remove_all(root);
  const fs::path cpu = root / "sys/devices/system/cpu";
  write(cpu / "possible", "0-" + std::to_string(cpus - 1) + "\n");
  const unsigned half = cpus / 2;
  const std::string s0 = "0-" + std::to_string(half - 1);
  const std::string s1 = std::to_string(half) + "-" + std::to_string(cpus - 1);
  for (unsigned c = 0; c < cpus; ++c) {
    const fs::path cache = cpu / ("cpu" + std::to_string(c)) / "cache";
    const std::string self = std::to_string(c);
    write(cache / "index0/level", "1\n");
    write(cache / "index0/type", "Data\n");
    write(cache / "index0/shared_cpu_list", self + "\n");
    write(cache / "index1/level", "1\n");
    write(cache / "index1/type", "Instruction\n");
    write(cache / "index1/shared_cpu_list", self + "\n");
    write(cache / "index2/level", "2\n");
    write(cache / "index2/type", "Unified\n");
    write(cache / "index2/shared_cpu_list", self + "\n");
    write(cache / "index3/level", "3\n");
    write(cache / "index3/type", "Unified\n");
    write(cache / "index3/shared_cpu_list", (c < half ? s0 : s1) + "\n");
  }
  write(root / "sys/devices/system/node/node0/cpulist", s0 + "\n");
  write(root / "sys/devices/system/node/node1/cpulist", s1 + "\n");
  write(root / "sys/devices/system/node/online", "0-1\n");  // not a nodeN directory
  return root;
}

// Before main: the executor test below runs on a machine whose two CPUs (0 and 1, this
// machine's) sit in different cache domains.
const fs::path g_injected = [] {
  const fs::path root = make_two_socket("heist-topo-injected", 2);
  setenv("HEIST_SYSFS_ROOT", root.c_str(), 1);
  return root;
}();

TEST(Topology, ParsesCpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<std::uint32_t>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<std::uint32_t>{5}));
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_EQ(parse_cpu_list("x,2,3-1,4-y,7"), (std::vector<std::uint32_t>{2, 7}));
}

TEST(Topology, ReadsLastLevelCacheDomainsAndNumaNodes) {
  const fs::path root = make_two_socket("heist-topo-16", 16);
  const auto t = read_topology(root.string());
  ASSERT_EQ(t.llc_of_cpu.size(), 16u);
  for (unsigned c = 0; c < 16; ++c) {
    EXPECT_EQ(t.llc_of_cpu[c], c < 8 ? 0u : 8u) << "cpu " << c;
    EXPECT_EQ(t.node_of_cpu[c], c < 8 ? 0u : 1u) << "cpu " << c;
  }
  EXPECT_EQ(t.llc_domains(), 2u);
  EXPECT_EQ(t.numa_nodes(), 2u);
  EXPECT_EQ(t.domain_of(12), 8u);
  EXPECT_EQ(t.domain_of(99), 0u);
  EXPECT_EQ(t.domain_of(-1), 0u);
  fs::remove_all(root);
}

TEST(Topology, MissingSysfsMeansOneDomain) {
  const auto t = read_topology("/nonexistent/heist");
  EXPECT_TRUE(t.llc_of_cpu.empty());
  EXPECT_LE(t.llc_domains(), 1u);
}

TEST(Topology, ThiefTriesEveryNearVictimBeforeAnyFarOne) {
  // Slots 0..7: domains as a migrating pool might leave them.
  const std::vector<std::uint32_t> domain = {0, 8, 0, 8, 8, 0, 0, 8};
  for (std::size_t self = 0; self < domain.size(); ++self) {
    for (std::size_t start = 0; start < domain.size(); ++start) {
      std::vector<std::size_t> tried;
      const std::size_t got = heist::detail::try_near_victims(
          self, domain.size(), domain[self], start, [&](std::size_t v) { return domain[v]; },
          [&](std::size_t v) {
            tried.push_back(v);
            return false;  // nothing to steal: every near victim gets its attempt
          });
      EXPECT_EQ(got, domain.size());
      std::vector<std::size_t> expected;
      for (std::size_t k = 0; k < domain.size(); ++k) {
        const std::size_t v = (start + k) % domain.size();
        if (v != self && domain[v] == domain[self]) expected.push_back(v);
      }
      EXPECT_EQ(tried, expected) << "self " << self << " start " << start;
    }
  }
  // The first near victim with work ends the pass.
  std::size_t calls = 0;
  const std::size_t got = heist::detail::try_near_victims(
      0, domain.size(), 0, 0, [&](std::size_t v) { return domain[v]; },
      [&](std::size_t v) {
        ++calls;
        return v == 5;
      });
  EXPECT_EQ(got, 5u);
  EXPECT_EQ(calls, 2u);  // 2, then 5
}

TEST(Topology, WakerPrefersASleeperOfItsOwnDomain) {
  using heist::detail::sleeper;
  sleeper s[4];
  const std::uint32_t domains[] = {8, 8, 0, 0};
  for (int i = 0; i < 4; ++i) {
    s[i].m_domain = domains[i];
    s[i].m_next = i + 1 < 4 ? &s[i + 1] : nullptr;
  }
  EXPECT_EQ(heist::detail::nearest_sleeper(&s[0], 0, 8), &s[2]);
  EXPECT_EQ(heist::detail::nearest_sleeper(&s[0], 8, 8), &s[0]);
  EXPECT_EQ(heist::detail::nearest_sleeper(&s[0], 3, 8), &s[0]);  // none near: the head
  EXPECT_EQ(heist::detail::nearest_sleeper(&s[0], 0, 2), &s[0]);  // beyond the scan: the head
  EXPECT_EQ(heist::detail::nearest_sleeper(nullptr, 0, 8), nullptr);
}

TEST(Topology, ExecutorRunsOnAnInjectedTwoDomainMachine) {
  ASSERT_TRUE(heist::detail::multi_domain()) << "HEIST_SYSFS_ROOT was not read";
  EXPECT_EQ(heist::detail::machine_topology().llc_domains(), 2u);
  heist::executor ex(4);
  // Fork-join, loops and outside submissions over the topology-aware paths.
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ(ex.submit([] { return heist_test::fork_join_fib(20); }).get(), 6765);
    std::atomic<int> ran{0};
    for (int i = 0; i < 200; ++i)
      ex.post([&] { ran.fetch_add(1); });
    ex.wait_idle();
    EXPECT_EQ(ran.load(), 200);
  }
  const auto st = ex.stats();
  EXPECT_GE(st.executed(), 20u * 200u);
}

}  // namespace
