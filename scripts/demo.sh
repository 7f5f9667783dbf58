#!/usr/bin/env bash
# The main job on the built-in default config (the README's first command):
# compiles the GPT-style decoder block exported from PyTorch
# (examples/models/gpt_decoder) for the 32-core card, simulates it with real
# numbers, checks the result against PyTorch's output, prints the summary,
# and writes the outputs, statistics, a trace (open it in Perfetto UI or
# chrome://tracing) and an HTML report. Everything goes to out/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SPYRE_BUILD_DIR:-$root/build}"
bash "$root/scripts/build.sh" spyre
spyre="$build/tools/spyre/spyre"
out="$root/out"
mkdir -p "$out"
cd "$root"

model=examples/models/gpt_decoder
echo "== spyre run $model/model.onnx --inputs $model --check"
"$spyre" run "$model/model.onnx" --inputs "$model" --check \
  --outputs "$out/gpt_decoder" --stats "$out/gpt_decoder.stats.json" \
  --trace "$out/gpt_decoder.trace.json"
echo
echo "== spyre report out/gpt_decoder.trace.json -o out/gpt_decoder.html"
"$spyre" report "$out/gpt_decoder.trace.json" -o "$out/gpt_decoder.html"
echo "wrote out/gpt_decoder/y.npy, out/gpt_decoder.stats.json,"
echo "      out/gpt_decoder.trace.json (Perfetto UI: ui.perfetto.dev, Open trace file)"
echo "      and out/gpt_decoder.html (any browser, no network needed)"
