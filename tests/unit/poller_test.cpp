// Polled completions (detail/compose/poller.hpp), the core hook under heist::mpi, tested with a
// fake source: items that complete when an outside flag is set, delivered through promises. Idle
// workers poll before parking and park with a timeout while items are pending; busy workers poll
// every 64 tasks; with nothing pending the pool parks as before.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using heist_test::eventually;

class flag_poller : public heist::detail::poller {
 public:
  struct item {
    std::shared_ptr<std::atomic<bool>> flag;
    heist::promise<int> done;
    int value;
  };
  heist::future<int> add(std::shared_ptr<std::atomic<bool>> flag, int value,
                         heist::detail::executor_impl& exec) {
    heist::promise<int> p;
    auto f = p.get_future();
    {
      std::lock_guard<std::mutex> g(m_lock);
      m_items.push_back({std::move(flag), std::move(p), value});
    }
    add_pending(1);
    heist::detail::notify_poll_pending(exec);
    return f;
  }
  bool poll() noexcept override {
    polls.fetch_add(1);
    std::vector<item> ready;
    {
      std::unique_lock<std::mutex> g(m_lock, std::try_to_lock);
      if (!g.owns_lock()) return false;
      for (std::size_t i = 0; i < m_items.size();) {
        if (m_items[i].flag->load()) {
          ready.push_back(std::move(m_items[i]));
          m_items[i] = std::move(m_items.back());
          m_items.pop_back();
        } else {
          ++i;
        }
      }
    }
    if (ready.empty()) return false;
    remove_pending(ready.size());
    for (item& it : ready)
      it.done.set_value(it.value);
    return true;
  }
  std::atomic<long> polls{0};

 private:
  std::mutex m_lock;
  std::vector<item> m_items;
};

flag_poller& install(heist::executor& ex) {
  auto& p = heist::detail::install_poller(
      heist::detail_impl(ex),
      [](heist::detail::executor_impl&) -> std::unique_ptr<heist::detail::poller> {
        return std::make_unique<flag_poller>();
      });
  return static_cast<flag_poller&>(p);
}

TEST(Poller, PendingItemsCompleteThroughIdleWorkersAndContinuationsRun) {
  heist_test::watchdog dog("PendingItemsCompleteThroughIdleWorkers", 60s);
  heist::executor ex(2);
  flag_poller& p = install(ex);
  EXPECT_EQ(&install(ex), &p) << "one poller per executor";
  auto& impl = heist::detail_impl(ex);
  std::vector<std::shared_ptr<std::atomic<bool>>> flags;
  std::vector<heist::future<int>> results;
  for (int i = 0; i < 100; ++i) {
    flags.push_back(std::make_shared<std::atomic<bool>>(false));
    results.push_back(p.add(flags.back(), i, impl).then([](int v) { return v * 2; }));
  }
  // While items are pending the pool still runs tasks.
  EXPECT_EQ(ex.submit([] { return 5; }).get(), 5);
  std::thread setter([&] {
    for (auto& f : flags) {
      std::this_thread::sleep_for(100us);
      f->store(true);
    }
  });
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(results[i].get(), 2 * i);
  setter.join();
  EXPECT_EQ(p.pending(), 0u);
}

TEST(Poller, NothingPendingMeansNoPolling) {
  heist::executor ex(2);
  flag_poller& p = install(ex);
  auto flag = std::make_shared<std::atomic<bool>>(true);
  EXPECT_EQ(p.add(flag, 1, heist::detail_impl(ex)).get(), 1);
  ex.wait_idle();
  std::this_thread::sleep_for(50ms);  // the workers park for good
  const long before = p.polls.load();
  std::this_thread::sleep_for(200ms);
  EXPECT_LE(p.polls.load() - before, 2) << "an idle pool with nothing pending kept polling";
}

TEST(Poller, BusyWorkersPollBetweenTasks) {
  heist_test::watchdog dog("BusyWorkersPollBetweenTasks", 60s);
  heist::executor ex(2);
  flag_poller& p = install(ex);
  auto flag = std::make_shared<std::atomic<bool>>(false);
  heist::future<int> item = p.add(flag, 7, heist::detail_impl(ex));
  std::atomic<bool> completed_while_busy{false};
  // Both workers run a stream of small tasks that only stops once the item completed: only
  // the pollers between tasks can complete it.
  auto busy = [&] {
    for (int round = 0; round < 200000 && !item.is_ready(); ++round) {
      heist::task_group g;
      for (int k = 0; k < 8; ++k)
        g.run([] {});
      g.wait();
      if (round == 100) flag->store(true);
    }
    if (item.is_ready()) completed_while_busy = true;
  };
  auto a = ex.submit(busy);
  auto b = ex.submit(busy);
  a.get();
  b.get();
  EXPECT_TRUE(completed_while_busy.load());
  EXPECT_EQ(item.get(), 7);
}

// A helping wait asks its own arena whether anything is pending (arena::poll_pending): each
// arena holds a copy of the executor's poller. A task arena that registered before the
// poller was installed gets its copy at the installation; without it, a thread that only
// forks and waits inside that arena never polls, and nothing else here does: the one worker
// is held in a task that spins.
TEST(Poller, WaitsInATaskArenaCreatedBeforeThePollerPoll) {
  heist_test::watchdog dog("WaitsInATaskArenaCreatedBeforeThePollerPoll", 60s);
  heist::executor ex(1);
  heist::task_arena arena(1, ex);
  std::atomic<bool> worker_held{false}, release_worker{false};
  ex.post([&] {
    worker_held = true;
    while (!release_worker.load())
      std::this_thread::yield();
  });
  ASSERT_TRUE(eventually([&] { return worker_held.load(); }));
  flag_poller& p = install(ex);
  auto flag = std::make_shared<std::atomic<bool>>(false);
  heist::future<int> item = p.add(flag, 9, heist::detail_impl(ex));
  bool completed_while_busy = false;
  arena.execute([&] {
    // The loop runs as a task, and each of its groups has one child: every wait pops that
    // child and runs it inline (run_popped_own_child), and is done without reaching the
    // out-of-line helping loop (which asks the executor's own word).
    heist::task_group outer;
    outer.run([&] {
      for (int round = 0; round < 200000 && !item.is_ready(); ++round) {
        heist::task_group g;
        g.run([] {});
        g.wait();
        if (round == 100) flag->store(true);
      }
      completed_while_busy = item.is_ready();
    });
    outer.wait();
  });
  release_worker = true;
  EXPECT_TRUE(completed_while_busy) << "the arena's waits never polled";
  EXPECT_EQ(item.get(), 9);
}

TEST(Poller, ItemsAddedToAParkedOrRetiredPoolComplete) {
  heist_test::watchdog dog("ItemsAddedToAParkedOrRetiredPoolComplete", 60s);
  heist::executor_options o;
  o.num_workers = 2;
  o.idle_timeout = 5ms;
  heist::executor ex(o);
  flag_poller& p = install(ex);
  for (int round = 0; round < 50; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 10));  // parked or retired
    auto flag = std::make_shared<std::atomic<bool>>(round % 2 == 0);
    auto f = p.add(flag, round, heist::detail_impl(ex));
    if (round % 2 == 1) {
      std::this_thread::sleep_for(200us);
      flag->store(true);
    }
    ASSERT_EQ(f.get(), round);
  }
}

}  // namespace

namespace {
// The completion's continuation lands in the polling worker's own deque (it completed the
// item itself); nobody else helps: the worker must run it rather than park over it.
TEST(Poller, ContinuationSpawnedByThePollingWorkerItselfRuns) {
  heist_test::watchdog dog("ContinuationSpawnedByThePollingWorkerItselfRuns", 60s);
  heist::executor ex(1);
  flag_poller& p = install(ex);
  for (int round = 0; round < 50; ++round) {
    auto flag = std::make_shared<std::atomic<bool>>(false);
    std::atomic<bool> ran{false};
    auto item = p.add(flag, round, heist::detail_impl(ex));
    auto cont = ex.submit([&item, &ran] {  // attach on the worker: then() spawns there
                    return item.then([&ran](int v) {
                      ran = true;
                      return v;
                    });
                  })
                    .get();
    std::this_thread::sleep_for(std::chrono::microseconds(round * 20));
    flag->store(true);
    // Spin without helping: only the worker can run the continuation.
    ASSERT_TRUE(eventually([&] { return ran.load(); }, 5s)) << "round " << round;
    EXPECT_EQ(cont.get(), round);
  }
}
}  // namespace
