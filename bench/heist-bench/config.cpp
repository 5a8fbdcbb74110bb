// heist-bench command-line parsing.
#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "config.hpp"

#include <heist/sizing.hpp>

namespace bench {
namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// A count from the command line: the whole text a number, from 1 to `max`; the message names
// the option and the text (std::stoi alone said "stoi", and took "4x" for 4).
int count_of(const std::string& option, const std::string& text, int max) {
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    throw std::invalid_argument(option + ": '" + text + "' is not a whole number");
  }
  if (n < 1) throw std::invalid_argument(option + ": " + text + " is below 1");
  if (n > max) {
    throw std::invalid_argument(option + ": " + text + " is above " + std::to_string(max));
  }
  return n;
}

// heist's executor takes at most 4,096 workers; a larger count would throw
// from a backend's constructor in the middle of the run.
constexpr int k_max_threads = 4096;

const char* k_usage =
    "usage: heist-bench [--full] [--workloads a,b] [--backends x,y] [--threads 1,2]\n"
    "                   [--reps N] [--out DIR] [--trace] [--analyze] [--verbose] [--list]\n"
    "                   [--help]\n";

}  // namespace

const char* const k_help =
    "usage: heist-bench [options]\n"
    "\n"
    "Runs each workload on each backend at each thread count, side by side in one run, and\n"
    "prints one table, then a summary per family (heist's time / the other's: below 1, heist\n"
    "is faster). Writes report.md (summary first), SVG charts and results.csv to --out.\n"
    "\n"
    "options (default in brackets):\n"
    "  --workloads a,b   run only these workloads [every workload; --list names them]\n"
    "  --backends x,y    run only these backends [each workload's usual set; --full: all]\n"
    "  --threads 1,2     thread counts [1 .. available_parallelism()]\n"
    "  --reps N          timed repetitions per row [each workload's own: 3-11, more with --full]\n"
    "  --full            bigger inputs, every backend, more repetitions [off]\n"
    "  --out DIR         where report.md, the charts and results.csv go [bench-out]\n"
    "  --trace           also write one heist trace per workload, JSON and SVG [off]\n"
    "  --analyze         also print heist::analyze's work, span and predicted speedup of the\n"
    "                    fork-join workloads and a graph, and check the prediction against\n"
    "                    measured 2-thread speedups; charts to --out [off]\n"
    "  --verbose         print each row as it is measured, and diagnostics of slow samples\n"
    "                    in the notes [off]\n"
    "  --list            print the workloads (what each measures) and backends, then exit\n"
    "  --help            print this, then exit\n"
    "\n"
    "Progress goes to stderr, one line per workload as it starts.\n";

void check_names(const config& c, const std::vector<std::string>& workloads,
                 const std::vector<std::string>& backends) {
  auto check = [](const std::set<std::string>& given, const std::vector<std::string>& known,
                  const char* option, const char* what) {
    for (const std::string& name : given) {
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        throw std::invalid_argument(std::string(option) + ": no " + what + " named '" + name +
                                    "' (heist-bench --list names them)");
      }
    }
  };
  check(c.workloads, workloads, "--workloads", "workload");
  check(c.backends, backends, "--backends", "backend");
}

config parse_config(int argc, char** argv) {
  config c;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value\n" + k_usage);
      return argv[++i];
    };
    if (arg == "--full") {
      c.full = true;
    } else if (arg == "--trace") {
      c.trace = true;
    } else if (arg == "--analyze") {
      c.analyze = true;
    } else if (arg == "--list") {
      c.list = true;
    } else if (arg == "--workloads") {
      for (auto& w : split(value()))
        c.workloads.insert(w);
    } else if (arg == "--backends") {
      for (auto& b : split(value()))
        c.backends.insert(b);
    } else if (arg == "--threads") {
      c.threads_given = true;
      for (auto& t : split(value()))
        c.threads.push_back(count_of("--threads", t, k_max_threads));
    } else if (arg == "--reps") {
      c.reps = count_of("--reps", value(), std::numeric_limits<int>::max());
    } else if (arg == "--out") {
      c.out = value();
    } else if (arg == "-h" || arg == "--help") {
      c.help = true;
    } else if (arg == "--verbose") {
      c.verbose = true;
    } else {
      throw std::invalid_argument("unknown option " + arg + "\n" + k_usage);
    }
  }
  if (c.threads.empty()) {
    // 1..available_parallelism(): what this process may use (affinity mask, cgroup quota,
    // HEIST_NUM_THREADS), not the machine's core count.
    const int cores = static_cast<int>(heist::available_parallelism());
    for (int t = 1; t <= cores; ++t)
      c.threads.push_back(t);
  }
  return c;
}

}  // namespace bench
