// pipeline_gate: a parallel_pipeline item's token, and the gate in front of each serial
// filter (src/compose/pipeline.cpp has the design). An item arriving at a busy gate, or at an
// in-order gate ahead of its turn, is parked there; the item that leaves picks the next one
// whose turn it is and hands it the gate. Internal to src/compose/pipeline.cpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "heist/detail/diagnostics/perturb.hpp"
#include "heist/detail/platform/spin_lock.hpp"
#include "heist/pipeline.hpp"

namespace heist::detail {

struct token {
  token* next = nullptr;  // the free stack, or a gate's FIFO of parked items
  std::uint64_t seq = 0;  // the order in which the first filter made the item
  std::size_t stage = 0;  // the next filter; the buffer holds its input
  bool live = false;      // the buffer holds that input (destroyed if never consumed)
};

inline bool later(const token* a, const token* b) noexcept {
  return a->seq > b->seq;
}

// A serial filter's state. Guarded by `lock` (a few instructions per item).
struct serial_gate {
  spin_lock lock;
  bool busy = false;
  std::uint64_t next_seq = 0;  // in order: the item whose turn it is
  token* fifo_head = nullptr;  // out of order: parked items, oldest first
  token* fifo_tail = nullptr;
  std::vector<token*> heap;  // in order: parked items, a min-heap on seq

  // Takes the gate for `t`, or parks `t` here. Returns whether `t` got the gate.
  bool enter(filter_mode mode, token* t) noexcept {
    lock.lock();
    if (!busy && (mode == filter_mode::serial_out_of_order || t->seq == next_seq)) {
      busy = true;
      lock.unlock();
      return true;
    }
    if (mode == filter_mode::serial_out_of_order) {
      t->next = nullptr;
      if (fifo_tail != nullptr) {
        fifo_tail->next = t;
      } else {
        fifo_head = t;
      }
      fifo_tail = t;
    } else {
      // Never allocates: reserved for the tokens that exist, grown with them (pipeline.cpp).
      heap.push_back(t);
      std::push_heap(heap.begin(), heap.end(), later);
    }
    lock.unlock();
    HEIST_PERTURB_POINT(pipeline_parked);
    return false;
  }

  // The gate's item is done with it: returns the parked item it passes to (the gate stays
  // busy for it), or null (the gate is free).
  token* leave(filter_mode mode) noexcept {
    token* picked = nullptr;
    lock.lock();
    if (mode == filter_mode::serial_out_of_order) {
      picked = fifo_head;
      if (picked != nullptr) {
        fifo_head = picked->next;
        if (fifo_head == nullptr) fifo_tail = nullptr;
      }
    } else {
      ++next_seq;
      if (!heap.empty() && heap.front()->seq == next_seq) {
        std::pop_heap(heap.begin(), heap.end(), later);
        picked = heap.back();
        heap.pop_back();
      }
    }
    if (picked == nullptr) busy = false;
    lock.unlock();
    return picked;
  }
};

}  // namespace heist::detail
