// heist-bench command-line parsing.
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

const char* k_usage =
    "usage: heist-bench [--full] [--workloads a,b] [--backends x,y] [--threads 1,2]\n"
    "                   [--reps N] [--out DIR] [--trace] [--list]\n";

}  // namespace

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
      for (auto& t : split(value())) {
        const int n = std::stoi(t);
        if (n < 1) throw std::invalid_argument("--threads: counts must be at least 1");
        c.threads.push_back(n);
      }
    } else if (arg == "--reps") {
      c.reps = std::stoi(value());
      if (c.reps < 1) throw std::invalid_argument("--reps must be at least 1");
    } else if (arg == "--out") {
      c.out = value();
    } else if (arg == "-h" || arg == "--help") {
      throw std::invalid_argument(k_usage);
    } else {
      throw std::invalid_argument("unknown option " + arg + "\n" + k_usage);
    }
  }
  if (c.threads.empty()) {
    // 1..available_parallelism(): what this process may use (affinity mask, cgroup quota,
    // HEIST_NUM_THREADS; SPEC section 12), not the machine's core count.
    const int cores = static_cast<int>(heist::available_parallelism());
    for (int t = 1; t <= cores; ++t)
      c.threads.push_back(t);
  }
  return c;
}

}  // namespace bench
