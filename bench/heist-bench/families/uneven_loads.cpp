// Uneven loads: tasks of heavy-tailed cost, a hotspot, idle stealing: does stealing even the
// load where dealing tasks out, or one shared queue, does not.
#include <string>
#include <vector>

#include "../harness.hpp"
#include "../workloads/uneven_loads.hpp"

namespace bench {
namespace {

const std::vector<backend_key> k_uneven_backends = {{"heist", true},      {"heist-none", true},
                                                    {"rr-dealing", true}, {"central", true},
                                                    {"lockpool", false},  {"tbb", false}};

void uneven_load_workloads(context& x) {
  const std::vector<std::int64_t> costs = heavy_tailed_costs(10000, 20000.0);
  timed_case(x, "uneven loads", "uneven", "uneven load", k_uneven_backends, x.cfg.reps_or(5, 11),
             costs.size(), nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = uneven_load<B>(costs); });
               return v;
             });
  const std::size_t burst = 2000;
  timed_case(x, "uneven loads", "hotspot", "hotspot", k_uneven_backends, x.cfg.reps_or(5, 11),
             burst + 64, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = hotspot<B>(burst, 50000); });
               return v;
             });
  const std::size_t trickled = 2000;
  timed_case(x, "uneven loads", "idle-stealing", "idle stealing", k_uneven_backends,
             x.cfg.reps_or(5, 11), trickled, nullptr, [&](auto& b) {
               using B = std::decay_t<decltype(b)>;
               std::uint64_t v = 0;
               b.run([&] { v = idle_stealing<B>(trickled, 20000, 20000); });
               return v;
             });
}

const register_family k_registered{
    {30, "uneven loads", {"uneven", "hotspot", "idle-stealing"}, &uneven_load_workloads}};

}  // namespace
}  // namespace bench
