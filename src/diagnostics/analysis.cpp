// The scalability analysis (analysis.hpp): its sessions (one per executor at a time), the hooks
// the scheduler calls while one runs (analysis_hooks.hpp), and the steal cost that burdens
// each spawn.
//
// The DAG is measured as it runs, one path length per strand:
//  - a spawn records the spawner's path so far (its frame's span plus its running strand's
//    time) for the task, plus the steal cost on the burdened path;
//  - a task's body starts a strand from that record, pausing the strand of its thread (a
//    helping wait's, or a task it interrupted); its end adds its strand to the work and
//    folds its path into its group's entry (the longest of the group's children so far);
//  - a join (after a wait) makes the joiner's path the longest of its own and the group's
//    entry, and starts a new strand;
//  - a helping wait pauses the waiting strand, so helping and parking are not its time.
// Everything shared lives under one mutex: hooks run only while an analysis runs, and each
// reads the clock before it takes the lock and restarts its strand after releasing it, so
// neither the wait for the lock nor its release is counted in any strand. A thread's frame
// names its session by id (sessions of other executors may run at the same time), and every
// record in the tables carries the id of the session that made it.
// Time is the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID): a strand's time is then its own
// whatever else runs, with more busy threads than CPUs too. The steady clock reads in 26 ns
// on the 2-vCPU VM heist is developed on, the CPU clock in 1.3 us (a system call there), but
// with the steady clock every strand whose thread was preempted gained a scheduler slice (1
// to 4 ms): the tests' DAGs of 2 ms busy loops measured up to 3x their span with three busy
// threads on two CPUs. One read's cost (calibrated at the start) is taken off each strand,
// and a hook's own time off the strand it interrupts; what remains per strand is about a
// microsecond of noise, which matters only for strands of a few microseconds or less (their
// work is then overstated; their parallelism is high anyway). The price is the analysed run's
// speed: two such reads per strand.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "core/executor_impl.hpp"
#include "heist/analysis.hpp"
#include "heist/detail/core/thread_context.hpp"
#include "heist/detail/sleep/backoff.hpp"
#include "heist/executor_options.hpp"
#include "heist/task_group.hpp"

namespace heist::detail {
namespace {

// A strand's clock: the calling thread's CPU time, so that time the thread is preempted or
// blocked is not the strand's. Compared only with readings of the same thread.
std::uint64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// Wall time, for the steal-cost probe (readings of two threads are compared).
std::uint64_t wall_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// What one clock read adds to the strand it ends (the median of back-to-back reads), taken
// off every strand: on a strand of tens of nanoseconds (fib's leaves) it is most of it.
std::uint64_t clock_read_cost() {
  static const std::uint64_t cost = [] {
    std::vector<std::uint64_t> d;
    for (int k = 0; k < 101; ++k) {
      const std::uint64_t a = now_ns();
      const std::uint64_t b = now_ns();
      d.push_back(b - a);
    }
    std::sort(d.begin(), d.end());
    return d[d.size() / 2];
  }();
  return cost;
}

struct path {
  std::uint64_t span = 0;
  std::uint64_t burdened = 0;
  void extend(const path& other) noexcept {
    span = std::max(span, other.span);
    burdened = std::max(burdened, other.burdened);
  }
};

struct session {
  std::uint64_t id = 0;
  const executor_impl* exec = nullptr;
  std::uint64_t steal_cost = 0;
  std::uint64_t clock_cost = 0;
  path loose;                       // the longest path of tasks without a group
  std::uint64_t loose_running = 0;  // such tasks started, not finished, nothing completed
  std::uint64_t work = 0;
  std::uint64_t strands = 0;
};

struct record {
  path p;
  std::uint64_t session = 0;
};

struct analysis_state {
  std::mutex lock;
  std::uint64_t next_id = 1;
  std::vector<session> sessions;                    // the running ones
  std::unordered_map<const task*, record> spawned;  // queued, not started
  std::unordered_map<const void*, record> joined;   // longest paths recorded for a key

  session* by_id(std::uint64_t id) noexcept {
    for (session& s : sessions) {
      if (s.id == id) return &s;
    }
    return nullptr;
  }
  session* by_exec(const executor_impl* exec) noexcept {
    for (session& s : sessions) {
      if (s.exec == exec) return &s;
    }
    return nullptr;
  }
};

analysis_state& state() {
  static analysis_state s;
  return s;
}

// The steal cost: how long a task spawned on one thread takes to start on another whose
// thread sleeps (a wake-up and a steal), on a one-worker executor of its own; the median of
// 15, measured once per process.
std::uint64_t measure_steal_cost() {
  static const std::uint64_t cost = [] {
    executor_options o;
    o.num_workers = 1;
    o.name = "heist-analysis-probe";
    executor probe(o);
    std::vector<std::uint64_t> samples;
    for (int k = 0; k < 15; ++k) {
      stall(200);  // let the worker sleep
      std::atomic<std::uint64_t> started{0};
      std::uint64_t spawned_at = 0;
      task_group g(probe);
      g.run_and_wait([&] {
        spawned_at = wall_ns();
        // release/acquire: only a timestamp passes; the pair keeps it a plain handoff.
        g.run([&] { started.store(wall_ns(), std::memory_order_release); });
        // Not a helping wait: the child must be stolen. Bounded: if no thief comes within
        // 10 ms, the sample is dropped and the wait below runs the child.
        const std::uint64_t give_up = spawned_at + 10'000'000;
        while (started.load(std::memory_order_acquire) == 0 && wall_ns() < give_up) {
        }
      });
      const std::uint64_t at = started.load(std::memory_order_acquire);
      if (at > spawned_at && at - spawned_at < 10'000'000) samples.push_back(at - spawned_at);
    }
    if (samples.empty()) return std::uint64_t{0};
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
  }();
  return cost;
}

// Closes the running strand of frame `f` of session `s` at `now` (caller holds the lock): its
// time goes to the work and to the frame's path.
void close_strand(session& s, analysis_frame& f, std::uint64_t now) noexcept {
  if (!f.running) return;
  const std::uint64_t t = now > f.start + s.clock_cost ? now - f.start - s.clock_cost : 0;
  s.work += t;
  ++s.strands;
  f.span += t;
  f.burdened += t;
  f.running = false;
}

// The session of frame `f`, or null (none, or it has ended: the frame is then inert).
session* session_of(analysis_state& st, const analysis_frame& f) noexcept {
  return f.active ? st.by_id(f.session) : nullptr;
}

}  // namespace

void analysis_spawned(thread_context& c, const executor_impl& exec, const task* t) noexcept {
  const std::uint64_t now = now_ns();
  analysis_state& st = state();
  analysis_frame& f = record_of(c).analysis();
  std::uint64_t clock_cost = 0;
  bool ours = false;
  {
    std::lock_guard<std::mutex> hold(st.lock);
    session* const s = st.by_exec(&exec);
    if (s == nullptr) return;
    path p;
    ours = f.active && f.session == s->id;
    if (ours) {
      const std::uint64_t running = f.running && now > f.start ? now - f.start : 0;
      p.span = f.span + running;
      p.burdened = f.burdened + running;
    }
    p.burdened += s->steal_cost;  // a spawn edge: the child may be stolen
    try {
      st.spawned[t] = record{p, s->id};
    } catch (...) {  // out of memory: the task's path starts at zero
    }
    clock_cost = s->clock_cost;
  }
  // The hook's own time (the lock and its release, the table, and the halves of the two clock
  // reads that fall inside the strand: one read's cost) is not the spawner's: its strand
  // restarts later by that much.
  if (ours && f.running) f.start += now_ns() - now + clock_cost;
}

void analysis_completed(const void* key) noexcept {
  thread_context* const c = t_context;
  if (c == nullptr || !record_of(*c).analysis().active) return;
  const std::uint64_t now = now_ns();
  analysis_state& st = state();
  analysis_frame& f = record_of(*c).analysis();
  bool restart = false;
  {
    std::lock_guard<std::mutex> hold(st.lock);
    session* const s = session_of(st, f);
    if (s == nullptr) return;
    // The strand ends here (its work is counted now: a joiner may end the analysis before
    // this thread's task ends) and a new one starts after the hook.
    restart = f.running;
    close_strand(*s, f, now);
    if (f.unjoined) {  // it completed something: whoever waits for that joins it
      f.unjoined = false;
      if (s->loose_running > 0) --s->loose_running;
    }
    try {
      record& r = st.joined[key];
      if (r.session != s->id) r = record{path{}, s->id};
      r.p.extend(path{f.span, f.burdened});
    } catch (...) {
    }
  }
  if (restart) {
    f.running = true;
    f.start = now_ns();
  }
}

void analysis_forwarded(const void* from, const void* to) noexcept {
  analysis_state& st = state();
  std::lock_guard<std::mutex> hold(st.lock);
  const auto it = st.joined.find(from);
  if (it == st.joined.end()) return;
  try {
    const record r = it->second;
    record& dst = st.joined[to];
    if (dst.session != r.session) dst = record{path{}, r.session};
    dst.p.extend(r.p);
  } catch (...) {
  }
}

analysis_frame analysis_task_begin(thread_context& c, const task* t,
                                   const wait_context* group) noexcept {
  const std::uint64_t now = now_ns();
  analysis_frame before = record_of(c).analysis();
  analysis_state& st = state();
  {
    std::lock_guard<std::mutex> hold(st.lock);
    session* const s = st.by_exec(c.exec());
    if (session* const outer = session_of(st, before)) {
      close_strand(*outer, before, now);
      before.running = record_of(c).analysis().running;  // resumed by analysis_task_end
    }
    if (s == nullptr) {
      record_of(c).analysis() = analysis_frame{};
      return before;
    }
    path p;
    const auto it = st.spawned.find(t);
    if (it != st.spawned.end()) {
      if (it->second.session == s->id) p = it->second.p;
      st.spawned.erase(it);
    }
    record_of(c).analysis() =
        analysis_frame{p.span, p.burdened, 0, true, true, group == nullptr, s->id};
    if (group == nullptr) ++s->loose_running;
  }
  record_of(c).analysis().start = now_ns();
  return before;
}

void analysis_task_end(thread_context& c, const wait_context* group,
                       const analysis_frame& before) noexcept {
  const std::uint64_t now = now_ns();
  analysis_state& st = state();
  {
    std::lock_guard<std::mutex> hold(st.lock);
    analysis_frame& f = record_of(c).analysis();
    if (session* const s = session_of(st, f)) {
      close_strand(*s, f, now);
      const path end{f.span, f.burdened};
      if (group != nullptr) {
        try {
          record& r = st.joined[group];
          if (r.session != s->id) r = record{path{}, s->id};
          r.p.extend(end);
        } catch (...) {
        }
      } else {
        s->loose.extend(end);
      }
      if (f.unjoined && s->loose_running > 0) --s->loose_running;
    }
  }
  record_of(c).analysis() = before;
  if (before.active && before.running) record_of(c).analysis().start = now_ns();
}

void analysis_joined(const void* key) noexcept {
  thread_context* const c = t_context;
  const std::uint64_t now = now_ns();
  analysis_state& st = state();
  {
    std::lock_guard<std::mutex> hold(st.lock);
    const auto it = st.joined.find(key);
    session* const s = c != nullptr ? session_of(st, record_of(*c).analysis()) : nullptr;
    if (s == nullptr) {
      if (it != st.joined.end()) st.joined.erase(it);
      return;
    }
    analysis_frame& f = record_of(*c).analysis();
    close_strand(*s, f, now);
    if (it != st.joined.end()) {
      if (it->second.session == s->id) {
        f.span = std::max(f.span, it->second.p.span);
        f.burdened = std::max(f.burdened, it->second.p.burdened);
      }
      st.joined.erase(it);
    }
  }
  record_of(*c).analysis().running = true;
  record_of(*c).analysis().start = now_ns();
}

bool analysis_pause() noexcept {
  thread_context* const c = t_context;
  if (c == nullptr || !record_of(*c).analysis().active || !record_of(*c).analysis().running)
    return false;
  const std::uint64_t now = now_ns();
  analysis_state& st = state();
  std::lock_guard<std::mutex> hold(st.lock);
  session* const s = session_of(st, record_of(*c).analysis());
  if (s == nullptr) return false;
  close_strand(*s, record_of(*c).analysis(), now);
  return true;
}

void analysis_resume() noexcept {
  thread_context* const c = t_context;
  if (c == nullptr || !record_of(*c).analysis().active) return;
  record_of(*c).analysis().running = true;
  record_of(*c).analysis().start = now_ns();
}

analysis_session::analysis_session(executor_impl& exec) {
  analysis_state& st = state();
  const auto refuse_if_running = [&] {
    if (t_context != nullptr && record_of(*t_context).analysis().active) {
      throw std::logic_error("heist::analyze: called inside an analysis (analyze inside analyze)");
    }
    if (st.by_exec(&exec) != nullptr) {
      throw std::logic_error(
          "heist::analyze: an analysis of this executor is already running (two at once)");
    }
  };
  {
    std::lock_guard<std::mutex> hold(st.lock);
    refuse_if_running();
  }
  const std::uint64_t cost = measure_steal_cost();  // before the session: not analysed
  thread_context& c = current_context();
  std::lock_guard<std::mutex> hold(st.lock);
  refuse_if_running();
  session s;
  s.id = st.next_id++;
  s.exec = &exec;
  s.steal_cost = cost;
  s.clock_cost = clock_read_cost();
  st.sessions.push_back(s);
  m_id = s.id;
  // relaxed: the hooks read the sessions under the lock.
  g_analyses_running.fetch_add(1, std::memory_order_relaxed);
  record_of(c).analysis() = analysis_frame{0, 0, now_ns(), true, true, false, s.id};
}

analysis_session::~analysis_session() {
  if (!m_finished) finish();
}

scalability_report analysis_session::finish() {
  m_finished = true;
  thread_context& c = current_context();
  const std::uint64_t now = now_ns();
  analysis_state& st = state();
  std::lock_guard<std::mutex> hold(st.lock);
  scalability_report r;
  session* const s = st.by_id(m_id);
  if (s == nullptr) return r;
  if (record_of(c).analysis().active && record_of(c).analysis().session == m_id)
    close_strand(*s, record_of(c).analysis(), now);
  path total{record_of(c).analysis().span, record_of(c).analysis().burdened};
  total.extend(s->loose);
  std::uint64_t unstarted = 0;
  for (auto it = st.spawned.begin(); it != st.spawned.end();) {
    if (it->second.session == m_id) {
      ++unstarted;
      it = st.spawned.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = st.joined.begin(); it != st.joined.end();) {
    it = it->second.session == m_id ? st.joined.erase(it) : std::next(it);
  }
  r.work = std::chrono::nanoseconds(s->work);
  r.span = std::chrono::nanoseconds(total.span);
  r.burdened_span = std::chrono::nanoseconds(total.burdened);
  r.strands = s->strands;
  r.not_joined = unstarted + s->loose_running;
  r.steal_cost = std::chrono::nanoseconds(s->steal_cost);
  record_of(c).analysis() = analysis_frame{};
  st.sessions.erase(st.sessions.begin() + (s - st.sessions.data()));
  // relaxed: as the fetch_add (a hook that still reads 1 finds no session under the lock).
  g_analyses_running.fetch_sub(1, std::memory_order_relaxed);
  return r;
}

}  // namespace heist::detail
