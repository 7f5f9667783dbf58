#!/usr/bin/env bash
# Builds the project with AddressSanitizer and UndefinedBehaviorSanitizer and
# runs the test suite under them. Any sanitizer report (memory error, leak,
# undefined behaviour) aborts the process that made it, so its test fails.
#
# The build is clang's (the `fuzz` preset of CMakePresets.json, -O1 -g1,
# which scripts/fuzz.sh then reuses for its libFuzzer targets: CI builds the
# sanitized tree once). The Release suite is GCC's, so CI runs the golden
# tests under both compilers: a program, trace or random graph that depends
# on an order C++ leaves to the compiler fails one of the two.
# SPYRE_SANITIZER_PRESET=asan builds with GCC instead (build-asan).
# Usage: scripts/test-sanitizers.sh [ctest arguments...], e.g. -R Npy.
# Environment: SPYRE_SANITIZER_PRESET (fuzz or asan), SPYRE_ASAN_BUILD_DIR
# (default: the preset's folder, build-fuzz or build-asan).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${SPYRE_SANITIZER_PRESET:-fuzz}"
case "$preset" in
  fuzz) folder=build-fuzz ;;
  asan) folder=build-asan ;;
  *) echo "test-sanitizers: SPYRE_SANITIZER_PRESET is 'fuzz' or 'asan', not '$preset'" >&2; exit 2 ;;
esac
build="${SPYRE_ASAN_BUILD_DIR:-$root/$folder}"

bash "$root/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake --preset "$preset" -S "$root" -B "$build" >/dev/null
fi
jobs="$(nproc 2>/dev/null || echo 2)"
ninja -C "$build" -j "$jobs" --quiet

# abort_on_error: a report ends in SIGABRT, which no test can mistake for one
# of the tool's own exit codes. Reports go to log files rather than stderr:
# SystemC's coroutines make ASan print a harmless warning ("ignoring
# requested __asan_handle_no_return") that would otherwise become the first
# line of the error output the CLI tests compare. The logs are checked below.
logs="$build/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=0:log_path=$logs/asan"
export UBSAN_OPTIONS="abort_on_error=1:halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
status=0
# Tests labelled `long` (whole models, large graphs, Slurm) run in the
# Release suite only: under the sanitizers they would take most of CI's time
# and find nothing the short tests of the same code do not.
ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 600 -LE long "$@" || status=$?

# Every report fails the run, even one from a process whose exit status a
# test did not look at.
reports=()
for f in "$logs"/*; do
  [ -e "$f" ] || continue
  if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f"; then
    reports+=("$f")
  fi
done
if [ "${#reports[@]}" -gt 0 ]; then
  for f in "${reports[@]}"; do
    echo "=== $f" >&2
    cat "$f" >&2
  done
  echo "test-sanitizers: ${#reports[@]} sanitizer report(s), above" >&2
  exit 1
fi
exit "$status"
