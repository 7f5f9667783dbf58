// Simulator speed, two workloads:
//  - a 32-core streaming program of about a million instructions (load, SFU
//    exp, store per stick, with signal/wait hand-offs between the engines),
//    timing only and with numerics, checks on and off, and timing only with
//    the per-instruction records that traces and `spyre sim --stats` keep
//    (what they cost is the difference to the plain timing-only run);
//  - one Granite-3.3-8B decoder layer in prefill (512 tokens), compiled at
//    -O2 as `spyre llm examples/llm/granite-3.3-8b.json --layers 1 --mode
//    prefill --tokens 512 --timing-only` compiles it, simulated timing only
//    with the schedule checks (`spyre sim --timing-only`) and as
//    `--stats` runs it: the records on top (without the activity counters,
//    which only a trace shows) and the statistics JSON made from them.
// The Machine runs without the SystemC layer here: the kernel elaborates once
// per process, and the layer adds one kernel time step per quantum (1000
// cycles by default). Compiling the layer is not timed.
#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "llm/LlmConfig.h"
#include "llm/LlmGraph.h"
#include "run/RunModel.h"
#include "sim/core/Machine.h"
#include "sim/output/RunOutput.h"
#include "support/Diagnostic.h"

#include <benchmark/benchmark.h>

#include <string>

namespace {

using namespace spyre;

constexpr int kIterations = 3000;

std::string streamingProgram(int cores) {
  const int rows = cores * kIterations;
  std::string s = ".program \"bench_stream\"\n";
  s += ".tensor input x dl16 [" + std::to_string(rows) + ", 64] @ 0x0\n";
  s += ".tensor output y dl16 [" + std::to_string(rows) + ", 64] @ " +
       std::to_string(rows) + "\n";
  for (int c = 0; c < cores; ++c) {
    int in = c * kIterations, out = rows + c * kIterations;
    std::string n = std::to_string(kIterations);
    s += ".core " + std::to_string(c) + "\n";
    s += ".engine dma.load\n li r2, " + std::to_string(in) + "\n loop " + n +
         ", l\n wait c2, 1\n ld 0x0, [r2]\n signal c0, 1\n addi r2, r2, 1\nl:\n"
         " halt\n";
    s += ".engine sfu.0\n signal c2, 1\n loop " + n +
         ", s\n wait c0, 1\n wait c3, 1\n exp 0x10, 0x0\n signal c2, 1\n"
         " signal c1, 1\ns:\n halt\n";
    s += ".engine dma.store\n li r2, " + std::to_string(out) +
         "\n signal c3, 1\n loop " + n +
         ", t\n wait c1, 1\n st [r2], 0x10\n signal c3, 1\n addi r2, r2, 1\nt:\n"
         " halt\n";
  }
  return s;
}

const isa::Program &program() {
  static const isa::Program p = [] {
    DiagnosticEngine diags;
    isa::Program prog = isa::assemble(streamingProgram(32), "bench.s",
                                      hw::builtinConfig(), diags);
    SPYRE_ASSERT(!diags.hasErrors(), diags.str());
    return prog;
  }();
  return p;
}

/// One Granite-3.3-8B decoder layer, prefill of 512 tokens, compiled at -O2
/// without constant data (a timing-only run needs none).
const isa::Program &graniteLayer() {
  static const compiler::CompileResult compiled = [] {
    const llm::LlmConfig config =
        llm::loadLlmConfig(SPYRE_SOURCE_DIR "/examples/llm/granite-3.3-8b.json");
    llm::StepShape shape;
    shape.mode = llm::Mode::Prefill;
    shape.tokens = 512;
    shape.layers = 1;
    const std::unique_ptr<compiler::Graph> graph =
        llm::buildLlmGraph(config, shape);
    return run::compileOrThrow(*graph, hw::builtinConfig(), 2,
                               /*constantData=*/false);
  }();
  return compiled.program;
}

/// `stats`: with `records`, as `spyre sim --stats` runs (no activity
/// counters) and makes the statistics JSON.
void runOn(benchmark::State &state, const isa::Program &prog, bool numerics,
           bool checks, bool records, bool stats = false) {
  sim::SimOptions options;
  options.numerics = numerics;
  options.checks = checks;
  options.trace = records;
  options.activity = !stats;
  uint64_t instructions = 0, cycles = 0;
  for (auto _ : state) {
    sim::Machine m(hw::builtinConfig(), prog, options);
    m.run();
    SPYRE_ASSERT(m.findings().empty(), m.findings().front().str());
    if (stats)
      benchmark::DoNotOptimize(sim::statsJson(m));
    instructions += m.instructionsExecuted();
    cycles += m.totalCycles();
  }
  state.SetItemsProcessed(static_cast<int64_t>(instructions));
  state.counters["instructions"] = benchmark::Counter(
      static_cast<double>(instructions) / static_cast<double>(state.iterations()));
  state.counters["sim_cycles_per_s"] =
      benchmark::Counter(static_cast<double>(cycles), benchmark::Counter::kIsRate);
}

void runProgram(benchmark::State &state, bool numerics, bool checks,
                bool records = false) {
  runOn(state, program(), numerics, checks, records);
}

void BM_Stream32TimingOnly(benchmark::State &s) { runProgram(s, false, false); }
void BM_Stream32TimingOnlyChecked(benchmark::State &s) { runProgram(s, false, true); }
void BM_Stream32Numerics(benchmark::State &s) { runProgram(s, true, false); }
void BM_Stream32NumericsChecked(benchmark::State &s) { runProgram(s, true, true); }
void BM_Stream32TimingOnlyRecorded(benchmark::State &s) {
  runProgram(s, false, false, true);
}

void BM_GranitePrefillLayerTimingOnly(benchmark::State &s) {
  runOn(s, graniteLayer(), false, true, false);
}
void BM_GranitePrefillLayerStats(benchmark::State &s) {
  runOn(s, graniteLayer(), false, true, true, /*stats=*/true);
}

BENCHMARK(BM_Stream32TimingOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stream32TimingOnlyChecked)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stream32Numerics)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stream32NumericsChecked)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stream32TimingOnlyRecorded)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GranitePrefillLayerTimingOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GranitePrefillLayerStats)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
