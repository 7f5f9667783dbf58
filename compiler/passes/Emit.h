// The `emit` pass: emission as the last pass of a pipeline. It turns the
// graph that the layout and planning passes annotated into a program
// (compiler/emit/Emission.h says what each op becomes), for the placement
// and constant data of the pipeline's target (compiler/pm/Target.h), and
// leaves the program there; the tile rows the row kernels choose are
// recorded in the ops' mappings, so that a saved mapping replays the same
// program. It needs layout, divide, schedule, lx-plan and tile before it.
#pragma once

#include "compiler/pm/Pass.h"

namespace spyre::compiler {

const PassInfo &emitPass();

} // namespace spyre::compiler
