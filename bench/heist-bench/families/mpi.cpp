// Section 13: the MPI programs' figures. scripts/bench runs examples/mpi/jacobi.cpp (overlap
// against blocking MPI_Waitall, 2 ranks x 1 worker) and examples/mpi/uts.cpp (distributed
// tree search) under mpirun before heist-bench, and they append their figures to
// OUT/mpi.csv ("name,value,unit[,note]"); this family puts those rows in the table and the
// report, with a chart. Without MPI (or without that file) it adds nothing.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "../harness.hpp"

namespace bench {
namespace {

void mpi_workloads(context& x) {
  if (!x.wants("mpi")) return;
  std::ifstream in(x.cfg.out + "/mpi.csv");
  if (!in) {
    std::printf(
        "  mpi: no %s/mpi.csv (MPI not installed, or heist-bench run without "
        "scripts/bench): no MPI rows\n",
        x.cfg.out.c_str());
    return;
  }
  for (std::string line; std::getline(in, line);) {
    std::stringstream ss(line);
    std::string name, value, unit, note;
    if (!std::getline(ss, name, ',') || !std::getline(ss, value, ',') ||
        !std::getline(ss, unit, ',')) {
      continue;
    }
    std::getline(ss, note);
    int ranks = 0;
    const auto at = name.find(" ranks");
    if (at != std::string::npos) ranks = std::atoi(name.substr(name.rfind('(', at) + 1).c_str());
    result r{"mpi", name, "heist", ranks, unit, unit == "ms/step"};
    r.samples.push_back(std::stod(value));
    r.stats = summarize(r.samples);
    r.note = note;
    print_progress(r);
    x.results.push_back(std::move(r));
  }
}

const register_family k_registered{{90, "mpi", {"mpi"}, &mpi_workloads}};

}  // namespace
}  // namespace bench
