#!/usr/bin/env bash
# The main job on the built-in default config (the README's first command):
# shows the hardware config, assembles an example program and prints its
# disassembly and size, then simulates it on real inputs, printing cycles and
# findings and writing outputs, statistics and a trace (open the trace in
# Perfetto UI or chrome://tracing). Outputs go to out/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SPYRE_BUILD_DIR:-$root/build}"
bash "$root/scripts/build.sh" spyre
spyre="$build/tools/spyre/spyre"
out="$root/out"
mkdir -p "$out"
cd "$root"

echo "== built-in hardware config (spyre config show)"
"$spyre" config show
echo
echo "== assemble examples/asm/pt_matmul.s"
"$spyre" asm examples/asm/pt_matmul.s -o "$out/pt_matmul.spyre"
echo
echo "== disassembly of out/pt_matmul.spyre"
"$spyre" disasm "$out/pt_matmul.spyre"
echo
echo "== simulate on examples/data/pt_matmul (A, B)"
"$spyre" sim "$out/pt_matmul.spyre" --inputs examples/data/pt_matmul/inputs \
  --outputs "$out/pt_matmul" --stats "$out/pt_matmul.stats.json" \
  --trace "$out/pt_matmul.trace.json"
echo
echo
echo "== check the result against a double-precision reference"
"$spyre" compare "$out/pt_matmul/C.npy" examples/data/pt_matmul/C_expected.npy
