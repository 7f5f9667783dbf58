// The planner's estimate of each op (what it does: Estimate.h).
#include "compiler/plan/Estimate.h"

#include "compiler/codegen/Kernels.h"
#include "compiler/plan/DeviceLayout.h"
#include "compiler/plan/KernelChoice.h"
#include "compiler/plan/Mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace spyre::compiler {

namespace {

codegen::KernelOptions kernelOptions(const Op &op, const OpMapping &m) {
  codegen::KernelOptions o;
  o.cores = static_cast<int>(m.cores);
  o.firstCore = static_cast<int>(m.firstCore);
  o.op = op.name();
  o.lxBase = m.lx.size() == 2 ? m.lx[0] : 0;
  o.lxSticks = m.lx.size() == 2 ? m.lx[1] : 0;
  o.tileRows = std::max<int64_t>(0, m.tileRows);
  o.overlap = m.overlap.value_or(true);
  return o;
}

/// The matmul planner's estimate of the plan `m` records, once per round of
/// batches (each batch's product on its own group of cores).
int64_t matmulEstimate(const Graph &graph, const Op &op, const OpMapping &m,
                       const hw::HwConfig &cfg) {
  const MatmulWork w = matmulWork(graph, op, m.fuseBias);
  codegen::KernelOptions o = kernelOptions(op, m);
  o.cores = static_cast<int>(coresPerBatch(w.batches, m.cores));
  SPYRE_ASSERT(m.grid.size() == 2 && m.tile.size() == 3,
               "matmul '" + op.name() + "' has no tiles in its mapping");
  codegen::MatmulTiling t;
  t.gridM = static_cast<int>(m.grid[0]);
  t.gridN = static_cast<int>(m.grid[1]);
  t.gridK = m.kSplit < 0 ? 1 : static_cast<int>(m.kSplit);
  t.tileM = m.tile[0];
  t.tileK = m.tile[1];
  t.tileN = m.tile[2];
  t.nOuter = m.nOuter.value_or(true);
  t.shareA = m.shareA.value_or(false);
  t.keepB = m.keepB.value_or(false);
  const codegen::MatmulPlan p = codegen::planMatmulWith(
      batchConfig(cfg, w.batches, m.cores), w.args, o, t);
  const int64_t groups = std::min<int64_t>(w.batches, m.cores);
  const int64_t rounds = (w.batches + groups - 1) / groups;
  return p.estimatedCycles * rounds;
}

int64_t attentionEstimate(const Op &op, const OpMapping &m,
                          const hw::HwConfig &cfg) {
  auto refOf = [](const Value *v) {
    codegen::TensorRef t;
    t.name = v->name();
    t.dtype = requireLayout(*v).dtype;
    t.shape = v->type().shape;
    return t;
  };
  codegen::AttentionArgs args;
  args.q = refOf(op.operand(0));
  args.k = refOf(op.operand(1));
  args.v = refOf(op.operand(2));
  if (op.numOperands() == 5) {
    args.kMore = refOf(op.operand(3));
    args.vMore = refOf(op.operand(4));
  }
  args.y = refOf(op.result());
  args.causal = op.boolAttr("causal");
  return codegen::planAttention(cfg, args, kernelOptions(op, m))
      .estimatedCycles;
}

double deviceBytes(const Value &v) {
  const DeviceLayout l = requireLayout(v);
  const int64_t perStick = elementsPerStick(l.dtype);
  return static_cast<double>((l.deviceElements() + perStick - 1) / perStick) *
         isa::kStickBytes;
}

/// The memory model of an op that streams its operands and results: every
/// distinct operand read once, every result written once (with a chain, its
/// ops' other operands read and the last one's result written instead).
int64_t memoryEstimate(const Graph &graph, const Op &op, const OpMapping &m,
                       const hw::HwConfig &cfg) {
  std::set<const Value *> reads, writes;
  for (const Value *v : op.operands())
    reads.insert(v);
  for (const Value *r : op.results())
    writes.insert(r);
  for (const std::string &name : m.chain) {
    const Op *c = graph.findOp(name);
    SPYRE_ASSERT(c, "chained op '" + name + "' is gone");
    for (const Value *v : c->operands())
      if (!writes.contains(v))
        reads.insert(v);
    writes.clear();
    for (const Value *r : c->results())
      writes.insert(r);
  }
  double r = 0, w = 0;
  for (const Value *v : reads)
    r += deviceBytes(*v);
  for (const Value *v : writes)
    w += deviceBytes(*v);
  // A core's first load and its last store each wait a DMA issue and the
  // memory's latency, and neither overlaps anything; a small op's tile
  // also goes load, compute, store, its store completing before the span
  // ends, which doubles that.
  const double latency = 4.0 * (cfg.dma.issueLatencyCycles +
                                cfg.memory.latencyCycles);
  return static_cast<int64_t>(std::ceil(memoryCycles(cfg, r, w) + latency));
}

} // namespace

std::string_view estimateModelName(EstimateModel model) {
  switch (model) {
  case EstimateModel::MatmulPlanner:
    return "matmul planner";
  case EstimateModel::AttentionPlanner:
    return "attention planner";
  case EstimateModel::Memory:
    return "memory";
  }
  return "?";
}

double memoryCycles(const hw::HwConfig &config, double readBytes,
                    double writeBytes) {
  const double s = config.memory.sustainedReadGBps / config.chip.clockGhz;
  const double mixed = config.memory.sustainedMixedGBps / config.chip.clockGhz;
  const double alpha = std::max(0.0, 2.0 / mixed - 2.0 / s);
  return (readBytes + writeBytes) / s + alpha * std::min(readBytes, writeBytes);
}

std::vector<OpEstimate> estimateOps(const Graph &graph,
                                    const hw::HwConfig &config) {
  std::vector<OpEstimate> out;
  for (const Op *op : graph.ops()) {
    if (op->kind() == OpKind::Host || !opRunsKernels(graph, *op))
      continue;
    const OpMapping m = opMapping(*op);
    OpEstimate e;
    e.op = op->name();
    e.kind = std::string(op->kindName());
    if (op->kind() == OpKind::Matmul) {
      e.model = EstimateModel::MatmulPlanner;
      e.cycles = matmulEstimate(graph, *op, m, config);
    } else if (op->kind() == OpKind::Attention) {
      e.model = EstimateModel::AttentionPlanner;
      e.cycles = attentionEstimate(*op, m, config);
    } else {
      e.model = EstimateModel::Memory;
      e.cycles = memoryEstimate(graph, *op, m, config);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string estimatesText(const std::vector<OpEstimate> &estimates) {
  size_t nameWidth = 2, kindWidth = 4;
  for (const OpEstimate &e : estimates) {
    nameWidth = std::max(nameWidth, e.op.size());
    kindWidth = std::max(kindWidth, e.kind.size());
  }
  std::string s = "estimates:\n";
  int64_t total = 0;
  for (const OpEstimate &e : estimates) {
    s += fmt::format("  {:<{}}  {:<{}}  {:>10}  {}\n", e.op, nameWidth, e.kind,
                     kindWidth, e.cycles, estimateModelName(e.model));
    total += e.cycles;
  }
  s += fmt::format("  {:<{}}  {:<{}}  {:>10}\n", "(sum)", nameWidth, "",
                   kindWidth, total);
  return s;
}

} // namespace spyre::compiler
