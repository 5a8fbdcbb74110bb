// A build-once, run-many task graph: a small "build system" (compile two sources, link,
// then test), a condition node that retries the tests until they pass, and the whole graph
// as one node of a release graph. Prints the graph in GraphViz DOT and checks its counts;
// exits non-zero if anything is off.
#include <heist/heist.hpp>

#include <atomic>
#include <cstdio>
#include <iostream>

int main() {
  heist::executor ex(4);
  std::atomic<int> compiled{0}, linked{0}, test_attempts{0}, packaged{0};

  heist::task_graph build;
  auto compile_a = build.emplace([&] { compiled.fetch_add(1); }).name("compile a.cpp");
  auto compile_b = build.emplace([&] { compiled.fetch_add(1); }).name("compile b.cpp");
  auto link = build.emplace([&] { linked.fetch_add(1); }).name("link");
  auto test = build.emplace([&] { test_attempts.fetch_add(1); }).name("test");
  // A condition: 0 runs the tests again (a weak edge back), 1 goes on. Here the tests pass
  // on every third attempt.
  auto passed =
      build.emplace([&] { return test_attempts.load() % 3 == 0 ? 1 : 0; }).name("passed?");
  auto done = build.emplace([] {}).name("done");
  link.succeed(compile_a, compile_b);
  link.precede(test);
  test.precede(passed);
  passed.precede(test, done);

  heist::task_graph release;
  auto whole_build = release.emplace(build).name("build");
  auto package = release.emplace([&] { packaged.fetch_add(1); }).name("package");
  whole_build.precede(package);

  release.run_n(ex, 5).get();  // five releases, each a full build and its retried tests

  build.write_dot(std::cout);
  std::printf("compiled %d, linked %d, test attempts %d, packaged %d\n", compiled.load(),
              linked.load(), test_attempts.load(), packaged.load());
  const bool ok = compiled == 10 && linked == 5 && test_attempts == 15 && packaged == 5;
  return ok ? 0 : 1;
}
