// parallel_pipeline: read lines in order, transform them in parallel, write them in order,
// with at most 8 lines in flight. The "file" is generated; the output is checked against a
// sequential run. Exits non-zero if the output differs.
#include <heist/heist.hpp>

#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

namespace {
std::string shout(std::string line) {
  for (char& ch : line)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return line + "!";
}
}  // namespace

int main() {
  std::vector<std::string> input;
  for (int i = 0; i < 10000; ++i)
    input.push_back("line " + std::to_string(i) + " of the file");

  std::size_t next = 0;
  std::vector<std::string> output;
  heist::executor ex(4);
  heist::parallel_pipeline(
      ex, 8,
      heist::make_filter<void, std::string>(heist::filter_mode::serial_in_order,
                                            [&](heist::flow_control& fc) -> std::string {
                                              if (next == input.size()) {
                                                fc.stop();
                                                return {};
                                              }
                                              return input[next++];
                                            }) &
          heist::make_filter<std::string, std::string>(heist::filter_mode::parallel, shout) &
          heist::make_filter<std::string, void>(
              heist::filter_mode::serial_in_order,
              [&](std::string line) { output.push_back(std::move(line)); }));

  bool ok = output.size() == input.size();
  for (std::size_t i = 0; ok && i < input.size(); ++i)
    ok = output[i] == shout(input[i]);
  std::printf("%zu lines through read -> shout -> write: %s\n", output.size(),
              ok ? "in order and correct" : "WRONG");
  return ok ? 0 : 1;
}
