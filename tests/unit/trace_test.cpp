// SPEC section 6 (tracing) (kind: requirement).
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "heist/heist.hpp"
#include "mini_json.hpp"

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
