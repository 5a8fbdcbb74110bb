// Fuzz target: the runtime driven by a byte stream. The bytes are a small program run by a
// fresh executor (1 to 3 workers, a steal policy, chosen by the first bytes): task groups
// with nested spawns, throwing tasks, cancels, futures, parallel_for / parallel_reduce with
// each partitioner, isolate, task_arena execute and enqueue, blocking. The interpreter knows
// what must happen (how many tasks run, which exception a wait rethrows, the reduction's
// value) and aborts on any difference.
#include <cstddef>
#include <cstdint>

#include "heist/heist.hpp"
#include "program.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  heist_test::program_reader in{data, size};
  heist::executor_options o;
  o.num_workers = 1 + in.next() % 3;
  o.policy = static_cast<heist::steal_policy>(in.next() % 4);
  {
    heist::executor ex(o);
    heist_test::program{ex, in}.run();
    ex.wait_idle();
  }
  return 0;
}
