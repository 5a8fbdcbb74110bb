// heist::mpi under mpirun (-np 2 and -np 3; MPI_THREAD_MULTIPLE): MPI requests as heist
// futures, progressed by the executor without any worker blocking in MPI.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "heist/mpi.hpp"
#include "mpi_main.hpp"

namespace {

using namespace std::chrono_literals;

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

TEST(Mpi, RingExchangeCompletesThroughFutures) {
  heist::executor ex(2);
  const int r = rank(), n = size();
  for (int round = 0; round < 50; ++round) {
    int out = r * 1000 + round, in = -1;
    MPI_Request send, recv;
    MPI_Irecv(&in, 1, MPI_INT, (r + n - 1) % n, round, MPI_COMM_WORLD, &recv);
    MPI_Isend(&out, 1, MPI_INT, (r + 1) % n, round, MPI_COMM_WORLD, &send);
    auto fr = heist::mpi::when_done(recv, ex);
    auto fs = heist::mpi::when_done(send, ex);
    const MPI_Status st = fr.get();
    fs.get();
    EXPECT_EQ(in, ((r + n - 1) % n) * 1000 + round);
    EXPECT_EQ(st.MPI_SOURCE, (r + n - 1) % n);
    EXPECT_EQ(st.MPI_TAG, round);
    int count = 0;
    MPI_Get_count(&st, MPI_INT, &count);
    EXPECT_EQ(count, 1);
  }
}

heist::task<long> receive_and_sum(std::vector<long>& buf, int from, int tag) {
  MPI_Request req;
  MPI_Irecv(buf.data(), static_cast<int>(buf.size()), MPI_LONG, from, tag, MPI_COMM_WORLD, &req);
  heist::future<MPI_Status> f = heist::mpi::when_done(req);  // the executor running us
  co_await std::move(f);
  co_return std::accumulate(buf.begin(), buf.end(), 0L);
}

TEST(Mpi, ContinuationsAndCoroutinesAwaitRequests) {
  heist::executor ex(2);
  const int r = rank(), n = size();
  const int to = (r + 1) % n, from = (r + n - 1) % n;
  std::vector<long> out(1000), in(1000), in2(1000);
  std::iota(out.begin(), out.end(), r);
  MPI_Request send;
  MPI_Isend(out.data(), 1000, MPI_LONG, to, 7, MPI_COMM_WORLD, &send);
  auto sum = heist::start(ex, receive_and_sum(in, from, 7));
  const long expected = 1000L * 999 / 2 + 1000L * from;
  EXPECT_EQ(sum.get(), expected);
  heist::mpi::when_done(send, ex).get();
  // then() on a request's future: the continuation is a task of the executor.
  MPI_Request send2, recv2;
  MPI_Irecv(in2.data(), 1000, MPI_LONG, from, 8, MPI_COMM_WORLD, &recv2);
  MPI_Isend(out.data(), 1000, MPI_LONG, to, 8, MPI_COMM_WORLD, &send2);
  auto total = heist::mpi::when_done(recv2, ex).then(
      [&](MPI_Status s) { return std::accumulate(in2.begin(), in2.end(), 0L) + s.MPI_TAG; });
  EXPECT_EQ(total.get(), expected + 8);
  heist::mpi::when_done(send2, ex).get();
}

TEST(Mpi, ManyOutstandingRequestsAndCollectives) {
  heist::executor ex(2);
  const int r = rank(), n = size();
  constexpr int k = 500;
  std::vector<int> out(k), in(k, -1);
  std::vector<heist::future<MPI_Status>> fs;
  for (int i = 0; i < k; ++i) {
    MPI_Request req;
    MPI_Irecv(&in[i], 1, MPI_INT, (r + n - 1) % n, i, MPI_COMM_WORLD, &req);
    fs.push_back(heist::mpi::when_done(req, ex));
  }
  for (int i = 0; i < k; ++i) {
    out[i] = i * 3 + r;
    MPI_Request req;
    MPI_Isend(&out[i], 1, MPI_INT, (r + 1) % n, i, MPI_COMM_WORLD, &req);
    fs.push_back(heist::mpi::when_done(req, ex));
  }
  auto all = heist::when_all(std::move(fs));
  const auto statuses = all.get();
  EXPECT_EQ(statuses.size(), 2u * k);
  for (int i = 0; i < k; ++i)
    EXPECT_EQ(in[i], i * 3 + (r + n - 1) % n);
  // A non-blocking collective as a future.
  long mine = r + 1, total = 0;
  MPI_Request red;
  MPI_Iallreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &red);
  heist::mpi::when_done(red, ex).get();
  EXPECT_EQ(total, static_cast<long>(n) * (n + 1) / 2);
  const auto s = heist::mpi::stats(ex);
  EXPECT_GE(s.completed, 2u * k + 1);
  EXPECT_EQ(s.outstanding, 0u);
}

// While a receive is outstanding (its sender waits 300 ms), the workers keep running other
// tasks: no worker sits in an MPI call. Checked by the work done meanwhile and by heist's own
// counters of time inside MPI calls (every call is MPI_Testsome).
TEST(Mpi, NoWorkerBlocksWhileARequestIsOutstanding) {
  heist::executor ex(2);
  const int r = rank(), n = size();
  int in = -1, out = r;
  MPI_Request recv, send;
  MPI_Irecv(&in, 1, MPI_INT, (r + n - 1) % n, 99, MPI_COMM_WORLD, &recv);
  auto fr = heist::mpi::when_done(recv, ex);
  std::atomic<int> ran{0};
  MPI_Barrier(MPI_COMM_WORLD);  // the ranks' 300 ms start together (the main thread's call)
  const auto start = std::chrono::steady_clock::now();
  // Tasks run on the pool while the receive is outstanding (counted only while it is).
  while (std::chrono::steady_clock::now() - start < 300ms && !fr.is_ready()) {
    ex.submit([&] { ran.fetch_add(1); }).get();
  }
  EXPECT_GT(ran.load(), 100) << "workers were not free while the receive was outstanding";
  MPI_Isend(&out, 1, MPI_INT, (r + 1) % n, 99, MPI_COMM_WORLD, &send);
  heist::mpi::when_done(send, ex).get();
  fr.get();
  EXPECT_EQ(in, (r + n - 1) % n);
  const auto s = heist::mpi::stats(ex);
  EXPECT_GT(s.polls, 0u);
  // A worker waiting for the held-back receive would sit in MPI for 300 ms; 200 ms leaves room
  // for preemption on a loaded machine.
  EXPECT_LT(s.max_ns_in_call, 200'000'000u) << "an MPI call took " << s.max_ns_in_call << " ns";
  // With nothing outstanding the pool stops polling.
  std::this_thread::sleep_for(50ms);
  const auto before = heist::mpi::stats(ex).polls;
  std::this_thread::sleep_for(200ms);
  EXPECT_LE(heist::mpi::stats(ex).polls - before, 2u);
}

TEST(Mpi, NullRequestIsAnErrorNamingIt) {
  heist::executor ex(1);
  try {
    heist::mpi::when_done(MPI_REQUEST_NULL, ex);
    ADD_FAILURE() << "accepted MPI_REQUEST_NULL";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("request"), std::string::npos) << e.what();
  }
  // The same without an executor (the current one), checked before MPI's state is.
  EXPECT_THROW(heist::mpi::when_done(MPI_REQUEST_NULL), std::invalid_argument);
}

// An executor polls through one poller; one that already has another kind (a future
// integration's) refuses MPI requests with a logic_error rather than mixing them in.
class other_poller : public heist::detail::poller {
 public:
  bool poll() noexcept override { return false; }
};
TEST(Mpi, AnExecutorWithAnotherPollerRefusesMpiRequests) {
  heist::executor ex(1);
  heist::detail::install_poller(
      heist::detail_impl(ex),
      [](heist::detail::executor_impl&) -> std::unique_ptr<heist::detail::poller> {
        return std::make_unique<other_poller>();
      });
  int value = 0;
  MPI_Request req;
  MPI_Irecv(&value, 1, MPI_INT, rank(), 77, MPI_COMM_WORLD, &req);
  try {
    heist::mpi::when_done(req, ex);
    ADD_FAILURE() << "accepted a request on an executor with another poller";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("another poller"), std::string::npos) << e.what();
  }
  MPI_Cancel(&req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

TEST(Mpi, RequestsFromInsideTasksUseTheRunningExecutor) {
  heist::executor ex(2);
  const int r = rank(), n = size();
  int in = -1, out = 40 + r;
  auto f = ex.submit([&] {
    MPI_Request recv, send;
    MPI_Irecv(&in, 1, MPI_INT, (r + n - 1) % n, 5, MPI_COMM_WORLD, &recv);
    MPI_Isend(&out, 1, MPI_INT, (r + 1) % n, 5, MPI_COMM_WORLD, &send);
    return heist::when_all(heist::mpi::when_done(recv), heist::mpi::when_done(send));
  });
  auto both = f.get();
  both.get();
  EXPECT_EQ(in, 40 + (r + n - 1) % n);
  EXPECT_GE(heist::mpi::stats(ex).completed, 2u);
}

TEST(Mpi, AnInactivePersistentRequestIsRefusedNamingIt) {
  heist::executor ex(2);
  int buf = 0;
  MPI_Request req;
  MPI_Recv_init(&buf, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, &req);  // never started
  try {
    heist::mpi::when_done(req, ex);
    ADD_FAILURE() << "accepted an inactive persistent request";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("request is inactive"), std::string::npos) << e.what();
  }
  MPI_Request_free(&req);
}

TEST(Mpi, APendingRequestRegisteredTwiceIsRefused) {
  heist::executor ex(2);
  int buf = 0;
  MPI_Request req;
  MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &req);  // nobody sends
  auto first = heist::mpi::when_done(req, ex);
  try {
    heist::mpi::when_done(req, ex);
    ADD_FAILURE() << "accepted a pending request twice";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("already registered"), std::string::npos) << e.what();
  }
  // Completed by a send of our own, so the test leaves nothing outstanding.
  int one = 1;
  MPI_Send(&one, 1, MPI_INT, rank(), 78, MPI_COMM_WORLD);
  first.get();
  EXPECT_EQ(buf, 1);
}

TEST(Mpi, AFailedRequestReachesItsFutureAsAnMpiError) {
  // Under MPI_ERRORS_RETURN a receive into too small a buffer fails (MPI_ERR_TRUNCATE): the
  // future holds an mpi_error with MPI's own string, not a status that looks fine. (From the
  // neighbour rank: Open MPI's self path does not report the truncation.)
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int r = rank(), n = size();
  heist::executor ex(2);
  int small = 0;
  int big[2] = {1, 2};
  MPI_Request recv, send;
  MPI_Irecv(&small, 1, MPI_INT, (r + n - 1) % n, 79, comm, &recv);
  auto f = heist::mpi::when_done(recv, ex);
  MPI_Isend(big, 2, MPI_INT, (r + 1) % n, 79, comm, &send);
  try {
    f.get();
    ADD_FAILURE() << "a truncated receive completed with a status";
  } catch (const heist::mpi::mpi_error& e) {
    int cls = 0;
    MPI_Error_class(e.code(), &cls);
    EXPECT_EQ(cls, MPI_ERR_TRUNCATE) << e.what();
    EXPECT_NE(std::string(e.what()).find("heist::mpi::when_done"), std::string::npos);
  }
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  MPI_Barrier(comm);
  MPI_Comm_free(&comm);
}

TEST(Mpi, AnExecutorDestroyedFirstSaysSoInTheFuture) {
  int buf = 0;
  MPI_Request req;
  MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 80, MPI_COMM_WORLD, &req);
  heist::future<int> after;
  {
    heist::executor ex(1);
    after = heist::mpi::when_done(req, ex).then([](MPI_Status) { return 1; });
  }
  try {
    after.get();
    ADD_FAILURE() << "the request's future completed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("was destroyed before the request completed"),
              std::string::npos)
        << e.what();
  }
  MPI_Cancel(&req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

}  // namespace

int main(int argc, char** argv) {
  return run_mpi_tests(argc, argv, MPI_THREAD_MULTIPLE);
}
