#!/bin/sh
# Test (ctest exports.only_heist_symbols, shared builds): libheist.so exports heist's own
# symbols and nothing else. Every defined dynamic symbol demangles to heist::..., or to the
# type information, vtable, guard variable or thread-local wrapper of one; the library's
# private classes (declared only under src/) stay hidden; and the exports include the entry
# points the headers call (a build that hid everything would pass the first check alone).
# Usage: check_exports.sh LIBRARY
set -eu
lib=$1
symbols=$(mktemp)
trap 'rm -f "$symbols"' EXIT
# Defined, dynamic, demangled; the version-node entries (type A) are not symbols of code.
nm -DC --defined-only "$lib" | awk '$2 != "A" { $1 = ""; $2 = ""; sub(/^  */, ""); print }' >"$symbols"
count=$(wc -l <"$symbols")
foreign=$(grep -vE '^((typeinfo|typeinfo name|vtable|guard variable|TLS init function|TLS wrapper function) for )?heist::' "$symbols" || true)
if [ -n "$foreign" ]; then
  echo "$lib exports symbols outside heist::"
  echo "$foreign" | head -20
  exit 1
fi
for private in 'heist::detail::idle_budget::' 'heist::detail::graph_runner::' \
               'heist::detail::executor_impl::' 'heist::detail::admission_control::' \
               'heist::detail::arena_registry::' 'heist::detail::load_monitor::'; do
  if grep -qF "$private" "$symbols"; then
    echo "$lib exports a private class: $(grep -F "$private" "$symbols" | head -1)"
    exit 1
  fi
done
for needed in 'heist::executor::executor(' 'heist::detail::help_until(' 'heist::detail::t_context' \
              'heist::detail::inject(' 'typeinfo for heist::executor_closed' \
              'heist::detail::allocate_small_outside(' 'heist::detail::publish_push_into_empty(' \
              'heist::task_group::run_leased(' 'heist::detail::join_awaiter::take_member_after_pop(' \
              'heist::detail::admit_external(' 'heist::detail::refuse_if_closed(' \
              'heist::detail::enter_blocking(' 'heist::detail::default_idle_snapshot(' \
              'heist::detail::install_poller('; do
  if ! grep -qF "$needed" "$symbols"; then
    echo "$lib does not export $needed"
    exit 1
  fi
done
echo "$lib: $count symbols, all of heist::"
