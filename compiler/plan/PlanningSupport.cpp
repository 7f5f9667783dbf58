// What the planning passes share (PlanningSupport.h).
#include "compiler/plan/PlanningSupport.h"

#include "compiler/plan/KernelChoice.h"

#include <limits>

namespace spyre::compiler {

/// a + b for non-negative values, INT64_MAX past it (for messages about
/// mapping values a file may give at any size).
int64_t saturatingAdd(int64_t a, int64_t b) {
  return b > std::numeric_limits<int64_t>::max() - a
             ? std::numeric_limits<int64_t>::max()
             : a + b;
}

bool opFail(const PassContext &ctx, const Graph &graph, const Op &op,
            const std::string &message) {
  (void)ctx.opError(graph, op, message);
  return false;
}

/// A matmul's k_split from a mapping, when it gives one, is a core count
/// the chip has (matmulPlanProblem and planMatmul name the other limits).
bool kSplitFits(const PassContext &ctx, const Graph &graph, const Op &op,
                const OpMapping &m) {
  const int64_t cores = ctx.hw().chip.cores;
  if (m.kSplit <= cores)
    return true;
  return opFail(ctx, graph, op,
                "mapping cannot be used: k_split " + std::to_string(m.kSplit) +
                    " has more partners than the chip has cores (" +
                    std::to_string(cores) + ")");
}

/// The matmul plans a mapping leaves to the planner: the sharing decisions
/// and the K split it gives are kept.
codegen::MatmulSearch matmulSearch(const OpMapping &m) {
  codegen::MatmulSearch s{m.shareA, m.keepB, std::nullopt};
  if (m.kSplit >= 0)
    s.kSplit = static_cast<int>(m.kSplit);
  return s;
}

/// Moves `head` and every op of its chain but the last to just before the
/// last, in order, so that the kernel (placed at `head`) comes after every
/// operand of the chain. Nothing else reads the intermediate values, and
/// each op's own operands were computed before it, so the order stays a
/// valid one.
void placeChain(Graph &graph, Op &head, const std::vector<std::string> &names) {
  std::vector<Op *> moved{&head};
  for (size_t i = 0; i + 1 < names.size(); ++i)
    moved.push_back(graph.findOp(names[i]));
  graph.moveOpsBefore(moved, graph.findOp(names.back()));
}

PassResult passResult(bool ok) {
  return ok ? PassResult::Success : PassResult::Failure;
}

/// Every op that runs kernels has the fields `fields` lists.
bool checkMappings(const Graph &graph, DiagnosticEngine &diags, bool phase,
                   bool lx, bool tile) {
  bool ok = true;
  for (const Op *op : graph.ops()) {
    if (!opRunsKernels(graph, *op))
      continue;
    const OpMapping m = opMapping(*op);
    std::string missing;
    const bool onHost = op->kind() == OpKind::Host;
    if (!onHost && (m.cores < 1 || m.firstCore < 0))
      missing += " cores";
    if (phase && m.phase < 0)
      missing += " phase";
    if (lx && !onHost && m.lx.size() != 2)
      missing += " lx";
    if (tile && runsMatmulKernel(op->kind()) && m.tile.size() != 3)
      missing += " tile";
    if (!missing.empty()) {
      diags.error(graphLoc(graph),
                  "op '" + op->name() + "' has no mapping for:" + missing);
      ok = false;
    }
  }
  return ok;
}

} // namespace spyre::compiler
