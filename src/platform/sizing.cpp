// available_parallelism: the environment override, the affinity mask and
// the cgroup CPU quota. The parsing rules are in detail/platform/cpu_limits.hpp.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/detail/config.hpp"
#include "heist/detail/platform/cpu_limits.hpp"
#include "heist/sizing.hpp"
#include "platform/affinity_mask.hpp"
#include "platform/text_file.hpp"

namespace heist {
namespace detail {
namespace {

// A non-negative decimal integer, or nullopt (too long, or not digits).
std::optional<std::uint64_t> parse_u64(const std::string& s) {
  return parse_decimal(s, 18);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char ch : s) {
    if (ch == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  parts.push_back(cur);
  return parts;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// One mounted cgroup hierarchy: where it is mounted and which cgroup its root shows.
struct cgroup_mount {
  std::string mount_point;
  std::string root;  // the cgroup path the mount point shows ("/" usually)
};

// The mount of the v2 hierarchy (v2) or of the v1 hierarchy holding the cpu controller.
std::optional<cgroup_mount> find_mount(const std::string& mountinfo, bool v2) {
  std::istringstream lines(mountinfo);
  std::string line;
  while (std::getline(lines, line)) {
    // "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS"
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    if (!(head >> id >> parent >> dev >> root >> mount_point)) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype, source, super_options;
    if (!(tail >> fstype >> source)) continue;
    tail >> super_options;
    if (v2) {
      if (fstype == "cgroup2") return cgroup_mount{mount_point, root};
    } else if (fstype == "cgroup") {
      for (const std::string& opt : split(super_options, ','))
        if (opt == "cpu") return cgroup_mount{mount_point, root};
    }
  }
  return std::nullopt;
}

// The process's cgroup path in the v2 hierarchy ("0::/path") or in the v1 hierarchy of the
// cpu controller ("N:cpu,cpuacct:/path").
std::optional<std::string> find_cgroup_path(const std::string& proc_cgroup, bool v2) {
  std::istringstream lines(proc_cgroup);
  std::string line;
  while (std::getline(lines, line)) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = trim(line.substr(second + 1));
    if (path.empty() || path[0] != '/') continue;
    if (v2) {
      if (id == "0" && controllers.empty()) return path;
    } else {
      for (const std::string& c : split(controllers, ','))
        if (c == "cpu") return path;
    }
  }
  return std::nullopt;
}

// The quota in one cgroup directory, nullopt if none (or unreadable).
std::optional<double> quota_in(const std::string& dir, bool v2) {
  std::string text;
  if (v2) {
    if (!read_file(dir + "/cpu.max", text)) return std::nullopt;
    std::istringstream in(text);
    std::string quota, period;
    if (!(in >> quota >> period) || quota == "max") return std::nullopt;
    const auto q = parse_u64(quota), p = parse_u64(period);
    if (!q || !p || *p == 0 || *q == 0) return std::nullopt;
    return static_cast<double>(*q) / static_cast<double>(*p);
  }
  std::string period_text;
  if (!read_file(dir + "/cpu.cfs_quota_us", text) ||
      !read_file(dir + "/cpu.cfs_period_us", period_text)) {
    return std::nullopt;
  }
  const auto q = parse_u64(trim(text)), p = parse_u64(trim(period_text));  // "-1": no digits
  if (!q || !p || *p == 0 || *q == 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

// The smallest quota over the cgroup and its ancestors in one hierarchy.
std::optional<double> hierarchy_quota(const std::string& root, const std::string& proc_cgroup,
                                      const std::string& mountinfo, bool v2) {
  const auto mount = find_mount(mountinfo, v2);
  const auto path = find_cgroup_path(proc_cgroup, v2);
  if (!mount || !path) return std::nullopt;
  // The part of the path below what the mount shows. A path outside the mount's root (a
  // cgroup namespace that hides the prefix) is taken as relative to the mount point.
  std::string rel = *path;
  if (mount->root != "/" && rel.compare(0, mount->root.size(), mount->root) == 0 &&
      (rel.size() == mount->root.size() || rel[mount->root.size()] == '/')) {
    rel = rel.substr(mount->root.size());
  }
  std::vector<std::string> parts;
  for (const std::string& p : split(rel, '/'))
    if (!p.empty() && p != "." && p != "..") parts.push_back(p);
  std::optional<double> best;
  std::string dir = root + mount->mount_point;
  auto consider = [&](const std::string& d) {
    if (auto q = quota_in(d, v2); q && (!best || *q < *best)) best = q;
  };
  consider(dir);
  for (const std::string& p : parts) {
    dir += "/" + p;
    consider(dir);
  }
  return best;
}

}  // namespace

std::optional<double> cgroup_cpu_quota(const std::string& root) {
  std::string proc_cgroup, mountinfo;
  if (!read_file(root + "/proc/self/cgroup", proc_cgroup) ||
      !read_file(root + "/proc/self/mountinfo", mountinfo)) {
    return std::nullopt;
  }
  const auto v2 = hierarchy_quota(root, proc_cgroup, mountinfo, true);
  const auto v1 = hierarchy_quota(root, proc_cgroup, mountinfo, false);
  if (v2 && v1) return std::min(*v2, *v1);
  return v2 ? v2 : v1;
}

std::optional<std::size_t> affinity_cpu_count() {
  const auto mask = affinity_mask::of_calling_thread();
  if (!mask || mask->count() == 0) return std::nullopt;
  return mask->count();
}

std::optional<std::size_t> parse_num_threads(const char* value) {
  if (value == nullptr) return std::nullopt;
  const std::string s = value;
  const auto n = parse_u64(s);
  if (!n || *n < 1 || *n > k_max_workers) {
    throw std::invalid_argument("heist: HEIST_NUM_THREADS must be an integer between 1 and " +
                                std::to_string(k_max_workers) + ", got \"" + s + "\"");
  }
  return static_cast<std::size_t>(*n);
}

parallelism_report explain_parallelism() {
  parallelism_report r;
  r.hardware = std::thread::hardware_concurrency();
  r.env = parse_num_threads(std::getenv("HEIST_NUM_THREADS"));
  const char* root = std::getenv("HEIST_CGROUP_ROOT");
  r.affinity = affinity_cpu_count();
  r.quota = cgroup_cpu_quota(root != nullptr ? root : "");
  if (r.env) {
    r.chosen = *r.env;
    r.reason = "HEIST_NUM_THREADS";
    return r;
  }
  std::size_t n = r.affinity ? *r.affinity : std::max<std::size_t>(1, r.hardware);
  r.reason = r.affinity ? "affinity mask" : "hardware_concurrency";
  if (r.quota) {
    // Rounded up: a quota of 1.5 CPUs keeps two threads busy 75% of the time each.
    const double q = std::ceil(*r.quota - 1e-9);
    if (q < static_cast<double>(n)) {
      n = static_cast<std::size_t>(std::max(1.0, q));
      r.reason = "cgroup CPU quota";
    }
  }
  r.chosen = std::clamp<std::size_t>(n, 1, k_max_workers);
  return r;
}

}  // namespace detail

std::size_t available_parallelism() {
  return detail::explain_parallelism().chosen;
}

}  // namespace heist
