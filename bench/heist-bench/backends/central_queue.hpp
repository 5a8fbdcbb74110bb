// Baseline: one shared FIFO queue under a mutex, a condition variable for idle threads, no
// stealing and no per-thread queues. A waiting task runs queued tasks until its join
// completes (otherwise nested fork-join would deadlock): helping_forks.hpp.
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

#include "helping_forks.hpp"

namespace bench {

class central_queue : public helping_forks<central_queue> {
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

  void enqueue(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_queue.push_back(std::move(f));
    }
    m_cv.notify_one();
  }
  bool run_one() {
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

 private:
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
};

}  // namespace bench
