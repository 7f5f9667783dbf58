// The `lx-plan` pass: each op's LX region on its cores. Ops of one phase whose
//  cores overlap (a mapping file's choice) get disjoint regions (LX split
//  evenly among them); other ops have the whole LX.
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

const PassInfo &lxPlanPass();

} // namespace spyre::compiler
