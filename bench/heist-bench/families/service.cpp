// Service figures: idle CPU, wake-up latency, submission rate, a trickle of tasks.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "../harness.hpp"
#include "../workloads/service.hpp"

namespace bench {
namespace {

const std::vector<backend_key> k_service_backends = {
    {"heist", true}, {"tbb", true}, {"lockpool", true}, {"central", true}, {"rr-dealing", false}};

void service_workloads(context& x) {
  const int max_threads = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  auto add = [&](result r) {
    r.stats = summarize(r.samples);
    print_progress(r);
    x.results.push_back(std::move(r));
  };
  if (x.wants("idle")) {
    for (const backend_key& k : k_service_backends) {
      if (!x.cfg.wants_backend(k.key, k.quick)) continue;
      with_backend(k.key, max_threads, [&](auto& b) {
        if constexpr (service_backend<std::decay_t<decltype(b)>>) {
          result r{"service", "idle cost (2 s)", b.name(), max_threads, "cpu ms", true};
          for (int i = 0; i < (x.cfg.full ? 3 : 1); ++i) {
            r.samples.push_back(idle_cpu_seconds(b, std::chrono::seconds(2)) * 1e3);
          }
          add(std::move(r));
        }
      });
    }
  }
  if (x.wants("wakeup")) {
    for (const backend_key& k : k_service_backends) {
      if (!x.cfg.wants_backend(k.key, k.quick)) continue;
      with_backend(k.key, max_threads, [&](auto& b) {
        if constexpr (service_backend<std::decay_t<decltype(b)>>) {
          result r{"service", "wake-up latency", b.name(), max_threads, "us", true};
          for (int i = 0; i < 5; ++i)
            wake_latency_seconds(b, std::chrono::microseconds(500));
          const int n = x.cfg.full ? 1000 : 300;
          for (int i = 0; i < n; ++i) {
            r.samples.push_back(wake_latency_seconds(b, std::chrono::milliseconds(2)) * 1e6);
          }
          char note[64];
          std::snprintf(note, sizeof note, "p99 %.1f us", quantile(r.samples, 0.99));
          r.note = note;
          add(std::move(r));
        }
      });
    }
  }
  if (x.wants("wakeup")) {
    result r{"service", "wake-up latency", "futex hand-off (floor)", max_threads, "us", true};
    const int n = x.cfg.full ? 1000 : 300;
    for (int i = 0; i < n; ++i) {
      r.samples.push_back(futex_handoff_seconds(std::chrono::milliseconds(2)) * 1e6);
    }
    char note[64];
    std::snprintf(note, sizeof note, "p99 %.1f us", quantile(r.samples, 0.99));
    r.note = note;
    add(std::move(r));
  }
  if (x.wants("submit")) {
    for (int producers : {1, 2, 4}) {
      for (const backend_key& k : k_service_backends) {
        if (!x.cfg.wants_backend(k.key, k.quick)) continue;
        with_backend(k.key, max_threads, [&](auto& b) {
          if constexpr (service_backend<std::decay_t<decltype(b)>>) {
            result r{
                "service",
                "submit from " + std::to_string(producers) + " thread" + (producers > 1 ? "s" : ""),
                b.name(),
                max_threads,
                "Mtasks/s",
                false};
            const std::size_t total = x.cfg.full ? 1'000'000 : 200'000;
            submission_rate(b, producers, 1000);  // warm-up
            for (int i = 0; i < x.cfg.reps_or(3, 7); ++i) {
              r.samples.push_back(submission_rate(b, producers, total / producers) / 1e6);
            }
            add(std::move(r));
          }
        });
      }
    }
  }
  if (x.wants("trickle")) {
    for (const backend_key& k : k_service_backends) {
      if (!x.cfg.wants_backend(k.key, k.quick)) continue;
      with_backend(k.key, max_threads, [&](auto& b) {
        if constexpr (service_backend<std::decay_t<decltype(b)>>) {
          result r{"service", "trickle 20us/200us", b.name(), max_threads, "cores", true};
          const trickle_result t =
              trickle(b, std::chrono::microseconds(20), std::chrono::microseconds(200),
                      std::chrono::milliseconds(x.cfg.full ? 5000 : 2000));
          r.samples.push_back(t.pool_cores);
          char note[64];
          std::snprintf(note, sizeof note, "useful %.3f cores", t.useful_cores);
          r.note = note;
          add(std::move(r));
        }
      });
    }
  }
}

const register_family k_registered{
    {60, "service", {"idle", "wakeup", "submit", "trickle"}, &service_workloads}};

}  // namespace
}  // namespace bench
