// What the window probes share: hooks at perturbation points replace the random delays, which
// are switched off so that only the window a test opens matters. The probes need the
// perturbation build (the `perturb` preset) and are skipped in every other build.
#pragma once

#include <gtest/gtest.h>

#include "heist/heist.hpp"

namespace heist_test::probe {
#if HEIST_PERTURB
namespace perturb = heist::detail::perturb;

struct quiet_perturbation {
  quiet_perturbation() { perturb::set_random_delays(false); }
  ~quiet_perturbation() {
    perturb::clear_hooks();
    perturb::set_random_delays(true);
  }
};
#endif
}  // namespace heist_test::probe

#if HEIST_PERTURB
#define HEIST_NEEDS_PERTURB() ::heist_test::probe::quiet_perturbation quiet_
#else
#define HEIST_NEEDS_PERTURB() GTEST_SKIP() << "needs the perturbation build (preset perturb)"
#endif
