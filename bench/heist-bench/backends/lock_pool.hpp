// A lock-based baseline (C++ Concurrency in Action, ch. 9): a work-stealing pool with
// a mutex-guarded std::deque per thread (the owner pushes and pops at the front, thieves
// take from the back), one global queue for outside submissions, submit() returning a
// std::future of a packaged_task, waits that call run_pending_task(), stealing that starts
// at the next index, and an idle loop that spins on std::this_thread::yield().
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bench {

class lock_pool {
  // Type-erased move-only callable (the book's function_wrapper): one heap block per task.
  class function_wrapper {
    struct impl_base {
      virtual void call() = 0;
      virtual ~impl_base() = default;
    };
    template <class F>
    struct impl : impl_base {
      F f;
      explicit impl(F&& f_) : f(std::move(f_)) {}
      void call() override { f(); }
    };
    std::unique_ptr<impl_base> m_impl;

   public:
    function_wrapper() = default;
    template <class F>
    function_wrapper(F&& f) : m_impl(new impl<F>(std::forward<F>(f))) {}
    void operator()() { m_impl->call(); }
  };

  class work_stealing_queue {
   public:
    void push(function_wrapper data) {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_queue.push_front(std::move(data));
    }
    bool try_pop(function_wrapper& res) {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_queue.empty()) return false;
      res = std::move(m_queue.front());
      m_queue.pop_front();
      return true;
    }
    bool try_steal(function_wrapper& res) {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_queue.empty()) return false;
      res = std::move(m_queue.back());
      m_queue.pop_back();
      return true;
    }

   private:
    std::deque<function_wrapper> m_queue;
    mutable std::mutex m_mutex;
  };

 public:
  explicit lock_pool(int threads) {
    for (int i = 0; i < threads; ++i)
      m_queues.push_back(std::make_unique<work_stealing_queue>());
    for (int i = 0; i < threads; ++i) {
      m_threads.emplace_back([this, i] { worker_thread(static_cast<unsigned>(i)); });
    }
  }
  ~lock_pool() {
    m_done = true;
    for (auto& t : m_threads)
      t.join();
  }
  std::string name() const { return "lock-based pool"; }

  template <class F>
  auto submit(F f) -> std::future<decltype(f())> {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto res = task.get_future();
    if (t_local_queue != nullptr) {
      t_local_queue->push(std::move(task));
    } else {
      std::lock_guard<std::mutex> lock(m_pool_mutex);
      m_pool_queue.push(std::move(task));
    }
    return res;
  }

  void run_pending_task() {
    function_wrapper task;
    if ((t_local_queue != nullptr && t_local_queue->try_pop(task)) || pop_from_pool(task) ||
        pop_from_other_thread(task)) {
      task();
    } else {
      std::this_thread::yield();
    }
  }

  template <class F>
  void run(F&& root) {
    auto done = submit([&root] { root(); });
    done.wait();  // the book's pattern for a thread outside the pool
  }

  template <class A, class B>
  static void fork2(A&& a, B&& b) {
    auto fa = t_pool->submit([&a] { a(); });
    b();
    wait_helping(fa);
  }
  template <class F>
  static void fork_each(std::size_t n, F&& f) {
    std::vector<std::future<void>> fs;
    fs.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      fs.push_back(t_pool->submit([&f, i] { f(i); }));
    for (auto& x : fs)
      wait_helping(x);
  }
  template <class F>
  void post(F&& f) {
    (void)submit(std::forward<F>(f));
  }

 private:
  static void wait_helping(std::future<void>& f) {
    while (f.wait_for(std::chrono::seconds(0)) == std::future_status::timeout) {
      t_pool->run_pending_task();
    }
    f.get();
  }
  void worker_thread(unsigned index) {
    t_index = index;
    t_local_queue = m_queues[index].get();
    t_pool = this;
    while (!m_done)
      run_pending_task();
  }
  bool pop_from_pool(function_wrapper& task) {
    std::lock_guard<std::mutex> lock(m_pool_mutex);
    if (m_pool_queue.empty()) return false;
    task = std::move(m_pool_queue.front());
    m_pool_queue.pop();
    return true;
  }
  bool pop_from_other_thread(function_wrapper& task) {
    for (unsigned i = 0; i < m_queues.size(); ++i) {
      const unsigned index = (t_index + i + 1) % m_queues.size();
      if (m_queues[index]->try_steal(task)) return true;
    }
    return false;
  }

  std::atomic<bool> m_done{false};
  std::mutex m_pool_mutex;
  std::queue<function_wrapper> m_pool_queue;
  std::vector<std::unique_ptr<work_stealing_queue>> m_queues;
  std::vector<std::thread> m_threads;
  static inline thread_local work_stealing_queue* t_local_queue = nullptr;
  static inline thread_local unsigned t_index = 0;
  static inline thread_local lock_pool* t_pool = nullptr;
};

}  // namespace bench
