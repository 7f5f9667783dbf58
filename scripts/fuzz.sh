#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset of CMakePresets.json: clang
# with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer) and runs
# each for a bounded time. tests/fuzz/README.md lists the targets.
#
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]
#   SECONDS  time per target (default 60); TARGETs default to all.
# Environment: SPYRE_FUZZ_BUILD_DIR (default: build-fuzz).
#
# Each target starts from its seeds (read only) and its growing corpus in
# BUILD/fuzz-corpus/TARGET (kept between runs). Inputs that crash, hang
# (> 10 s), leak or exceed 2 GiB land in BUILD/fuzz-findings/TARGET/, the
# fuzzer's output in BUILD/fuzz-logs/TARGET.log. Exits 1 when any target
# found something.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SPYRE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-60}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "usage: scripts/fuzz.sh [SECONDS [TARGET...]]" >&2
  exit 2
fi

bash "$root/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake --preset fuzz -S "$root" -B "$build" >/dev/null
fi
manifest="$build/tests/fuzz/fuzz-targets.txt"

# Manifest lines: name|binary|dictionary|seed,folders
declare -A binary dict seeds
names=()
while IFS='|' read -r name bin dictionary seedList; do
  [ -n "$name" ] || continue
  names+=("$name")
  binary[$name]="$bin"
  dict[$name]="$dictionary"
  seeds[$name]="$seedList"
done <"$manifest"

if [ "$#" -gt 0 ]; then
  for t in "$@"; do
    if [ -z "${binary[$t]+x}" ]; then
      echo "fuzz: unknown target '$t' (targets: ${names[*]})" >&2
      exit 2
    fi
  done
  names=("$@")
fi

jobs="$(nproc 2>/dev/null || echo 2)"

findings="$build/fuzz-findings"
logs="$build/fuzz-logs"
failed=()
for name in "${names[@]}"; do
  corpus="$build/fuzz-corpus/$name"
  mkdir -p "$corpus" "$findings/$name" "$logs"
  # One target that does not build must not keep the others from running.
  if ! ninja -C "$build" -j "$jobs" --quiet "fuzz-$name" >"$logs/$name.build.log" 2>&1; then
    failed+=("$name")
    echo "fuzz: $name: DOES NOT BUILD (log: $logs/$name.build.log)"
    grep -m 3 'error' "$logs/$name.build.log" | sed 's/^/  /'
    continue
  fi
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
        -artifact_prefix="$findings/$name/" -print_final_stats=1)
  if [ -n "${dict[$name]}" ]; then
    args+=(-dict="${dict[$name]}")
  fi
  dirs=("$corpus")
  IFS=',' read -r -a seedDirs <<<"${seeds[$name]}"
  for d in "${seedDirs[@]}"; do
    [ -d "$d" ] && dirs+=("$d")
  done
  log="$logs/$name.log"
  status=0
  "${binary[$name]}" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)"
  if [ "$status" -ne 0 ]; then
    failed+=("$name")
    echo "fuzz: $name: FOUND A PROBLEM after ${runs:-?} runs (log: $log)"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|spyre: internal error|.*runtime error|artifact_prefix|Test unit written)' "$log" | head -n 8 | sed 's/^/  /'
  else
    echo "fuzz: $name: ok, ${runs:-?} runs in ${seconds} s, coverage ${cov:-?}, corpus $(ls "$corpus" | wc -l) inputs"
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: problems in: ${failed[*]}; inputs in $findings/<target>/." >&2
  echo "fuzz: reproduce with BUILD/tests/fuzz/fuzz-<target> FILE; once fixed, keep the input in tests/fuzz/regressions/<target>/." >&2
  exit 1
fi
