// Emission: the work of the last pass, `emit` (compiler/passes/Emit.h).
// Turns a graph that the layout and planning passes have annotated (every
// value a `layout`, every op a `mapping`) into a program: one device
// tensor per stored value, and the kernels of compiler/codegen for every
// op, on the cores, LX region, tiles and phase its mapping gives.
//
// What each op becomes:
//  - matmul: the matmul kernel; batch dims of A collapse into M when B has
//    none, otherwise each batch's product runs on its own group of cores
//    (rounds of as many batches as there are groups). An add of a bias
//    vector that the planner folded into the matmul (`fuse_bias`) is done
//    by the kernel.
//  - elementwise ops, softmax, layernorm, rmsnorm, reductions: the row
//    kernels, on the last dimension; a softmax or reduction on another axis
//    runs between two permutations.
//  - reshape, squeeze, unsqueeze and split are views of their operand's
//    memory where the bytes are the same (isFreeView), as is a transpose
//    that only undoes the order of a head split's reshape; otherwise, as
//    transpose, concat and relayout, they move sticks with the transpose and
//    relayout kernels.
//  - causal_mask_add: an add of a constant mask (0 or -2^24).
//  - causal_softmax: the fused row kernel, its mask a diagonal table of
//    Q + K sticks (codegen::causalMaskTable), not a tensor of the scores'
//    size.
// Kernels one op runs one after another (a conversion, then the op) are
// separated by a chip-wide barrier, as are phases. Values that are graph
// outputs are written to output tensors in the default layout.
//
// A row of the last dim, a scalar and a column (one value per row, [.., R,
// 1], broadcast in LX by the column kernel) are taken as they are; other
// broadcasts are made explicit by a stride-0 relayout (and a transpose for
// the last dim); elements move between lanes
// through transposes (reshapes, splits and concats inside sticks).
//
// What the device cannot do is a located error naming the op: normalising
// over more than the last dim, a row too wide for LX, a model larger than
// device memory.
#pragma once

#include "compiler/ir/Graph.h"
#include "compiler/pm/Target.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace spyre::compiler {

/// The program of an annotated graph. Records the tiles the kernels chose
/// into each op's mapping (so that a saved mapping replays exactly).
/// `constantData` false leaves the data of the constant tensors out (they
/// are declared, but their bytes are never read): a program for a
/// timing-only run, which computes no numbers. nullopt after reporting
/// errors (a placed value whose layout is not the default one is an error
/// naming it).
std::optional<isa::Program> emitProgram(Graph &graph,
                                        const hw::HwConfig &config,
                                        DiagnosticEngine &diags,
                                        const Placement &placement = {},
                                        bool constantData = true);

} // namespace spyre::compiler
