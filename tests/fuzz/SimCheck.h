// The simulator check shared by the fuzz targets that reach a runnable
// program (`sim`, `program`, `config`).
#pragma once

#include "hw/HwConfig.h"
#include "isa/Program.h"

namespace spyre::fuzz {

/// Runs `program` on the simulator the way `spyre sim` does, with small
/// cycle and instruction limits so every run ends quickly: timing only, then
/// with numerics (small inputs filled with a fixed pattern), writing the
/// reports and reading back the outputs. Every run must end or give
/// findings, never crash; and the numbers never change the timing
/// (docs/simulator.md#numbers), so both runs must agree on cycles,
/// instructions and findings. `program` must fit `config`
/// (isa::checkProgramFits).
void checkSimulation(const hw::HwConfig &config, const isa::Program &program);

} // namespace spyre::fuzz
