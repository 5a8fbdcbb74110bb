// Coroutine frame memory: per-thread free lists in 16-byte size classes up to 1 KiB, refilled
// from slabs of 32 frames; a list longer than k_cache_limit spills half to a process-wide
// depot that other threads refill from, so frames freed on another thread than the one that
// made them (a coroutine resumed elsewhere) come back into use. Like task memory, slabs are
// kept until the process ends. Frames over 1 KiB use the global operator new. 16-byte classes
// (the alignment operator new guarantees) rather than cache lines: a suspended coroutine's
// frame is most of what it costs (SPEC 11: a million of them in well under 256 MiB), and a
// 112-byte frame in a 128-byte class wasted an eighth of it; neighbouring frames may share a
// cache line, which costs only when two of them run on two threads at once.
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>

namespace heist::detail {
namespace {

constexpr std::size_t k_granule = 16;
constexpr std::size_t k_classes = 64;  // 16 .. 1024 bytes
constexpr std::size_t k_slab_frames = 32;
constexpr std::size_t k_cache_limit = 256;

struct free_frame {
  free_frame* next;
};

// The depot: per class, a list of spilled frames (guarded by one lock).
struct frame_depot {
  std::mutex lock;
  free_frame* lists[k_classes] = {};
};
frame_depot& depot() {
  static frame_depot* d = new frame_depot();  // immortal: threads may exit after statics
  return *d;
}

struct frame_cache {
  free_frame* lists[k_classes] = {};
  std::size_t counts[k_classes] = {};
  ~frame_cache() {
    // A thread that ends hands its frames to the depot.
    frame_depot& d = depot();
    std::lock_guard<std::mutex> guard(d.lock);
    for (std::size_t c = 0; c < k_classes; ++c) {
      while (free_frame* f = lists[c]) {
        lists[c] = f->next;
        f->next = d.lists[c];
        d.lists[c] = f;
      }
    }
  }
};
thread_local frame_cache t_cache;

void refill(std::size_t c) {
  frame_cache& cache = t_cache;
  {
    frame_depot& d = depot();
    std::lock_guard<std::mutex> guard(d.lock);
    for (std::size_t i = 0; i < k_cache_limit / 2 && d.lists[c] != nullptr; ++i) {
      free_frame* f = d.lists[c];
      d.lists[c] = f->next;
      f->next = cache.lists[c];
      cache.lists[c] = f;
      ++cache.counts[c];
    }
  }
  if (cache.lists[c] != nullptr) return;
  const std::size_t size = (c + 1) * k_granule;
  auto* slab = static_cast<std::byte*>(std::malloc(size * k_slab_frames));
  if (slab == nullptr) throw std::bad_alloc();
  for (std::size_t i = 0; i < k_slab_frames; ++i) {
    auto* f = reinterpret_cast<free_frame*>(slab + i * size);
    f->next = cache.lists[c];
    cache.lists[c] = f;
  }
  cache.counts[c] += k_slab_frames;
}

}  // namespace

void* allocate_frame(std::size_t n) {
  const std::size_t c = (n + k_granule - 1) / k_granule - 1;
  if (n == 0 || c >= k_classes) return ::operator new(n);
  frame_cache& cache = t_cache;
  if (cache.lists[c] == nullptr) refill(c);
  free_frame* f = cache.lists[c];
  cache.lists[c] = f->next;
  --cache.counts[c];
  return f;
}

void deallocate_frame(void* p, std::size_t n) noexcept {
  const std::size_t c = (n + k_granule - 1) / k_granule - 1;
  if (n == 0 || c >= k_classes) {
    ::operator delete(p);
    return;
  }
  frame_cache& cache = t_cache;
  auto* f = static_cast<free_frame*>(p);
  f->next = cache.lists[c];
  cache.lists[c] = f;
  if (++cache.counts[c] <= k_cache_limit) return;
  // Spill half to the depot.
  frame_depot& d = depot();
  std::lock_guard<std::mutex> guard(d.lock);
  for (std::size_t i = 0; i < k_cache_limit / 2; ++i) {
    free_frame* g = cache.lists[c];
    cache.lists[c] = g->next;
    g->next = d.lists[c];
    d.lists[c] = g;
    --cache.counts[c];
  }
}

}  // namespace heist::detail
