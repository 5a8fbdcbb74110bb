// parallel_pipeline: how items move through the filters.
//
// Tokens. An item lives in one token for its whole trip: a header (its sequence number and
// the stage it is at) and a buffer big enough for every type the filters pass along. At
// most max_live_tokens tokens exist; they are allocated on first need and reused, so items
// never pile up and a long pipeline allocates only a few tokens.
//
// The input. The first filter runs in one "input task" at a time, which owns the sequence
// counter and the private free list. m_avail counts the tokens the input may still take.
// After making an item the input reserves a token for the next one (m_avail down by one);
// if it got one it spawns the next input task, otherwise it is suspended (m_avail is -1).
// It then carries its item through the later filters on the same thread, like oneTBB. An
// item leaving the pipeline pushes its token on the shared free stack and raises m_avail;
// the one that raises it from -1 hands its token to the suspended input and spawns it.
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
// Errors. Tasks belong to one wait_context: the first exception cancels it; tasks not yet
// started are skipped, running ones drop their item at the next filter. Whatever items were
// in flight are destroyed when the caller's wait ends.
#include "heist/pipeline.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "heist/detail/arena_lease.hpp"
#include "heist/detail/perturb.hpp"
#include "heist/detail/spawn.hpp"
#include "heist/detail/spin_lock.hpp"
#include "heist/task_arena.hpp"

namespace heist::detail {
namespace {

struct token {
  token* next = nullptr;  // the free stack, or a gate's FIFO of parked items
  std::uint64_t seq = 0;  // the order in which the first filter made the item
  std::size_t stage = 0;  // the next filter; the buffer holds its input
  bool live = false;      // the buffer holds that input (destroyed if never consumed)
};

// A serial filter's state. Guarded by `lock` (a few instructions per item).
struct serial_gate {
  spin_lock lock;
  bool busy = false;
  std::uint64_t next_seq = 0;  // in order: the item whose turn it is
  token* fifo_head = nullptr;  // out of order: parked items, oldest first
  token* fifo_tail = nullptr;
  std::vector<token*> heap;  // in order: parked items, a min-heap on seq
};

bool later(const token* a, const token* b) noexcept {
  return a->seq > b->seq;
}

std::size_t round_up(std::size_t n, std::size_t align) noexcept {
  return (n + align - 1) / align * align;
}

using stage_list = std::vector<std::shared_ptr<pipeline_stage>>;

class pipeline_run {
 public:
  pipeline_run(arena& a, std::size_t max_tokens, const stage_list& stages)
      : m_arena(a), m_stages(stages), m_max_tokens(max_tokens), m_group(current_group()) {
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

  // The calling thread: it is the first input task, then helps until every task is done.
  void run() {
    arena_lease lease(current_context(), m_arena);
    // relaxed: read by tasks this thread spawns after (the pushes publish it).
    m_avail.store(static_cast<long>(m_max_tokens) - 1, std::memory_order_relaxed);
    thread_context& c = current_context();
    wait_context* const saved = c.m_group;
    c.m_group = &m_group;  // groups inside the first filter are children of the pipeline
    input();
    c.m_group = saved;
    if (!m_group.done()) help_until(m_arena, m_group);
    m_group.reset();
    if (m_group.has_exception()) std::rethrow_exception(m_group.take_exception());
  }

 private:
  struct input_job {
    pipeline_run* run;
    void operator()(task*) noexcept { run->input(); }
  };
  struct carry_job {
    pipeline_run* run;
    token* item;
    void operator()(task*) noexcept { run->carry(item, true); }
  };

  void* buffer(token* t) const noexcept { return reinterpret_cast<std::byte*>(t) + m_header; }

  // The input task: makes one item, keeps the input going if a token is free, then
  // carries the item. The caller holds a reservation of one token.
  void input() noexcept {
    token* t = take_token();
    if (t == nullptr) return;  // out of memory: captured
    flow_control fc;
    bool made = false;
    try {
      made = m_stages[0]->produce(buffer(t), fc);
    } catch (...) {
      m_group.capture_exception(std::current_exception());
    }
    if (!made) {  // the input is over: stopped, or failed
      t->next = m_private_free;
      m_private_free = t;
      return;
    }
    t->seq = m_next_seq++;
    t->stage = 1;
    t->live = true;
    // acq_rel: pairs with release_token's fetch_add, whose token push it must see.
    if (m_avail.fetch_sub(1, std::memory_order_acq_rel) > 0) spawn_job<input_job>(this);
    // else suspended: the item that frees the next token spawns the input again.
    carry(t, false);
  }

  // Moves `t` through the filters from t->stage on. `granted`: a gate was already given to
  // it (it was parked there and picked).
  void carry(token* t, bool granted) noexcept {
    const std::size_t n = m_stages.size();
    while (t != nullptr) {
      if (t->stage == n) {
        release_token(t);
        return;
      }
      if (m_group.is_cancelled()) return;  // dropped: destroyed with the run
      pipeline_stage& s = *m_stages[t->stage];
      serial_gate* const gate = m_gates[t->stage].get();
      if (gate != nullptr && !granted && !enter(*gate, s.mode(), t)) return;  // parked
      granted = false;
      try {
        s.process(buffer(t));
      } catch (...) {
        t->live = false;  // process leaves nothing in the buffer when it throws
        m_group.capture_exception(std::current_exception());
        return;
      }
      token* const picked = gate != nullptr ? leave(*gate, s.mode()) : nullptr;
      ++t->stage;
      if (picked != nullptr) {
        if (t->stage == n) {
          // Our item is done: carry the picked one ourselves.
          release_token(t);
          t = picked;
          granted = true;
          continue;
        }
        spawn_job<carry_job>(this, picked);
      }
    }
  }

  // Takes gate `g` for `t`, or parks `t` there. Returns whether `t` got the gate.
  bool enter(serial_gate& g, filter_mode mode, token* t) noexcept {
    g.lock.lock();
    if (!g.busy && (mode == filter_mode::serial_out_of_order || t->seq == g.next_seq)) {
      g.busy = true;
      g.lock.unlock();
      return true;
    }
    if (mode == filter_mode::serial_out_of_order) {
      t->next = nullptr;
      if (g.fifo_tail != nullptr) {
        g.fifo_tail->next = t;
      } else {
        g.fifo_head = t;
      }
      g.fifo_tail = t;
    } else {
      // Never allocates: reserved for the tokens that exist, grown with them (see below).
      g.heap.push_back(t);
      std::push_heap(g.heap.begin(), g.heap.end(), later);
    }
    g.lock.unlock();
    HEIST_PERTURB_POINT(pipeline_parked);
    return false;
  }

  // The gate's item is done with it: returns the parked item it passes to (the gate stays
  // busy for it), or null (the gate is free).
  token* leave(serial_gate& g, filter_mode mode) noexcept {
    token* picked = nullptr;
    g.lock.lock();
    if (mode == filter_mode::serial_out_of_order) {
      picked = g.fifo_head;
      if (picked != nullptr) {
        g.fifo_head = picked->next;
        if (g.fifo_head == nullptr) g.fifo_tail = nullptr;
      }
    } else {
      ++g.next_seq;
      if (!g.heap.empty() && g.heap.front()->seq == g.next_seq) {
        std::pop_heap(g.heap.begin(), g.heap.end(), later);
        picked = g.heap.back();
        g.heap.pop_back();
      }
    }
    if (picked == nullptr) g.busy = false;
    g.lock.unlock();
    return picked;
  }

  // An item left the last filter: its token goes back, and restarts a suspended input.
  void release_token(token* t) noexcept {
    t->live = false;
    token* head = m_free.load(std::memory_order_relaxed);
    do {
      t->next = head;
      // release: the input that pops the stack (acquire exchange) sees t's fields.
    } while (!m_free.compare_exchange_weak(head, t, std::memory_order_release,
                                           std::memory_order_relaxed));
    HEIST_PERTURB_POINT(pipeline_token_freed);
    // acq_rel: the release half orders the push above before this increment, which the
    // input's reserving fetch_sub reads; -1 means the input waits for exactly this token.
    if (m_avail.fetch_add(1, std::memory_order_acq_rel) == -1) spawn_job<input_job>(this);
  }

  // The input's token: its own free list, else the shared stack, else a new one (the
  // reservation guarantees fewer than max_live_tokens exist then).
  token* take_token() noexcept {
    if (m_private_free == nullptr) {
      // acquire: pairs with release_token's release CAS.
      m_private_free = m_free.exchange(nullptr, std::memory_order_acquire);
    }
    if (m_private_free != nullptr) return std::exchange(m_private_free, m_private_free->next);
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

  template <class Job, class... Args>
  void spawn_job(Args... args) noexcept {
    try {
      spawn<Job>(m_arena, &m_group, args...);
    } catch (...) {  // out of memory, or the executor shut down under an outside caller
      m_group.capture_exception(std::current_exception());
    }
  }

  arena& m_arena;
  const stage_list& m_stages;
  const std::size_t m_max_tokens;
  std::size_t m_align = 0, m_header = 0, m_stride = 0;
  wait_context m_group;
  std::vector<std::unique_ptr<serial_gate>> m_gates;  // null for parallel filters
  // Owned by the input task (one at a time; spawning passes the role on).
  std::uint64_t m_next_seq = 0;
  token* m_private_free = nullptr;
  std::vector<token*> m_all;
  alignas(k_cache_line) std::atomic<token*> m_free{nullptr};
  alignas(k_cache_line) std::atomic<long> m_avail{0};
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
  run_in(ex != nullptr ? detail_impl(*ex).default_arena() : current_arena(), max_live_tokens,
         stages);
}

}  // namespace heist::detail
