// heist::mpi's thread-level rules: run under mpirun with the level given as argv[1]
// ("funneled" or "serialized"). Below MPI_THREAD_SERIALIZED, when_done is a logic_error; with
// SERIALIZED heist serializes its own calls and the application's go through mpi::call.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <stdexcept>

#include "heist/heist.hpp"
#include "heist/mpi.hpp"
#include "mpi_main.hpp"

namespace {
int g_level = MPI_THREAD_FUNNELED;

TEST(MpiThreadLevel, BelowSerializedIsALogicErrorOtherwiseItWorks) {
  heist::executor ex(2);
  int r = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int in = -1, out = r;
  MPI_Request recv, send;
  heist::mpi::call([&] {
    MPI_Irecv(&in, 1, MPI_INT, (r + n - 1) % n, 1, MPI_COMM_WORLD, &recv);
    return MPI_Isend(&out, 1, MPI_INT, (r + 1) % n, 1, MPI_COMM_WORLD, &send);
  });
  if (g_level < MPI_THREAD_SERIALIZED) {
    EXPECT_THROW(heist::mpi::when_done(recv, ex), std::logic_error);
    MPI_Wait(&recv, MPI_STATUS_IGNORE);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
  } else {
    auto a = heist::mpi::when_done(recv, ex);
    auto b = heist::mpi::when_done(send, ex);
    // The application keeps calling MPI (serialized with heist's progress through call()).
    for (int i = 0; i < 100 && !a.is_ready(); ++i) {
      int flag = 0;
      heist::mpi::call([&] {
        return MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      });
    }
    a.get();
    b.get();
  }
  EXPECT_EQ(in, (r + n - 1) % n);
}
}  // namespace

int main(int argc, char** argv) {
  g_level = argc > 1 && std::strcmp(argv[1], "serialized") == 0 ? MPI_THREAD_SERIALIZED
                                                                : MPI_THREAD_FUNNELED;
  return run_mpi_tests(argc, argv, g_level);
}
