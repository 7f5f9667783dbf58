// What the planning passes (divide, schedule, lx-plan, tile;
// compiler/passes) share: errors about an op and its mapping, the checks of
// their postconditions, the planner's search for a mapping, and the move of
// a fused chain to its last op.
#pragma once

#include "compiler/codegen/Kernels.h"
#include "compiler/ir/Graph.h"
#include "compiler/plan/Mapping.h"
#include "compiler/pm/Pass.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spyre::compiler {

/// a + b for non-negative values, INT64_MAX past it (for messages about
/// mapping values a file may give at any size).
int64_t saturatingAdd(int64_t a, int64_t b);

/// Reports `message` about `op` and returns false.
bool opFail(const PassContext &ctx, const Graph &graph, const Op &op,
            const std::string &message);

/// A matmul's k_split from a mapping, when it gives one, is a core count
/// the chip has (matmulPlanProblem and planMatmul name the other limits).
bool kSplitFits(const PassContext &ctx, const Graph &graph, const Op &op,
                const OpMapping &m);

/// The matmul plans a mapping leaves to the planner: the sharing decisions
/// and the K split it gives are kept.
codegen::MatmulSearch matmulSearch(const OpMapping &m);

/// Moves `head` and every op of its chain but the last to just before the
/// last, in order, so that the kernel (placed at `head`) comes after every
/// operand of the chain.
void placeChain(Graph &graph, Op &head, const std::vector<std::string> &names);

/// Success or Failure.
PassResult passResult(bool ok);

/// Every op that runs kernels has cores (but on the host), and with `phase`
/// a phase, with `lx` an LX region (but on the host), with `tile` a tile
/// when it is a matmul; reports each op that lacks one.
bool checkMappings(const Graph &graph, DiagnosticEngine &diags, bool phase,
                   bool lx, bool tile);

} // namespace spyre::compiler
