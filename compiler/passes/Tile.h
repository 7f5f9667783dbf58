// The `tile` pass: matmul grid, tiles and operand sharing (A tiles passed along
//  chains of neighbouring cores over the data ring, B panels kept in LX;
//  codegen::MatmulTiling) for the cores and region the op has; a
//  sharing decision the mapping already has restricts the search (row
//  kernels choose their tile rows inside the region at emission, which
//  records them).
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

const PassInfo &tilePass();

} // namespace spyre::compiler
