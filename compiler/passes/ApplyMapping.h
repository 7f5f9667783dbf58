// The `apply-mapping{file=PATH}` pass replays a mapping file: it puts the
// file's decisions (compiler/plan/Mapping.h) on the ops they name. It goes
// before the planning passes (divide, schedule, lx-plan, tile), which keep
// every decision a mapping gives and make only the ones it leaves out.
#pragma once

#include "compiler/pm/Pass.h"

namespace spyre::compiler {

const PassInfo &applyMappingPass();

} // namespace spyre::compiler
