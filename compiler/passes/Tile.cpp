// The `tile` pass (what it does: Tile.h).
#include "compiler/passes/Tile.h"

#include "compiler/codegen/Kernels.h"
#include "compiler/plan/DeviceLayout.h"
#include "compiler/plan/KernelChoice.h"
#include "compiler/plan/Mapping.h"
#include "compiler/plan/PlanningSupport.h"

#include <algorithm>

namespace spyre::compiler {

namespace {

bool tileRun(Graph &graph, PassContext &ctx) {
  const hw::HwConfig &cfg = ctx.hw();
  for (Op *op : graph.ops()) {
    if (!runsMatmulKernel(op->kind()) || !opRunsKernels(graph, *op))
      continue;
    OpMapping m = opMapping(*op);
    MatmulWork w = matmulWork(graph, *op, m.fuseBias);
    codegen::KernelOptions o;
    o.firstCore = static_cast<int>(m.firstCore);
    o.cores = static_cast<int>(coresPerBatch(w.batches, m.cores));
    o.lxBase = m.lx[0];
    o.lxSticks = m.lx[1];
    if (m.grid.empty() != m.tile.empty())
      return opFail(ctx, graph, *op,
                         "mapping gives 'grid' or 'tile' without the other");
    // The planner takes grid sides and the K split as int; larger ones
    // cannot fit anyway.
    if (!kSplitFits(ctx, graph, *op, m))
      return false;
    if (!m.grid.empty()) {
      if (m.grid[0] > cfg.chip.cores || m.grid[1] > cfg.chip.cores)
        return opFail(ctx, graph, *op,
                      "mapping cannot be used: grid " +
                          std::to_string(m.grid[0]) + "x" +
                          std::to_string(m.grid[1]) + " has more parts than "
                          "the chip has cores (" +
                          std::to_string(cfg.chip.cores) + ")");
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
      std::string why = codegen::matmulPlanProblem(cfg, w.args, o, t);
      if (!why.empty())
        return opFail(ctx, graph, *op, "mapping cannot be used: " + why);
      m.nOuter = t.nOuter;
      m.shareA = t.shareA;
      m.keepB = t.keepB;
      m.kSplit = t.gridK;
      setOpMapping(*op, m);
      continue;
    }
    // Sharing and K-split decisions the mapping already has (none from the
    // naive division) restrict the search; the rest are weighed.
    codegen::MatmulPlan p =
        codegen::planMatmul(cfg, w.args, o, 0, 0, matmulSearch(m));
    if (!p.error.empty())
      return opFail(ctx, graph, *op, p.error);
    m.grid = {p.gridM, p.gridN};
    m.tile = {p.tileM, p.tileK, p.tileN};
    m.nOuter = p.nOuter;
    m.shareA = p.shareA;
    m.keepB = p.keepB;
    m.kSplit = p.gridK;
    ctx.addStatistic("matmuls-tiled");
    if (p.shareA)
      ctx.addStatistic("matmuls-sharing-a");
    if (p.gridK > 1)
      ctx.addStatistic("matmuls-k-split");
    ctx.addStatistic("estimated-cycles", p.estimatedCycles * w.batches);
    setOpMapping(*op, m);
  }
  return true;
}

} // namespace

const PassInfo &tilePass() {
  static const PassInfo info{
      "tile",
      "Tiling: matmul grids and tiles that fit each op's LX region",
      "every matmul that runs kernels has `grid`, `tile`, `n_outer`, "
      "`share_a`, `keep_b` and `k_split`, and its working set fits its LX "
      "region.",
      {},
      {
          {"matmuls-tiled", "matmuls planned"},
          {"matmuls-sharing-a",
           "matmuls whose grid rows share A tiles over the data ring"},
          {"matmuls-k-split",
           "matmuls whose K is split across cores, partials summed over the "
           "reduce ring"},
          {"estimated-cycles", "the planner's time estimate of all matmuls"},
      },
      [](Graph &graph, PassContext &ctx) {
        return passResult(tileRun(graph, ctx));
      },
      [](const Graph &graph, const PassContext &, DiagnosticEngine &diags) {
        return checkMappings(graph, diags, true, true, true);
      },
  };
  return info;
}

} // namespace spyre::compiler
