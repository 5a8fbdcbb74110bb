// Fork-join workloads, written once as templates over a backend (backends/backend.hpp).
// Each returns a checksum that the driver compares with the serial result, so a run that
// skipped work cannot pass as fast.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "../measure.hpp"

namespace bench {

// --- fib(n), one spawn per call, no cutoff: pure spawn/join overhead ------------------------
template <class B>
long fib(int n) {
  if (n < 2) return n;
  long x = 0, y = 0;
  B::fork2([&] { x = fib<B>(n - 1); }, [&] { y = fib<B>(n - 2); });
  return x + y;
}

// --- fib(n) through the library's parallel_invoke where the backend has one (heist,
// oneTBB: what a oneTBB user writes first); the others fork as in fib ----------------------
// A backend with invoke2 says so with this flag. (Not a requires-expression on the call
// inside fib_invoke: clang 14 crashes on one that names the function's local lambdas.)
template <class B>
concept has_parallel_invoke = B::k_has_parallel_invoke;

template <class B>
long fib_invoke(int n) {
  if (n < 2) return n;
  long x = 0, y = 0;
  auto left = [&] { x = fib_invoke<B>(n - 1); };
  auto right = [&] { y = fib_invoke<B>(n - 2); };
  if constexpr (has_parallel_invoke<B>) {
    B::invoke2(left, right);
  } else {
    B::fork2(left, right);
  }
  return x + y;
}

// --- fib(n) written the plain way: the group in the recursive function itself, as oneTBB's
// documentation (and the fastest fork-join library's suite, for oneTBB) writes it, where the
// backend has a task_group type (heist, oneTBB); the others recurse serially. Every leaf is
// then a call that pays the whole function's prologue before its n < 2 test; `fib` above
// forks through fork2, whose lambdas get that test inlined (BENCHMARKS.md).
template <class B>
concept has_task_group = B::k_has_task_group;

template <class B>
long fib_plain(int n) {
  if (n < 2) return n;
  long x = 0, y = 0;
  if constexpr (has_task_group<B>) {
    typename B::group g;
    g.run([&] { x = fib_plain<B>(n - 1); });
    y = fib_plain<B>(n - 2);
    g.wait();
  } else {
    x = fib_plain<B>(n - 1);
    y = fib_plain<B>(n - 2);
  }
  return x + y;
}

inline std::uint64_t fib_spawns(int n) {
  // Calls with n >= 2 spawn once: fib(n+1) - 1 of them.
  std::uint64_t a = 0, b = 1;
  for (int i = 0; i < n + 1; ++i) {
    const std::uint64_t c = a + b;
    a = b;
    b = c;
  }
  return a - 1;
}

// --- nqueens(n): an irregular search tree, one task per legal placement ------------------
template <class B>
long nqueens(int n, int row, std::uint32_t cols, std::uint32_t d1, std::uint32_t d2) {
  if (row == n) return 1;
  const std::uint32_t all = (1u << n) - 1;
  std::uint32_t free = all & ~(cols | d1 | d2);
  int choices[32];
  int k = 0;
  while (free != 0) {
    const std::uint32_t bit = free & (~free + 1);
    choices[k++] = __builtin_ctz(bit);
    free &= free - 1;
  }
  long counts[32] = {};
  B::fork_each(static_cast<std::size_t>(k), [&](std::size_t i) {
    const std::uint32_t bit = 1u << choices[i];
    counts[i] = nqueens<B>(n, row + 1, cols | bit, ((d1 | bit) << 1) & all, (d2 | bit) >> 1);
  });
  return std::accumulate(counts, counts + k, 0L);
}

// --- skynet: a 10-ary tree over 10^6 leaves, each leaf its own number ---------------------
// 1,111,111 tasks that do almost nothing, spawned ten at a time into one group (the "skynet"
// benchmark of libfork's and other runtimes' suites): the wide fork, where every child is
// spawned before the parent waits.
template <class B>
std::uint64_t skynet(std::uint64_t num, std::uint64_t size) {
  if (size == 1) return num;
  std::uint64_t sums[10];
  B::fork_each(10, [&](std::size_t i) { sums[i] = skynet<B>(num + i * (size / 10), size / 10); });
  return std::accumulate(sums, sums + 10, std::uint64_t{0});
}

// --- integrate: adaptive trapezoid quadrature --------------------------------------------
// The area under (x^2 + 1) x over [x1, x2]: an interval is halved until its two halves'
// trapezoids agree with its own to 1e-9 (libfork's integrate benchmark). A binary tree whose
// depth follows the curvature, with a little floating-point work per node; the halves are
// summed in a fixed order, so every backend returns the same bits.
inline double integrand(double x) {
  return (x * x + 1.0) * x;
}

template <class B>
double integrate(double x1, double y1, double x2, double y2, double area) {
  const double half = (x2 - x1) / 2;
  const double x0 = x1 + half;
  const double y0 = integrand(x0);
  const double left = (y1 + y0) / 2 * half;
  const double right = (y0 + y2) / 2 * half;
  if (std::abs(left + right - area) < 1e-9) return left + right;
  double a = 0, b = 0;
  B::fork2([&] { a = integrate<B>(x1, y1, x0, y0, left); },
           [&] { b = integrate<B>(x0, y0, x2, y2, right); });
  return a + b;
}

// --- UTS-style unbalanced tree: geometric number of children, fixed seed -----------------
// Each node's child count comes from a hash of its id, so the tree is the same on every
// run and every backend; the tree is deep on some branches and empty on others.
inline std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

struct uts_params {
  double mean_children = 4.0;  // geometric distribution's mean
  int max_depth = 10;
  std::uint64_t seed = 42;
};

inline int uts_children(std::uint64_t id, int depth, const uts_params& p) {
  if (depth >= p.max_depth) return 0;
  // A few hash rounds per node stand in for UTS's SHA-1 work.
  std::uint64_t h = id;
  for (int i = 0; i < 8; ++i)
    h = splitmix(h);
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
  const double q = p.mean_children / (1.0 + p.mean_children);
  return static_cast<int>(std::floor(std::log1p(-u) / std::log(q)));
}

template <class B>
std::uint64_t uts(std::uint64_t id, int depth, const uts_params& p) {
  const int k = std::min(uts_children(id, depth, p), 64);
  if (k == 0) return 1;
  std::uint64_t counts[64];
  B::fork_each(static_cast<std::size_t>(k),
               [&](std::size_t i) { counts[i] = uts<B>(splitmix(id * 64 + i + 1), depth + 1, p); });
  return 1 + std::accumulate(counts, counts + k, std::uint64_t{0});
}

// --- a deep unbalanced tree (UTS T3L-like: binomial) --------------------------------------
// The root has root_children children; every other node has m children with probability q,
// else none (q*m just below 1: a near-critical branching process, so some branches run
// very deep). Decided by a hash of the node id, so the tree is the same everywhere: with the
// defaults 9,986,693 nodes, 1,668 levels deep. A scheduler that keeps O(depth) tasks alive
// per worker stays small here; one that expands breadth-first holds much of the tree.
struct binomial_params {
  int root_children = 10000;
  int m = 4;
  double q = 0.24998;
  std::uint64_t seed = 7;
};

inline int binomial_children(std::uint64_t id, int depth, const binomial_params& p) {
  if (depth == 0) return p.root_children;
  const std::uint64_t h = splitmix(splitmix(id));
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
  return u < p.q ? p.m : 0;
}

template <class B>
std::uint64_t uts_binomial(std::uint64_t id, int depth, const binomial_params& p) {
  const int k = binomial_children(id, depth, p);
  if (k == 0) return 1;
  std::uint64_t small[8];
  std::vector<std::uint64_t> big;  // the root's 10,000 only
  std::uint64_t* counts = small;
  if (k > 8) {
    big.resize(static_cast<std::size_t>(k));
    counts = big.data();
  }
  B::fork_each(static_cast<std::size_t>(k), [&](std::size_t i) {
    counts[i] = uts_binomial<B>(splitmix(id * 64 + i + 1), depth + 1, p);
  });
  return 1 + std::accumulate(counts, counts + k, std::uint64_t{0});
}

// --- recursive blocked matrix multiply, C += A * B ------------------------------------------
struct matrix_view {
  double* p;
  std::size_t stride;
  matrix_view quad(std::size_t r, std::size_t c, std::size_t half) const {
    return {p + r * half * stride + c * half, stride};
  }
};

inline void matmul_base(matrix_view c, matrix_view a, matrix_view b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < n; ++k) {
      const double aik = a.p[i * a.stride + k];
      double* crow = c.p + i * c.stride;
      const double* brow = b.p + k * b.stride;
      for (std::size_t j = 0; j < n; ++j)
        crow[j] += aik * brow[j];
    }
  }
}

template <class B>
void matmul(matrix_view c, matrix_view a, matrix_view b, std::size_t n) {
  if (n <= 32) {
    matmul_base(c, a, b, n);
    return;
  }
  const std::size_t h = n / 2;
  // Two phases of four independent quadrant products (each C quadrant written once each).
  for (int phase = 0; phase < 2; ++phase) {
    B::fork_each(4, [&, phase](std::size_t q) {
      const std::size_t i = q / 2, j = q % 2;
      const std::size_t k = static_cast<std::size_t>(phase);
      matmul<B>(c.quad(i, j, h), a.quad(i, k, h), b.quad(k, j, h), h);
    });
  }
}

// --- parallel quicksort ------------------------------------------------------------------------
template <class B>
void quicksort(int* first, int* last) {
  const std::ptrdiff_t n = last - first;
  if (n <= 2048) {
    std::sort(first, last);
    return;
  }
  // Median of three, then a three-way partition (handles duplicates).
  int a = first[0], b = first[n / 2], c = last[-1];
  const int pivot = std::max(std::min(a, b), std::min(std::max(a, b), c));
  int* lt = std::partition(first, last, [pivot](int x) { return x < pivot; });
  int* gt = std::partition(lt, last, [pivot](int x) { return x == pivot; });
  B::fork2([=] { quicksort<B>(first, lt); }, [=] { quicksort<B>(gt, last); });
}

}  // namespace bench
