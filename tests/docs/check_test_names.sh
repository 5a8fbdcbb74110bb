#!/bin/sh
# Test (ctest docs.every_test_the_docs_name_exists): every test that README.md, BENCHMARKS.md
# and the Markdown files under docs/ name as `Suite.Name` (or `Suite.*`) is defined: a
# GoogleTest TEST, TEST_F, TEST_P or TYPED_TEST under tests/ or bench/, or a ctest
# add_test(NAME ...) of the project's CMake files. A guarantee that cites a renamed or deleted
# test is a guarantee nobody checks any more. Usage: check_test_names.sh SOURCE_DIR
set -eu
cd "$1"
defined=$(mktemp)
trap 'rm -f "$defined"' EXIT
# TEST(Suite, Name) and friends, possibly split over lines by clang-format: join each file.
for f in $(find tests bench -name '*.cpp' -o -name '*.hpp'); do
  tr '\n' ' ' <"$f" |
    grep -oE '\b(TEST|TEST_F|TEST_P|TYPED_TEST)[[:space:]]*\([[:space:]]*[A-Za-z0-9_]+[[:space:]]*,[[:space:]]*[A-Za-z0-9_]+' |
    sed -E 's/.*\([[:space:]]*([A-Za-z0-9_]+)[[:space:]]*,[[:space:]]*([A-Za-z0-9_]+)/\1.\2/'
done >"$defined"
find . -name CMakeLists.txt -not -path './build/*' -exec cat {} + | tr '\n' ' ' |
  grep -oE 'add_test\([[:space:]]*NAME[[:space:]]+[A-Za-z0-9_.]+' |
  sed -E 's/.*NAME[[:space:]]+//' >>"$defined"
if [ "$(wc -l <"$defined")" -lt 100 ]; then
  echo "found only $(wc -l <"$defined") test definitions: the scan is broken"
  exit 1
fi
missing=0
for name in $(cat README.md BENCHMARKS.md $(find docs -name '*.md') |
                grep -oE '`[A-Z][A-Za-z0-9_]*\.([A-Z][A-Za-z0-9_]*|\*)`' | tr -d '`' | sort -u); do
  suite=${name%%.*}
  case "$name" in
    *.\*) grep -q "^$suite\." "$defined" && continue ;;
    *) grep -qx "$name" "$defined" && continue ;;
  esac
  echo "named in the docs, defined nowhere: $name"
  missing=1
done
exit $missing
