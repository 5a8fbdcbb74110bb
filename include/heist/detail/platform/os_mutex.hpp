// os_mutex: a mutex that blocks in the kernel when contended (pthread_mutex_t, what
// std::mutex is on the platforms heist supports), for headers that hold one as a member
// without pulling <mutex> into every user's build. Lockable: std::lock_guard<os_mutex>
// works in the library's sources.
#pragma once

#include <pthread.h>

namespace heist::detail {

class os_mutex {
 public:
  os_mutex() noexcept = default;
  ~os_mutex() { pthread_mutex_destroy(&m_mutex); }
  os_mutex(const os_mutex&) = delete;
  os_mutex& operator=(const os_mutex&) = delete;

  void lock() noexcept { pthread_mutex_lock(&m_mutex); }
  bool try_lock() noexcept { return pthread_mutex_trylock(&m_mutex) == 0; }
  void unlock() noexcept { pthread_mutex_unlock(&m_mutex); }

 private:
  pthread_mutex_t m_mutex = PTHREAD_MUTEX_INITIALIZER;
};

}  // namespace heist::detail
