// A GoogleTest main for tests run under mpirun: initializes MPI at the thread level the
// test asks for, runs the tests on every rank (each prints its own results), and makes the
// exit status agree across ranks (a failure on any rank fails all).
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

inline int run_mpi_tests(int argc, char** argv, int level) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, level, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Every rank prints its results (interleaved): a failure on any rank must be visible.
  (void)rank;
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
