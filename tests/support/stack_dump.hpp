// dump_stacks: prints every thread's backtrace of a process to stderr, through gdb in batch
// mode, so that a hang caught by a test's deadline (watchdog.hpp, the fork tests) says where
// each thread was. Does nothing but say so where gdb is missing or cannot attach.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace heist_test {

inline void dump_stacks(pid_t pid) {
  if (std::system("command -v gdb >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "(no gdb on this machine: no backtraces of process %d)\n",
                 static_cast<int>(pid));
    return;
  }
  std::fprintf(stderr, "--- backtraces of process %d ---\n", static_cast<int>(pid));
  std::fflush(stderr);
  // 1>&2: the backtraces go where the failure message goes.
  const std::string cmd = "gdb -p " + std::to_string(pid) +
                          " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' "
                          "1>&2 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "(gdb could not attach)\n");
  std::fflush(stderr);
}

}  // namespace heist_test
