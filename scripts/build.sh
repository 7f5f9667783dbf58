#!/usr/bin/env bash
# Installs missing system packages (a no-op when all are present), configures
# the build folder once and builds. Usage: scripts/build.sh [ninja targets...]
# Environment: SPYRE_BUILD_DIR (default: build), SPYRE_BUILD_TYPE (Release).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SPYRE_BUILD_DIR:-$root/build}"

bash "$root/scripts/install-deps.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE="${SPYRE_BUILD_TYPE:-Release}" -DSPYRE_WERROR=ON >/dev/null
fi
jobs="$(nproc 2>/dev/null || echo 2)"
ninja -C "$build" -j "$jobs" --quiet "$@"
