// The `schedule` pass: phases. Ops of one phase run together (their streams are
//  not separated by a barrier): an op joins the current phase when it
//  reads nothing the phase makes (through views), the phase is not full
//  and the cores after those of the phase's other ops can take it; it
//  moves there, so that the ops run at the same time. Otherwise it starts
//  a new phase (always with `overlap=false`). Ops of one phase on a common
//  core (from a mapping file) stay correct: emission separates them by a
//  barrier, since a kernel takes most of a core's sync counters.
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

const PassInfo &schedulePass();

} // namespace spyre::compiler
