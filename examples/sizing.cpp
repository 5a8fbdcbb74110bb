// Sizing, priorities and idle threads: a pool sized to what the process
// may use, a latency-sensitive arena that jumps ahead of batch work, and workers that go
// away when idle and come back when work arrives.
#include <heist/heist.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {
// Threads of this process whose name starts with `prefix` (workers are named "NAME-INDEX").
std::size_t threads_named(const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(e.path() / "comm");
    std::string name;
    std::getline(comm, name);
    n += name.rfind(prefix, 0) == 0;
  }
  return n;
}
}  // namespace

int main() {
  using namespace std::chrono_literals;
  // What this process may use: HEIST_NUM_THREADS, else the affinity mask and the cgroup CPU
  // quota (a container limited to 2 CPUs gets 2, whatever the host has).
  std::printf("heist %s: available_parallelism() = %zu\n", heist::version().string,
              heist::available_parallelism());

  heist::executor_options options;  // num_workers 0: available_parallelism()
  options.idle_timeout = 100ms;     // idle workers end their threads after 100 ms
  options.name = "sizing";          // worker threads: "sizing-0", "sizing-1", ...
  heist::executor ex(options);

  // Batch work in a low-priority arena keeps every worker busy...
  heist::task_arena batch(ex.num_workers(), ex, heist::priority::low);
  heist::task_arena interactive(1, ex, heist::priority::high);
  std::atomic<bool> stop{false};
  std::atomic<long> batch_done{0};
  struct batch_job {
    heist::task_arena* arena;
    std::atomic<bool>* stop;
    std::atomic<long>* done;
    void operator()() const {
      std::this_thread::sleep_for(50us);  // stands for 50 us of work
      done->fetch_add(1);
      if (!stop->load()) arena->enqueue(*this);
    }
  };
  for (std::size_t i = 0; i < 2 * ex.num_workers(); ++i)
    batch.enqueue(batch_job{&batch, &stop, &batch_done});
  while (batch_done.load() < 100)
    std::this_thread::yield();

  // ...and a high-priority request still starts at the next task boundary.
  std::atomic<bool> answered{false};
  const auto t0 = std::chrono::steady_clock::now();
  interactive.enqueue([&] { answered = true; });
  while (!answered.load())
    std::this_thread::yield();
  const auto waited = std::chrono::steady_clock::now() - t0;
  std::printf("high-priority request answered after %.1f us while batch work ran\n",
              std::chrono::duration<double, std::micro>(waited).count());
  stop = true;
  ex.wait_idle();

  // Idle for a while: the workers' threads are gone (num_workers() is unchanged).
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (threads_named("sizing-") > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  const std::size_t idle_threads = threads_named("sizing-");
  std::printf("after idling: %zu worker threads alive, num_workers() = %zu\n", idle_threads,
              ex.num_workers());

  // New work starts them again.
  const long sum = ex.submit([] {
                       std::atomic<long> s{0};
                       heist::parallel_for(heist::blocked_range<long>(0, 100000), [&](auto r) {
                         long local = 0;
                         for (long i = r.begin(); i < r.end(); ++i)
                           local += i;
                         s.fetch_add(local);
                       });
                       return s.load();
                     }).get();
  std::printf("sum after the restart: %ld\n", sum);
  const bool ok = idle_threads == 0 && sum == 100000L * 99999 / 2 && batch_done.load() >= 100;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
