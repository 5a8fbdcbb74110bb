// heist-bench: task graphs and pipelines, heist against oneTBB's flow graph and
// parallel_pipeline. Each graph is built once per backend, untimed, then run `reps` times
// with the backends interleaved (rotated every round, like main.cpp's timed cases); a run
// is timed from its start to its end, on exactly `threads` threads: heist starts it from a
// task on a worker (the waiting worker helps), oneTBB inside a task_arena of `threads`
// slots (the caller takes one).
#include <heist/heist.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../backends/heist_backend.hpp"
#include "../harness.hpp"
#include "../report.hpp"
#include "../workloads/flow.hpp"
#include "../workloads/wavefront_graph.hpp"
#if HEIST_BENCH_HAVE_TBB
#include <tbb/flow_graph.h>
#include <tbb/parallel_pipeline.h>

#include "../backends/tbb_backend.hpp"
#endif

namespace bench {
namespace {

// One backend's prepared case: run() does one timed run and returns its checksum.
struct prepared {
  std::string backend;
  std::function<std::uint64_t()> run;
  std::function<void()> reset;  // untimed, before each run
};

void fail_checksum(const std::string& workload, const std::string& backend, std::uint64_t got,
                   std::uint64_t want) {
  std::fprintf(stderr, "heist-bench: %s on %s gave %llu, expected %llu\n", workload.c_str(),
               backend.c_str(), static_cast<unsigned long long>(got),
               static_cast<unsigned long long>(want));
  std::exit(1);
}

// Times every prepared case `reps` times, interleaved, and records one row per backend.
// `per_run_items` > 0 turns the time into a rate (items per second, in millions).
void time_cases(context& x, const std::string& group, const std::string& workload, int threads,
                int reps, std::uint64_t expected, std::vector<prepared>& cases,
                double per_run_items = 0, const char* rate_unit = "Mitems/s",
                double rate_scale = 1e6) {
  std::vector<result> rows(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    rows[i].group = group;
    rows[i].workload = workload;
    rows[i].backend = cases[i].backend;
    rows[i].threads = threads;
    rows[i].unit = per_run_items > 0 ? rate_unit : "ms";
    rows[i].lower_is_better = per_run_items <= 0;
  }
  for (int round = 0; round <= reps; ++round) {  // round 0: warm-up, discarded
    for (std::size_t j = 0; j < cases.size(); ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(round)) % cases.size();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (cases[i].reset) cases[i].reset();
      std::uint64_t sum = 0;
      const double s = time_once([&] { sum = cases[i].run(); });
      if (sum != expected) fail_checksum(workload, cases[i].backend, sum, expected);
      if (round == 0) continue;
      rows[i].samples.push_back(per_run_items > 0 ? per_run_items / s / rate_scale : s * 1e3);
    }
  }
  for (result& r : rows) {
    r.stats = summarize(r.samples);
    print_progress(r);
    x.results.push_back(std::move(r));
  }
}

// --- heist graphs -------------------------------------------------------------------------
std::uint64_t run_heist_graph(heist_backend& b, heist::task_graph& g) {
  b.run([&] { g.run().get(); });
  return 0;
}

#if HEIST_BENCH_HAVE_TBB
// --- oneTBB graphs ------------------------------------------------------------------------
// A flow graph attaches to the arena it is built in: build it inside the backend's arena.
struct tbb_graph {
  using node = tbb::flow::continue_node<tbb::flow::continue_msg>;
  tbb::flow::graph g;
  std::vector<std::unique_ptr<node>> nodes;
  std::unique_ptr<tbb::flow::broadcast_node<tbb::flow::continue_msg>> start;
  template <class F>
  node& add(F&& f) {
    nodes.push_back(std::make_unique<node>(
        g, [f = std::forward<F>(f)](const tbb::flow::continue_msg&) { f(); }));
    return *nodes.back();
  }
  void run(tbb_backend& b) {
    b.arena().execute([&] {
      start->try_put(tbb::flow::continue_msg());
      g.wait_for_all();
    });
  }
};
#endif

void graph_cases(context& x, int threads) {
  const int reps = x.cfg.reps_or(5, 11);
  auto wants = [&](const char* key) { return x.wants(key); };
  auto wants_tbb = [&] { return x.cfg.wants_backend("tbb", true); };
  auto wants_heist = [&] { return x.cfg.wants_backend("heist", true); };
  heist_backend hb(threads);
#if HEIST_BENCH_HAVE_TBB
  tbb_backend tb(threads);
#endif

  // Wavefront, with ~1 us blocks and with empty ones.
  for (const std::int64_t work : {std::int64_t{1000}, std::int64_t{0}}) {
    const char* key = work > 0 ? "wavefront" : "wavefront0";
    if (!wants(key)) continue;
    const std::size_t side = 256;
    wavefront_grid hw(side, side, work), tw(side, side, work);
    const std::uint64_t expected = hw.serial();
    std::vector<prepared> cases;
    heist::task_graph hg;
    if (wants_heist()) {
      build_wavefront(hg, hw);
      cases.push_back({"heist",
                       [&] {
                         run_heist_graph(hb, hg);
                         return hw.checksum();
                       },
                       [&] { hw.reset(); }});
    }
#if HEIST_BENCH_HAVE_TBB
    tbb_graph tg;
    if (wants_tbb()) {
      tb.arena().execute([&] {
        tg.start = std::make_unique<tbb::flow::broadcast_node<tbb::flow::continue_msg>>(tg.g);
        for (std::size_t i = 0; i < side; ++i) {
          for (std::size_t j = 0; j < side; ++j) {
            auto& n = tg.add([&tw, i, j] { tw.block(i, j); });
            if (i > 0) tbb::flow::make_edge(*tg.nodes[(i - 1) * side + j], n);
            if (j > 0) tbb::flow::make_edge(*tg.nodes[i * side + j - 1], n);
          }
        }
        tbb::flow::make_edge(*tg.start, *tg.nodes[0]);
      });
      cases.push_back({"oneTBB",
                       [&] {
                         tg.run(tb);
                         return tw.checksum();
                       },
                       [&] { tw.reset(); }});
    }
#endif
    time_cases(x, "graphs",
               std::string("wavefront 256x256, ") + (work > 0 ? "1 us" : "empty") + " blocks",
               threads, reps, expected, cases);
  }

  if (wants("chain")) {
    const std::size_t n = 1'000'000;
    std::uint64_t hcount = 0, tcount = 0;
    std::vector<prepared> cases;
    heist::task_graph hg;
    if (wants_heist()) {
      heist::graph_node prev;
      for (std::size_t i = 0; i < n; ++i) {
        auto node = hg.emplace([&hcount] { ++hcount; });
        if (!prev.empty()) prev.precede(node);
        prev = node;
      }
      cases.push_back({"heist",
                       [&] {
                         run_heist_graph(hb, hg);
                         return hcount;
                       },
                       [&] { hcount = 0; }});
    }
#if HEIST_BENCH_HAVE_TBB
    tbb_graph tg;
    if (wants_tbb()) {
      tb.arena().execute([&] {
        tg.start = std::make_unique<tbb::flow::broadcast_node<tbb::flow::continue_msg>>(tg.g);
        for (std::size_t i = 0; i < n; ++i) {
          auto& node = tg.add([&tcount] { ++tcount; });
          if (i > 0) tbb::flow::make_edge(*tg.nodes[i - 1], node);
        }
        tbb::flow::make_edge(*tg.start, *tg.nodes[0]);
      });
      cases.push_back({"oneTBB",
                       [&] {
                         tg.run(tb);
                         return tcount;
                       },
                       [&] { tcount = 0; }});
    }
#endif
    time_cases(x, "graphs", "linear chain of 1e6 empty nodes", threads, reps, n, cases);
  }

  if (wants("tree")) {
    const std::size_t depth = 20;
    const std::size_t n = (std::size_t{1} << depth) - 1;
    std::vector<char> hdone(n, 0), tdone(n, 0);
    auto count = [n](const std::vector<char>& d) {
      std::uint64_t s = 0;
      for (std::size_t i = 0; i < n; ++i)
        s += static_cast<std::uint64_t>(d[i]);
      return s;
    };
    std::vector<prepared> cases;
    heist::task_graph hg;
    if (wants_heist()) {
      std::vector<heist::graph_node> nodes;
      nodes.reserve(n);
      for (std::size_t k = 0; k < n; ++k) {
        nodes.push_back(hg.emplace([&hdone, k] { hdone[k] = 1; }));
        if (k > 0) nodes[(k - 1) / 2].precede(nodes.back());
      }
      cases.push_back({"heist",
                       [&] {
                         run_heist_graph(hb, hg);
                         return count(hdone);
                       },
                       [&] { std::fill(hdone.begin(), hdone.end(), 0); }});
    }
#if HEIST_BENCH_HAVE_TBB
    tbb_graph tg;
    if (wants_tbb()) {
      tb.arena().execute([&] {
        tg.start = std::make_unique<tbb::flow::broadcast_node<tbb::flow::continue_msg>>(tg.g);
        for (std::size_t k = 0; k < n; ++k) {
          auto& node = tg.add([&tdone, k] { tdone[k] = 1; });
          if (k > 0) tbb::flow::make_edge(*tg.nodes[(k - 1) / 2], node);
        }
        tbb::flow::make_edge(*tg.start, *tg.nodes[0]);
      });
      cases.push_back({"oneTBB",
                       [&] {
                         tg.run(tb);
                         return count(tdone);
                       },
                       [&] { std::fill(tdone.begin(), tdone.end(), 0); }});
    }
#endif
    time_cases(x, "graphs", "binary tree of 2^20 - 1 nodes", threads, reps, n, cases);
  }

  if (wants("rerun")) {
    const std::size_t layers = 100, width = 100, runs = 100;
    layered_dag hd(layers, width), td(layers, width);
    const std::uint64_t expected = layered_dag(layers, width).serial();
    std::vector<prepared> cases;
    heist::task_graph hg;
    if (wants_heist()) {
      std::vector<heist::graph_node> nodes;
      for (std::size_t l = 0; l < layers; ++l) {
        for (std::size_t i = 0; i < width; ++i) {
          nodes.push_back(hg.emplace([&hd, l, i] { hd.node(l, i); }));
          if (l == 0) continue;
          nodes[(l - 1) * width + i].precede(nodes.back());
          if (hd.other(i) != i) nodes[(l - 1) * width + hd.other(i)].precede(nodes.back());
        }
      }
      cases.push_back({"heist",
                       [&] {
                         hb.run([&] {
                           for (std::size_t r = 0; r < runs; ++r)
                             hg.run().get();
                         });
                         return hd.checksum();
                       },
                       nullptr});
    }
#if HEIST_BENCH_HAVE_TBB
    tbb_graph tg;
    if (wants_tbb()) {
      tb.arena().execute([&] {
        tg.start = std::make_unique<tbb::flow::broadcast_node<tbb::flow::continue_msg>>(tg.g);
        for (std::size_t l = 0; l < layers; ++l) {
          for (std::size_t i = 0; i < width; ++i) {
            auto& node = tg.add([&td, l, i] { td.node(l, i); });
            if (l == 0) {
              tbb::flow::make_edge(*tg.start, node);
              continue;
            }
            tbb::flow::make_edge(*tg.nodes[(l - 1) * width + i], node);
            if (td.other(i) != i) {
              tbb::flow::make_edge(*tg.nodes[(l - 1) * width + td.other(i)], node);
            }
          }
        }
      });
      cases.push_back({"oneTBB",
                       [&] {
                         tb.arena().execute([&] {
                           for (std::size_t r = 0; r < runs; ++r) {
                             tg.start->try_put(tbb::flow::continue_msg());
                             tg.g.wait_for_all();
                           }
                         });
                         return td.checksum();
                       },
                       nullptr});
    }
#endif
    time_cases(x, "graphs", "rerun: 10,000-node graph x 100 runs", threads, reps, expected, cases);
  }
}

// --- pipelines ------------------------------------------------------------------------------
std::uint64_t transform_item(std::uint64_t v, std::int64_t work_ns) {
  if (work_ns > 0) spin_for_ns(work_ns);
  return v * v + 1;
}

void pipeline_cases(context& x, int threads) {
  heist_backend hb(threads);
#if HEIST_BENCH_HAVE_TBB
  tbb_backend tb(threads);
#endif
  struct shape {
    const char* key;
    std::uint64_t items;
    std::int64_t work_ns;
    const char* unit;
    double scale;
  };
  // Small items (the per-item cost of the pipeline itself), 1 us items (where handing
  // items to other threads starts to pay at 2 threads) and heavy items.
  const shape shapes[] = {{"pipeline", 1'000'000, 0, "Mitems/s", 1e6},
                          {"pipeline-1us", 200'000, 1'000, "Mitems/s", 1e6},
                          {"pipeline-heavy", 10'000, 100'000, "kitems/s", 1e3}};
  for (const shape& sh : shapes) {
    if (!x.wants(sh.key)) continue;
    const std::size_t tokens = 8 * static_cast<std::size_t>(threads);
    std::uint64_t expected = 0;
    for (std::uint64_t i = 0; i < sh.items; ++i)
      expected += i * i + 1;
    std::vector<prepared> cases;
    if (x.cfg.wants_backend("heist", true)) {
      cases.push_back(
          {"heist",
           [&] {
             std::uint64_t next = 0, sum = 0;
             hb.run([&] {
               heist::parallel_pipeline(
                   tokens,
                   heist::make_filter<void, std::uint64_t>(
                       heist::filter_mode::serial_in_order,
                       [&](heist::flow_control& fc) -> std::uint64_t {
                         if (next == sh.items) {
                           fc.stop();
                           return 0;
                         }
                         return next++;
                       }) &
                       heist::make_filter<std::uint64_t, std::uint64_t>(
                           heist::filter_mode::parallel,
                           [&](std::uint64_t v) { return transform_item(v, sh.work_ns); }) &
                       heist::make_filter<std::uint64_t, void>(heist::filter_mode::serial_in_order,
                                                               [&](std::uint64_t v) { sum += v; }));
             });
             return sum;
           },
           nullptr});
    }
#if HEIST_BENCH_HAVE_TBB
    if (x.cfg.wants_backend("tbb", true)) {
      cases.push_back(
          {"oneTBB",
           [&] {
             std::uint64_t next = 0, sum = 0;
             tb.arena().execute([&] {
               tbb::parallel_pipeline(
                   tokens,
                   tbb::make_filter<void, std::uint64_t>(
                       tbb::filter_mode::serial_in_order,
                       [&](tbb::flow_control& fc) -> std::uint64_t {
                         if (next == sh.items) {
                           fc.stop();
                           return 0;
                         }
                         return next++;
                       }) &
                       tbb::make_filter<std::uint64_t, std::uint64_t>(
                           tbb::filter_mode::parallel,
                           [&](std::uint64_t v) { return transform_item(v, sh.work_ns); }) &
                       tbb::make_filter<std::uint64_t, void>(tbb::filter_mode::serial_in_order,
                                                             [&](std::uint64_t v) { sum += v; }));
             });
             return sum;
           },
           nullptr});
    }
#endif
    const std::string name =
        sh.work_ns >= 100'000 ? "pipeline: 10,000 items, 100 us parallel stage"
        : sh.work_ns > 0      ? "pipeline: 200,000 items, 1 us parallel stage"
                              : "pipeline: 1e6 small items, in-order read/parallel/in-order write";
    time_cases(x, "pipelines", name, threads, x.cfg.reps_or(5, 11), expected, cases,
               static_cast<double>(sh.items), sh.unit, sh.scale);
  }
}

// One traced heist run of a 16x16 wavefront graph, and the DOT of a 4x4 one: the pictures
// of a graph run in the report.
void graph_pictures(context& x, int threads) {
  if (!x.wants("wavefront")) return;
  {
    heist::task_graph g;
    wavefront_grid w(4, 4, 0);
    build_wavefront(g, w);
    std::ofstream dot(x.cfg.out + "/graph-wavefront-4x4.dot");
    g.write_dot(dot);
  }
  heist_backend b(threads, heist::steal_policy::sticky_random, true);
  heist::task_graph g;
  wavefront_grid w(16, 16, 20'000);
  build_wavefront(g, w);
  b.run([&] { g.run().get(); });
  b.exec().wait_idle();
  std::ofstream json(x.cfg.out + "/graph-run.json");
  b.exec().write_trace(json);
  json.close();
  std::ifstream in(x.cfg.out + "/graph-run.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(x.cfg.out + "/graph-run.svg")
      << render_trace_svg(text, "heist: one run of a 16x16 wavefront graph (20 us blocks), " +
                                    std::to_string(threads) + " workers");
}

}  // namespace

void flow_workloads(context& x) {
  const int most = *std::max_element(x.cfg.threads.begin(), x.cfg.threads.end());
  // Quick mode: at the most threads only; --full or --threads sweeps every count.
  const std::vector<int> counts =
      x.cfg.full || x.cfg.threads_given ? x.cfg.threads : std::vector<int>{most};
  for (int t : counts) {
    graph_cases(x, t);
    pipeline_cases(x, t);
  }
  graph_pictures(x, most);
}

namespace {
const register_family k_registered{{50,
                                    "graphs and pipelines",
                                    {"wavefront", "wavefront0", "chain", "tree", "rerun",
                                     "pipeline", "pipeline-1us", "pipeline-heavy"},
                                    &flow_workloads}};
}  // namespace

}  // namespace bench
