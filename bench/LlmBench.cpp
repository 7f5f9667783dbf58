// IBM's performance ladder for Granite-3.3-8B (llm/LlmLadder.h): every rung
// of one layer, the layer, and the whole model (40 layers extrapolated from
// one, plus the LM head) in both serving modes, decode (B = 4, context
// 4096) and prefill (S = 512), compiled at -O2 and simulated timing only.
// The figures are counters, from simulated cycles and the config, so they
// are the same on every machine (the benchmark's own time is the host's
// compile and simulate time and is not part of the table):
//   sim_us          simulated time
//   bound_us        max(memory bound, compute bound) (LadderRow)
//   memory_bound    1 when the memory bound is the larger
//   pct_of_bound    bound / simulated, in percent
//   pt_util_pct     MACs over the PT peak of every core for the simulated time
//   host_us         host ops' PCIe and compute time
//   launch_us       starting the program from the host (host.launch_us)
// Each benchmark's label is the row's name. scripts/llm_ladder_table.py
// turns the JSON output into the table of docs/llm.md:
//   build/bench/bench_llm --benchmark_out=l.json --benchmark_out_format=json
//   python3 scripts/llm_ladder_table.py l.json --update docs/llm.md
// --llm-config=FILE runs another config.json (a test runs the tiny one).
#include "llm/LlmLadder.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <string>
#include <utility>

namespace {

using namespace spyre::llm;

std::string gModelConfig = SPYRE_SOURCE_DIR "/examples/llm/granite-3.3-8b.json";

StepShape shapeOf(Mode mode) {
  StepShape s;
  s.mode = mode;
  if (mode == Mode::Decode) {
    s.batch = 4;
    s.context = 4096;
  } else {
    s.tokens = 512;
  }
  return s;
}

const char *modeName(Mode mode) {
  return mode == Mode::Decode ? "decode" : "prefill";
}

/// Rows already simulated, so the model row reuses the layer's and the
/// LM head's.
const LadderRow &rowOf(Mode mode, Rung rung) {
  static std::map<std::pair<Mode, Rung>, LadderRow> rows;
  auto it = rows.find({mode, rung});
  if (it == rows.end())
    it = rows.emplace(std::pair{mode, rung},
                      runRung(gModelConfig, "", shapeOf(mode), rung))
             .first;
  return it->second;
}

void report(benchmark::State &state, const LadderRow &r) {
  state.SetLabel(r.name);
  state.counters["sim_us"] = r.simulatedUs;
  state.counters["bound_us"] = r.boundUs();
  state.counters["memory_bound"] = r.memoryBound() ? 1 : 0;
  state.counters["pct_of_bound"] = 100.0 * r.boundReached();
  state.counters["pt_util_pct"] = 100.0 * r.ptUtilisation;
  state.counters["host_us"] = r.hostUs;
  state.counters["launch_us"] = r.launchUs;
}

void benchRung(benchmark::State &state, Mode mode, Rung rung) {
  for (auto _ : state)
    report(state, rowOf(mode, rung));
}

void benchModel(benchmark::State &state, Mode mode) {
  const int64_t layers = loadLlmConfig(gModelConfig).numLayers;
  for (auto _ : state)
    report(state, modelRow(rowOf(mode, Rung::Layer), rowOf(mode, Rung::LmHead),
                           layers));
}

/// The whole model simulated, in one program with the layers in a loop;
/// also its compile's wall time (compile_s, not in the table: it depends on
/// the machine) and its program's size.
void benchWholeModel(benchmark::State &state, Mode mode) {
  for (auto _ : state) {
    const LadderRow row = runWholeModel(gModelConfig, "", shapeOf(mode));
    report(state, row);
    state.counters["compile_s"] = row.compileSeconds;
    state.counters["program_bytes"] = static_cast<double>(row.programBytes);
  }
}

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  const char *flag = "--llm-config=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], flag, std::strlen(flag)) != 0) {
      benchmark::ReportUnrecognizedArguments(argc, argv);
      return 2;
    }
    gModelConfig = argv[i] + std::strlen(flag);
  }
  for (Mode mode : {Mode::Decode, Mode::Prefill}) {
    for (Rung rung : kRungs)
      benchmark::RegisterBenchmark((std::string("BM_Ladder/") + modeName(mode) +
                                    "/" +
                                    std::to_string(static_cast<int>(rung)))
                                       .c_str(),
                                   benchRung, mode, rung)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(
        (std::string("BM_Ladder/") + modeName(mode) + "/model").c_str(),
        benchModel, mode)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  for (Mode mode : {Mode::Decode, Mode::Prefill})
    benchmark::RegisterBenchmark(
        (std::string("BM_Ladder/") + modeName(mode) + "/whole").c_str(),
        benchWholeModel, mode)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
