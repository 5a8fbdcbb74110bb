// Baseline: one shared FIFO queue under a mutex, a condition variable for idle threads, no
// stealing and no per-thread queues. A waiting task runs queued tasks until its join
// completes (otherwise nested fork-join would deadlock).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bench {

class central_queue {
 public:
  explicit central_queue(int threads) {
    for (int i = 0; i < threads; ++i)
      m_threads.emplace_back([this] { worker(); });
  }
  ~central_queue() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_done = true;
    }
    m_cv.notify_all();
    for (auto& t : m_threads)
      t.join();
  }
  std::string name() const { return "central queue"; }

  void push(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_queue.push_back(std::move(f));
    }
    m_cv.notify_one();
  }
  bool try_run_one() {
    std::function<void()> f;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_queue.empty()) return false;
      f = std::move(m_queue.front());
      m_queue.pop_front();
    }
    f();
    return true;
  }

  template <class F>
  void run(F&& root) {
    std::atomic<bool> done{false};
    push([&] {
      t_pool = this;
      root();
      done.store(true, std::memory_order_release);
      done.notify_one();
    });
    done.wait(false, std::memory_order_acquire);
  }
  template <class A, class B>
  static void fork2(A&& a, B&& b) {
    std::atomic<bool> done{false};
    t_pool->push([&] {
      a();
      done.store(true, std::memory_order_release);
    });
    b();
    join(done);
  }
  template <class F>
  static void fork_each(std::size_t n, F&& f) {
    std::atomic<std::size_t> left{n};
    for (std::size_t i = 0; i < n; ++i) {
      t_pool->push([&, i] {
        f(i);
        left.fetch_sub(1, std::memory_order_release);
      });
    }
    while (left.load(std::memory_order_acquire) != 0) {
      if (!t_pool->try_run_one()) std::this_thread::yield();
    }
  }
  template <class F>
  void post(F&& f) {
    push(std::forward<F>(f));
  }

 private:
  static void join(std::atomic<bool>& done) {
    while (!done.load(std::memory_order_acquire)) {
      if (!t_pool->try_run_one()) std::this_thread::yield();
    }
  }
  void worker() {
    t_pool = this;
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_cv.wait(lock, [this] { return m_done || !m_queue.empty(); });
        if (m_queue.empty()) return;
        f = std::move(m_queue.front());
        m_queue.pop_front();
      }
      f();
    }
  }

  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<std::function<void()>> m_queue;
  bool m_done = false;
  std::vector<std::thread> m_threads;
  static inline thread_local central_queue* t_pool = nullptr;
};

}  // namespace bench
