// Baseline: static round-robin assignment. Every new task is dealt to the next thread's
// queue (mutex + condition variable each) and runs only there: no stealing. A waiting
// task runs tasks of its own queue until its join completes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "helping_forks.hpp"

namespace bench {

class static_rr : public helping_forks<static_rr> {
  struct queue {
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> q;
  };

 public:
  explicit static_rr(int threads) {
    for (int i = 0; i < threads; ++i)
      m_queues.push_back(std::make_unique<queue>());
    for (int i = 0; i < threads; ++i) {
      m_threads.emplace_back([this, i] { worker(static_cast<std::size_t>(i)); });
    }
  }
  ~static_rr() {
    m_done = true;
    for (auto& q : m_queues) {
      std::lock_guard<std::mutex> lock(q->m);
      q->cv.notify_all();
    }
    for (auto& t : m_threads)
      t.join();
  }
  std::string name() const { return "round-robin dealing"; }

  void enqueue(std::function<void()> f) {
    queue& q = *m_queues[m_next.fetch_add(1, std::memory_order_relaxed) % m_queues.size()];
    {
      std::lock_guard<std::mutex> lock(q.m);
      q.q.push_back(std::move(f));
    }
    q.cv.notify_one();
  }

  // The calling thread's own queue only: no stealing.
  bool run_one() {
    queue& q = *m_queues[t_index];
    std::function<void()> f;
    {
      std::lock_guard<std::mutex> lock(q.m);
      if (q.q.empty()) return false;
      f = std::move(q.q.front());
      q.q.pop_front();
    }
    f();
    return true;
  }

 private:
  void worker(std::size_t index) {
    t_pool = this;
    t_index = index;
    queue& q = *m_queues[index];
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock<std::mutex> lock(q.m);
        q.cv.wait(lock, [&] { return m_done.load() || !q.q.empty(); });
        if (q.q.empty()) return;
        f = std::move(q.q.front());
        q.q.pop_front();
      }
      f();
    }
  }

  std::vector<std::unique_ptr<queue>> m_queues;
  std::vector<std::thread> m_threads;
  std::atomic<std::size_t> m_next{0};
  std::atomic<bool> m_done{false};
  static inline thread_local std::size_t t_index = 0;
};

}  // namespace bench
