// The load monitor and traces of an executor: per-slot counters read into executor_stats,
// trace buffers, and Chrome Trace Event output.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <ostream>
#include <string>

#include "core/executor_impl.hpp"
#include "heist/detail/diagnostics/trace.hpp"

namespace heist::detail {

std::string worker_thread_name(const std::string& base, std::size_t index);  // executor.cpp

// --- tracing -------------------------------------------------------------------------------
std::uint64_t trace_clock() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

trace_buffer::~trace_buffer() {
  // relaxed (both loads): the buffer's writer and readers are gone by now (the executor
  // joined its threads), so nothing races with the destructor.
  chunk* c = m_head.load(std::memory_order_relaxed);
  while (c != nullptr) {
    chunk* next = c->m_next.load(std::memory_order_relaxed);
    c->~chunk();
    std::free(c);
    c = next;
  }
}

void trace_buffer::record(std::uint64_t start, std::uint64_t end, bool stolen) noexcept {
  chunk* c = m_tail;
  // relaxed: the recording thread is the count's only writer; readers load it with acquire.
  if (c == nullptr || c->m_count.load(std::memory_order_relaxed) == chunk::k_capacity) {
    void* mem = std::malloc(sizeof(chunk));
    if (mem == nullptr) return;  // out of memory: drop the span, never the task
    chunk* fresh = ::new (mem) chunk();
    // release: a reader that finds the new chunk sees it initialized.
    (c != nullptr ? c->m_next : m_head).store(fresh, std::memory_order_release);
    m_tail = c = fresh;
  }
  const std::size_t n = c->m_count.load(std::memory_order_relaxed);
  c->m_spans[n] = trace_span{start, end, stolen};
  // release: pairs with the reader's acquire load of m_count in for_each.
  c->m_count.store(n + 1, std::memory_order_release);
}

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

// Raw (not baseline-adjusted) statistics of everything that is not a worker: the default
// arena's leased slots (outside helpers, stand-ins), the slots of task arenas (their
// non-worker occupants; workers count on their own slots even while visiting), destroyed
// arenas, and threads without a slot.
worker_stats executor_impl::raw_external_stats() const {
  worker_stats e;
  auto add = [&e](const worker_stats& w) {
    e.executed += w.executed;
    e.stolen += w.stolen;
    e.steal_attempts += w.steal_attempts;
    e.failed_steals += w.failed_steals;
    e.sleeps += w.sleeps;
    e.queue_length += w.queue_length;
  };
  for (std::size_t i = m_num_workers; i < m_num_slots; ++i)
    add(read_counters(m_slots[i]));
  {
    std::lock_guard<std::mutex> lock(m_arenas_lock);
    for (const arena* a : m_task_arenas) {
      for (std::size_t i = 0; i < a->num_slots(); ++i)
        add(read_counters(a->slot_at(i)));
      e.queue_length += a->inject().size();
    }
    add(m_retired_stats);
  }
  // relaxed (these four and the duty count in stats()): statistics, a moment old at most.
  e.executed += m_external_executed.load(std::memory_order_relaxed);
  e.stolen += m_external_stolen.load(std::memory_order_relaxed);
  e.steal_attempts += m_external_attempts.load(std::memory_order_relaxed);
  e.failed_steals += m_external_failed.load(std::memory_order_relaxed);
  e.queue_length += m_arena->inject().size();
  return e;
}

executor_stats executor_impl::stats() const {
  executor_stats r;
  r.workers.resize(m_num_workers);
  std::lock_guard<std::mutex> lock(m_stats_lock);
  for (std::size_t i = 0; i < m_num_workers; ++i) {
    r.workers[i] = read_counters(m_slots[i]);
    subtract(r.workers[i], m_baseline[i]);
  }
  r.external = raw_external_stats();
  subtract(r.external, m_external_baseline);
  r.blocking_threads = m_spares_on_duty.load(std::memory_order_relaxed);  // relaxed: a figure
  std::size_t total = 0;
  r.min_queue = std::numeric_limits<std::size_t>::max();
  for (const worker_stats& w : r.workers) {
    r.max_queue = std::max(r.max_queue, w.queue_length);
    r.min_queue = std::min(r.min_queue, w.queue_length);
    total += w.queue_length;
  }
  r.mean_queue = static_cast<double>(total) / static_cast<double>(m_num_workers);
  return r;
}

void executor_impl::reset_stats() {
  std::lock_guard<std::mutex> lock(m_stats_lock);
  for (std::size_t i = 0; i < m_num_workers; ++i)
    m_baseline[i] = read_counters(m_slots[i]);
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

void executor_impl::write_trace(std::ostream& out) const {
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
  write_json_string(out, m_options.name);
  out << "}}";
  first = false;
  // Tracks: one per worker (tid = worker index), one per leasable slot that external
  // threads occupy while they help, and one for helpers that found no free slot.
  for (std::size_t i = 0; i < m_num_workers; ++i) {
    meta(i, worker_thread_name(m_options.name, i));
  }
  if (m_options.trace) {
    for (std::size_t i = m_num_workers; i < m_num_slots; ++i) {
      char label[48];
      std::snprintf(label, sizeof label, " external %zu", i - m_num_workers);
      meta(i, m_options.name + label);
    }
    meta(m_num_slots, m_options.name + " external (no slot)");
  }
  for (std::size_t i = 0; i < m_traces.size(); ++i) {
    write_spans(out, *m_traces[i], i, m_trace_origin, first);
  }
  {
    std::lock_guard<std::mutex> lock(m_external_trace_lock);
    write_spans(out, m_external_trace, m_num_slots, m_trace_origin, first);
  }
  out << "\n]}\n";
}

void count_external_finished(executor_impl& exec, const thread_context& c, bool executed) noexcept {
  exec.count_external_finished(c, executed);
}

}  // namespace heist::detail
