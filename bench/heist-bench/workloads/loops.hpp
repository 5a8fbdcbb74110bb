// Loop workloads: the two imbalanced loops of the EPCC OpenMP loop-scheduling exercise
// (loops2.c, N = 729), a balanced vector add and a sum of doubles. Written once as
// templates over a loop policy `L`:
//   l.for_range(n, body)          body(lo, hi) over pieces of [0, n)
//   l.sum(n, body)                sum over pieces of body(lo, hi) -> double
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace bench {

struct epcc_data {
  static constexpr std::size_t N = 729;
  std::vector<double> a, b, c;
  std::vector<int> jmax;

  epcc_data() : a(N * N), b(N * N), c(N), jmax(N) {
    for (std::size_t i = 0; i < N; ++i) {
      for (std::size_t j = 0; j < N; ++j)
        b[i * N + j] = 3.142 * static_cast<double>(i + j);
      // Loop 2's imbalance: every row is heavy at first, then only every 4th, 7th, ... row.
      const std::size_t expr = i % (3 * (i / 30) + 1);
      jmax[i] = expr == 0 ? static_cast<int>(N) : 1;
    }
  }
  void reset() {
    std::fill(a.begin(), a.end(), 0.0);
    std::fill(c.begin(), c.end(), 0.0);
  }
};

// The rows of both EPCC loops are functions of their own that the compiler may not inline,
// so every backend runs the same machine code per row. Inlined into each backend's loop
// driver, loop 2's inner loop (a libm call and a load-add-store chain through c[i], which
// the compiler cannot keep in a register since c may alias b) was compiled once per
// partitioner with different register allocation, and the copies ran 5-10% apart on one
// thread (heist static 237 ms, auto 263, serial 250): a figure of the compiler's, not of the
// schedule's.

// Loop 1's row i: a[i][j] += cos(b[i][j]) for j > i (triangular).
[[gnu::noinline]] inline void epcc_row1(epcc_data& d, std::size_t i) {
  constexpr std::size_t N = epcc_data::N;
  for (std::size_t j = N - 1; j > i; --j)
    d.a[i * N + j] += std::cos(d.b[i * N + j]);
}

// Loop 2's row i: c[i] += (k+1) * log(b[i][j]) / N^2 for k < j < jmax[i].
[[gnu::noinline]] inline void epcc_row2(epcc_data& d, std::size_t i) {
  constexpr std::size_t N = epcc_data::N;
  const double rn2 = 1.0 / static_cast<double>(N * N);
  for (int j = 0; j < d.jmax[i]; ++j) {
    for (int k = 0; k < j; ++k)
      d.c[i] += (k + 1) * std::log(d.b[i * N + j]) * rn2;
  }
}

// Loop 1: triangular rows.
template <class L>
void epcc_loop1(L& l, epcc_data& d, int reps) {
  for (int r = 0; r < reps; ++r) {
    l.for_range(epcc_data::N, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i)
        epcc_row1(d, i);
    });
  }
}

// Loop 2: heavy rows clustered at the start.
template <class L>
void epcc_loop2(L& l, epcc_data& d, int reps) {
  for (int r = 0; r < reps; ++r) {
    l.for_range(epcc_data::N, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i)
        epcc_row2(d, i);
    });
  }
}

// EPCC loop 2's rows with sleeps for work: a heavy row sleeps `row`, any other row returns.
// A sleeping thread needs no core, so P threads on a machine of fewer cores split the rows as
// P cores would, and the time per call, in heavy rows, says how well a schedule splits them
// (no split beats ceil(67 / P) rows): a 2-core machine sees the 16-thread split. The checksum
// is the sum of the indices of the rows run, so a row lost or run twice shows.
template <class L>
std::uint64_t epcc2_sleeping_rows(L& l, const epcc_data& d, std::chrono::microseconds row,
                                  int calls) {
  std::atomic<std::uint64_t> sum{0};
  for (int c = 0; c < calls; ++c) {
    l.for_range(epcc_data::N, [&](std::size_t lo, std::size_t hi) {
      std::uint64_t s = 0;
      for (std::size_t i = lo; i < hi; ++i) {
        if (d.jmax[i] == static_cast<int>(epcc_data::N)) std::this_thread::sleep_for(row);
        s += i;
      }
      sum.fetch_add(s, std::memory_order_relaxed);  // relaxed: read after the loop's join
    });
  }
  return sum.load(std::memory_order_relaxed);
}

template <class L>
void vector_add(L& l, const std::vector<double>& x, const std::vector<double>& y,
                std::vector<double>& out) {
  l.for_range(out.size(), [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i)
      out[i] = x[i] + y[i];
  });
}

// Back-to-back small loops: `calls` loops over a.size() elements of a 1-2 ns body each, so
// that the per-call cost of a parallel loop (waking, splitting, stealing, joining) dominates.
// Each call adds 1 to every element: sums of small integers are exact, so the checksum shows
// an iteration lost or run twice in any call.
template <class L>
void small_loops(L& l, std::vector<double>& a, int calls) {
  for (int c = 0; c < calls; ++c) {
    l.for_range(a.size(), [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i)
        a[i] += 1.0;
    });
  }
}

template <class L>
double sum_doubles(L& l, const std::vector<double>& x) {
  return l.sum(x.size(), [&](std::size_t lo, std::size_t hi) {
    double s = 0;
    for (std::size_t i = lo; i < hi; ++i)
      s += x[i];
    return s;
  });
}

// Checksums compared exactly with the serial run: every element is updated by one thread
// per repetition, in the same order, so they are bit-identical.
inline double checksum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s;
}

}  // namespace bench
