// other_threads_cpu() and cpu_seconds_since(): see measure.hpp.
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "../measure.hpp"

namespace bench {

thread_cpu_snapshot other_threads_cpu() {
  const long self = syscall(SYS_gettid);
  thread_cpu_snapshot snap;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return snap;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const long tid = std::strtol(entry->d_name, nullptr, 10);
    if (tid == self) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
    if (FILE* f = std::fopen(path, "r")) {
      unsigned long long ns = 0;
      if (std::fscanf(f, "%llu", &ns) == 1) snap.ns_by_tid.emplace_back(tid, ns);
      std::fclose(f);
    }
  }
  closedir(dir);
  std::sort(snap.ns_by_tid.begin(), snap.ns_by_tid.end());
  return snap;
}

double cpu_seconds_since(const thread_cpu_snapshot& before) {
  const thread_cpu_snapshot now = other_threads_cpu();
  double total = 0;
  for (const auto& [tid, ns] : now.ns_by_tid) {
    const auto it = std::lower_bound(before.ns_by_tid.begin(), before.ns_by_tid.end(),
                                     std::make_pair(tid, std::uint64_t{0}));
    const std::uint64_t base =
        it != before.ns_by_tid.end() && it->first == tid ? it->second : std::uint64_t{0};
    if (ns > base) total += static_cast<double>(ns - base) * 1e-9;
  }
  return total;
}

}  // namespace bench
