#!/usr/bin/env bash
# The main job on the built-in default: shows the hardware config, assembles
# an example program and prints its disassembly and size. (The README's first
# command.) Outputs go to out/.
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
