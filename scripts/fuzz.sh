#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset of CMakePresets.json: clang
# with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer) and runs
# each for a bounded time. tests/fuzz/README.md lists the targets.
#
# Usage: scripts/fuzz.sh [--seed N] [--runs N] [--fresh] [SECONDS] [TARGET...]
#   SECONDS   time per target (default 60); TARGETs (names, see
#             tests/fuzz/README.md) default to all.
#   --seed N  libFuzzer's random seed (-seed=N, N >= 1). Without it libFuzzer
#             picks one; the seed each target used is printed either way.
#   --runs N  stop each target after N inputs instead of after SECONDS: with
#             --seed and --fresh this repeats a run input for input (a timed
#             run prints how many inputs it tried).
#   --fresh   start from the seed folders only, in a temporary corpus removed
#             afterwards, so the run depends on nothing but the source tree
#             and the seed (what CI does). By default the corpus grows in
#             BUILD/fuzz-corpus/TARGET and is kept between runs.
# Environment: SPYRE_FUZZ_BUILD_DIR (default: build-fuzz).
#
# Inputs that crash, hang (> 10 s), leak or exceed 2 GiB land in
# BUILD/fuzz-findings/TARGET/ (emptied when the target starts, so what is
# there is from the last run), the fuzzer's output in
# BUILD/fuzz-logs/TARGET.log. Exits 1 when any target found something or
# did not build, 2 on a usage error.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SPYRE_FUZZ_BUILD_DIR:-$root/build-fuzz}"

usage() {
  echo "usage: scripts/fuzz.sh [--seed N] [--runs N] [--fresh] [SECONDS] [TARGET...]" >&2
  exit 2
}
isCount() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; }

seed=""
runs=""
fresh=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --seed) [ "$#" -ge 2 ] && isCount "$2" || usage; seed="$2"; shift 2 ;;
    --seed=*) seed="${1#--seed=}"; isCount "$seed" || usage; shift ;;
    --runs) [ "$#" -ge 2 ] && isCount "$2" || usage; runs="$2"; shift 2 ;;
    --runs=*) runs="${1#--runs=}"; isCount "$runs" || usage; shift ;;
    --fresh) fresh=1; shift ;;
    -h|--help) usage ;;
    -*) echo "fuzz: unknown option '$1'" >&2; usage ;;
    *) break ;;
  esac
done
seconds=60
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  seconds="$1"
  shift
  isCount "$seconds" || usage
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

# With a fixed seed, the same inputs are tried in the same order only when
# addresses are the same too: comparisons of pointers feed libFuzzer's
# mutations, so address-space randomisation is turned off for the fuzzer
# (and -reload=0 keeps it from re-reading its corpus on a timer).
launch=()
if [ -n "$seed" ]; then
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    launch=(setarch "$(uname -m)" -R)
  else
    echo "fuzz: cannot turn off address-space randomisation here; runs with --seed may differ" >&2
  fi
fi

findings="$build/fuzz-findings"
logs="$build/fuzz-logs"
scratch=""
if [ "$fresh" -eq 1 ]; then
  scratch="$(mktemp -d "${TMPDIR:-/tmp}/spyre-fuzz.XXXXXX")"
  trap 'rm -rf "$scratch"' EXIT
fi
failed=()
for name in "${names[@]}"; do
  corpus="$build/fuzz-corpus/$name"
  [ "$fresh" -eq 1 ] && corpus="$scratch/$name"
  # Old findings would be mistaken for this run's.
  rm -rf "${findings:?}/$name"
  mkdir -p "$corpus" "$findings/$name" "$logs"
  # One target that does not build must not keep the others from running.
  if ! ninja -C "$build" -j "$jobs" --quiet "fuzz-$name" >"$logs/$name.build.log" 2>&1; then
    failed+=("$name")
    echo "fuzz: $name: DOES NOT BUILD (log: $logs/$name.build.log)"
    grep -m 3 'error' "$logs/$name.build.log" | sed 's/^/  /'
    continue
  fi
  args=(-timeout=10 -rss_limit_mb=2048
        -artifact_prefix="$findings/$name/" -print_final_stats=1)
  if [ -n "$runs" ]; then
    args+=(-runs="$runs")
  else
    args+=(-max_total_time="$seconds")
  fi
  [ -n "$seed" ] && args+=(-seed="$seed" -reload=0)
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
  start=$SECONDS
  "${launch[@]}" "${binary[$name]}" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || status=$?
  took=$((SECONDS - start))
  used="$(sed -n 's/^INFO: Seed: *//p' "$log" | head -n 1)"
  ran="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)"
  if [ "$status" -ne 0 ]; then
    failed+=("$name")
    echo "fuzz: $name: FOUND A PROBLEM after ${ran:-?} runs (seed ${used:-?}, log: $log)"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|spyre: internal error|.*runtime error|artifact_prefix|Test unit written)' "$log" | head -n 8 | sed 's/^/  /'
  else
    echo "fuzz: $name: ok, ${ran:-?} runs in ${took} s (seed ${used:-?}), coverage ${cov:-?}, corpus $(ls "$corpus" | wc -l) inputs"
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: problems in: ${failed[*]}; inputs in $findings/<target>/." >&2
  echo "fuzz: reproduce with $build/tests/fuzz/fuzz-<target> FILE; once fixed, keep the input in tests/fuzz/regressions/<target>/." >&2
  exit 1
fi
