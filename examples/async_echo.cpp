// Asynchronous I/O meeting compute on one executor: an Asio
// io_context thread owns every socket; heist coroutines serve the connections. Each request
// (a 4-byte length and a payload) is read with co_await, its checksum computed in parallel on
// heist (co_await on a submitted parallel_reduce), and the answer written with co_await. A
// client in the same process sends a fixed number of requests over loopback and checks every
// answer. No heist thread ever calls a socket function: every Asio operation is started by
// asio::post on the I/O thread, and each completion handler checks that it runs there (the
// example exits non-zero otherwise). Bounded: 8 connections x 16 requests, a 60 s deadline.
//
// Every co_await here awaits a named future. GCC 12 mishandles a temporary with a non-trivial
// destructor (here, a lambda capturing shared_ptrs) inside a co_await expression: it freed a
// connection's socket under its coroutine (ASan: heap-use-after-free); clang 14 was fine.
// Naming the future first ends the temporary's life before the suspension.
#include <asio.hpp>
#include <heist/heist.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

using asio::ip::tcp;

namespace {

constexpr int k_connections = 8;
constexpr int k_requests = 16;
std::atomic<std::thread::id> g_io_thread;
std::atomic<int> g_wrong_thread{0};

// Starts an Asio operation on the I/O thread; its completion fulfils the returned future, so
// a coroutine co_awaits it without any thread waiting.
template <class T, class Start>
heist::future<T> on_io(asio::io_context& io, Start start) {
  auto p = std::make_shared<heist::promise<T>>();
  heist::future<T> f = p->get_future();
  asio::post(io, [p, start]() mutable {
    start([p](std::error_code ec, T value) {
      if (std::this_thread::get_id() != g_io_thread.load()) g_wrong_thread.fetch_add(1);
      if (ec) {
        p->set_exception(std::make_exception_ptr(std::system_error(ec)));
      } else {
        p->set_value(std::move(value));
      }
    });
  });
  return f;
}

std::uint64_t checksum_serial(const std::vector<unsigned char>& data) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < data.size(); ++i)
    s += data[i] * (i % 251 + 1);
  return s;
}

std::uint64_t checksum_parallel(const std::vector<unsigned char>& data) {
  return heist::parallel_reduce(
      heist::blocked_range<std::size_t>(0, data.size(), 4096), std::uint64_t{0},
      [&](const heist::blocked_range<std::size_t>& r, std::uint64_t s) {
        for (std::size_t i = r.begin(); i != r.end(); ++i)
          s += data[i] * (i % 251 + 1);
        return s;
      },
      [](std::uint64_t a, std::uint64_t b) { return a + b; });
}

heist::task<void> serve(asio::io_context& io, heist::executor& ex, tcp::socket* accepted,
                        std::atomic<int>& served) {
  // The socket comes as a pointer and is adopted here, in the body.
  const std::shared_ptr<tcp::socket> s(accepted);
  for (int r = 0; r < k_requests; ++r) {
    auto header = std::make_shared<std::array<unsigned char, 4>>();
    heist::future<std::size_t> hf = on_io<std::size_t>(
        io, [s, header](auto done) { asio::async_read(*s, asio::buffer(*header), done); });
    co_await std::move(hf);
    const std::uint32_t len = (*header)[0] | (*header)[1] << 8 | (*header)[2] << 16 |
                              static_cast<std::uint32_t>((*header)[3]) << 24;
    auto payload = std::make_shared<std::vector<unsigned char>>(len);
    heist::future<std::size_t> pf = on_io<std::size_t>(
        io, [s, payload](auto done) { asio::async_read(*s, asio::buffer(*payload), done); });
    co_await std::move(pf);
    // The computation: a parallel reduction on heist's workers, awaited like the I/O.
    heist::future<std::uint64_t> sf = ex.submit([payload] { return checksum_parallel(*payload); });
    const std::uint64_t sum = co_await std::move(sf);
    auto answer = std::make_shared<std::array<unsigned char, 8>>();
    for (int i = 0; i < 8; ++i)
      (*answer)[i] = static_cast<unsigned char>(sum >> (8 * i));
    heist::future<std::size_t> wf = on_io<std::size_t>(
        io, [s, answer](auto done) { asio::async_write(*s, asio::buffer(*answer), done); });
    co_await std::move(wf);
    served.fetch_add(1);
  }
}

heist::task<void> accept_all(asio::io_context& io, heist::executor& ex, tcp::acceptor& acceptor,
                             std::atomic<int>& served) {
  heist::task_group connections;
  for (int c = 0; c < k_connections; ++c) {
    heist::future<tcp::socket> af =
        on_io<tcp::socket>(io, [&acceptor](auto done) { acceptor.async_accept(done); });
    tcp::socket s = co_await std::move(af);
    connections.run(serve(io, ex, new tcp::socket(std::move(s)), served));
  }
  co_await connections.join();
}

// The client: plain blocking sockets on its own threads (it is not part of the pool).
bool run_client(unsigned short port, int id) {
  asio::io_context io;
  tcp::socket s(io);
  s.connect(tcp::endpoint(asio::ip::address_v4::loopback(), port));
  std::uint64_t seed = 12345 + static_cast<std::uint64_t>(id);
  for (int r = 0; r < k_requests; ++r) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    std::vector<unsigned char> payload(20000 + seed % 50000);
    for (auto& b : payload) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      b = static_cast<unsigned char>(seed >> 56);
    }
    const auto len = static_cast<std::uint32_t>(payload.size());
    const std::array<unsigned char, 4> header{
        static_cast<unsigned char>(len), static_cast<unsigned char>(len >> 8),
        static_cast<unsigned char>(len >> 16), static_cast<unsigned char>(len >> 24)};
    asio::write(s, asio::buffer(header));
    asio::write(s, asio::buffer(payload));
    std::array<unsigned char, 8> answer{};
    asio::read(s, asio::buffer(answer));
    std::uint64_t got = 0;
    for (int i = 0; i < 8; ++i)
      got |= static_cast<std::uint64_t>(answer[i]) << (8 * i);
    if (got != checksum_serial(payload)) return false;
  }
  return true;
}

}  // namespace

int main() {
  std::thread deadline([] {
    std::this_thread::sleep_for(std::chrono::seconds(60));
    std::fputs("async_echo: did not finish within 60 s\n", stderr);
    std::_Exit(2);
  });
  deadline.detach();

  heist::executor ex(2);
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  const unsigned short port = acceptor.local_endpoint().port();
  std::thread io_thread([&] {
    g_io_thread = std::this_thread::get_id();
    io.run();
  });
  while (g_io_thread.load() == std::thread::id{})
    std::this_thread::yield();

  std::atomic<int> served{0};
  heist::future<void> server = heist::start(ex, accept_all(io, ex, acceptor, served));

  std::atomic<int> good_clients{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < k_connections; ++c) {
    clients.emplace_back([&, c] {
      try {
        if (run_client(port, c)) good_clients.fetch_add(1);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "async_echo client %d: %s\n", c, e.what());
      }
    });
  }
  for (auto& t : clients)
    t.join();
  server.get();
  work.reset();
  io.stop();
  io_thread.join();

  const bool ok = good_clients.load() == k_connections &&
                  served.load() == k_connections * k_requests && g_wrong_thread.load() == 0;
  std::printf(
      "async_echo: %d connections x %d requests answered %s; completions off the I/O "
      "thread: %d\n",
      k_connections, k_requests, ok ? "correctly" : "WRONGLY", g_wrong_thread.load());
  return ok ? 0 : 1;
}
