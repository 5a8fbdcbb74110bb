// Jacobi heat diffusion on a 2D grid split in row blocks over MPI ranks, with heist inside
// each rank. Each step starts the halo exchange (MPI_Irecv/MPI_Isend as
// heist futures), updates the interior rows with parallel_for while the messages travel,
// then the two border rows once the halos are in. The final grid is gathered on rank 0 and
// compared cell by cell with a serial solver's.
//
//   mpirun -np 2 jacobi [--size N] [--steps S] [--mode overlap|blocking|both] [--workers W]
//                       [--reps R] [--csv FILE]
// "blocking" is the same code with MPI_Waitall right after posting the exchange (the usual
// non-overlapped version), for comparison. Exit status 0 iff every check passed.
#include <mpi.h>
#include <heist/heist.hpp>
#include <heist/mpi.hpp>

#include "options.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using grid = std::vector<double>;  // rows x cols, row-major

double initial(int row, int col, int n) {
  // A hot top edge and a bump in the middle; deterministic in (row, col).
  if (row == 0) return 100.0;
  if (row == n + 1 || col == 0 || col == n + 1) return 0.0;
  const double x = (col - n / 2.0) / n, y = (row - n / 2.0) / n;
  return 50.0 * std::exp(-40.0 * (x * x + y * y));
}

// One cell's update: the same expression everywhere, so distributed and serial results are
// bitwise equal.
inline double relax(const double* up, const double* mid, const double* down, int c) {
  return 0.25 * (up[c] + down[c] + mid[c - 1] + mid[c + 1]);
}

void update_row(const grid& from, grid& to, int row, int cols) {
  const double* up = &from[(row - 1) * cols];
  const double* mid = &from[row * cols];
  const double* down = &from[(row + 1) * cols];
  double* out = &to[row * cols];
  for (int c = 1; c < cols - 1; ++c)
    out[c] = relax(up, mid, down, c);
}

// The whole (n+2)x(n+2) grid, serially: the reference.
grid serial_solve(int n, int steps) {
  const int cols = n + 2;
  grid a(static_cast<std::size_t>(cols) * cols), b;
  for (int r = 0; r < cols; ++r)
    for (int c = 0; c < cols; ++c)
      a[r * cols + c] = initial(r, c, n);
  b = a;
  for (int s = 0; s < steps; ++s) {
    for (int r = 1; r <= n; ++r)
      update_row(a, b, r, cols);
    std::swap(a, b);
  }
  return a;
}

struct result {
  double seconds = 0;      // the step loop
  double halo_wait_s = 0;  // time the step loop waited for halos after its interior work
  double exchange_s = 0;   // blocking mode: time in MPI_Waitall
  grid local;              // local rows (with halos)
};

// The distributed solver on this rank: rows [first, first + rows) of the n interior rows.
result solve(heist::executor& ex, int n, int steps, bool overlap, int rank, int ranks) {
  const int cols = n + 2;
  const int rows = n / ranks + (rank < n % ranks ? 1 : 0);
  const int first = 1 + rank * (n / ranks) + std::min(rank, n % ranks);
  // Local rows 1..rows; 0 and rows+1 are halos (or the fixed boundary at the ends).
  grid a(static_cast<std::size_t>(rows + 2) * cols), b;
  for (int r = 0; r < rows + 2; ++r)
    for (int c = 0; c < cols; ++c)
      a[r * cols + c] = initial(first - 1 + r, c, n);
  b = a;
  const int up = rank - 1, down = rank + 1;
  result res;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    std::vector<MPI_Request> reqs;
    auto post = [&](double* buf, int peer, bool send) {
      MPI_Request r;
      if (send) {
        MPI_Isend(buf, cols, MPI_DOUBLE, peer, s, MPI_COMM_WORLD, &r);
      } else {
        MPI_Irecv(buf, cols, MPI_DOUBLE, peer, s, MPI_COMM_WORLD, &r);
      }
      reqs.push_back(r);
    };
    if (up >= 0) {
      post(&a[0], up, false);
      post(&a[cols], up, true);
    }
    if (down < ranks) {
      post(&a[(rows + 1) * cols], down, false);
      post(&a[rows * cols], down, true);
    }
    if (overlap) {
      std::vector<heist::future<MPI_Status>> halos;
      for (MPI_Request r : reqs)
        halos.push_back(heist::mpi::when_done(r, ex));
      auto all = heist::when_all(std::move(halos));
      // Interior rows (2..rows-1) need no halo: they run while the messages travel.
      ex.submit([&] {
          heist::parallel_for(heist::blocked_range<int>(2, std::max(2, rows)), [&](auto range) {
            for (int r = range.begin(); r < range.end(); ++r)
              update_row(a, b, r, cols);
          });
        }).get();
      const auto w0 = std::chrono::steady_clock::now();
      all.get();
      res.halo_wait_s +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      update_row(a, b, 1, cols);
      if (rows > 1) update_row(a, b, rows, cols);
    } else {
      const auto w0 = std::chrono::steady_clock::now();
      MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
      res.exchange_s +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      ex.submit([&] {
          heist::parallel_for(heist::blocked_range<int>(1, rows + 1), [&](auto range) {
            for (int r = range.begin(); r < range.end(); ++r)
              update_row(a, b, r, cols);
          });
        }).get();
    }
    std::swap(a, b);
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.local = std::move(a);
  return res;
}

// Gathers every rank's rows on rank 0 and compares them with the serial grid.
bool matches_serial(const result& res, int n, int steps, int rank, int ranks) {
  const int cols = n + 2;
  const int rows = static_cast<int>(res.local.size() / cols) - 2;
  std::vector<int> counts(ranks), displs(ranks);
  const int mine = rows * cols;
  MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  grid all;
  if (rank == 0) {
    for (int i = 1; i < ranks; ++i)
      displs[i] = displs[i - 1] + counts[i - 1];
    all.resize(static_cast<std::size_t>(n) * cols);
  }
  MPI_Gatherv(&res.local[cols], mine, MPI_DOUBLE, all.data(), counts.data(), displs.data(),
              MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == 0) {
    const grid ref = serial_solve(n, steps);
    double checksum = 0;
    for (int r = 1; r <= n; ++r) {
      for (int c = 0; c < cols; ++c) {
        const double v = all[(r - 1) * cols + c];
        checksum += v;
        if (v != ref[r * cols + c]) ok = 0;
      }
    }
    std::printf("  checksum %.9f, %s the serial solver cell by cell\n", checksum,
                ok ? "equal to" : "DIFFERENT FROM");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok == 1;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  long size = 512, step_count = 100, reps_arg = 5;
  long workers = 0;  // 0: available_parallelism() (the rank's binding)
  std::string mode = "both", csv;
  const std::string bad = example::parse_options(
      argc, argv,
      {{"--size", &size, 1, 8192},
       {"--steps", &step_count, 1, 1 << 24},
       {"--workers", &workers, 0, 4096},
       {"--reps", &reps_arg, 1, 1000}},
      {{"--mode", &mode, {"both", "blocking", "overlap"}}, {"--csv", &csv, {}}});
  if (!bad.empty() || size < ranks) {
    if (rank == 0) {
      std::fprintf(stderr, "jacobi: %s\n",
                   bad.empty() ? "--size must be at least the number of ranks" : bad.c_str());
    }
    MPI_Finalize();
    return 2;
  }
  const int n = static_cast<int>(size), steps = static_cast<int>(step_count);
  const int reps = static_cast<int>(reps_arg);
  heist::executor ex(workers == 0 ? heist::available_parallelism()
                                  : static_cast<std::size_t>(workers));
  bool ok = true;
  // Warm-up (untimed, unchecked): page faults, caches and MPI's connection set-up would
  // otherwise all land on whichever mode runs first.
  solve(ex, n, std::max(1, steps / 10), false, rank, ranks);
  // The modes alternate, `reps` times each; the first result of each mode is checked against
  // the serial solver; the figures are medians over the repetitions.
  std::vector<const char*> modes;
  for (const char* m : {"blocking", "overlap"})
    if (mode == "both" || mode == m) modes.push_back(m);
  std::vector<std::vector<double>> step_ms(modes.size()), wait_us(modes.size());
  for (int rep = 0; rep < reps; ++rep) {
    for (std::size_t k = 0; k < modes.size(); ++k) {
      const bool overlap = std::string(modes[k]) == "overlap";
      result res = solve(ex, n, steps, overlap, rank, ranks);
      if (rep == 0) ok = matches_serial(res, n, steps, rank, ranks) && ok;
      double wait = overlap ? res.halo_wait_s : res.exchange_s, slowest = 0, seconds = 0;
      // The slowest rank's figures: a step is as slow as its slowest rank.
      MPI_Allreduce(&wait, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(&res.seconds, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      step_ms[k].push_back(seconds * 1e3 / steps);
      wait_us[k].push_back(slowest * 1e6 / steps);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  if (rank == 0) {
    for (std::size_t k = 0; k < modes.size(); ++k) {
      std::printf(
          "jacobi %s: %d ranks x %zu workers, %dx%d grid, %d steps: %.3f ms/step "
          "(median of %d), waits %.1f us/step for halos%s\n",
          modes[k], ranks, ex.num_workers(), n, n, steps, median(step_ms[k]), reps,
          median(wait_us[k]), std::string(modes[k]) == "overlap" ? " after its interior work" : "");
    }
  }
  if (modes.size() == 2) {
    const auto st = heist::mpi::stats(ex);
    if (rank == 0) {
      const double b = median(step_ms[0]), o = median(step_ms[1]);
      const double e = median(wait_us[0]), w = median(wait_us[1]);
      const double hidden = e > 0 ? std::max(0.0, 1.0 - w / e) : 0.0;
      std::printf(
          "  overlap / blocking: %.2f; communication hidden: %.0f%% (blocking waits "
          "%.1f us, overlap %.1f us per step)\n",
          o / b, hidden * 100, e, w);
      std::printf(
          "  heist::mpi on rank 0: %llu MPI_Testsome calls, %llu requests, longest "
          "call %.1f us (no worker ever waits in MPI)\n",
          static_cast<unsigned long long>(st.polls), static_cast<unsigned long long>(st.completed),
          st.max_ns_in_call / 1e3);
      if (!csv.empty()) {
        std::ofstream out(csv, std::ios::app);
        out << "jacobi " << n << "x" << n << " blocking (" << ranks << " ranks)," << b
            << ",ms/step,median of " << reps << "\n";
        out << "jacobi " << n << "x" << n << " overlap (" << ranks << " ranks)," << o
            << ",ms/step,median of " << reps << "\n";
        out << "jacobi communication hidden (" << ranks << " ranks)," << hidden * 100 << ",%\n";
      }
    }
  }
  ex.shutdown();
  MPI_Finalize();
  if (rank == 0) std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
