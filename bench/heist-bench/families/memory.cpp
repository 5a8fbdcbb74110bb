// Peak resident memory per workload and backend. Each measurement runs in a fresh
// process (heist-bench --probe-memory WORKLOAD BACKEND THREADS, this same binary): one
// untimed run of the workload on that backend, then the process's peak resident set
// (getrusage ru_maxrss) and its resident set just before the run. A fresh process per row,
// because a runtime's memory stays with the process (heist's task slabs, TBB's and libgomp's
// caches, malloc arenas): measured in one process, every row would show the largest run so
// far. The rows read "peak RSS (MiB)"; the note has the growth during the run.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../harness.hpp"
#include "../workloads/fork_join.hpp"

namespace bench {
namespace {

double resident_mib_now() {
  long pages_total = 0, pages_resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

double peak_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

// The workloads this family measures: name as printed, key for the child.
struct memory_case {
  const char* key;
  const char* label;
};
const std::vector<memory_case> k_cases = {{"fib", "fib(30)"},
                                          {"nqueens", "nqueens(12)"},
                                          {"uts", "uts(geo,d=10)"},
                                          {"uts-deep", "uts(binomial,1e7)"}};
const std::vector<backend_key> k_memory_backends = {
    {"heist", true}, {"tbb", true}, {"omp", true}, {"serial", true}};

template <class B>
std::uint64_t run_case(B& b, const std::string& key) {
  std::uint64_t v = 0;
  if (key == "fib") {
    b.run([&] { v = static_cast<std::uint64_t>(fib<B>(30)); });
  } else if (key == "nqueens") {
    b.run([&] { v = static_cast<std::uint64_t>(nqueens<B>(12, 0, 0, 0, 0)); });
  } else if (key == "uts") {
    uts_params up;
    up.max_depth = 10;
    b.run([&] { v = uts<B>(up.seed, 0, up); });
  } else if (key == "uts-deep") {
    const binomial_params bp;
    b.run([&] { v = uts_binomial<B>(bp.seed, 0, bp); });
  }
  return v;
}

// Runs one case in a child process; returns false if it failed.
bool probe(const std::string& key, const std::string& backend, int threads, double& peak,
           double& start) {
  const std::string cmd = "/proc/" + std::to_string(getpid()) + "/exe --probe-memory " + key + " " +
                          backend + " " + std::to_string(threads);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return false;
  const int got = std::fscanf(p, "memory-probe %lf %lf", &peak, &start);
  return pclose(p) == 0 && got == 2;
}

void memory_workloads(context& x) {
  if (!x.wants("memory")) return;
  const int threads = x.cfg.threads.empty() ? 1 : x.cfg.threads.back();
  for (const memory_case& c : k_cases) {
    for (const backend_key& k : k_memory_backends) {
      if (!x.cfg.wants_backend(k.key, k.quick)) continue;
      const int t = std::string(k.key) == "serial" ? 1 : threads;
      double peak = 0, start = 0;
      if (!probe(c.key, k.key, t, peak, start)) continue;  // backend not built in
      result r;
      r.group = "memory";
      r.workload = std::string("peak RSS: ") + c.label;
      r.backend = k.key;
      with_backend(k.key, t, [&](auto& b) { r.backend = b.name(); });
      r.threads = t;
      r.unit = "MiB";
      r.samples = {peak};
      char note[64];
      std::snprintf(note, sizeof note, "%+.1f MiB during the run", peak - start);
      r.note = note;
      r.stats = summarize(r.samples);
      print_progress(r);
      x.results.push_back(std::move(r));
    }
  }
}

const register_family k_registered{{15, "memory", {"memory"}, &memory_workloads}};

}  // namespace

// The child side: heist-bench --probe-memory WORKLOAD BACKEND THREADS.
int probe_memory_main(int argc, char** argv) {
  if (argc != 5) return 2;
  const std::string key = argv[2];
  const std::string backend = argv[3];
  const int threads = std::atoi(argv[4]);
  double start = 0;
  std::uint64_t v = 0;
  const bool ok = with_backend(backend, threads, [&](auto& b) {
    start = resident_mib_now();
    v = run_case(b, key);
  });
  if (!ok || v == 0) return 1;
  std::printf("memory-probe %.2f %.2f\n", peak_mib(), start);
  return 0;
}

}  // namespace bench
