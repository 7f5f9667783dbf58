// The planning passes: how a laid-out graph runs on the chip, recorded as
// each op's `mapping` annotation (Mapping.h) for emission (Emit.h). Each
// keeps a decision the op's mapping already has (a replayed mapping file)
// after checking it, and makes the ones it lacks.
//
//  - `divide` (work division): the cores of each op. `strategy=cost` asks
//    the matmul planner for the grid that minimises its time estimate (PT
//    rate with the pass-efficiency law, memory bandwidth shared by the
//    active cores, DMA latency), which may use fewer cores than the chip
//    has when more would only add memory traffic; row ops take up to one
//    core per row, data movers (transposes, relayouts, reshapes that move
//    sticks) one core per 32 result sticks, since below that a core's time
//    is DMA latency. `strategy=all-cores` puts every op on every core. With
//    `fuse-bias`, an add of a bias vector to a matmul's only use is folded
//    into the matmul. With `fuse-elementwise`, a chain of elementwise ops
//    runs as one kernel on the first op's cores (the intermediates stay in
//    LX): each op's result is used only by the next op of the chain, is no
//    graph output and has the chain's shape, dtype and layout, and every
//    other operand is computed before the chain's first op and has that
//    shape, or is one row of its last dim, or one element. The first op's
//    mapping lists the others in `chain`; each of them has `fused_into`.
//    `all-cores` is the naive division: its matmuls also get
//    `share_a = false, keep_b = false` (every core loads its own
//    operands), which the tile pass keeps, and every op it divides gets
//    `overlap = false` (a core's loads, compute and stores run one after
//    another).
//  - `schedule`: phases. Ops of one phase run together (their streams are
//    not separated by a barrier): an op joins the current phase when it
//    reads nothing the phase makes (through views), the phase is not full
//    and the cores after those of the phase's other ops can take it; it
//    moves there, so that the ops run at the same time. Otherwise it starts
//    a new phase (always with `overlap=false`). Ops of one phase on a common
//    core (from a mapping file) stay correct: emission separates them by a
//    barrier, since a kernel takes most of a core's sync counters.
//  - `lx-plan`: each op's LX region on its cores. Ops of one phase whose
//    cores overlap (a mapping file's choice) get disjoint regions (LX split
//    evenly among them); other ops have the whole LX.
//  - `tile`: matmul grid, tiles and operand sharing (A tiles passed along
//    chains of neighbouring cores over the data ring, B panels kept in LX;
//    codegen::MatmulTiling) for the cores and region the op has; a
//    sharing decision the mapping already has restricts the search (row
//    kernels choose their tile rows inside the region at emission, which
//    records them).
//
// `apply-mapping{file=PATH}` goes before them to replay a mapping file:
// it puts the file's decisions on the ops they name.
//
// Views (Emit.h isFreeView), adds folded into a matmul and the ops after
// the first of an elementwise chain get no cores.
#pragma once

#include "compiler/passes/Pass.h"
#include "isa/InstrTable.h"

#include <optional>
#include <string>

namespace spyre::compiler {

const PassInfo &applyMappingPass();
const PassInfo &dividePass();
const PassInfo &schedulePass();
const PassInfo &lxPlanPass();
const PassInfo &tilePass();

/// Whether emission runs kernels for `op` (not a free view, not an add
/// folded into a matmul, not an op fused into an elementwise chain).
bool opRunsKernels(const Graph &graph, const Op &op, int stickBytes);

/// An elementwise op as one step on its running value, the operand at
/// `running`: the SFU op, with an immediate (a constant scalar second
/// operand of add, sub and mul; pow's exponent) or the other operand,
/// which with `operandFirst` is the op's first (sub and div). The kernel
/// choice of emission, for a single op and for a step of a chain.
struct ElementwiseStep {
  isa::Opcode op = isa::Opcode::Copy; ///< an SFU op of the unary, scalar or
                                      ///< binary family
  std::optional<float> imm;
  const Value *operand = nullptr;
  bool operandFirst = false;
};
std::optional<ElementwiseStep> elementwiseStep(const Op &op, size_t running);

/// The SFU binary op of add, sub, mul or div.
isa::Opcode binaryOpcode(OpKind kind);

/// The operand of the first op of an elementwise chain that the chain runs
/// on: one with the result's shape and stick dim (the first when both have
/// them; emission converts its dtype if need be); nullopt when the op
/// cannot start a chain.
std::optional<size_t> chainInput(const Op &op);

} // namespace spyre::compiler
