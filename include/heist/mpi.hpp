// heist::mpi: MPI requests as heist futures. Target heist::mpi, built when
// CMake finds MPI; the core library never depends on MPI.
//
//   MPI_Request r;
//   MPI_Irecv(buf, n, MPI_DOUBLE, src, tag, comm, &r);
//   heist::future<MPI_Status> f = heist::mpi::when_done(r);   // heist now owns r
//   f.then([](MPI_Status s) { ... });    // or: MPI_Status s = co_await f;
//
// The executor that runs the calling task (outside any task: default_executor()) progresses
// the request with MPI_Testsome: an idle worker polls before it parks and, while requests
// are outstanding, parks with a short back-off instead of indefinitely; a busy worker polls
// every 64 tasks. No worker ever calls a blocking MPI function, and a pool with no
// outstanding request parks as it always does (no CPU). See docs/guide/mpi.md.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "heist/detail/config.hpp"
#include "heist/executor.hpp"
#include "heist/future.hpp"

namespace heist::mpi {

// What a future of when_done holds when MPI reports the request failed (under an error
// handler such as MPI_ERRORS_RETURN that lets calls return errors): the MPI error code, and
// what() with MPI's error string.
class mpi_error : public std::runtime_error {
 public:
  mpi_error(int code, const std::string& what) : std::runtime_error(what), m_code(code) {}
  int code() const noexcept { return m_code; }

 private:
  int m_code;
};

// A future that becomes ready with the request's status when it completes. The request
// handle passes to heist (do not wait on, test or free it yourself). Errors, all naming
// `request`: std::invalid_argument for MPI_REQUEST_NULL, for a pending request already passed
// to when_done and not yet completed, for an inactive persistent request (never started with
// MPI_Start: it can never complete), and for a handle MPI rejects; std::logic_error if MPI
// is not initialized, already finalized, or initialized below MPI_THREAD_SERIALIZED.
// If MPI reports the request failed, the future holds an mpi_error. If the executor that
// progresses it is destroyed first, the future holds std::runtime_error saying so (the
// request stays with MPI, never completed through heist).
HEIST_API future<MPI_Status> when_done(MPI_Request request);
// (heist) The same, progressed by `ex`.
HEIST_API future<MPI_Status> when_done(MPI_Request request, executor& ex);
// (heist) One future per request, in order (see when_all to combine them).
template <class Range>
auto when_each_done(Range& requests) {
  std::vector<future<MPI_Status>> out;
  for (MPI_Request& r : requests)
    out.push_back(when_done(r));
  return out;
}

// (heist) With MPI_THREAD_SERIALIZED, every MPI call of the process must be serialized:
// heist's own calls take this lock, and code that calls MPI while heist may be progressing
// requests runs its calls through call(f) (or holds lock()). With MPI_THREAD_MULTIPLE the
// lock is still taken by call() but heist's progress does not need it.
HEIST_API std::unique_lock<std::mutex> lock();
template <class F>
decltype(auto) call(F&& f) {
  auto held = lock();
  return std::forward<F>(f)();
}

// (heist) How an executor progressed its requests: every MPI call heist made on its
// workers, and the time spent inside them (all are MPI_Testsome: none blocks).
struct progress_stats {
  std::uint64_t polls = 0;           // MPI_Testsome calls
  std::uint64_t completed = 0;       // requests completed
  std::uint64_t ns_in_mpi = 0;       // total time inside those calls
  std::uint64_t max_ns_in_call = 0;  // the longest single call
  std::size_t outstanding = 0;       // requests not yet completed
};
HEIST_API progress_stats stats(executor& ex);

}  // namespace heist::mpi
