// `spyre compile`: a model (graph JSON or ONNX) to a program file, with the IR
// printable after any pass, the mapping decisions saved or replayed, the
// assembly and the statistics on request.
#include "Commands.h"

#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "hw/HwConfig.h"
#include "isa/Disassembler.h"
#include "run/RunModel.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <iostream>
#include <memory>
#include <sstream>

namespace spyre::cli {

namespace {

/// What main() returns for a bug (an uncaught exception).
constexpr int kInternalErrorExit = 70;

struct CompileCliOptions {
  std::string model;
  std::vector<std::string> shapes; ///< --shape NAME=D0,D1,...
  std::string output;
  std::string config;
  int optLevel = 2;
  std::string emitAsm;
  std::vector<std::string> printIrAfter;
  std::string mappingIn;
  std::string mappingOut;
  bool stats = false;
};

int runCompile(const CompileCliOptions &o) {
  const compiler::ModelLoadOptions load = compiler::shapeOverrideOptions(o.shapes);
  // Refuse unwritable outputs before any work, and leave nothing behind.
  for (const std::string &path : {o.output, o.emitAsm, o.mappingOut})
    if (!path.empty())
      checkWritable(path);
  hw::HwConfig config = hw::loadConfigOrDefault(o.config);
  const compiler::Graph graph = compiler::loadModelOrThrow(o.model, load);

  compiler::CompileOptions co;
  co.optLevel = o.optLevel;
  co.mappingIn = o.mappingIn;
  co.printIrAfter = o.printIrAfter;
  co.irStream = &std::cout;
  DiagnosticEngine diags;
  std::optional<compiler::CompileResult> r =
      compiler::compileGraph(graph, config, co, diags);
  if (!r) {
    std::cout.flush();
    std::cerr << diags.str();
    bool usage = false;
    for (const Diagnostic &d : diags.diagnostics()) {
      if (d.message.find("internal error") != std::string::npos)
        return kInternalErrorExit;
      // A pass name --print-ir-after does not know is a misuse of the flag.
      usage |= d.loc.file == "print-ir-after";
    }
    return static_cast<int>(usage ? ExitCode::Usage : ExitCode::BadInput);
  }
  writeFileAtomic(o.output, isa::writeProgram(r->program));
  if (!o.emitAsm.empty())
    writeFileAtomic(o.emitAsm, isa::disassemble(r->program));
  if (!o.mappingOut.empty())
    writeFileAtomic(o.mappingOut, r->mappingJson);
  if (o.stats)
    std::cout << r->statistics;
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addCompileCommand(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<CompileCliOptions>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Compile a model (graph JSON or ONNX) into a program file");
  cmd->add_option("model", opts->model,
                  "Model file: graph JSON (.json) or ONNX (.onnx)")
      ->required();
  cmd->add_option("-o,--output", opts->output, "Program file to write")
      ->required();
  cmd->add_option("--config", opts->config,
                  "Hardware config YAML (default: the built-in Spyre config)");
  cmd->add_option("-O", opts->optLevel,
                  "Optimisation level: -O0 the naive plan (every op on every "
                  "core, one at a time), -O1 cost-model work division, -O2 "
                  "(default) also overlaps independent ops and folds biases "
                  "into matmuls")
      ->check(CLI::Range(0, 2));
  cmd->add_option("--emit-asm", opts->emitAsm,
                  "Also write the program as assembly");
  cmd->add_option("--print-ir-after", opts->printIrAfter,
                  "Print the IR after these passes (or 'all') to stdout")
      ->delimiter(',');
  cmd->add_option("--mapping-in", opts->mappingIn,
                  "Replay the mapping decisions of this file");
  cmd->add_option("--mapping-out", opts->mappingOut,
                  "Write the mapping decisions (JSON) to this file");
  cmd->add_flag("--stats", opts->stats,
                "Print pass statistics and a program summary");
  cmd->add_option("--shape", opts->shapes,
                  "Static shape of an ONNX input whose dimensions are dynamic: "
                  "NAME=D0,D1,... (repeat for each input)");
  cmd->callback([opts, &dispatch] {
    dispatch.run = [opts] { return runCompile(*opts); };
  });
}

} // namespace spyre::cli
