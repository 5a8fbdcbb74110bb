// Fork-join for the baseline pools that have plain std::function queues and no work
// stealing (central_queue, static_rr). A fork hands the child to Pool::enqueue; a join runs
// whatever Pool::run_one() gives the joining thread (yielding when it gives nothing) until
// the children are done, so nested fork-join cannot deadlock. Pool derives from
// helping_forks<Pool> and sets t_pool on each of its threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <utility>

namespace bench {

template <class Pool>
class helping_forks {
 public:
  template <class F>
  void run(F&& root) {
    std::atomic<bool> done{false};
    self().enqueue([&] {
      root();
      // release/acquire: the root's effects are visible to the caller after the wait.
      done.store(true, std::memory_order_release);
      done.notify_one();
    });
    done.wait(false, std::memory_order_acquire);
  }
  template <class A, class B>
  static void fork2(A&& a, B&& b) {
    std::atomic<bool> done{false};
    t_pool->enqueue([&] {
      a();
      done.store(true, std::memory_order_release);  // pairs with the acquire in the join
    });
    b();
    help_until([&] { return done.load(std::memory_order_acquire); });
  }
  template <class F>
  static void fork_each(std::size_t n, F&& f) {
    std::atomic<std::size_t> left{n};
    for (std::size_t i = 0; i < n; ++i) {
      t_pool->enqueue([&, i] {
        f(i);
        left.fetch_sub(1, std::memory_order_release);  // pairs with the acquire below
      });
    }
    help_until([&] { return left.load(std::memory_order_acquire) == 0; });
  }
  template <class F>
  void post(F&& f) {
    self().enqueue(std::forward<F>(f));
  }

 protected:
  static inline thread_local Pool* t_pool = nullptr;

 private:
  Pool& self() { return static_cast<Pool&>(*this); }
  template <class Done>
  static void help_until(Done done) {
    while (!done()) {
      if (!t_pool->run_one()) std::this_thread::yield();
    }
  }
};

}  // namespace bench
