// combinable<T>: a value per thread slot, combined once the parallel work is over (oneTBB's
// combinable; a per-thread accumulator such as a histogram or a partial sum without locks).
//
// Storage is per arena slot, not per OS thread: a thread running heist tasks holds one slot
// of its arena (a worker its own, a caller of a loop or task_arena::execute a leased one) and
// no two threads hold the same slot at once, so local() needs no lock. Each arena that calls
// local() gets one array of cache-line-aligned elements, one per slot, made on first use
// (a list of arrays that local() reads without a lock, searched from the newest). A thread that
// holds no slot (a thread outside any heist call) gets an element of its own, found under a lock.
//
// An element is made by the init function (T{} by default) on its slot's first local(). The
// reference local() returns is the calling thread's while its task runs; a thread that
// leaves the arena (its task_arena::execute or loop call returned) may see its slot's element
// reused by the next thread that takes the slot, which is what combining needs. combine,
// combine_each and clear must not run concurrently with local().
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "heist/detail/core/arena.hpp"
#include "heist/detail/core/slot.hpp"
#include "heist/detail/core/thread_context.hpp"

namespace heist {

template <class T>
class combinable {
  struct alignas(64) element {
    std::optional<T> value;
  };
  // One arena's elements, one per slot.
  struct slot_array {
    const detail::arena* owner;
    std::size_t size;
    std::unique_ptr<element[]> elements;
    slot_array* next;
  };
  struct outside_element {
    std::thread::id thread;
    element e;
  };

 public:
  combinable() : m_init([] { return T{}; }) {}
  explicit combinable(std::function<T()> init) : m_init(std::move(init)) {
    if (!m_init) {
      throw std::invalid_argument(
          "heist::combinable: init must be a callable, got an empty function");
    }
  }
  combinable(const combinable& other) : m_init(other.m_init) { copy_values(other); }
  combinable& operator=(const combinable& other) {
    if (this != &other) {
      clear();
      m_init = other.m_init;
      copy_values(other);
    }
    return *this;
  }
  ~combinable() { free_arrays(); }

  // The calling thread's element, made by init on first use.
  T& local() {
    bool exists;
    return local(exists);
  }
  // The same; `exists` tells whether the element was there before this call.
  T& local(bool& exists) {
    element& e = find_element();
    exists = e.value.has_value();
    if (!exists) e.value.emplace(m_init());
    return *e.value;
  }

  // op(op(...op(a, b)...), z) over every element made since the last clear(), in an
  // unspecified order (op associative and commutative); init() if there is none.
  template <class Op>
  T combine(Op op) const {
    std::optional<T> result;
    combine_each([&](const T& v) {
      if (result) {
        result.emplace(op(std::move(*result), v));
      } else {
        result.emplace(v);
      }
    });
    return result ? std::move(*result) : m_init();
  }
  // f(const T&) for every element made since the last clear().
  template <class F>
  void combine_each(F f) const {
    // acquire: pairs with add_array's release store (every array local() made is whole).
    for (const slot_array* a = m_arrays.load(std::memory_order_acquire); a != nullptr;
         a = a->next) {
      for (std::size_t i = 0; i < a->size; ++i) {
        if (a->elements[i].value) f(*a->elements[i].value);
      }
    }
    std::lock_guard<std::mutex> hold(m_outside_lock);
    for (const outside_element& o : m_outside) {
      if (o.e.value) f(*o.e.value);
    }
  }
  // Destroys every element; the next local() of each slot makes a new one.
  void clear() {
    // acquire: as in combine_each.
    for (slot_array* a = m_arrays.load(std::memory_order_acquire); a != nullptr; a = a->next) {
      for (std::size_t i = 0; i < a->size; ++i)
        a->elements[i].value.reset();
    }
    std::lock_guard<std::mutex> hold(m_outside_lock);
    m_outside.clear();
  }

 private:
  element& find_element() {
    const detail::thread_context* c = detail::t_context;
    if (c != nullptr && c->current_slot() != nullptr && c->current_arena() != nullptr) {
      const std::size_t i = c->current_slot()->m_index;
      // acquire: pairs with add_array's release store (the array's contents).
      for (slot_array* a = m_arrays.load(std::memory_order_acquire); a != nullptr; a = a->next) {
        if (a->owner == c->current_arena() && i < a->size) return a->elements[i];
      }
      return add_array(*c->current_arena()).elements[i];
    }
    std::lock_guard<std::mutex> hold(m_outside_lock);
    const std::thread::id me = std::this_thread::get_id();
    for (outside_element& o : m_outside) {
      if (o.thread == me) return o.e;
    }
    return m_outside.emplace_back(outside_element{me, {}}).e;
  }

  // Under the lock, so that an arena gets one array even when two of its threads ask at once.
  slot_array& add_array(const detail::arena& a) {
    std::lock_guard<std::mutex> hold(m_outside_lock);
    // relaxed (here and below): under the lock, which every store of m_arrays holds.
    for (slot_array* s = m_arrays.load(std::memory_order_relaxed); s != nullptr; s = s->next) {
      if (s->owner == &a && s->size == a.num_slots()) return *s;
    }
    auto* fresh = new slot_array{&a, a.num_slots(), std::make_unique<element[]>(a.num_slots()),
                                 m_arrays.load(std::memory_order_relaxed)};
    // release: publishes the array to find_element's and combine_each's acquire loads.
    m_arrays.store(fresh, std::memory_order_release);
    return *fresh;
  }

  void copy_values(const combinable& other) {
    other.combine_each([&](const T& v) {
      std::lock_guard<std::mutex> hold(m_outside_lock);
      // Copies keep the values, not their slots: each becomes an element of its own.
      m_outside.push_back(outside_element{std::thread::id{}, {}});
      m_outside.back().e.value.emplace(v);
    });
  }

  void free_arrays() noexcept {
    // acquire: as in combine_each (the destructor runs after every local()).
    slot_array* a = m_arrays.exchange(nullptr, std::memory_order_acquire);
    while (a != nullptr) {
      slot_array* next = a->next;
      delete a;
      a = next;
    }
  }

  std::function<T()> m_init;
  std::atomic<slot_array*> m_arrays{nullptr};
  // Guards m_outside and the pushes onto m_arrays (readers of m_arrays take no lock).
  mutable std::mutex m_outside_lock;
  std::deque<outside_element> m_outside;  // threads with no slot; copied values (a deque: the
                                          // references local() returned stay valid)
};

}  // namespace heist
