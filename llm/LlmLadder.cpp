#include "llm/LlmLadder.h"

#include "hw/HwConfig.h"
#include "llm/LlmLoop.h"
#include "run/RunModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace spyre::llm {

namespace {

constexpr int64_t kDeviceBytes = 2; // DL16

/// Multiply-accumulates of the graph's matmuls (gated ones count both
/// products), and of its attention ops'
/// two products (all S x L scores, as the matmuls they replace count them).
int64_t graphMacs(const compiler::Graph &g) {
  int64_t macs = 0;
  for (const compiler::Op *op : g.ops()) {
    if (op->kind() == compiler::OpKind::Attention) {
      // y [B, H, S, D] elements, each from L keys, twice (Q K^T and P V).
      macs += 2 * op->result()->type().elementCount() *
              op->operand(1)->type().shape[2];
      continue;
    }
    const bool gated = op->kind() == compiler::OpKind::GatedMatmul;
    if (op->kind() != compiler::OpKind::Matmul && !gated)
      continue;
    // A gated product is two matmuls' worth.
    const compiler::Shape &a = op->operand(0)->type().shape;
    const int64_t k = op->boolAttr("transpose_a") ? a[a.size() - 2] : a.back();
    macs += (gated ? 2 : 1) * op->result()->type().elementCount() * k;
  }
  return macs;
}

int64_t graphBytes(const compiler::Graph &g) {
  int64_t bytes = 0;
  for (const compiler::Value *v : g.inputs())
    bytes += v->type().elementCount() * kDeviceBytes;
  for (const compiler::Value *v : g.outputs())
    bytes += v->type().elementCount() * kDeviceBytes;
  return bytes;
}

std::string duration(double us) {
  if (us >= 1000)
    return fmt::format("{:.3f} ms", us / 1000);
  if (us >= 10)
    return fmt::format("{:.1f} us", us);
  return fmt::format("{:.2f} us", us);
}

} // namespace

double LadderRow::boundUs() const {
  return std::max(memoryBoundUs, computeBoundUs);
}

double LadderRow::boundReached() const {
  return simulatedUs > 0 ? boundUs() / simulatedUs : 0.0;
}

namespace {

/// A row's figures from a timing-only run of `graph`.
LadderRow rowOf(std::string name, const compiler::Graph &graph,
                const hw::HwConfig &hw, const run::RunReport &r) {
  LadderRow row;
  row.name = std::move(name);
  row.cycles = r.cycles;
  row.simulatedUs = r.simulatedUs();
  row.bytes = graphBytes(graph);
  row.macs = graphMacs(graph);
  row.memoryBoundUs =
      static_cast<double>(row.bytes) / (hw.memory.sustainedReadGBps * 1e3);
  const double macsPerCycle = r.peakMacsPerCyclePerCore * r.cores;
  const double clockMhz = r.clockGhz * 1e3;
  row.computeBoundUs =
      static_cast<double>(row.macs) / (macsPerCycle * clockMhz);
  row.ptUtilisation = r.cycles > 0
                          ? static_cast<double>(row.macs) /
                                (macsPerCycle * static_cast<double>(r.cycles))
                          : 0.0;
  row.hostUs =
      static_cast<double>(r.hostPcieCycles + r.hostComputeCycles) / clockMhz;
  row.hostOps = r.hostOps;
  row.launchUs = hw.host.launchUs;
  return row;
}

} // namespace

LadderRow runRung(const std::string &modelConfig, const std::string &hwConfig,
                  const StepShape &shape, Rung rung) {
  const LlmConfig config = loadLlmConfig(modelConfig);
  const hw::HwConfig hw = hw::loadConfigOrDefault(hwConfig);
  const std::unique_ptr<compiler::Graph> graph =
      buildRungGraph(config, shape, rung);
  run::RunOptions ro;
  ro.model = modelConfig;
  ro.graph = graph.get();
  ro.config = hwConfig;
  ro.timingOnly = true;
  ro.useSystemC = false;
  return rowOf(std::string(rungName(rung)), *graph, hw, run::runModel(ro));
}

LadderRow runWholeModel(const std::string &modelConfig,
                        const std::string &hwConfig, const StepShape &shape) {
  const LlmConfig config = loadLlmConfig(modelConfig);
  const hw::HwConfig hw = hw::loadConfigOrDefault(hwConfig);
  StepShape s = shape;
  s.layers = config.numLayers;
  s.lmHead = true;
  s.embedding = false;
  const std::unique_ptr<compiler::Graph> graph = buildLlmGraph(config, s);
  const auto begin = std::chrono::steady_clock::now();
  const LoopedProgram looped = compileLoopedModel(config, s, hw, 2);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  run::RunOptions ro;
  ro.model = modelConfig;
  ro.graph = graph.get();
  ro.program = &looped.program;
  ro.config = hwConfig;
  ro.timingOnly = true;
  ro.records = false; // they would grow with the layers
  ro.useSystemC = false;
  LadderRow row =
      rowOf(fmt::format("model: {} layers + LM head, one program",
                        config.numLayers),
            *graph, hw, run::runModel(ro));
  row.compileSeconds = seconds;
  row.programBytes = isa::writeProgram(looped.program).size();
  return row;
}

LadderRow modelRow(const LadderRow &layer, const LadderRow &lmHead,
                   int64_t layers) {
  const auto n = static_cast<double>(layers);
  LadderRow m;
  m.name = layers == 1 ? std::string("model: 1 layer + LM head")
                       : fmt::format("model: {} layers (extrapolated) + LM "
                                     "head",
                                     layers);
  m.cycles = layer.cycles * static_cast<uint64_t>(layers) + lmHead.cycles;
  m.simulatedUs = layer.simulatedUs * n + lmHead.simulatedUs;
  m.bytes = layer.bytes * layers + lmHead.bytes;
  m.macs = layer.macs * layers + lmHead.macs;
  // The bounds scale with bytes and MACs: one rate for each.
  m.memoryBoundUs = layer.memoryBoundUs * n + lmHead.memoryBoundUs;
  m.computeBoundUs = layer.computeBoundUs * n + lmHead.computeBoundUs;
  const double cycles = static_cast<double>(m.cycles);
  m.ptUtilisation =
      cycles > 0
          ? (layer.ptUtilisation * static_cast<double>(layer.cycles) * n +
             lmHead.ptUtilisation * static_cast<double>(lmHead.cycles)) /
                cycles
          : 0.0;
  m.hostUs = layer.hostUs * n + lmHead.hostUs;
  m.hostOps = layer.hostOps * static_cast<size_t>(layers) + lmHead.hostOps;
  m.launchUs = layer.launchUs;
  return m;
}

std::vector<LadderRow> runLadder(const std::string &modelConfig,
                                 const std::string &hwConfig,
                                 const StepShape &shape) {
  std::vector<LadderRow> rows;
  for (Rung r : kRungs)
    rows.push_back(runRung(modelConfig, hwConfig, shape, r));
  const LlmConfig config = loadLlmConfig(modelConfig);
  const auto at = [&](Rung r) {
    return rows[static_cast<size_t>(
        std::find(std::begin(kRungs), std::end(kRungs), r) -
        std::begin(kRungs))];
  };
  rows.push_back(modelRow(at(Rung::Layer), at(Rung::LmHead), config.numLayers));
  rows.push_back(runWholeModel(modelConfig, hwConfig, shape));
  return rows;
}

std::string ladderTable(const std::vector<LadderRow> &rows) {
  std::string t = "| level | simulated | bound | of bound | PT util. | "
                  "host | launch |\n|---|---|---|---|---|---|---|\n";
  for (const LadderRow &r : rows)
    t += fmt::format("| {} | {} | {}, {} | {:.1f}% | {:.1f}% | {} | {} |\n",
                     r.name, duration(r.simulatedUs), duration(r.boundUs()),
                     r.memoryBound() ? "memory" : "compute",
                     100.0 * r.boundReached(), 100.0 * r.ptUtilisation,
                     duration(r.hostUs), duration(r.launchUs));
  return t;
}

} // namespace spyre::llm
