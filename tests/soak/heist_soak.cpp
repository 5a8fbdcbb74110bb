// heist-soak: runs random self-checking programs (tests/support/program.hpp: groups with
// nested spawns, exceptions, cancellations, futures, loops with every partitioner, arenas,
// isolate, blocking) from several threads against one long-lived executor, for a given
// time. Alongside, it posts counted tasks and checks at the end that every one ran exactly
// once, and it samples memory: after a warm-up, resident memory and task memory must stay
// flat. Exit status 0 means no check failed.
//
//   heist-soak [seconds] [--submitters N] [--workers W]      (defaults: 60, 3, cores)
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "heist/detail/core/task_pool.hpp"
#include "heist/heist.hpp"
#include "program.hpp"

namespace {

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 60;
  std::size_t submitters = 3;
  std::size_t workers = std::max(1u, std::thread::hardware_concurrency());
  // A count: the whole text a number of at least 1, or exit status 2 with a message naming the
  // option (std::stoi alone ended the program in std::terminate, saying "stoi").
  auto count_of = [](const std::string& option, const std::string& text,
                     unsigned long max) -> unsigned long {
    std::size_t used = 0;
    unsigned long n = 0;
    try {
      n = std::stoul(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || text[0] == '-' || n < 1 || n > max) {
      std::fprintf(stderr, "heist-soak: %s: '%s' is not a count from 1 to %lu\n", option.c_str(),
                   text.c_str(), max);
      std::exit(2);
    }
    return n;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--submitters" || arg == "--workers") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "heist-soak: %s needs a value\n", arg.c_str());
        return 2;
      }
      // --workers: at most the executor's limit, which would otherwise throw.
      (arg == "--submitters" ? submitters : workers) =
          count_of(arg, argv[++i], arg == "--workers" ? 4096 : 1024);
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr,
                   "heist-soak: unknown option %s\nusage: heist-soak [seconds] "
                   "[--submitters N] [--workers W]\n",
                   arg.c_str());
      return 2;
    } else {
      seconds = static_cast<int>(count_of("seconds", arg, 86'400 * 7));
    }
  }
  std::printf("heist-soak: %d s, %zu submitters, %zu workers\n", seconds, submitters, workers);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::seconds(seconds);
  const auto warm_up = start + std::chrono::seconds(std::max(1, std::min(seconds / 10, 30)));

  heist::executor ex(workers);
  std::atomic<std::uint64_t> programs{0}, fresh_executors{0}, posted{0}, counted{0};
  std::vector<std::thread> threads;
  for (std::size_t s = 0; s < submitters; ++s) {
    threads.emplace_back([&, s] {
      std::mt19937_64 rng(0x5eed + s);
      std::vector<std::uint8_t> bytes;
      while (std::chrono::steady_clock::now() < deadline) {
        bytes.resize(8 + rng() % 120);
        for (auto& b : bytes)
          b = static_cast<std::uint8_t>(rng());
        heist_test::program_reader in{bytes.data(), bytes.size()};
        if (rng() % 20 == 0) {  // now and then, a fresh small executor: creation and shutdown
          heist::executor small(1 + rng() % 3);
          heist_test::program{small, in}.run();
          fresh_executors.fetch_add(1, std::memory_order_relaxed);
        } else {
          heist_test::program{ex, in}.run();
        }
        const int k = static_cast<int>(rng() % 64);
        for (int i = 0; i < k; ++i) {
          ex.post([&] { counted.fetch_add(1, std::memory_order_relaxed); });
        }
        posted.fetch_add(static_cast<std::uint64_t>(k), std::memory_order_relaxed);
        programs.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }

  std::size_t rss_base = 0, slab_base = 0, rss_max = 0, slab_max = 0;
  bool based = false;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const std::size_t rss = resident_bytes();
    const std::size_t slab = heist::detail::task_memory().slab_bytes;
    if (!based && std::chrono::steady_clock::now() >= warm_up) {
      rss_base = rss;
      slab_base = slab;
      based = true;
    }
    if (based) {
      rss_max = std::max(rss_max, rss);
      slab_max = std::max(slab_max, slab);
    }
  }
  for (auto& t : threads)
    t.join();
  ex.wait_idle();
  const std::size_t rss_end = resident_bytes();
  const std::size_t slab_end = heist::detail::task_memory().slab_bytes;
  if (!based) {
    rss_base = rss_max = rss_end;
    slab_base = slab_max = slab_end;
  }
  const auto s = ex.stats();
  std::printf("programs %llu (%llu on fresh executors), tasks executed %llu, stolen %llu\n",
              static_cast<unsigned long long>(programs.load()),
              static_cast<unsigned long long>(fresh_executors.load()),
              static_cast<unsigned long long>(s.executed()),
              static_cast<unsigned long long>(s.stolen()));
  std::printf("counted tasks: posted %llu, ran %llu\n",
              static_cast<unsigned long long>(posted.load()),
              static_cast<unsigned long long>(counted.load()));
  std::printf("resident memory MiB: after warm-up %.1f, max %.1f, end %.1f\n", mib(rss_base),
              mib(rss_max), mib(rss_end));
  std::printf("task memory MiB:     after warm-up %.1f, max %.1f, end %.1f\n", mib(slab_base),
              mib(slab_max), mib(slab_end));
  bool ok = true;
  // A run too short (or a machine too loaded) for any program to finish has checked nothing:
  // it must not read as a pass.
  if (programs.load() == 0) {
    std::printf("FAIL: no program finished, so nothing was checked\n");
    ok = false;
  }
  if (posted.load() != counted.load()) {
    std::printf("FAIL: a counted task was lost or ran twice\n");
    ok = false;
  }
  // Flat: resident memory may move with the allocator's caches, not with time. Under
  // AddressSanitizer the quarantine holds freed blocks back (256 MiB by default) and resident
  // memory climbs until it is full, whatever the program does: there only heist's own task
  // memory is checked.
  if (HEIST_ASAN) {
    std::printf("(AddressSanitizer build: resident memory not checked, its quarantine grows)\n");
  } else if (rss_end > rss_base + rss_base / 4 + (std::size_t{32} << 20)) {
    std::printf("FAIL: resident memory grew\n");
    ok = false;
  }
  if (slab_end > slab_base + (std::size_t{16} << 20)) {
    std::printf("FAIL: task memory grew\n");
    ok = false;
  }
  std::printf("%s\n", ok ? "OK: nothing lost, nothing duplicated, memory flat" : "FAILED");
  return ok ? 0 : 1;
}
