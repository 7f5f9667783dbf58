#!/usr/bin/env bash
# Regenerates the golden files under tests/golden/ from the current build.
# Read `git diff tests/golden` before committing the result.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SPYRE_BUILD_DIR:-$root/build}"
bash "$root/scripts/build.sh"
SPYRE_UPDATE_GOLDEN=1 ctest --test-dir "$build" -j "$(nproc)" "$@" >/dev/null || true
git -C "$root" status --short tests/golden docs
