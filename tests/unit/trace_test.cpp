// Tracing (kind: requirement).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "heist/heist.hpp"
#include "mini_json.hpp"
#include "test_support.hpp"

TEST(Trace, WritesChromeTraceEventJsonWithOneTrackPerWorker) {
  heist::executor_options o;
  o.num_workers = 2;
  o.trace = true;
  o.name = "tr";
  heist::executor ex(o);
  heist::task_group g(ex);
  ex.submit([&] {
      heist::task_group inner;
      for (int i = 0; i < 300; ++i) {
        inner.run([] {
          volatile long x = 0;
          for (int k = 0; k < 1000; ++k)
            x = x + k;
        });
      }
      inner.wait();
    }).get();
  ex.wait_idle();
  std::ostringstream out;
  ex.write_trace(out);
  const heist_tools::json doc = heist_tools::parse_json(out.str());
  const auto& events = doc["traceEvents"].items;
  std::set<int> named_tids, span_tids;
  std::size_t spans = 0, stolen = 0;
  for (const auto& e : events) {
    const std::string ph = e["ph"].str;
    if (ph == "M" && e["name"].str == "thread_name") {
      named_tids.insert(static_cast<int>(e["tid"].num));
      const std::string name = e["args"]["name"].str;
      if (e["tid"].num < 2) EXPECT_EQ(name, "tr-" + std::to_string(int(e["tid"].num)));
    } else if (ph == "X") {
      ++spans;
      span_tids.insert(static_cast<int>(e["tid"].num));
      EXPECT_GE(e["dur"].num, 0.0);
      EXPECT_GE(e["ts"].num, 0.0);
      const std::string kind = e["args"]["kind"].str;
      EXPECT_TRUE(kind == "run" || kind == "stolen");
      if (kind == "stolen") ++stolen;
    }
  }
  EXPECT_TRUE(named_tids.count(0) && named_tids.count(1));
  for (int tid : span_tids)
    EXPECT_TRUE(named_tids.count(tid)) << tid;
  // Every task is recorded: 300 children + 1 submitted task.
  EXPECT_EQ(spans, 301u);
  EXPECT_EQ(stolen, ex.stats().stolen());
}

TEST(Trace, EmptyWhenTracingIsOff) {
  heist::executor ex(2);
  ex.submit([] {}).get();
  std::ostringstream out;
  ex.write_trace(out);
  const heist_tools::json doc = heist_tools::parse_json(out.str());
  for (const auto& e : doc["traceEvents"].items)
    EXPECT_NE(e["ph"].str, "X");
}

TEST(Trace, AnExecutorNameIsEscapedInTheJson) {
  // The name is the user's (executor_options::name): quotes, backslashes and control
  // characters must come out escaped, or the trace is not JSON (the parser refuses a raw
  // control character in a string).
  heist::executor_options o;
  o.num_workers = 1;
  o.name = "q\"b\\c\nd\te";
  o.trace = true;
  heist::executor ex(o);
  ex.submit([] {}).get();
  std::ostringstream out;
  ex.write_trace(out);
  const heist_tools::json doc = heist_tools::parse_json(out.str());
  bool found = false;
  for (const auto& e : doc["traceEvents"].items) {
    if (e["name"].str != "process_name") continue;
    // mini_json reads \n and \t back as '?' (it does not decode \u escapes).
    EXPECT_EQ(e["args"]["name"].str, "q\"b\\c?d?e");
    found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_NE(out.str().find("q\\\"b\\\\c\\u000ad\\u0009e"), std::string::npos) << out.str();
}

// A thread outside the pool that waits while every leasable slot is taken helps without a
// slot (helping_wait.cpp, help_loop with no slot): it takes its group's tasks from the
// injection queue, counts what it runs in `external`, and traces it on the
// "<name> external (no slot)" track. The one worker and the four leasable slots are held
// first (a posted task and four run_and_wait calls that block until released), so nobody
// else can run the helper's 50 tasks: each one runs once, on that track.
TEST(Trace, AHelperWithoutASlotIsCountedAndTracedOnItsOwnTrack) {
  heist::executor_options o;
  o.num_workers = 1;
  o.trace = true;
  o.name = "ns";
  heist::executor ex(o);
  constexpr int k_tasks = 50;
  std::latch occupied(heist_test::k_leasable_slots + 1), release(1);
  ex.post([&] {
    occupied.count_down();
    release.wait();
  });
  heist_test::leasable_slots_held held(ex, occupied, release);
  occupied.wait();
  std::atomic<int> ran{0};
  std::thread helper([&] {
    heist::task_group g(ex);
    for (int i = 0; i < k_tasks; ++i)
      g.run([&] { ran.fetch_add(1); });
    g.wait();  // no slot is free: it runs them all itself
  });
  helper.join();
  EXPECT_EQ(ran.load(), k_tasks);
  held.open_and_join();  // and the worker's blocking task
  ex.wait_idle();
  std::ostringstream out;
  ex.write_trace(out);
  const heist_tools::json doc = heist_tools::parse_json(out.str());
  double no_slot_tid = -1;
  for (const auto& e : doc["traceEvents"].items) {
    if (e["ph"].str == "M" && e["name"].str == "thread_name" &&
        e["args"]["name"].str == "ns external (no slot)") {
      no_slot_tid = e["tid"].num;
    }
  }
  ASSERT_GE(no_slot_tid, 0.0) << "no track for helpers without a slot";
  std::size_t no_slot_spans = 0;
  for (const auto& e : doc["traceEvents"].items) {
    if (e["ph"].str == "X" && e["tid"].num == no_slot_tid) ++no_slot_spans;
  }
  EXPECT_EQ(no_slot_spans, static_cast<std::size_t>(k_tasks));
  const heist::executor_stats s = ex.stats();
  EXPECT_GE(s.external.executed, static_cast<std::uint64_t>(k_tasks));
  EXPECT_EQ(s.external.steal_attempts, s.external.stolen + s.external.failed_steals);
}
