// parallel_pipeline: how items move through the filters.
//
// Tokens. An item lives in one token for its whole trip: a header (its sequence number and
// the stage it is at) and a buffer big enough for every type the filters pass along. At
// most max_live_tokens tokens exist; they are allocated on first need and reused, so items
// never pile up and a long pipeline allocates only a few tokens.
//
// The input. The first filter runs in one "input task" at a time, which owns the sequence
// counter, a private free list and the token reserved for the next item. After making an
// item the input takes the next token (private list; else the shared stack, emptied in one
// exchange; else a new token while fewer than max_live_tokens exist) and spawns the next
// input task; if every token is in flight it suspends instead, by a CAS that puts the
// marker k_input_waits on the empty shared stack. It then carries its item through the
// later filters on the same thread, like oneTBB. An item leaving the pipeline pushes its
// token on the shared stack, or, finding the marker, takes it off and hands its token to
// the input, which it restarts: one CAS per item and no counter of free tokens.
//
// Serial filters (a gate each). An item arriving at a busy gate, or at an in-order gate
// ahead of its turn, is parked there (a FIFO for out-of-order gates, a min-heap on the
// sequence number for in-order ones) and its task ends: no thread ever blocks. The item
// that leaves the gate picks the next parked one whose turn it is and grants it the gate:
// it spawns a task that carries it on, or, if its own item has just left the pipeline,
// carries it itself. Progress: the oldest item in flight is never parked behind a younger
// one, so while items are in flight some task runs; the caller's helping wait therefore
// ends once the input has stopped and every item has left.
//
// The end: weighted termination, as in graph_runner.cpp. The caller starts with a weight; a
// task gives half of its weight to each task it spawns and returns what it holds when it
// ends (one shared RMW per task, instead of a count raised per spawn and lowered per end).
// The task that takes the total to zero ends the caller's helping wait.
//
// Errors. The first exception is kept in m_group (a wait_context, for its exception slot
// and cancel flag); tasks then drop their item at the next filter and the input stops.
// Whatever items were in flight are destroyed when the caller's wait ends.
#include "heist/pipeline.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "compose/pipeline_gate.hpp"
#include "heist/detail/compose/termination_weight.hpp"
#include "heist/detail/core/arena_lease.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/detail/diagnostics/perturb.hpp"
#include "heist/task_arena.hpp"

namespace heist::detail {
namespace {

// Items whose trip through the filters after the first takes less than this are carried by
// the input task itself before it makes the next one (see input()); sampled every
// k_sample_every items.
constexpr std::int64_t k_inline_trip_ns = 250;
constexpr std::uint64_t k_sample_every = 8;
// Items of a longer trip are made up to k_most_hop_items at a time, about k_hop_ns of
// carrying per hand-off of the input (see input()).
constexpr std::int64_t k_hop_ns = 8'000;
constexpr std::size_t k_most_hop_items = 8;
// In m_free: the input is suspended, waiting for the next freed token. Never a token's
// address (tokens are aligned).
token* const k_input_waits = reinterpret_cast<token*>(std::uintptr_t{1});

std::size_t round_up(std::size_t n, std::size_t align) noexcept {
  return (n + align - 1) / align * align;
}

using stage_list = std::vector<std::shared_ptr<pipeline_stage>>;

class pipeline_run {
 public:
  pipeline_run(arena& a, std::size_t max_tokens, const stage_list& stages)
      : m_arena(a), m_stages(stages), m_max_tokens(max_tokens), m_group(current_group()) {
    // Cancelled with the group of the calling task, like a task_group made there.
    m_align = std::max(alignof(token), alignof(std::max_align_t));
    std::size_t buffer = 1;
    for (const auto& s : stages) {
      m_align = std::max(m_align, s->buffer_align());
      buffer = std::max(buffer, s->buffer_size());
    }
    m_header = round_up(sizeof(token), m_align);
    m_stride = round_up(m_header + buffer, m_align);
    m_gates.resize(stages.size());
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (stages[i]->mode() == filter_mode::parallel) continue;
      m_gates[i] = std::make_unique<serial_gate>();
      if (stages[i]->mode() == filter_mode::serial_in_order) {
        m_gates[i]->heap.reserve(std::min<std::size_t>(max_tokens, 256));
      }
    }
    m_all.reserve(std::min<std::size_t>(max_tokens, 256));
  }
  pipeline_run(const pipeline_run&) = delete;
  pipeline_run& operator=(const pipeline_run&) = delete;

  ~pipeline_run() {
    for (token* t : m_all) {
      if (t->live && t->stage < m_stages.size()) m_stages[t->stage]->destroy_input(buffer(t));
      t->~token();
      ::operator delete(static_cast<void*>(t), std::align_val_t(m_align));
    }
  }

  // The calling thread: it is the first input task (or queues it, if it may not run the
  // arena's work), then helps until every task is done.
  void run() {
    thread_context& c = current_context();
    arena_lease lease(c, m_arena);
    m_reserved = take_token();
    if (m_reserved != nullptr) {
      // relaxed: read by the tasks this thread spawns after (the pushes publish it).
      m_pending.start();
      if (runs_work_of(c, m_arena)) {
        input(termination_weight::k_initial);
      } else {
        // No slot, and the arena counts its callers (arena::slotless_threads_wait): the
        // first input runs as a task of the pool; this thread only waits.
        std::uint64_t weight = termination_weight::k_initial;
        spawn_weighted<input_job>(weight);
        finish(weight);
      }
      if (!m_done.done()) help_until_pending(m_arena, m_done);
    }
    if (analysing()) analysis_joined(&m_group);
    m_group.reset();
    if (m_group.has_exception()) std::rethrow_exception(m_group.take_exception());
  }

 private:
  // Task closures. Constructors rather than aggregates: clang 14 (the fuzzing build) has no
  // parenthesized aggregate initialization, which spawn's in-place construction uses.
  struct input_job {
    input_job(pipeline_run* r, std::uint64_t w) noexcept : run(r), weight(w) {}
    pipeline_run* run;
    std::uint64_t weight;
    void operator()(task*) noexcept { run->input(weight); }
  };
  struct carry_job {
    carry_job(pipeline_run* r, token* t, std::uint64_t w) noexcept : run(r), item(t), weight(w) {}
    pipeline_run* run;
    token* item;
    std::uint64_t weight;
    void operator()(task*) noexcept { run->carry(item, true, weight); }
  };

  void* buffer(token* t) const noexcept { return reinterpret_cast<std::byte*>(t) + m_header; }

  // Every task body (input or carry) ends here, returning its weight. Whoever takes the
  // total to zero ends the pipeline's wait: the last touch of this object.
  void finish(std::uint64_t weight) noexcept {
    // acq_rel: release publishes this task's effects; the acquire of the last one sees
    // every task's (one release sequence), before it wakes the caller.
    if (m_pending.release(weight)) m_done.finish_one();
  }

  // Spawns a task with half of `weight` (a spawner down to 1 borrows first; it still holds
  // its own, so the total cannot reach zero meanwhile).
  template <class Job, class... Args>
  void spawn_weighted(std::uint64_t& weight, Args... args) noexcept {
    const std::uint64_t child = m_pending.split(weight);
    try {
      spawn<Job>(m_arena, nullptr, this, args..., child);
    } catch (...) {  // out of memory, or the executor shut down under an outside caller
      m_group.capture_exception(std::current_exception());
      weight += child;
    }
  }

  // The input task: makes an item in the token reserved for it and takes the next token.
  // Then, as oneTBB does, it spawns the next input task (which an idle thread steals) and
  // carries its item on this thread. But when items are small (the trip through the later
  // filters takes less than k_inline_trip_ns, measured on every k_sample_every-th item),
  // handing the input to another thread costs more than the trip itself: a steal and the
  // input's and the serial filters' cache lines moving across cores on every item. Then it
  // carries the item itself first and goes on with the input in the same task, so small
  // items run at the speed of one thread (2.3 times the rate of handing off, measured at 2
  // threads) while big ones still spread over every thread. Items between (a trip of
  // k_inline_trip_ns up to k_hop_ns) are made several at a time before the hand-off, about
  // k_hop_ns of carrying per hop (hop_items; at most half the tokens): each hand-off is a
  // steal and the input's lines moving to another core, about 0.55 us of thread time per
  // item at two workers on the test VM, and 1 us items ran at 1.33x one thread's rate with
  // one item per hop, 1.55x with seven. What a hop holds
  // waits behind its own earlier items, at most k_hop_ns on average.
  void input(std::uint64_t weight) noexcept {
    // Groups inside the filters are children of the pipeline: cancelled with it.
    current_context().exchange_group(&m_group);
    token* t = std::exchange(m_reserved, nullptr);
    token* made[k_most_hop_items];  // this hop's items, in order, carried after the hand-off
    std::size_t count = 0;
    for (;;) {
      flow_control fc;
      bool produced = false;
      if (!m_group.is_cancelled()) {
        try {
          produced = m_stages[0]->produce(buffer(t), fc);
        } catch (...) {
          m_group.capture_exception(std::current_exception());
        }
      }
      if (!produced) {  // the input is over: stopped, failed or cancelled
        t->next = m_private_free;
        m_private_free = t;
        break;
      }
      t->seq = m_next_seq++;
      t->stage = 1;
      t->live = true;
      // A local: once the input is suspended, the input's state (m_reserved included)
      // belongs to whichever item restarts it, which may already be writing it.
      token* const next = take_token_or_suspend();
      if (next == nullptr) {  // suspended
        made[count++] = t;
        break;
      }
      // relaxed: a heuristic (see where it is measured).
      const std::int64_t trip = m_trip_ns.load(std::memory_order_relaxed);
      if (trip < 0 || trip >= k_inline_trip_ns) {
        made[count++] = t;
        if (count < std::min(hop_items(trip), m_max_tokens / 2)) {
          t = next;
          continue;
        }
        m_reserved = next;
        spawn_weighted<input_job>(weight);
        break;
      }
      (void)carry_and_sample(t, weight);  // small items: carry, then go on here
      t = next;
    }
    // Neither the input's state nor m_reserved is touched from here on (see above).
    for (std::size_t i = 0; i < count; ++i)
      (void)carry_and_sample(made[i], weight);
    finish(weight);
  }

  // How many items an input task makes before it hands the input on, for items whose last
  // trip took `trip` ns (negative: not measured yet).
  static std::size_t hop_items(std::int64_t trip) noexcept {
    if (trip <= 0) return 1;
    return static_cast<std::size_t>(
        std::clamp<std::int64_t>(k_hop_ns / trip, 1, static_cast<std::int64_t>(k_most_hop_items)));
  }

  // A carry task: moves a picked item on, then returns its weight.
  void carry(token* t, bool granted, std::uint64_t weight) noexcept {
    current_context().exchange_group(&m_group);
    (void)carry_steps(t, granted, weight);
    finish(weight);
  }

  // Moves `t` through the filters from t->stage on. `granted`: a gate was already given to
  // it (it was parked there and picked). Returns whether `t` left the pipeline (rather than
  // being parked or dropped); on the way it may carry picked items too.
  bool carry_steps(token* t, bool granted, std::uint64_t& weight) noexcept {
    const std::size_t n = m_stages.size();
    const token* const own = t;
    bool own_left = false;
    while (t != nullptr) {
      if (t->stage == n) {
        own_left = own_left || t == own;
        release_token(t, weight);
        break;
      }
      if (m_group.is_cancelled()) break;  // dropped: destroyed with the run
      pipeline_stage& s = *m_stages[t->stage];
      serial_gate* const gate = m_gates[t->stage].get();
      // A running analysis: an item granted a gate starts after both its own previous stage
      // (recorded when it arrived) and the item that left the gate (this thread's path).
      if (granted && analysing()) analysis_joined(t);
      if (gate != nullptr && !granted) {
        const bool analysed = analysing();
        if (analysed) analysis_completed(t);   // before enter: once parked, it may be picked
        if (!gate->enter(s.mode(), t)) break;  // parked
        if (analysed) analysis_joined(t);      // not parked: the record is this thread's own
      }
      granted = false;
      try {
        s.process(buffer(t));
      } catch (...) {
        t->live = false;  // process leaves nothing in the buffer when it throws
        m_group.capture_exception(std::current_exception());
        break;
      }
      token* const picked = gate != nullptr ? gate->leave(s.mode()) : nullptr;
      ++t->stage;
      if (picked != nullptr) {
        if (t->stage == n) {
          // Our item is done: carry the picked one ourselves.
          own_left = own_left || t == own;
          release_token(t, weight);
          t = picked;
          granted = true;
          continue;
        }
        spawn_weighted<carry_job>(weight, picked);
      }
    }
    return own_left;
  }

  // The input's item, carried by the input task itself; every k_sample_every-th one that
  // leaves the pipeline updates the estimate of an item's trip (see input()).
  bool carry_and_sample(token* t, std::uint64_t& weight) noexcept {
    if (t->seq % k_sample_every != 0) return carry_steps(t, false, weight);
    const auto start = std::chrono::steady_clock::now();
    const bool left = carry_steps(t, false, weight);
    if (left) {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      // relaxed: a heuristic; racing updates (the input hops between threads) lose a
      // sample at worst.
      const std::int64_t old = m_trip_ns.load(std::memory_order_relaxed);
      m_trip_ns.store(old < 0 ? ns : (old * 3 + ns) / 4, std::memory_order_relaxed);
    }
    return left;
  }

  // An item left the last filter: its token goes back on the free stack, or, if the input
  // waits for one (the stack holds k_input_waits), to the input, which this task restarts.
  void release_token(token* t, std::uint64_t& weight) noexcept {
    t->live = false;
    // A running analysis: the item's end, for the run's join (run()).
    if (analysing()) analysis_completed(&m_group);
    // relaxed: the CASes below carry the orders; a stale head only fails one of them.
    token* head = m_free.load(std::memory_order_relaxed);
    for (;;) {
      if (head == k_input_waits) {
        // acquire: pairs with the input's release CAS that suspended it, so the input's
        // state (sequence counter, free list) is this thread's to pass on.
        if (m_free.compare_exchange_weak(head, nullptr, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
          HEIST_PERTURB_POINT(pipeline_token_freed);
          m_reserved = t;
          spawn_weighted<input_job>(weight);
          return;
        }
        continue;
      }
      t->next = head;
      // release: the input that takes the stack (acquire exchange) sees t's fields.
      if (m_free.compare_exchange_weak(head, t, std::memory_order_release,
                                       std::memory_order_relaxed)) {
        return;
      }
    }
  }

  // The input's next token: its own free list, else the shared stack, else a new one while
  // fewer than max_live_tokens exist. Null if all are in flight: then the input is
  // suspended (the stack holds k_input_waits) and the next token freed restarts it.
  token* take_token_or_suspend() noexcept {
    for (;;) {
      if (token* t = take_token()) return t;
      if (m_group.is_cancelled()) return nullptr;  // never restarted: nothing to wait for
      token* expected = nullptr;
      // release: publishes the input's state to the releaser that restarts it.
      if (m_free.compare_exchange_strong(expected, k_input_waits, std::memory_order_release,
                                         std::memory_order_relaxed)) {
        // From here the input's state is the restarter's (a delay here let a restarted
        // input read a reservation its old task then overwrote: found by the benchmark).
        HEIST_PERTURB_POINT(pipeline_input_suspended);
        return nullptr;
      }
      // A token arrived meanwhile: take it.
    }
  }

  token* take_token() noexcept {
    // relaxed: a look before the exchange, which carries the order.
    if (m_private_free == nullptr && m_free.load(std::memory_order_relaxed) != nullptr) {
      // acquire: pairs with release_token's release CAS.
      m_private_free = m_free.exchange(nullptr, std::memory_order_acquire);
    }
    if (m_private_free != nullptr) return std::exchange(m_private_free, m_private_free->next);
    if (m_all.size() == m_max_tokens) return nullptr;
    try {
      void* mem = ::operator new(m_stride, std::align_val_t(m_align));
      token* t = ::new (mem) token();
      try {
        m_all.push_back(t);
      } catch (...) {
        ::operator delete(mem, std::align_val_t(m_align));
        throw;
      }
      // Parked items of an in-order gate never outnumber the tokens: grow the heaps with
      // the tokens so that parking never allocates.
      for (auto& g : m_gates) {
        if (g != nullptr && g->heap.capacity() < m_all.size()) {
          g->lock.lock();
          try {
            g->heap.reserve(m_all.size() * 2);
          } catch (...) {
            g->lock.unlock();
            throw;
          }
          g->lock.unlock();
        }
      }
      return t;
    } catch (...) {
      m_group.capture_exception(std::current_exception());
      return nullptr;
    }
  }

  arena& m_arena;
  const stage_list& m_stages;
  const std::size_t m_max_tokens;
  std::size_t m_align = 0, m_header = 0, m_stride = 0;
  wait_context m_group;             // the first exception, and cancellation
  wait_context m_done{nullptr, 1};  // the caller's wait: finished when m_pending is zero
  std::vector<std::unique_ptr<serial_gate>> m_gates;  // null for parallel filters
  // Owned by the input (one input task at a time; spawning, or the suspend/restart pair of
  // CASes on m_free, passes the role on).
  std::uint64_t m_next_seq = 0;
  token* m_private_free = nullptr;
  token* m_reserved = nullptr;  // the token the next input task fills
  std::vector<token*> m_all;
  // Freed tokens (a stack), or k_input_waits while the input is suspended.
  alignas(k_cache_line) std::atomic<token*> m_free{nullptr};
  // Estimated nanoseconds of an item's trip after the first filter (-1: none measured yet).
  alignas(k_cache_line) std::atomic<std::int64_t> m_trip_ns{-1};
  // The weight of the live tasks (weighted termination, as in graph_runner.cpp).
  termination_weight m_pending;
};

void check_chain(std::size_t max_live_tokens, const stage_list& stages) {
  if (max_live_tokens == 0) {
    throw std::invalid_argument("heist::parallel_pipeline: max_live_tokens must be at least 1");
  }
  if (stages.empty()) {
    throw std::invalid_argument("heist::parallel_pipeline: the filter chain is empty");
  }
  if (!stages[0]->can_start()) {
    throw std::invalid_argument(
        "heist::parallel_pipeline: the first filter must be callable as f(flow_control&)");
  }
  for (std::size_t i = 1; i < stages.size(); ++i) {
    if (!stages[i]->can_follow()) {
      throw std::invalid_argument("heist::parallel_pipeline: filter " + std::to_string(i) +
                                  " takes a flow_control; only the first filter may");
    }
  }
}

void run_in(arena& a, std::size_t max_live_tokens, const stage_list& stages) {
  refuse_if_closed(a.exec(), "heist::parallel_pipeline");
  pipeline_run run(a, max_live_tokens, stages);
  run.run();
}

}  // namespace

void run_pipeline(executor* ex, task_arena* ta, std::size_t max_live_tokens,
                  const stage_list& stages) {
  check_chain(max_live_tokens, stages);
  if (ta != nullptr) {
    ta->execute([&] { run_in(arena_of(*ta), max_live_tokens, stages); });
    return;
  }
  run_in(ex != nullptr ? detail::default_arena_of(*ex) : current_arena(), max_live_tokens, stages);
}

}  // namespace heist::detail
