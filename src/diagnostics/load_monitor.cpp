// load_monitor: an executor's statistics and traces (load_monitor.hpp): per-slot counters
// read into executor_stats, trace buffers, and Chrome Trace Event output.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <ostream>
#include <string>

#include "core/executor_impl.hpp"
#include "heist/detail/diagnostics/trace.hpp"

namespace heist::detail {

std::string worker_thread_name(const std::string& base, std::size_t index);  // executor.cpp

namespace {
worker_stats read_counters(const slot& s) {
  const slot_counters& k = s.m_counters;
  worker_stats w;
  w.executed = k.executed_total();
  w.stolen = k.stolen.load();
  w.steal_attempts = k.steal_attempts.load();
  w.failed_steals = k.failed_steals.load();
  w.sleeps = k.sleeps.load();
  w.queue_length = s.m_deque.size();
  return w;
}

void subtract(worker_stats& w, const worker_stats& base) {
  w.executed -= base.executed;
  w.stolen -= base.stolen;
  w.steal_attempts -= base.steal_attempts;
  w.failed_steals -= base.failed_steals;
  w.sleeps -= base.sleeps;
}
}  // namespace

load_monitor::load_monitor(executor_impl& exec) : m_exec(exec) {
  m_baseline.resize(exec.num_workers());
  m_trace_origin = trace_clock();
  if (exec.tracing()) {
    for (std::size_t i = 0; i < exec.num_slots(); ++i) {
      m_traces.push_back(std::make_unique<trace_buffer>());
      exec.slot_at(i).m_trace = m_traces.back().get();
    }
  }
}

void load_monitor::record_external_span(std::uint64_t start, std::uint64_t end,
                                        bool stolen) noexcept {
  std::lock_guard<std::mutex> lock(m_external_trace_lock);
  m_external_trace.record(start, end, stolen);
}

// Raw (not baseline-adjusted) statistics of everything that is not a worker: the default
// arena's leased slots (outside helpers, stand-ins), the slots of task arenas (their
// non-worker occupants; workers count on their own slots even while visiting), destroyed
// arenas, and threads without a slot.
worker_stats load_monitor::raw_external_stats() const {
  worker_stats e;
  auto add = [&e](const worker_stats& w) {
    e.executed += w.executed;
    e.stolen += w.stolen;
    e.steal_attempts += w.steal_attempts;
    e.failed_steals += w.failed_steals;
    e.sleeps += w.sleeps;
    e.queue_length += w.queue_length;
  };
  for (std::size_t i = m_exec.num_workers(); i < m_exec.num_slots(); ++i)
    add(read_counters(m_exec.slot_at(i)));
  {
    const arena_registry::locked_view arenas(m_exec.registry());
    for (const arena* a : arenas.arenas()) {
      for (std::size_t i = 0; i < a->num_slots(); ++i)
        add(read_counters(a->slot_at(i)));
      e.queue_length += a->inject().size();
    }
    add(arenas.removed_stats());
  }
  // relaxed (these four and the duty count in stats()): statistics, a moment old at most.
  e.executed += m_external_executed.load(std::memory_order_relaxed);
  e.stolen += m_external_stolen.load(std::memory_order_relaxed);
  e.steal_attempts += m_external_attempts.load(std::memory_order_relaxed);
  e.failed_steals += m_external_failed.load(std::memory_order_relaxed);
  e.queue_length += m_exec.default_arena().inject().size();
  return e;
}

executor_stats load_monitor::stats() const {
  executor_stats r;
  const std::size_t workers = m_exec.num_workers();
  r.workers.resize(workers);
  std::lock_guard<std::mutex> lock(m_stats_lock);
  for (std::size_t i = 0; i < workers; ++i) {
    r.workers[i] = read_counters(m_exec.slot_at(i));
    subtract(r.workers[i], m_baseline[i]);
  }
  r.external = raw_external_stats();
  subtract(r.external, m_external_baseline);
  r.blocking_threads = m_exec.standins().on_duty();
  std::size_t total = 0;
  r.min_queue = std::numeric_limits<std::size_t>::max();
  for (const worker_stats& w : r.workers) {
    r.max_queue = std::max(r.max_queue, w.queue_length);
    r.min_queue = std::min(r.min_queue, w.queue_length);
    total += w.queue_length;
  }
  r.mean_queue = static_cast<double>(total) / static_cast<double>(workers);
  return r;
}

void load_monitor::reset_stats() {
  std::lock_guard<std::mutex> lock(m_stats_lock);
  for (std::size_t i = 0; i < m_exec.num_workers(); ++i)
    m_baseline[i] = read_counters(m_exec.slot_at(i));
  m_external_baseline = raw_external_stats();
}

namespace {
void write_json_string(std::ostream& out, const std::string& s) {
  out << '"';
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') {
      out << '\\' << ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(ch));
      out << buf;
    } else {
      out << ch;
    }
  }
  out << '"';
}

void write_spans(std::ostream& out, const trace_buffer& buffer, std::size_t tid,
                 std::uint64_t origin, bool& first) {
  buffer.for_each([&](const trace_span& s) {
    char line[256];
    const double ts = static_cast<double>(s.start - std::min(s.start, origin)) / 1000.0;
    const double dur = static_cast<double>(s.end - s.start) / 1000.0;
    std::snprintf(line, sizeof line,
                  "%s\n{\"name\":\"task\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%zu,"
                  "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"kind\":\"%s\"}}",
                  first ? "" : ",", s.stolen ? "stolen" : "run", tid, ts, dur,
                  s.stolen ? "stolen" : "run");
    out << line;
    first = false;
  });
}
}  // namespace

void load_monitor::write_trace(std::ostream& out) const {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto meta = [&](std::size_t tid, const std::string& name) {
    out << (first ? "" : ",")
        << "\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << tid
        << ",\"args\":{\"name\":";
    write_json_string(out, name);
    out << "}}";
    first = false;
  };
  out << "\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":";
  const std::string& base = m_exec.options().name;
  const std::size_t workers = m_exec.num_workers();
  const std::size_t slots = m_exec.num_slots();
  write_json_string(out, base);
  out << "}}";
  first = false;
  // Tracks: one per worker (tid = worker index), one per leasable slot that external
  // threads occupy while they help, and one for helpers that found no free slot.
  for (std::size_t i = 0; i < workers; ++i) {
    meta(i, worker_thread_name(base, i));
  }
  if (m_exec.tracing()) {
    for (std::size_t i = workers; i < slots; ++i) {
      char label[48];
      std::snprintf(label, sizeof label, " external %zu", i - workers);
      meta(i, base + label);
    }
    meta(slots, base + " external (no slot)");
  }
  for (std::size_t i = 0; i < m_traces.size(); ++i) {
    write_spans(out, *m_traces[i], i, m_trace_origin, first);
  }
  {
    std::lock_guard<std::mutex> lock(m_external_trace_lock);
    write_spans(out, m_external_trace, slots, m_trace_origin, first);
  }
  out << "\n]}\n";
}

}  // namespace heist::detail
