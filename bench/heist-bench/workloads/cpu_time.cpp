// other_threads_cpu_seconds(): see measure.hpp.
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "../measure.hpp"

namespace bench {

double other_threads_cpu_seconds() {
  const long self = syscall(SYS_gettid);
  double total = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const long tid = std::strtol(entry->d_name, nullptr, 10);
    if (tid == self) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
    if (FILE* f = std::fopen(path, "r")) {
      unsigned long long ns = 0;
      if (std::fscanf(f, "%llu", &ns) == 1) total += static_cast<double>(ns) * 1e-9;
      std::fclose(f);
    }
  }
  closedir(dir);
  return total;
}

}  // namespace bench
