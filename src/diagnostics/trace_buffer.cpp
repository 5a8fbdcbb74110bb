// trace_buffer: the spans a traced executor records per slot (trace.hpp), and the clock they
// are taken with.
#include "heist/detail/diagnostics/trace.hpp"

#include <chrono>
#include <cstdlib>
#include <new>

namespace heist::detail {

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

}  // namespace heist::detail
