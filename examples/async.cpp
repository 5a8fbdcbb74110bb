// Asynchronous composition on one executor: a promise fulfilled by a thread outside the pool,
// a then() chain, when_all over submitted work, and coroutines (co_await on a future, on a
// task, on a task_group's join()). No pool thread waits for anything. Exits non-zero if a
// result is wrong.
#include <heist/heist.hpp>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

heist::task<void> fib(int n, long& out) {
  if (n < 2) {
    out = n;
    co_return;
  }
  long a = 0, b = 0;
  heist::task_group g;
  g.run(fib(n - 1, a));    // a coroutine member of the group
  co_await fib(n - 2, b);  // runs here
  co_await g.join();       // the last member to finish resumes us
  out = a + b;
}

heist::task<std::string> greet(heist::future<std::string> name) {
  const std::string who = co_await std::move(name);  // suspends; no thread waits
  long f = 0;
  co_await fib(20, f);
  co_return "hello " + who + ", fib(20) = " + std::to_string(f);
}

}  // namespace

int main() {
  heist::executor ex(2);

  // A promise completed from outside; a continuation chain runs when the value arrives.
  heist::promise<int> p;
  heist::future<std::string> chained =
      p.get_future().then([](int x) { return x * 2; }).then([](int x) {
        return std::to_string(x);
      });
  std::thread([&] { p.set_value(21); }).join();

  // when_all over submitted work.
  std::vector<heist::future<long>> parts;
  for (long i = 1; i <= 10; ++i)
    parts.push_back(ex.submit([i] { return i * i; }));
  long squares = 0;
  for (auto& f : heist::when_all(std::move(parts)).get())
    squares += f.get();

  // A coroutine awaiting a future fulfilled by another thread.
  heist::promise<std::string> name;
  heist::future<std::string> greeting = heist::start(ex, greet(name.get_future()));
  std::thread([&] { name.set_value("heist"); }).join();

  const std::string c = chained.get();
  const std::string g = greeting.get();
  std::printf("then chain: %s; sum of squares: %ld; %s\n", c.c_str(), squares, g.c_str());
  const bool ok = c == "42" && squares == 385 && g == "hello heist, fib(20) = 6765";
  return ok ? 0 : 1;
}
