// The `divide` pass (work division): the cores of each op. `strategy=cost` asks
//  the matmul planner for the grid that minimises its time estimate (PT
//  rate with the pass-efficiency law, memory bandwidth shared by the
//  active cores, DMA latency), which may use fewer cores than the chip
//  has when more would only add memory traffic; row ops take up to one
//  core per row, data movers (transposes, relayouts, reshapes that move
//  sticks) one core per 32 result sticks, since below that a core's time
//  is DMA latency. `strategy=all-cores` puts every op on every core. With
//  `fuse-bias`, an add of a bias vector to a matmul's only use is folded
//  into the matmul. With `fuse-elementwise`, a chain of elementwise ops
//  runs as one kernel on the first op's cores (the intermediates stay in
//  LX): each op's result is used only by the next op of the chain, is no
//  graph output and has the chain's shape, dtype and layout, and every
//  other operand is computed before the chain's first op and has that
//  shape, or is one row of its last dim, or one element. The first op's
//  mapping lists the others in `chain`; each of them has `fused_into`.
//  `all-cores` is the naive division: its matmuls also get
//  `share_a = false, keep_b = false` (every core loads its own
//  operands), which the tile pass keeps, and every op it divides gets
//  `overlap = false` (a core's loads, compute and stores run one after
//  another).
//
// Part of planning: how a laid-out graph runs on the chip, recorded as each
// op's `mapping` annotation (compiler/plan/Mapping.h) for emission. The
// pass keeps a decision the op's mapping already has (a replayed mapping
// file) after checking it, and makes the ones it lacks. Views
// (compiler/plan/KernelChoice.h isFreeView), adds folded into a matmul and
// the ops after the first of an elementwise chain get no cores.
#pragma once

#include "compiler/pm/Pass.h"

namespace spyre::compiler {

const PassInfo &dividePass();

} // namespace spyre::compiler
