// Compiles a graph JSON model for the built-in config and simulates it
// (timing only) with the installed libraries, printing what `spyre sim
// --timing-only` prints for the same program.
//
//   consumer MODEL.json
#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "hw/HwConfig.h"
#include "sim/core/Machine.h"
#include "sim/output/RunOutput.h"
#include "sim/systemc/ChipModule.h"
#include "support/Diagnostic.h"

#include <iostream>

int main(int argc, char **argv) {
  using namespace spyre;
  if (argc != 2) {
    std::cerr << "usage: consumer MODEL.json\n";
    return 2;
  }
  try {
    const hw::HwConfig &config = hw::builtinConfig();
    const compiler::Graph graph = compiler::loadModelOrThrow(argv[1], {});
    DiagnosticEngine diags;
    compiler::CompileOutcome outcome =
        compiler::compile(graph, config, compiler::CompileOptions{}, diags);
    if (!outcome.result) {
      std::cerr << diags.str();
      return 1;
    }
    sim::SimOptions options;
    options.numerics = false;
    sim::Machine machine(config, outcome.result->program, options);
    sim::runWithSystemC(machine, 1000);
    std::cout << sim::summaryText(machine);
    return machine.findings().empty() ? 0 : 3;
  } catch (const UserError &e) {
    std::cerr << e.diagnostic().str() << "\n";
    return 1;
  }
}
