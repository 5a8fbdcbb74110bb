// Seed note 001's table: uneven load, a hotspot, idle stealing.
#include <string>
#include <vector>

#include "../harness.hpp"
#include "../workloads/seed_table.hpp"

namespace bench {
namespace {

const std::vector<backend_key> k_seed_backends = {{"heist", true},      {"heist-none", true},
                                                  {"rr-dealing", true}, {"central", true},
                                                  {"lockpool", false},  {"tbb", false}};

void seed_table_workloads(context& x) {
  const std::vector<std::int64_t> costs = heavy_tailed_costs(10000, 20000.0);
  timed_case(x, "seed-001", "uneven", "uneven load", k_seed_backends, x.cfg.reps_or(5, 11),
             costs.size(), nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = uneven_load<B>(costs); });
               return v;
             });
  const std::size_t burst = 2000;
  timed_case(x, "seed-001", "hotspot", "hotspot", k_seed_backends, x.cfg.reps_or(5, 11), burst + 64,
             nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = hotspot<B>(burst, 50000); });
               return v;
             });
  const std::size_t trickled = 2000;
  timed_case(x, "seed-001", "idle-stealing", "idle stealing", k_seed_backends, x.cfg.reps_or(5, 11),
             trickled, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = idle_stealing<B>(trickled, 20000, 20000); });
               return v;
             });
}

const register_family k_registered{
    {30, "seed-001", {"uneven", "hotspot", "idle-stealing"}, &seed_table_workloads}};

}  // namespace
}  // namespace bench
