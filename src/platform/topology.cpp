// topology: reading the cache and NUMA layout from sysfs (detail/platform/topology.hpp).
#include "heist/detail/platform/topology.hpp"

#include "platform/text_file.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

namespace heist::detail {
namespace {

bool parse_uint(const std::string& s, std::uint32_t& out) {
  const auto v = parse_decimal(s, 9);
  if (v) out = static_cast<std::uint32_t>(*v);
  return v.has_value();
}

}  // namespace

std::size_t cpu_topology::llc_domains() const {
  return std::set<std::uint32_t>(llc_of_cpu.begin(), llc_of_cpu.end()).size();
}

std::size_t cpu_topology::numa_nodes() const {
  return std::set<std::uint32_t>(node_of_cpu.begin(), node_of_cpu.end()).size();
}

std::vector<std::uint32_t> parse_cpu_list(const std::string& text) {
  std::vector<std::uint32_t> cpus;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    part.erase(
        std::remove_if(part.begin(), part.end(), [](char ch) { return ch == ' ' || ch == '\n'; }),
        part.end());
    const auto dash = part.find('-');
    std::uint32_t lo = 0, hi = 0;
    if (dash == std::string::npos) {
      if (parse_uint(part, lo)) cpus.push_back(lo);
    } else if (parse_uint(part.substr(0, dash), lo) && parse_uint(part.substr(dash + 1), hi) &&
               lo <= hi && hi - lo < (1u << 16)) {
      for (std::uint32_t c = lo; c <= hi; ++c)
        cpus.push_back(c);
    }
  }
  return cpus;
}

cpu_topology read_topology(const std::string& root) {
  namespace fs = std::filesystem;
  cpu_topology t;
  const std::string cpu_dir = root + "/sys/devices/system/cpu";
  std::string text;
  if (!read_file(cpu_dir + "/possible", text) && !read_file(cpu_dir + "/online", text)) return t;
  const std::vector<std::uint32_t> cpus = parse_cpu_list(text);
  if (cpus.empty()) return t;
  const std::uint32_t max_cpu = *std::max_element(cpus.begin(), cpus.end());
  t.llc_of_cpu.assign(max_cpu + 1, 0);
  t.node_of_cpu.assign(max_cpu + 1, 0);
  for (std::uint32_t cpu : cpus) {
    // The last-level cache: the highest level among the data and unified caches.
    std::uint32_t best_level = 0, domain = cpu;
    std::error_code ec;
    const std::string cache = cpu_dir + "/cpu" + std::to_string(cpu) + "/cache";
    for (const auto& e : fs::directory_iterator(cache, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("index", 0) != 0) continue;
      std::string level_text, type, shared;
      std::uint32_t level = 0;
      if (!read_file(e.path().string() + "/level", level_text) ||
          !parse_uint(level_text.substr(0, level_text.find('\n')), level)) {
        continue;
      }
      if (read_file(e.path().string() + "/type", type) && type.rfind("Instruction", 0) == 0) {
        continue;
      }
      if (level <= best_level || !read_file(e.path().string() + "/shared_cpu_list", shared)) {
        continue;
      }
      const auto sharing = parse_cpu_list(shared);
      if (sharing.empty()) continue;
      best_level = level;
      domain = *std::min_element(sharing.begin(), sharing.end());
    }
    t.llc_of_cpu[cpu] = domain;
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root + "/sys/devices/system/node", ec)) {
    const std::string name = e.path().filename().string();
    std::uint32_t node = 0;
    if (name.rfind("node", 0) != 0 || !parse_uint(name.substr(4), node)) continue;
    if (!read_file(e.path().string() + "/cpulist", text)) continue;
    for (std::uint32_t cpu : parse_cpu_list(text))
      if (cpu <= max_cpu) t.node_of_cpu[cpu] = node;
  }
  return t;
}

const cpu_topology& machine_topology() {
  // Never destroyed: the default executor's workers (which are never joined) read it until
  // the process ends, after static destructors ran (ThreadSanitizer caught the race).
  static const cpu_topology* const t = [] {
    const char* root = std::getenv("HEIST_SYSFS_ROOT");
    return new cpu_topology(read_topology(root != nullptr ? root : ""));
  }();
  return *t;
}

bool multi_domain() noexcept {
  static const bool multi = machine_topology().llc_domains() > 1;
  return multi;
}

std::uint32_t current_domain() noexcept {
  if (!multi_domain()) return 0;
  return machine_topology().domain_of(sched_getcpu());
}

}  // namespace heist::detail
