// Fuzz target `sim`: every program that assembles (built-in config) runs on
// the simulator to its end or to findings, never to a crash, and its timing
// does not depend on the numbers (SimCheck.h).
#include "FuzzTarget.h"
#include "SimCheck.h"

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "support/Diagnostic.h"

using namespace spyre;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const hw::HwConfig &config = hw::builtinConfig();
  DiagnosticEngine diags;
  isa::Program program;
  try {
    program = isa::assemble(fuzz::asText(data, size), "fuzz.s", config, diags);
  } catch (const UserError &) {
    return 0;
  }
  if (diags.hasErrors())
    return 0;
  fuzz::checkSimulation(config, program);
  return 0;
}
