// The `lx-plan` pass (what it does: LxPlan.h).
#include "compiler/passes/LxPlan.h"

#include "compiler/plan/KernelChoice.h"
#include "compiler/plan/Mapping.h"
#include "compiler/plan/PlanningSupport.h"

#include <algorithm>
#include <map>

namespace spyre::compiler {

namespace {

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return a0 < b1 && b0 < a1;
}

bool lxPlanRun(Graph &graph, PassContext &ctx) {
  const hw::HwConfig &cfg = ctx.hw();
  const int64_t lxSticks = cfg.lxSticks();
  // Ops grouped by phase, in op order.
  std::map<int64_t, std::vector<Op *>> phases;
  for (Op *op : graph.ops())
    if (opRunsKernels(graph, *op) && op->kind() != OpKind::Host)
      phases[opMapping(*op).phase].push_back(op);
  for (auto &[phase, ops] : phases) {
    // Ops sharing a core with another op of the phase split LX evenly.
    std::vector<OpMapping> ms;
    for (Op *op : ops)
      ms.push_back(opMapping(*op));
    int64_t sharing = 0;
    std::vector<bool> shares(ops.size(), false);
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = 0; j < ops.size(); ++j)
        if (i != j &&
            overlaps(ms[i].firstCore, ms[i].firstCore + ms[i].cores,
                     ms[j].firstCore, ms[j].firstCore + ms[j].cores))
          shares[i] = true;
      sharing += shares[i] ? 1 : 0;
    }
    const int64_t share = sharing > 0 ? lxSticks / sharing : lxSticks;
    int64_t slot = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      OpMapping &m = ms[i];
      if (m.lx.empty()) {
        m.lx = shares[i] ? std::vector<int64_t>{slot++ * share, share}
                         : std::vector<int64_t>{0, lxSticks};
        ctx.addStatistic("regions-planned");
      } else if (m.lx[1] < 1 || m.lx[0] > lxSticks ||
                 m.lx[1] > lxSticks - m.lx[0]) {
        return opFail(ctx, graph, *ops[i],
                           "mapping gives the LX region [" +
                               std::to_string(m.lx[0]) + ", " +
                               std::to_string(saturatingAdd(m.lx[0], m.lx[1])) +
                               ") sticks, LX has " + std::to_string(lxSticks));
      }
      setOpMapping(*ops[i], m);
    }
    // Regions of ops of one phase on a common core must not overlap.
    int64_t used = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      used += ms[i].lx[1];
      for (size_t j = 0; j < i; ++j)
        if (overlaps(ms[i].firstCore, ms[i].firstCore + ms[i].cores,
                     ms[j].firstCore, ms[j].firstCore + ms[j].cores) &&
            overlaps(ms[i].lx[0], ms[i].lx[0] + ms[i].lx[1], ms[j].lx[0],
                     ms[j].lx[0] + ms[j].lx[1]))
          return opFail(ctx, graph, *ops[i],
                             "its LX region overlaps that of '" +
                                 ops[j]->name() + "', which runs in the same "
                                 "phase on a common core");
    }
    const int64_t peak = std::min(used, lxSticks) * isa::kStickBytes;
    if (peak > ctx.statistic("peak-lx-bytes"))
      ctx.addStatistic("peak-lx-bytes", peak - ctx.statistic("peak-lx-bytes"));
  }
  return true;
}

} // namespace

const PassInfo &lxPlanPass() {
  static const PassInfo info{
      "lx-plan",
      "LX planning: each op's scratchpad region on its cores",
      "every op that runs kernels has an `lx` region inside LX; ops of one "
      "phase on a common core have disjoint regions.",
      {},
      {
          {"regions-planned", "LX regions given to ops"},
          {"peak-lx-bytes", "largest LX in use on a core in one phase"},
      },
      [](Graph &graph, PassContext &ctx) {
        return passResult(lxPlanRun(graph, ctx));
      },
      [](const Graph &graph, const PassContext &, DiagnosticEngine &diags) {
        return checkMappings(graph, diags, true, true, false);
      },
  };
  return info;
}

} // namespace spyre::compiler
