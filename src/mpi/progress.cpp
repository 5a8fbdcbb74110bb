// heist::mpi: an executor's outstanding MPI requests, progressed by its idle and between-task
// workers through the core's poller hook (detail/compose/poller.hpp).
//
// The request table is guarded by a mutex that poll() only try-locks: two workers never test
// at once (the second skips, its poll counts as "nothing completed"), and a worker never
// waits for the table. MPI_Testsome runs on a snapshot-free table: the lock is held across the
// call, and registrations (when_done) wait for it, which is bounded by one MPI_Testsome. With
// MPI_THREAD_SERIALIZED the process-wide call lock (heist::mpi::lock) is also try-locked
// around the call. Completed requests' promises are fulfilled after both locks are released:
// set_value schedules continuations, which must not run under heist's locks.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heist/detail/compose/poller.hpp"
#include "heist/detail/core/spawn.hpp"
#include "heist/mpi.hpp"
#include "heist/promise.hpp"

namespace heist::mpi {
namespace {

std::mutex g_call_lock;  // heist::mpi::lock(): MPI_THREAD_SERIALIZED's serialization

// The thread level MPI was initialized with; std::logic_error if heist cannot use it.
void checked_thread_level() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    throw std::logic_error(
        "heist::mpi::when_done: MPI is not initialized (or already finalized); call "
        "MPI_Init_thread with MPI_THREAD_MULTIPLE or MPI_THREAD_SERIALIZED first");
  }
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    throw std::logic_error(
        "heist::mpi::when_done: MPI was initialized with thread level " + std::to_string(provided) +
        "; heist's workers call MPI, so it needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE");
  }
}

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

std::exception_ptr error_of(int code, const char* what) noexcept {
  try {
    return std::make_exception_ptr(
        mpi_error(code, std::string("heist::mpi::when_done: ") + what + ": " + error_string(code)));
  } catch (...) {
    return std::current_exception();
  }
}

int query_level() {
  int provided = 0;
  MPI_Query_thread(&provided);  // callable from any thread (MPI-3, 12.4.3)
  return provided;
}

class request_poller final : public detail::poller {
 public:
  request_poller() : m_serialized(query_level() < MPI_THREAD_MULTIPLE) {}

  ~request_poller() override {
    // The executor is gone: requests still outstanding can never complete through it.
    for (promise<MPI_Status>& p : m_promises) {
      p.set_exception(std::make_exception_ptr(std::runtime_error(
          "heist::mpi::when_done: the executor progressing the request was destroyed before "
          "the request completed; the request stays with MPI, never completed through heist")));
    }
  }

  // `pending`: MPI reported the request not yet complete when it was checked.
  future<MPI_Status> add(MPI_Request request, bool pending, detail::executor_impl& exec) {
    promise<MPI_Status> p;
    future<MPI_Status> f = p.get_future();
    {
      std::lock_guard<std::mutex> g(m_lock);
      // A pending request in the table twice would be completed, and freed, twice. A complete
      // one may share its handle with others: Open MPI hands out one shared object for sends
      // that completed at once, so its handles repeat among requests outstanding together.
      if (pending && std::find(m_requests.begin(), m_requests.end(), request) != m_requests.end()) {
        throw std::invalid_argument(
            "heist::mpi::when_done: request is already registered (when_done was called on it "
            "before, and it has not completed)");
      }
      m_requests.push_back(request);
      m_promises.push_back(std::move(p));
    }
    add_pending(1);
    heist::detail::notify_poll_pending(exec);
    return f;
  }

  bool poll() noexcept override {
    std::vector<promise<MPI_Status>> done;
    std::vector<MPI_Status> statuses;
    std::vector<promise<MPI_Status>> failed;  // all of them, when MPI_Testsome itself failed
    std::exception_ptr failure;
    {
      std::unique_lock<std::mutex> table(m_lock, std::try_to_lock);
      if (!table.owns_lock() || m_requests.empty()) return false;
      std::unique_lock<std::mutex> serial(g_call_lock, std::defer_lock);
      if (m_serialized && !serial.try_lock()) return false;  // the application is in MPI
      const int n = static_cast<int>(m_requests.size());
      m_indices.resize(n);
      m_statuses.resize(n);
      int count = 0;
      const auto t0 = std::chrono::steady_clock::now();
      const int rc =
          MPI_Testsome(n, m_requests.data(), &count, m_indices.data(), m_statuses.data());
      const auto ns =
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - t0)
                                         .count());
      if (serial.owns_lock()) serial.unlock();
      m_stats.polls += 1;
      m_stats.ns_in_mpi += ns;
      m_stats.max_ns_in_call = std::max(m_stats.max_ns_in_call, ns);
      if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        // The call itself failed (statuses and count are not to be trusted): no request can
        // be told apart, and none would ever complete; every outstanding one fails with it.
        for (promise<MPI_Status>& p : m_promises)
          failed.push_back(std::move(p));
        failure = error_of(rc, "MPI_Testsome failed");
        remove_pending(m_requests.size());
        m_requests.clear();
        m_promises.clear();
        count = 0;
      }
      if (count == MPI_UNDEFINED || count <= 0) {
        table.unlock();
        for (promise<MPI_Status>& p : failed)
          p.set_exception(failure);
        return !failed.empty();
      }
      // Take the completed entries out, highest index first so that swap-removal does not
      // move an entry that is still to be taken.
      std::vector<std::pair<int, MPI_Status>> completed;
      for (int k = 0; k < count; ++k)
        completed.emplace_back(m_indices[k], m_statuses[k]);
      std::sort(completed.begin(), completed.end(),
                [](const auto& a, const auto& b) { return a.first > b.first; });
      for (const auto& [i, status] : completed) {
        done.push_back(std::move(m_promises[i]));
        statuses.push_back(status);
        m_promises[i] = std::move(m_promises.back());
        m_promises.pop_back();
        m_requests[i] = m_requests.back();
        m_requests.pop_back();
      }
      m_stats.completed += static_cast<std::uint64_t>(count);
      remove_pending(static_cast<std::size_t>(count));
    }
    for (std::size_t k = 0; k < done.size(); ++k) {
      // MPI_ERR_IN_STATUS: each completed request's own status says whether it failed.
      if (statuses[k].MPI_ERROR != MPI_SUCCESS && statuses[k].MPI_ERROR != MPI_ERR_PENDING) {
        done[k].set_exception(error_of(statuses[k].MPI_ERROR, "the request failed"));
      } else {
        done[k].set_value(statuses[k]);
      }
    }
    return true;
  }

  progress_stats stats() {
    std::lock_guard<std::mutex> g(m_lock);
    progress_stats s = m_stats;
    s.outstanding = m_requests.size();
    return s;
  }

 private:
  const bool m_serialized;
  std::mutex m_lock;  // guards everything below
  std::vector<MPI_Request> m_requests;
  std::vector<promise<MPI_Status>> m_promises;  // parallel to m_requests
  std::vector<int> m_indices;
  std::vector<MPI_Status> m_statuses;
  progress_stats m_stats;
};

// The refusals of when_done, before heist takes the request: MPI_REQUEST_NULL, a handle MPI
// rejects, or an inactive persistent request (MPI reports it complete with an empty status:
// no source, no tag, no data), which no MPI_Testsome would ever complete. Returns whether the
// request is still pending.
void check_null(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) {
    throw std::invalid_argument("heist::mpi::when_done: request is MPI_REQUEST_NULL");
  }
}
bool check_request(MPI_Request request) {
  int flag = 0;
  MPI_Status status;
  const int rc = MPI_Request_get_status(request, &flag, &status);
  if (rc != MPI_SUCCESS) {
    throw std::invalid_argument("heist::mpi::when_done: request is not a valid MPI request (" +
                                error_string(rc) + ")");
  }
  if (flag == 0) return true;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  if (status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG && count == 0) {
    throw std::invalid_argument(
        "heist::mpi::when_done: request is inactive (a persistent request not started with "
        "MPI_Start): it can never complete");
  }
  return false;
}

request_poller& poller_of(detail::executor_impl& exec) {
  detail::poller& p =
      detail::install_poller(exec, [](detail::executor_impl&) -> std::unique_ptr<detail::poller> {
        return std::make_unique<request_poller>();
      });
  auto* r = dynamic_cast<request_poller*>(&p);
  if (r == nullptr) {
    throw std::logic_error("heist::mpi::when_done: the executor already has another poller");
  }
  return *r;
}

}  // namespace

future<MPI_Status> when_done(MPI_Request request, executor& ex) {
  check_null(request);
  checked_thread_level();
  const bool pending = check_request(request);
  detail::executor_impl& exec = detail_impl(ex);
  return poller_of(exec).add(request, pending, exec);
}

future<MPI_Status> when_done(MPI_Request request) {
  check_null(request);
  checked_thread_level();
  const bool pending = check_request(request);
  detail::executor_impl& exec = detail::current_arena().exec();
  return poller_of(exec).add(request, pending, exec);
}

std::unique_lock<std::mutex> lock() {
  return std::unique_lock<std::mutex>(g_call_lock);
}

progress_stats stats(executor& ex) {
  auto* r = dynamic_cast<request_poller*>(detail::installed_poller(detail_impl(ex)));
  return r != nullptr ? r->stats() : progress_stats{};
}

}  // namespace heist::mpi
