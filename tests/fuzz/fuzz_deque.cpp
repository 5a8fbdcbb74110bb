// Fuzz target: the Chase-Lev deque driven by a byte stream.
//   byte 0 bit 0 = 0: sequential. Each byte is an operation (push / pop / steal / steal_if)
//     applied to the deque and to a std::deque model; results must match exactly.
//   byte 0 bit 0 = 1: concurrent. The owner runs the first half of the stream (push, pop,
//     yield), a thief thread the second half (steal, steal_if, yield), from capacity 2 so the
//     ring grows under the thief. Afterwards the rest is drained: every pushed item must have
//     been taken exactly once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <thread>
#include <vector>

#include "heist/detail/core/chase_lev_deque.hpp"

using heist::detail::chase_lev_deque;
using heist::detail::steal_status;

namespace {
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_deque: %s\n", what);
  std::abort();
}

void sequential(const std::uint8_t* data, std::size_t size) {
  static std::uint32_t items[4096];
  chase_lev_deque<std::uint32_t*> d(2);
  std::deque<std::uint32_t*> model;
  std::size_t next = 0;
  for (std::size_t i = 1; i < size; ++i) {
    const std::uint8_t op = data[i] % 4;
    if (op == 0 && next < 4096) {
      d.push(&items[next]);
      model.push_back(&items[next]);
      ++next;
    } else if (op == 1) {
      std::uint32_t* got = d.pop();
      std::uint32_t* want = model.empty() ? nullptr : model.back();
      if (got != want) fail("pop differs from the model");
      if (!model.empty()) model.pop_back();
    } else if (op == 2) {
      auto r = d.steal();
      if (model.empty() ? r.status != steal_status::empty
                        : (r.status != steal_status::success || r.value != model.front())) {
        fail("steal differs from the model");
      }
      if (!model.empty()) model.pop_front();
    } else {
      // steal_if accepting only even items
      auto r = d.steal_if([](std::uint32_t* p) { return p != nullptr && (p - items) % 2 == 0; });
      if (model.empty()) {
        if (r.status != steal_status::empty) fail("steal_if on empty");
      } else if ((model.front() - items) % 2 == 0) {
        if (r.status != steal_status::success || r.value != model.front()) fail("steal_if took");
        model.pop_front();
      } else if (r.status != steal_status::rejected) {
        fail("steal_if should reject");
      }
    }
    if (d.size() != model.size()) fail("size differs from the model");
  }
}

void concurrent(const std::uint8_t* data, std::size_t size) {
  const std::size_t half = size / 2;
  std::vector<std::uint32_t> items(size + 1);
  std::vector<std::uint8_t> taken(size + 1, 0);
  chase_lev_deque<std::uint32_t*> d(2);
  std::thread thief([&] {
    for (std::size_t i = half; i < size; ++i) {
      const std::uint8_t op = data[i] % 3;
      if (op == 2) {
        std::this_thread::yield();
        continue;
      }
      // The predicate sees a speculative, possibly stale pointer (steal_if's contract): it
      // may look at the pointer, never through it without an atomic read.
      const std::uint32_t* base = items.data();
      auto r = op == 0 ? d.steal() : d.steal_if([base](std::uint32_t* p) {
        return p == nullptr || (p - base) % 2 == 0;
      });
      if (r.status == steal_status::success) ++taken[static_cast<std::size_t>(*r.value)];
    }
  });
  std::size_t pushed = 0;
  for (std::size_t i = 1; i < half; ++i) {
    const std::uint8_t op = data[i] % 3;
    if (op == 0) {
      items[pushed] = static_cast<std::uint32_t>(pushed);
      d.push(&items[pushed]);
      ++pushed;
    } else if (op == 1) {
      if (std::uint32_t* p = d.pop()) ++taken[*p];
    } else {
      std::this_thread::yield();
    }
  }
  thief.join();
  while (std::uint32_t* p = d.pop())
    ++taken[*p];
  for (std::size_t i = 0; i < pushed; ++i) {
    if (taken[i] != 1) fail(taken[i] == 0 ? "an item was lost" : "an item was taken twice");
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) == 0) {
    sequential(data, size);
  } else {
    concurrent(data, size);
  }
  return 0;
}
