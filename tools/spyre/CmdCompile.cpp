// `spyre compile`: a model (graph JSON or ONNX) to a program file, with the IR
// printable after any pass, the mapping decisions saved or replayed, the
// assembly and the statistics on request.
#include "Commands.h"
#include "ConfigOptions.h"
#include "IntOption.h"

#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/import/Onnx.h"
#include "compiler/pipeline/PassRegistry.h"
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

struct CompileCliOptions {
  std::string model;
  std::vector<std::string> shapes; ///< --shape NAME=D0,D1,...
  std::string output;
  hw::ConfigSource config;
  int optLevel = 2;
  std::string emitAsm;
  std::vector<std::string> printIrAfter;
  std::string mappingIn;
  std::string mappingOut;
  std::string passes;
  bool printPipeline = false;
  bool stats = false;
  bool coverage = false;
  bool noFallback = false;
  std::string debugFailPass; ///< hidden: a pass to fail as a bug would
};

/// `spyre compile --coverage`: one line per node (index, name, op type,
/// where it runs, why), then the totals. Exit 1 when a node runs nowhere.
int runCoverage(const CompileCliOptions &o) {
  compiler::OnnxImportOptions io;
  io.shapeOverrides = compiler::shapeOverrideOptions(o.shapes).shapeOverrides;
  io.hostFallback = !o.noFallback;
  if (compiler::modelFormatOf(o.model) != compiler::ModelFormat::Onnx)
    throw UserError(SourceLoc{o.model},
                    "--coverage lists the nodes of an ONNX model (.onnx)",
                    ExitCode::Usage);
  DiagnosticEngine diags;
  std::vector<compiler::OpCoverage> cov =
      compiler::onnxCoverage(o.model, io, diags);
  if (diags.hasErrors()) {
    std::cerr << diags.str();
    return static_cast<int>(ExitCode::BadInput);
  }
  size_t nameWidth = 4, typeWidth = 7;
  for (const compiler::OpCoverage &c : cov) {
    nameWidth = std::max(nameWidth, c.nodeName.size());
    typeWidth = std::max(typeWidth, c.opType.size());
  }
  auto pad = [](std::string s, size_t w) {
    s.resize(std::max(w, s.size()), ' ');
    return s;
  };
  std::ostringstream out;
  out << pad("node", 6) << pad("name", nameWidth + 2)
      << pad("op type", typeWidth + 2) << pad("runs on", 13) << "reason\n";
  size_t device = 0, onHost = 0, none = 0;
  std::vector<std::string> unsupported;
  for (const compiler::OpCoverage &c : cov) {
    std::string where = c.onHost ? "host" : c.supported ? "device" : "unsupported";
    (c.onHost ? onHost : c.supported ? device : none) += 1;
    if (!c.supported)
      unsupported.push_back(std::to_string(c.nodeIndex) +
                            (c.nodeName.empty() ? "" : " '" + c.nodeName + "'") +
                            " (" + c.opType + ")");
    std::string line = pad(std::to_string(c.nodeIndex), 6) +
                       pad(c.nodeName, nameWidth + 2) +
                       pad(c.opType, typeWidth + 2) + pad(where, 13) + c.reason;
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out << line << "\n";
  }
  out << cov.size() << " nodes: " << device << " on the device, " << onHost
      << " on the host, " << none << " unsupported\n";
  std::cout << out.str();
  if (unsupported.empty())
    return static_cast<int>(ExitCode::Ok);
  std::string names;
  for (const std::string &n : unsupported)
    names += (names.empty() ? "" : ", ") + n;
  std::cerr << o.model << ": error: " << unsupported.size()
            << (unsupported.size() == 1 ? " node runs" : " nodes run")
            << " neither on the device nor on the host: node " << names << "\n";
  return static_cast<int>(ExitCode::BadInput);
}

int runCompile(const CompileCliOptions &o) {
  if (o.coverage)
    return runCoverage(o);
  if (o.printPipeline) {
    std::cout << compiler::pipelineForLevel(o.optLevel, o.mappingIn) << "\n";
    return static_cast<int>(ExitCode::Ok);
  }
  if (o.output.empty())
    throw UserError(SourceLoc{"spyre compile"},
                    "--output is required (except with --coverage)",
                    ExitCode::Usage);
  if (!o.debugFailPass.empty() && !compiler::findPass(o.debugFailPass))
    throw UserError(SourceLoc{"debug-fail-pass"},
                    "unknown pass '" + o.debugFailPass +
                        "' (passes: " + compiler::registeredPassNames() + ")",
                    ExitCode::Usage);
  compiler::ModelLoadOptions load = compiler::shapeOverrideOptions(o.shapes);
  load.hostFallback = !o.noFallback;
  // Refuse unwritable outputs before any work, and leave nothing behind.
  checkNotAnInput({o.output, o.emitAsm, o.mappingOut},
                  {o.model, o.config.path, o.mappingIn});
  for (const std::string &path : {o.output, o.emitAsm, o.mappingOut})
    if (!path.empty())
      checkWritable(path);
  hw::HwConfig config = hw::loadConfig(o.config);
  const compiler::Graph graph = compiler::loadModelOrThrow(o.model, load);

  compiler::CompileOptions co;
  co.optLevel = o.optLevel;
  co.mappingIn = o.mappingIn;
  co.pipeline = o.passes;
  co.printIrAfter = o.printIrAfter;
  // With an output on standard output, the text the command prints goes to
  // the side.
  std::ostream &text =
      isStdout(o.output) || isStdout(o.emitAsm) || isStdout(o.mappingOut)
          ? std::cerr
          : std::cout;
  co.irStream = &text;
  co.debugFailPass = o.debugFailPass;
  DiagnosticEngine diags;
  compiler::CompileOutcome outcome =
      compiler::compile(graph, config, co, diags);
  std::optional<compiler::CompileResult> &r = outcome.result;
  if (!r) {
    std::cout.flush();
    std::cerr << diags.str();
    if (outcome.status == compiler::CompileStatus::InternalError)
      return static_cast<int>(ExitCode::Internal);
    bool usage = false;
    // A pass name --print-ir-after does not know is a misuse of the flag.
    for (const Diagnostic &d : diags.diagnostics())
      usage |= d.loc.file == "print-ir-after" || d.loc.file == "--passes";
    return static_cast<int>(usage ? ExitCode::Usage : ExitCode::BadInput);
  }
  // `spyre sim` refuses a program whose input or output cannot name a file.
  for (const isa::TensorDecl &t : r->program.tensors)
    if (std::string why = isa::tensorNameProblem(t.name, t.kind); !why.empty())
      throw UserError(SourceLoc{o.model},
                      std::string(isa::tensorKindName(t.kind)) + " '" +
                          isa::printableName(t.name) + "': " + why +
                          "; rename it in the model");
  writeFileAtomic(o.output, isa::writeProgram(r->program));
  if (!o.emitAsm.empty())
    writeFileAtomic(o.emitAsm, isa::disassemble(r->program));
  if (!o.mappingOut.empty())
    writeFileAtomic(o.mappingOut, r->mappingJson);
  if (o.stats)
    text << r->statistics;
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addCompileCommand(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<CompileCliOptions>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Compile a model (graph JSON, ONNX or IR) into a program file");
  cmd->add_option("model", opts->model,
                  "Model file: graph JSON (.json), ONNX (.onnx) or textual IR "
                  "(.ir)")
      ->required();
  cmd->add_option("-o,--output", opts->output,
                  "Program file to write (required unless --coverage; -: "
                  "standard output)");
  addConfigOptions(cmd, opts->config);
  CLI::Option *level = cmd->add_option("-O", opts->optLevel,
                  "Optimisation level: -O0 the naive plan (every op on every "
                  "core, one at a time), -O1 cost-model work division, -O2 "
                  "(default) also overlaps independent ops and folds biases "
                  "into matmuls")
      ->check(wholeNumberIn(0, 2));
  cmd->add_option("--emit-asm", opts->emitAsm,
                  "Also write the program as assembly");
  cmd->add_option("--print-ir-after", opts->printIrAfter,
                  "Print the IR after these passes (or 'all') to stdout")
      ->delimiter(',');
  CLI::Option *mappingIn = cmd->add_option(
      "--mapping-in", opts->mappingIn,
      "Replay the mapping decisions of this file");
  cmd->add_option("--passes", opts->passes,
                  "Run this pipeline instead of the level's (docs/passes.md; "
                  "--print-pipeline shows a level's): it must end with emit, "
                  "after layout, divide, schedule, lx-plan and tile")
      ->excludes(level)
      ->excludes(mappingIn);
  cmd->add_flag("--print-pipeline", opts->printPipeline,
                "Print the pipeline of the level (-O, with --mapping-in) as "
                "--passes takes it, and exit");
  cmd->add_option("--mapping-out", opts->mappingOut,
                  "Write the mapping decisions (JSON) to this file");
  cmd->add_flag("--stats", opts->stats,
                "Print pass statistics and a program summary");
  cmd->add_flag("--coverage", opts->coverage,
                "List every node of an ONNX model: device, host or "
                "unsupported, and why; no program is written");
  cmd->add_flag("--no-fallback", opts->noFallback,
                "Make a node the device cannot run an error instead of "
                "running it on the host");
  cmd->add_option("--shape", opts->shapes,
                  "Static shape of an ONNX input whose dimensions are dynamic: "
                  "NAME=D0,D1,... (repeat for each input)");
  // Hidden: tests reach the internal-error path (exit 70) through it.
  cmd->add_option("--debug-fail-pass", opts->debugFailPass,
                  "Make this pass fail without a diagnostic, as a bug would")
      ->group("");
  cmd->callback([opts, &dispatch] {
    dispatch.run = [opts] { return runCompile(*opts); };
  });
}

} // namespace spyre::cli
