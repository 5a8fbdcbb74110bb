// Backends of the algorithms family: each library's parallel algorithm the way its users
// call it. run(fn) calls fn(backend) where the library's threads are ready (inside a heist
// task, a oneTBB arena). A backend without a workload's algorithm says so with has().
#pragma once

#include <heist/heist.hpp>

#include <algorithm>
#include <cstdint>
#include <latch>
#include <string>
#include <vector>

#include "../workloads/algorithms.hpp"
#include "heist_backend.hpp"
#if HEIST_BENCH_HAVE_TBB
#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_for_each.h>
#include <tbb/parallel_scan.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>
#if HEIST_BENCH_HAVE_STD_PAR
#include <execution>
#include <numeric>
#endif
#endif

namespace bench {

// The scan's body, the same for every backend: local pointers, so that the compiler knows
// the output stores do not change the range or the input.
template <class Range>
std::uint64_t scan_piece(const Range& r, std::uint64_t running, bool is_final,
                         const std::uint32_t* in, std::uint64_t* out) {
  const std::size_t b = r.begin(), e = r.end();
  if (is_final) {
    for (std::size_t i = b; i < e; ++i) {
      running += in[i];
      out[i] = running;
    }
  } else {
    for (std::size_t i = b; i < e; ++i)
      running += in[i];
  }
  return running;
}

class heist_algorithms {
 public:
  explicit heist_algorithms(int threads)
      : m_exec(&shared_executor(threads, heist::steal_policy::sticky_random)) {}
  std::string name() const { return "heist"; }
  static bool has(const std::string&) { return true; }
  template <class Fn>
  void run(Fn&& fn) {
    std::latch done(1);
    m_exec->post([&] {
      fn(*this);
      done.count_down();
    });
    done.wait();
  }
  template <class V>
  void sort(V& v) {
    heist::parallel_sort(v.begin(), v.end());
  }
  std::uint64_t scan(const std::vector<std::uint32_t>& in, std::vector<std::uint64_t>& out) {
    const std::uint32_t* src = in.data();
    std::uint64_t* dst = out.data();
    return heist::parallel_scan(
        heist::blocked_range<std::size_t>(0, in.size(), 10000), std::uint64_t{0},
        [=](const heist::blocked_range<std::size_t>& r, std::uint64_t s, bool f) {
          return scan_piece(r, s, f, src, dst);
        },
        [](std::uint64_t a, std::uint64_t b) { return a + b; });
  }
  std::uint64_t tree(const tree_shape& s) {
    heist::combinable<std::uint64_t> nodes;
    const std::vector<tree_node> roots{{s.root, 0}};
    heist::parallel_for_each(roots.begin(), roots.end(),
                             [&](const tree_node& n, heist::feeder<tree_node>& feed) {
                               ++nodes.local();
                               feed_children(n, s, feed);
                             });
    return nodes.combine([](std::uint64_t a, std::uint64_t b) { return a + b; });
  }
  bins histogram(const std::vector<std::uint8_t>& data) {
    heist::combinable<bins> local([] { return bins{}; });
    const std::uint8_t* d = data.data();
    heist::parallel_for(heist::blocked_range<std::size_t>(0, data.size()),
                        [&](const heist::blocked_range<std::size_t>& r) {
                          for (std::size_t i = r.begin(); i != r.end(); ++i)
                            ++local.local()[d[i]];
                        });
    return sum_bins(local);
  }

 private:
  heist::executor* m_exec;
};

class serial_algorithms {
 public:
  explicit serial_algorithms(int) {}
  std::string name() const { return "serial"; }
  static bool has(const std::string&) { return true; }
  template <class Fn>
  void run(Fn&& fn) {
    fn(*this);
  }
  template <class V>
  void sort(V& v) {
    std::sort(v.begin(), v.end());
  }
  std::uint64_t scan(const std::vector<std::uint32_t>& in, std::vector<std::uint64_t>& out) {
    struct whole {
      std::size_t n;
      std::size_t begin() const { return 0; }
      std::size_t end() const { return n; }
    };
    return scan_piece(whole{in.size()}, 0, true, in.data(), out.data());
  }
  std::uint64_t tree(const tree_shape& s) { return tree_nodes_serial(s); }
  bins histogram(const std::vector<std::uint8_t>& data) {
    bins b{};
    for (std::uint8_t x : data)
      ++b[x];
    return b;
  }
};

#if HEIST_BENCH_HAVE_TBB
class tbb_algorithms {
 public:
  explicit tbb_algorithms(int threads) : m_arena(threads) {}
  std::string name() const { return "oneTBB"; }
  static bool has(const std::string&) { return true; }
  template <class Fn>
  void run(Fn&& fn) {
    m_arena.execute([&] { fn(*this); });
  }
  template <class V>
  void sort(V& v) {
    tbb::parallel_sort(v.begin(), v.end());
  }
  std::uint64_t scan(const std::vector<std::uint32_t>& in, std::vector<std::uint64_t>& out) {
    const std::uint32_t* src = in.data();
    std::uint64_t* dst = out.data();
    return tbb::parallel_scan(
        tbb::blocked_range<std::size_t>(0, in.size(), 10000), std::uint64_t{0},
        [=](const tbb::blocked_range<std::size_t>& r, std::uint64_t s, bool f) {
          return scan_piece(r, s, f, src, dst);
        },
        [](std::uint64_t a, std::uint64_t b) { return a + b; });
  }
  std::uint64_t tree(const tree_shape& s) {
    tbb::combinable<std::uint64_t> nodes;
    const std::vector<tree_node> roots{{s.root, 0}};
    tbb::parallel_for_each(roots.begin(), roots.end(),
                           [&](const tree_node& n, tbb::feeder<tree_node>& feed) {
                             ++nodes.local();
                             feed_children(n, s, feed);
                           });
    return nodes.combine([](std::uint64_t a, std::uint64_t b) { return a + b; });
  }
  bins histogram(const std::vector<std::uint8_t>& data) {
    tbb::combinable<bins> local([] { return bins{}; });
    const std::uint8_t* d = data.data();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, data.size()),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t i = r.begin(); i != r.end(); ++i)
                          ++local.local()[d[i]];
                      });
    return sum_bins(local);
  }

 private:
  tbb::task_arena m_arena;
};

#if HEIST_BENCH_HAVE_STD_PAR
// libstdc++'s parallel algorithms (std::execution::par), which run on oneTBB: inside a oneTBB
// arena of the thread count. Sort and scan only (the standard has no feeder or combinable).
class std_par_algorithms {
 public:
  explicit std_par_algorithms(int threads) : m_arena(threads) {}
  std::string name() const { return "std::execution::par"; }
  static bool has(const std::string& workload) {
    return workload.rfind("sort", 0) == 0 || workload == "scan";
  }
  template <class Fn>
  void run(Fn&& fn) {
    m_arena.execute([&] { fn(*this); });
  }
  template <class V>
  void sort(V& v) {
    std::sort(std::execution::par, v.begin(), v.end());
  }
  std::uint64_t scan(const std::vector<std::uint32_t>& in, std::vector<std::uint64_t>& out) {
    std::inclusive_scan(
        std::execution::par, in.begin(), in.end(), out.begin(),
        [](std::uint64_t a, std::uint64_t b) { return a + b; }, std::uint64_t{0});
    return out.empty() ? 0 : out.back();
  }
  std::uint64_t tree(const tree_shape&) { return 0; }
  bins histogram(const std::vector<std::uint8_t>&) { return {}; }

 private:
  tbb::task_arena m_arena;
};
#endif
#endif

}  // namespace bench
