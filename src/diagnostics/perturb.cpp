// The perturbation build's delays and test hooks (detail/diagnostics/perturb.hpp).
#include "heist/detail/diagnostics/perturb.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "heist/detail/sleep/backoff.hpp"

namespace heist::detail::perturb {

namespace {
constexpr std::array<const char*, static_cast<std::size_t>(point::count)> k_names = {
    "spawn_pushed",         "inject_pushed",          "admit_counted",
    "sleep_listed",         "sleep_before_park",      "wake_unlinked",
    "search_leaving",       "group_finish_counted",   "group_waiter_woken",
    "group_arming",         "isolate_rejected",       "inject_rejected",
    "lease_draining",       "lease_returned",         "visitor_attracting",
    "visit_entering",       "blocking_changed",       "quiescence_check",
    "graph_request_queued", "graph_node_done",        "graph_run_completing",
    "pipeline_parked",      "pipeline_token_freed",   "pipeline_input_suspended",
    "future_completing",    "worker_retiring",        "worker_restarting",
    "poll_registered",      "owner_count_confirmed",  "group_claiming",
    "member_inlined",       "pop_reserved",           "pop_mode_switching",
    "pop_mode_trying",      "steal_counted",          "waker_yielding",
    "wakee_stepping_off",   "pop_mode_acknowledging", "search_registering",
    "cancel_flagged",       "start_placing",          "join_suspending",
    "graph_run_completed",  "started_task_ending",    "affinity_half_taken",
    "inject_batch_taken",   "awaiter_queued",         "future_withdrawing",
    "arena_pinned",         "arena_closing",          "future_wait_registered",
    "future_completed"};
static_assert(k_names.back() != nullptr, "a perturbation point without a name");
}  // namespace

const char* name(point p) noexcept {
  const auto i = static_cast<std::size_t>(p);
  return i < k_names.size() ? k_names[i] : "?";
}

#if HEIST_PERTURB
namespace {

struct hook_entry {
  // relaxed: a hook is installed before the threads that call it are started or released
  // by the test (which synchronizes through its own atomics), and a test that clears one
  // waits for the protocol it probed to finish first.
  std::atomic<hook_fn> fn{nullptr};
  std::atomic<void*> arg{nullptr};
};
std::array<hook_entry, static_cast<std::size_t>(point::count)> g_hooks;
std::atomic<bool> g_random{true};  // relaxed: a switch read at each point

std::uint64_t read_seed() noexcept {
  std::uint64_t s = 0;
  if (const char* env = std::getenv("HEIST_PERTURB_SEED"); env != nullptr && *env != '\0') {
    s = std::strtoull(env, nullptr, 0);
  } else {
    s = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  std::fprintf(stderr, "heist: perturbation build, seed %llu (HEIST_PERTURB_SEED=%llu replays)\n",
               static_cast<unsigned long long>(s), static_cast<unsigned long long>(s));
  return s;
}

std::uint64_t g_seed = read_seed();
std::atomic<std::uint64_t> g_next_thread{0};  // relaxed: only distinctness matters

std::uint64_t splitmix(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Probability of a delay per point, in 1/1024: HEIST_PERTURB_RATE (default 64 = 1/16).
unsigned read_rate() noexcept {
  const char* env = std::getenv("HEIST_PERTURB_RATE");
  const long v = env != nullptr ? std::strtol(env, nullptr, 10) : 64;
  return v < 0 ? 0u : v > 1024 ? 1024u : static_cast<unsigned>(v);
}
const unsigned g_rate = read_rate();

}  // namespace

void at(point p) noexcept {
  hook_entry& h = g_hooks[static_cast<std::size_t>(p)];
  // acquire: pairs with set_hook's release store, so the argument (relaxed, stored before
  // the hook) is the one set with it.
  if (hook_fn fn = h.fn.load(std::memory_order_acquire); fn != nullptr) {
    fn(p, h.arg.load(std::memory_order_relaxed));
    return;
  }
  // relaxed: a switch for tests; a delay more or less around the switch does not matter.
  if (!g_random.load(std::memory_order_relaxed)) return;
  // relaxed: only makes the threads' seeds differ.
  thread_local std::uint64_t state =
      g_seed ^ (g_next_thread.fetch_add(1, std::memory_order_relaxed) * 0xD1B54A32D192ED03ULL);
  const std::uint64_t r = splitmix(state);
  if ((r & 1023) >= g_rate) return;
  // Mostly a yield (lets the other core's thread run a few steps), sometimes a sleep long
  // enough for a whole search-and-park of another thread (tens of microseconds).
  if (((r >> 10) & 7) != 0) {
    stall(0);
  } else {
    stall(static_cast<unsigned>(5 + ((r >> 13) & 63)));
  }
}

void set_hook(point p, hook_fn fn, void* arg) noexcept {
  hook_entry& h = g_hooks[static_cast<std::size_t>(p)];
  // relaxed: published by the release store of the hook below.
  h.arg.store(arg, std::memory_order_relaxed);
  // release: a thread that sees the hook sees its argument.
  h.fn.store(fn, std::memory_order_release);
}

void clear_hooks() noexcept {
  // release: as in set_hook (a thread that reads null runs no hook).
  for (hook_entry& h : g_hooks)
    h.fn.store(nullptr, std::memory_order_release);
}

std::uint64_t seed() noexcept {
  return g_seed;
}

void set_random_delays(bool on) noexcept {
  // relaxed: see at().
  g_random.store(on, std::memory_order_relaxed);
}
#endif

}  // namespace heist::detail::perturb
