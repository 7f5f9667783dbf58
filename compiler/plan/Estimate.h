// The planner's estimate of each op's cycles, as a first-class output: what
// the planning passes believe an op costs on its cores, to set beside what
// the simulator measures (`spyre compile --stats`, `spyre run`'s summary and
// statistics JSON; docs/compiler.md "Estimates").
//
// Each op that runs kernels gets one figure, from the model that planned
// it:
//  - matmul: the matmul planner's estimate of the plan its mapping records
//    (codegen::planMatmulWith), once per round of batches when each batch's
//    product runs on its own group of cores, each group with its share of
//    the memory channel (batchConfig);
//  - attention: the attention planner's estimate (codegen::planAttention);
//  - every other op (row kernels, elementwise chains, data movers): the
//    device-memory time of the bytes it reads and writes, in the memory
//    channel's own form ((R + W) / S + alpha x min(R, W), S the sustained
//    read rate, alpha the extra cost of a mixed byte; sim/timing/
//    MemoryChannel.h), plus one load's and one store's latency. These ops
//    are memory-bound on the card (docs/calibration.md), and their planning
//    (one core per row, one per 32 sticks) weighs no other cost.
// Free views, adds folded into a matmul, ops fused into a chain and host
// ops get none.
#pragma once

#include "compiler/ir/Graph.h"
#include "hw/HwConfig.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

/// Which model gave an op's estimate.
enum class EstimateModel : uint8_t {
  MatmulPlanner,    ///< codegen::planMatmulWith
  AttentionPlanner, ///< codegen::planAttention
  Memory,           ///< the bytes at the memory channel's rates
};
std::string_view estimateModelName(EstimateModel model);

struct OpEstimate {
  std::string op;   ///< the op's name (the provenance of its instructions)
  std::string kind; ///< its op kind (`matmul`, `softmax`, ...)
  EstimateModel model = EstimateModel::Memory;
  int64_t cycles = 0;
};

/// The estimate of every op of a planned graph (every op has its mapping
/// and tiles: after the `tile` pass) that runs kernels on the device, in
/// graph order.
std::vector<OpEstimate> estimateOps(const Graph &graph,
                                    const hw::HwConfig &config);

/// Device-memory cycles of `readBytes` read and `writeBytes` written, in
/// the memory channel's form (no latency).
double memoryCycles(const hw::HwConfig &config, double readBytes,
                    double writeBytes);

/// `estimates:` and one line per op (name, kind, model, cycles), the text
/// `spyre compile --stats` ends with.
std::string estimatesText(const std::vector<OpEstimate> &estimates);

} // namespace spyre::compiler
