#!/usr/bin/env bash
# The three ways a project takes heist in, each with a program built and run against it:
#   1. pkg-config, from an installed tree moved elsewhere (heist.pc is relocatable), with
#      -std=c++20 and with -std=c++23 (the .pc file forces no language version);
#   2. find_package(heist 0.3 CONFIG) from the moved tree, with MPI's package disabled (a
#      plain consumer needs no MPI), find_package(heist COMPONENTS mpi) when heist was built
#      with MPI, and a refused request for another major version (SameMajorVersion);
#   3. FetchContent from the source tree, with MPI and GoogleTest disabled: heist builds
#      only its library (no tests, benchmarks, examples or heist::mpi) for a subproject.
#   check.sh BUILD_DIR CXX_COMPILER SOURCE_DIR
set -euo pipefail
build="$1"
cxx="$2"
source_dir="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
prefix="$work/moved"
pc_dir="$(dirname "$(find "$prefix" -name heist.pc | head -1)")"

cat >"$work/main.cpp" <<'CPP'
#include <heist/heist.hpp>
#include <cstdio>
#include <cstring>
int main() {
  heist::executor ex(2);
  const int v = ex.submit([] { return 41 + 1; }).get();
  long sum = heist::parallel_reduce(
      heist::blocked_range<long>(0, 1000), 0L,
      [](const heist::blocked_range<long>& r, long s) {
        for (long i = r.begin(); i < r.end(); ++i) s += i;
        return s;
      },
      [](long a, long b) { return a + b; });
  std::printf("heist %s (headers %s, C++ %ld): %d %ld\n", heist::version().string,
              HEIST_VERSION_STRING, static_cast<long>(__cplusplus), v, sum);
  return v == 42 && sum == 499500 && std::strcmp(heist::version().string, HEIST_VERSION_STRING) == 0
             ? 0
             : 1;
}
CPP

# 1. pkg-config, from the moved tree.
flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs heist)"
case "$flags" in
  *"$work/moved"*) ;;
  *) echo "heist.pc does not point into the moved tree: $flags" >&2; exit 1 ;;
esac
case "$flags" in
  *-std=*) echo "heist.pc sets the language version: $flags" >&2; exit 1 ;;
esac
for std in c++20 c++23; do
  # shellcheck disable=SC2086
  "$cxx" -std=$std "$work/main.cpp" $flags -o "$work/with-pc-$std"
  LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$work/with-pc-$std"
done
# An older standard is refused with heist's own message.
# shellcheck disable=SC2086
if "$cxx" -std=c++17 -c "$work/main.cpp" $flags -o "$work/old.o" 2>"$work/old.err"; then
  echo "heist's headers compiled as C++17" >&2
  exit 1
fi
grep -q "heist needs C++20" "$work/old.err" || {
  echo "a C++17 compile did not say heist needs C++20:" >&2
  head -5 "$work/old.err" >&2
  exit 1
}

# 2. CMake package, from the moved tree.
mkdir -p "$work/consumer"
cp "$work/main.cpp" "$work/consumer/main.cpp"
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(consumer CXX)
find_package(heist ${WANT} CONFIG REQUIRED ${COMPONENTS})
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE heist::heist)
if(TARGET heist::mpi)
  message(STATUS "consumer: heist::mpi is there")
endif()
CMAKE
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DWANT=0.3 -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >"$work/plain.log"
if grep -q "heist::mpi is there" "$work/plain.log"; then
  echo "find_package(heist) without components brought heist::mpi" >&2
  exit 1
fi
cmake --build "$work/consumer/build" >/dev/null
"$work/consumer/build/consumer"
if [ -f "$prefix/lib/cmake/heist/heistMpiTargets.cmake" ]; then
  cmake -S "$work/consumer" -B "$work/consumer/build-mpi" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" -DWANT=0.3 -DCOMPONENTS="COMPONENTS;mpi" >"$work/mpi.log"
  grep -q "heist::mpi is there" "$work/mpi.log" || {
    echo "find_package(heist COMPONENTS mpi) did not give heist::mpi" >&2
    exit 1
  }
fi
if cmake -S "$work/consumer" -B "$work/consumer/build1" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DWANT=1.0 >/dev/null 2>&1; then
  echo "find_package(heist 1.0) accepted version $(grep -o 'PACKAGE_VERSION "[^"]*"' -r "$prefix" | head -1)" >&2
  exit 1
fi

# 3. FetchContent from the source tree, as a subproject.
mkdir -p "$work/fetch"
cp "$work/main.cpp" "$work/fetch/main.cpp"
cat >"$work/fetch/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(fetcher CXX)
include(FetchContent)
FetchContent_Declare(heist SOURCE_DIR ${HEIST_SOURCE})
FetchContent_MakeAvailable(heist)
add_executable(fetcher main.cpp)
target_link_libraries(fetcher PRIVATE heist::heist)
foreach(t heist_mpi heist-bench heist_unit_future heist_example_quickstart)
  if(TARGET ${t})
    message(FATAL_ERROR "a subproject build of heist made target ${t}")
  endif()
endforeach()
CMAKE
cmake -S "$work/fetch" -B "$work/fetch/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release -DHEIST_SOURCE="$source_dir" \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON >/dev/null
cmake --build "$work/fetch/build" >/dev/null
"$work/fetch/build/fetcher"
echo "install check: pkg-config (C++20 and C++23), find_package (with and without mpi) and" \
  "FetchContent (no MPI, no GoogleTest) all build and run"
