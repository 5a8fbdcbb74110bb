// trace_buffer: task spans recorded by one slot's occupant (executor_options::trace), read
// by write_trace() while the pool runs. An append-only list of fixed-size chunks: the
// writer fills the tail chunk and publishes each span by a release store of the chunk's
// count; a reader walks the chunks and reads only published spans, so no lock is needed
// on either side. Chunks come from std::malloc, so tracing never calls operator new.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heist/detail/config.hpp"

namespace heist::detail {

// Nanoseconds on the steady clock.
HEIST_API std::uint64_t trace_clock() noexcept;

struct trace_span {
  std::uint64_t start;
  std::uint64_t end;
  bool stolen;
};

class HEIST_API trace_buffer {
 public:
  trace_buffer() noexcept = default;
  trace_buffer(const trace_buffer&) = delete;
  trace_buffer& operator=(const trace_buffer&) = delete;
  ~trace_buffer();

  // Writer (one thread at a time).
  void record(std::uint64_t start, std::uint64_t end, bool stolen) noexcept;

  // Any thread: calls f(const trace_span&) for every published span, oldest first.
  template <class F>
  void for_each(F&& f) const {
    // acquire (m_head, m_next): pairs with record()'s release store of a new chunk, so a
    // chunk found here is initialized.
    for (const chunk* c = m_head.load(std::memory_order_acquire); c != nullptr;
         c = c->m_next.load(std::memory_order_acquire)) {
      // acquire: pairs with the release store in record(); spans below it are complete.
      const std::size_t n = c->m_count.load(std::memory_order_acquire);
      for (std::size_t i = 0; i < n; ++i)
        f(c->m_spans[i]);
    }
  }

 private:
  struct chunk {
    static constexpr std::size_t k_capacity = 4096;
    std::atomic<std::size_t> m_count{0};
    std::atomic<chunk*> m_next{nullptr};
    trace_span m_spans[k_capacity];
  };

  std::atomic<chunk*> m_head{nullptr};
  chunk* m_tail = nullptr;  // writer-private
};

}  // namespace heist::detail
