#!/usr/bin/env bash
# Builds everything and runs the whole test suite (the README's test command;
# .ci/run calls this too). Extra arguments go to ctest, e.g. -R Dlf16 or -L label.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SPYRE_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
jobs="$(nproc 2>/dev/null || echo 2)"
ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 300 "$@"
