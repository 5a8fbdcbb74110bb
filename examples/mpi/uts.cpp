// Distributed unbalanced tree search (UTS-style geometric tree, fixed seed) over MPI ranks
// with heist inside each rank. Each rank expands nodes with heist tasks;
// a rank that runs dry asks a random rank for work; a rank with surplus answers with a share
// of its stack; termination is detected with the Dijkstra-Safra token algorithm
// (docs/guide/mpi.md). The node count must equal the serial count.
//
//   mpirun -np 3 uts [--depth D] [--workers W] [--csv FILE]
//
// Roles of the threads: the main thread of each rank is its communication loop (it is not a
// heist worker): it posts receives, keeps them as heist futures (heist::mpi::when_done, so
// heist's workers progress them), answers requests and moves the token; heist's workers
// expand nodes. No heist worker calls a blocking MPI function.
#include <mpi.h>
#include <heist/heist.hpp>
#include <heist/mpi.hpp>

#include "options.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// --- the tree ---------------------------------------------------------------------------------
struct node {
  std::uint64_t state;
  std::uint32_t depth;
  std::uint32_t pad = 0;
};

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

int g_max_depth = 18;
constexpr int k_root_children = 32;  // a wide root: the tree cannot die out early

// Geometric number of children with mean 2 (q = 1/3), none at the depth limit.
int children_of(const node& v) {
  if (v.depth == 0) return k_root_children;
  if (static_cast<int>(v.depth) >= g_max_depth) return 0;
  const double u = (static_cast<double>(mix(v.state) >> 11) + 0.5) * 0x1.0p-53;
  return static_cast<int>(std::floor(std::log(u) / std::log(2.0 / 3.0)));
}

node child(const node& v, int i) {
  return {mix(v.state ^ (0xD6E8FEB86659FD93ULL * static_cast<std::uint64_t>(i + 1))), v.depth + 1};
}

const node k_root{12345, 0};

std::uint64_t serial_count() {
  std::vector<node> stack{k_root};
  std::uint64_t count = 0;
  while (!stack.empty()) {
    const node v = stack.back();
    stack.pop_back();
    ++count;
    const int k = children_of(v);
    for (int i = 0; i < k; ++i)
      stack.push_back(child(v, i));
  }
  return count;
}

// Expands `batch` with heist: each task runs a depth-first search of at most `budget` nodes
// and hands what it did not expand back in `rest`.
std::uint64_t expand(heist::executor& ex, std::vector<node>& batch, std::vector<node>& rest) {
  constexpr std::size_t budget = 512;
  std::vector<std::vector<node>> leftovers(batch.size());
  std::atomic<std::uint64_t> count{0};
  ex.submit([&] {
      heist::parallel_for(heist::blocked_range<std::size_t>(0, batch.size(), 1), [&](auto r) {
        for (std::size_t j = r.begin(); j < r.end(); ++j) {
          std::vector<node>& stack = leftovers[j];
          stack.push_back(batch[j]);
          std::uint64_t n = 0;
          while (!stack.empty() && n < budget) {
            const node v = stack.back();
            stack.pop_back();
            ++n;
            const int k = children_of(v);
            for (int i = 0; i < k; ++i)
              stack.push_back(child(v, i));
          }
          count.fetch_add(n, std::memory_order_relaxed);
        }
      });
    }).get();
  for (auto& l : leftovers)
    rest.insert(rest.end(), l.begin(), l.end());
  return count.load();
}

// --- messages -----------------------------------------------------------------------------
enum tag : int { k_request = 1, k_work = 2, k_token = 3, k_done = 4 };
constexpr int k_max_share = 4096;  // nodes per work message

struct token {
  long count;  // Safra: sum of the counters of the ranks it visited
  int black;   // Safra: some rank it visited received work since the round began
};

// A posted receive of one kind, kept as a heist future.
template <class T>
struct receiver {
  std::vector<T> buf;
  MPI_Request req = MPI_REQUEST_NULL;
  heist::future<MPI_Status> done;
  void post(heist::executor& ex, int count, MPI_Datatype type, int tag_) {
    buf.resize(static_cast<std::size_t>(count));
    MPI_Irecv(buf.data(), count * static_cast<int>(sizeof(T)), type, MPI_ANY_SOURCE, tag_,
              MPI_COMM_WORLD, &req);
    done = heist::mpi::when_done(req, ex);
  }
  bool ready() const { return done.is_ready(); }
};

struct rank_stats {
  std::uint64_t nodes = 0;
  long requests_sent = 0, shares_sent = 0, shares_received = 0, nodes_received = 0;
};

// Sends a buffer and keeps the send's future (completed later by heist's progress).
struct sender {
  std::vector<std::vector<char>> bufs;
  std::vector<heist::future<MPI_Status>> futs;
  void send(heist::executor& ex, const void* data, int bytes, int to, int tag_) {
    bufs.emplace_back(static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
    MPI_Request r;
    MPI_Isend(bufs.back().data(), bytes, MPI_BYTE, to, tag_, MPI_COMM_WORLD, &r);
    futs.push_back(heist::mpi::when_done(r, ex));
  }
  void drain() {
    for (auto& f : futs)
      f.get();
    futs.clear();
    bufs.clear();
  }
};

rank_stats run(heist::executor& ex, int rank, int ranks) {
  rank_stats st;
  std::vector<node> stack;
  if (rank == 0) stack.push_back(k_root);
  std::mt19937 rng(static_cast<unsigned>(rank) * 7919u + 1u);
  sender out;
  receiver<int> req_in;
  receiver<node> work_in;
  receiver<token> token_in;
  receiver<int> done_in;
  req_in.post(ex, 1, MPI_BYTE, k_request);
  work_in.post(ex, k_max_share, MPI_BYTE, k_work);
  token_in.post(ex, 1, MPI_BYTE, k_token);
  done_in.post(ex, 1, MPI_BYTE, k_done);
  long counter = 0;    // Safra: work messages sent minus received
  bool black = false;  // Safra: received work since it last passed the token
  bool have_token = rank == 0, token_black = false;
  long token_count = 0;
  bool waiting_for_work = false, round_started = false;
  for (;;) {
    // Work first: expand a batch from the top of the stack.
    if (!stack.empty()) {
      const std::size_t take = std::min<std::size_t>(stack.size(), 16);
      std::vector<node> batch(stack.end() - static_cast<long>(take), stack.end());
      stack.resize(stack.size() - take);
      std::vector<node> rest;
      st.nodes += expand(ex, batch, rest);
      stack.insert(stack.end(), rest.begin(), rest.end());
    }
    // Requests: share half of a stack worth sharing, else answer with nothing.
    while (req_in.ready()) {
      const MPI_Status s = req_in.done.get();
      const int from = s.MPI_SOURCE;
      std::size_t share =
          stack.size() >= 2 ? std::min<std::size_t>(stack.size() / 2, k_max_share) : 0;
      // Give the oldest nodes (bottom of the stack: the biggest subtrees).
      out.send(ex, stack.data(), static_cast<int>(share * sizeof(node)), from, k_work);
      stack.erase(stack.begin(), stack.begin() + static_cast<long>(share));
      if (share > 0) {
        ++counter;
        ++st.shares_sent;
      }
      req_in.post(ex, 1, MPI_BYTE, k_request);
    }
    // An answer to our request.
    if (work_in.ready()) {
      const MPI_Status s = work_in.done.get();
      int bytes = 0;
      MPI_Get_count(&s, MPI_BYTE, &bytes);
      const std::size_t n = static_cast<std::size_t>(bytes) / sizeof(node);
      if (n > 0) {
        stack.insert(stack.end(), work_in.buf.begin(), work_in.buf.begin() + static_cast<long>(n));
        --counter;
        black = true;
        ++st.shares_received;
        st.nodes_received += static_cast<long>(n);
      }
      waiting_for_work = false;
      work_in.post(ex, k_max_share, MPI_BYTE, k_work);
    }
    if (done_in.ready()) break;  // rank 0 detected termination
    if (!stack.empty()) continue;
    // Passive from here on: move the token, then ask for work.
    if (token_in.ready()) {
      const MPI_Status s = token_in.done.get();
      (void)s;
      have_token = true;
      token_count = token_in.buf[0].count;
      token_black = token_in.buf[0].black != 0;
      token_in.post(ex, 1, MPI_BYTE, k_token);
    }
    if (have_token && !waiting_for_work) {
      if (rank == 0 && round_started && !token_black && !black && token_count + counter == 0) {
        // Safra's termination test: every rank was passive when the white token passed, and
        // every work message sent was received.
        for (int r = 1; r < ranks; ++r) {
          const int one = 1;
          out.send(ex, &one, sizeof one, r, k_done);
        }
        break;
      }
      token t{};
      if (rank == 0) {
        t = {0, 0};  // start a new round
        round_started = true;
      } else {
        t = {token_count + counter, (token_black || black) ? 1 : 0};
      }
      black = false;
      have_token = false;
      if (ranks == 1) {
        token_in.buf[0] = t;
        have_token = true;
        token_count = t.count;
        token_black = t.black != 0;
      } else {
        out.send(ex, &t, sizeof t, (rank + 1) % ranks, k_token);
      }
    }
    if (ranks > 1 && !waiting_for_work) {
      int victim = static_cast<int>(rng() % static_cast<unsigned>(ranks - 1));
      if (victim >= rank) ++victim;
      const int me = rank;
      out.send(ex, &me, sizeof me, victim, k_request);
      ++st.requests_sent;
      waiting_for_work = true;
    }
    std::this_thread::yield();  // the main thread is the communication loop: never blocks
  }
  // Finish every receive still posted with a message to ourselves (a late message from
  // another rank may match it instead: either completes it), so that no request is left
  // for MPI_Finalize.
  const char zero[sizeof(token)] = {};
  if (!req_in.ready()) out.send(ex, zero, sizeof(int), rank, k_request);
  if (!work_in.ready()) out.send(ex, zero, 0, rank, k_work);
  if (!token_in.ready()) out.send(ex, zero, sizeof(token), rank, k_token);
  if (!done_in.ready()) out.send(ex, zero, sizeof(int), rank, k_done);
  req_in.done.get();
  work_in.done.get();
  token_in.done.get();
  done_in.done.get();
  out.drain();
  return st;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  long workers = 0, depth = g_max_depth;  // workers 0: available_parallelism()
  std::string csv;
  const std::string bad = example::parse_options(
      argc, argv, {{"--depth", &depth, 1, 30}, {"--workers", &workers, 0, 4096}},
      {{"--csv", &csv, {}}});
  if (!bad.empty()) {
    if (rank == 0) std::fprintf(stderr, "uts: %s\n", bad.c_str());
    MPI_Finalize();
    return 2;
  }
  g_max_depth = static_cast<int>(depth);
  std::uint64_t expected = 0;
  double serial_s = 0;
  if (rank == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    expected = serial_count();
    serial_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  rank_stats st;
  double seconds = 0;
  {
    heist::executor ex(workers == 0 ? heist::available_parallelism()
                                    : static_cast<std::size_t>(workers));
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    st = run(ex, rank, ranks);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto ms = heist::mpi::stats(ex);
    std::printf(
        "  rank %d: %llu nodes, %ld requests sent, %ld shares sent, %ld received (%ld "
        "nodes); heist::mpi longest call %.1f us\n",
        rank, static_cast<unsigned long long>(st.nodes), st.requests_sent, st.shares_sent,
        st.shares_received, st.nodes_received, ms.max_ns_in_call / 1e3);
    std::fflush(stdout);
  }
  unsigned long long mine = st.nodes, total = 0;
  MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  // Per-rank figures for the report: nodes, shares received and requests sent per rank.
  std::vector<long> per_rank(static_cast<std::size_t>(ranks) * 3);
  long row[3] = {static_cast<long>(st.nodes), st.shares_received, st.requests_sent};
  MPI_Gather(row, 3, MPI_LONG, per_rank.data(), 3, MPI_LONG, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == 0) {
    ok = total == expected;
    std::printf(
        "uts: %d ranks, depth %d: %llu nodes in %.3f s (%.2f Mnodes/s), serial %llu in "
        "%.3f s: %s\n",
        ranks, g_max_depth, total, seconds, total / seconds / 1e6,
        static_cast<unsigned long long>(expected), serial_s, ok ? "equal" : "DIFFERENT");
    if (!csv.empty()) {
      std::ofstream out(csv, std::ios::app);
      out << "distributed uts (" << ranks << " ranks)," << total / seconds / 1e6 << ",Mnodes/s,";
      for (int r = 0; r < ranks; ++r) {
        out << (r ? "; " : "") << "rank " << r << ": " << per_rank[r * 3] << " nodes "
            << per_rank[r * 3 + 1] << " steals " << per_rank[r * 3 + 2] << " requests";
      }
      out << "\n";
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
