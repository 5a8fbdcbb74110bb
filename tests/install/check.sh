#!/usr/bin/env bash
# Installs heist from a build tree into a temporary prefix, moves the installed tree
# elsewhere, and builds and runs a program against it twice: through pkg-config (heist.pc
# must be relocatable: ${pcfiledir}) and through find_package(heist 0.2 CONFIG). Also checks
# that find_package refuses another major version (SameMajorVersion).
#   check.sh BUILD_DIR CXX_COMPILER
set -euo pipefail
build="$1"
cxx="$2"
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
  std::printf("heist %s (headers %s): %d\n", heist::version().string, HEIST_VERSION_STRING, v);
  return v == 42 && std::strcmp(heist::version().string, HEIST_VERSION_STRING) == 0 ? 0 : 1;
}
CPP

# pkg-config, from the moved tree.
flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs heist)"
case "$flags" in
  *"$work/moved"*) ;;
  *) echo "heist.pc does not point into the moved tree: $flags" >&2; exit 1 ;;
esac
# shellcheck disable=SC2086
"$cxx" "$work/main.cpp" $flags -o "$work/with-pc"
LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$work/with-pc"

# CMake package, from the moved tree.
mkdir -p "$work/consumer"
cp "$work/main.cpp" "$work/consumer/main.cpp"
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(consumer CXX)
find_package(heist ${WANT} CONFIG REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE heist::heist)
CMAKE
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DWANT=0.2 >/dev/null
cmake --build "$work/consumer/build" >/dev/null
"$work/consumer/build/consumer"
if cmake -S "$work/consumer" -B "$work/consumer/build1" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DWANT=1.0 >/dev/null 2>&1; then
  echo "find_package(heist 1.0) accepted version $(grep -o 'PACKAGE_VERSION "[^"]*"' -r "$prefix" | head -1)" >&2
  exit 1
fi
echo "install check: relocatable heist.pc and heistConfig.cmake work from a moved tree"
