// `spyre graph check|print|opt|eval`: load and verify a model (graph JSON,
// ONNX or textual IR), print its IR, run compiler passes on it, or run it on
// the host reference evaluator.
#include "Commands.h"
#include "ConfigOptions.h"
#include "IntOption.h"

#include "compiler/import/GraphJson.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/ir/Printer.h"
#include "compiler/pipeline/PassRegistry.h"
#include "compiler/pm/PassManager.h"
#include "compiler/ref/Evaluator.h"
#include "compiler/ref/Random.h"
#include "hw/HwConfig.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/Npy.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace spyre::cli {

namespace {

namespace fs = std::filesystem;
using compiler::Graph;
using compiler::Value;

struct GraphOptions {
  std::string model;
  std::string passes;    ///< opt: --passes PIPELINE
  hw::ConfigSource config; ///< opt: --config FILE, --set KEY=VALUE
  std::vector<std::string> shapes; ///< --shape NAME=D0,D1,...
  std::string output;    ///< print: -o FILE
  std::string inputsDir; ///< eval: --inputs
  std::string outputsDir;
  uint64_t seed = 0;
  bool haveSeed = false;
};

/// 198912 -> "198,912".
std::string withThousands(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

Graph loadModel(const GraphOptions &o) {
  return compiler::loadModelOrThrow(o.model,
                                    compiler::shapeOverrideOptions(o.shapes));
}

std::string plural(size_t n, const std::string &word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

int runCheck(const GraphOptions &o) {
  Graph g = loadModel(o);
  std::cout << g.name() << ": " << plural(g.numOps(), "op") << ", "
            << plural(g.numValues(), "value") << " ("
            << plural(g.numInputs(), "input") << ", "
            << plural(g.numConstants(), "constant") << "), "
            << plural(g.outputs().size(), "output") << ", "
            << withThousands(g.parameterBytes()) << " parameter bytes\n";
  return static_cast<int>(ExitCode::Ok);
}

int runPrint(const GraphOptions &o) {
  checkNotAnInput({o.output}, {o.model});
  Graph g = loadModel(o);
  std::string text = compiler::printGraph(g);
  if (o.output.empty()) {
    std::cout << text;
    return static_cast<int>(ExitCode::Ok);
  }
  writeFileAtomic(o.output, text);
  return static_cast<int>(ExitCode::Ok);
}

/// Files of `values` in `dir`, refusing two tensors that would share one.
std::map<std::string, std::string> filesFor(const std::vector<Value *> &values,
                                            const std::string &dir) {
  std::map<std::string, std::string> byName, owner;
  for (const Value *v : values) {
    std::string file = compiler::tensorFileName(v->name());
    auto [it, fresh] = owner.emplace(file, v->name());
    if (!fresh && it->second != v->name())
      throw UserError(SourceLoc{dir},
                      "tensors '" + it->second + "' and '" + v->name() +
                          "' would both be written to " + file);
    byName[v->name()] = (fs::path(dir) / file).string();
  }
  return byName;
}

compiler::ref::RefTensor readInput(const Value &input, const std::string &path) {
  NpyArray array = readNpy(path);
  compiler::ElementType got = compiler::fromNpyDtype(array.dtype);
  if (got != input.type().elementType)
    throw UserError(SourceLoc{path},
                    "holds " + std::string(compiler::elementTypeName(got)) +
                        " data, input '" + input.name() + "' is " +
                        input.type().str());
  if (array.shape != input.type().shape)
    throw UserError(SourceLoc{path},
                    "has shape " + compiler::shapeStr(array.shape) + ", input '" +
                        input.name() + "' is " + input.type().str());
  return compiler::ref::tensorFromNpy(array);
}

/// `--outputs -`: the one output's .npy to standard output, from the inputs
/// folder (random inputs are written beside the outputs, and there is no
/// folder here).
int evalToStdout(const GraphOptions &o, const Graph &g) {
  if (o.haveSeed)
    throw UserError(SourceLoc{"--outputs"},
                    "'-' has no folder for the random inputs of --seed; give "
                    "a folder, or the inputs with --inputs DIR",
                    ExitCode::Usage);
  if (g.outputs().size() != 1)
    throw UserError(SourceLoc{"--outputs"},
                    "'-' writes the one output to standard output, but the "
                    "model has " +
                        std::to_string(g.outputs().size()) +
                        "; give a folder",
                    ExitCode::Usage);
  compiler::ref::TensorMap inputs;
  std::map<std::string, std::string> files = filesFor(g.inputs(), o.inputsDir);
  for (const Value *v : g.inputs())
    inputs[v->name()] = readInput(*v, files[v->name()]);
  std::vector<compiler::ref::RefTensor> results =
      compiler::ref::evaluateGraph(g, inputs);
  writeFileAtomic(kStdoutPath,
                  serializeNpy(compiler::ref::toNpyF32(results.front())));
  return static_cast<int>(ExitCode::Ok);
}

int runEval(const GraphOptions &o) {
  if (o.inputsDir.empty() && !o.haveSeed)
    throw UserError(SourceLoc{"spyre graph eval"},
                    "give the inputs with --inputs DIR, or --seed N for random "
                    "ones",
                    ExitCode::Usage);
  Graph g = loadModel(o);
  compiler::ref::checkEvaluationMemory(g);
  if (isStdout(o.outputsDir))
    return evalToStdout(o, g);
  std::vector<std::string> outputFiles, inputFiles = {o.model};
  for (const auto &[name, file] : filesFor(g.outputs(), o.outputsDir))
    outputFiles.push_back(file);
  if (!o.inputsDir.empty())
    for (const auto &[name, file] : filesFor(g.inputs(), o.inputsDir))
      inputFiles.push_back(file);
  checkNotAnInput(outputFiles, inputFiles);
  std::error_code ec;
  fs::create_directories(o.outputsDir, ec);
  if (ec)
    throw UserError(SourceLoc{o.outputsDir},
                    "cannot create the output folder: " + ec.message());

  compiler::ref::TensorMap inputs;
  if (o.haveSeed) {
    // Written beside the outputs so that `--inputs` on this folder replays
    // the run.
    std::map<std::string, std::string> files = filesFor(g.inputs(), o.outputsDir);
    for (const Value *v : g.inputs()) {
      NpyArray array = compiler::ref::randomInput(v->type(), o.seed, v->name());
      writeNpy(files[v->name()], array);
      inputs[v->name()] = compiler::ref::tensorFromNpy(array);
      std::cout << v->name() << ": random " << v->type().str() << " (seed "
                << o.seed << ") -> " << files[v->name()] << "\n";
    }
  } else {
    std::map<std::string, std::string> files = filesFor(g.inputs(), o.inputsDir);
    for (const Value *v : g.inputs())
      inputs[v->name()] = readInput(*v, files[v->name()]);
  }

  std::vector<compiler::ref::RefTensor> results =
      compiler::ref::evaluateGraph(g, inputs);
  std::map<std::string, std::string> files = filesFor(g.outputs(), o.outputsDir);
  for (size_t i = 0; i < results.size(); ++i) {
    const Value *v = g.outputs()[i];
    writeNpy(files[v->name()], compiler::ref::toNpyF32(results[i]));
    std::cout << v->name() << ": f32" << compiler::shapeStr(results[i].shape)
              << " -> " << files[v->name()] << "\n";
  }
  return static_cast<int>(ExitCode::Ok);
}

/// `spyre graph opt`: the pipeline given as text run on the model, the IR
/// after it printed (the way mlir-opt runs passes; the FileCheck tests of
/// tests/lit use it).
int runOpt(const GraphOptions &o) {
  checkNotAnInput({o.output}, {o.model, o.config.path});
  DiagnosticEngine diags;
  std::optional<compiler::Pipeline> pipeline =
      compiler::parsePipeline(o.passes, diags, "--passes");
  if (!pipeline) {
    std::cerr << diags.str();
    return static_cast<int>(ExitCode::Usage);
  }
  const hw::HwConfig config = hw::loadConfig(o.config);
  Graph g = loadModel(o);
  compiler::PassManager pm(config);
  pm.addPipeline(*pipeline);
  const compiler::PipelineStatus status = pm.run(g, diags);
  if (status != compiler::PipelineStatus::Success) {
    std::cerr << diags.str();
    return static_cast<int>(status == compiler::PipelineStatus::InternalError
                                ? ExitCode::Internal
                                : ExitCode::BadInput);
  }
  std::cerr << diags.str(); // warnings
  const std::string text = compiler::printGraph(g);
  if (o.output.empty())
    std::cout << text;
  else
    writeFileAtomic(o.output, text);
  return static_cast<int>(ExitCode::Ok);
}

CLI::App *addRunner(CLI::App *parent, Dispatch &dispatch, const char *name,
                    const char *help, std::shared_ptr<GraphOptions> opts,
                    int (*run)(const GraphOptions &)) {
  CLI::App *cmd = parent->add_subcommand(name, help);
  cmd->add_option("model", opts->model,
                  "Model file: graph JSON (.json), ONNX (.onnx) or textual IR "
                  "(.ir)")
      ->required();
  cmd->add_option("--shape", opts->shapes,
                  "Static shape of an ONNX input whose dimensions are dynamic: "
                  "NAME=D0,D1,... (repeat for each input)");
  cmd->callback([&dispatch, opts, run] {
    dispatch.run = [opts, run] { return run(*opts); };
  });
  return cmd;
}

} // namespace

void addGraphCommand(CLI::App &app, Dispatch &dispatch) {
  CLI::App *graph = app.add_subcommand(
      "graph", "Check, print or evaluate a model (graph JSON or ONNX)");
  graph->require_subcommand(1);

  addRunner(graph, dispatch, "check",
            "Load and verify a model; print a one-line summary",
            std::make_shared<GraphOptions>(), runCheck);

  auto printOpts = std::make_shared<GraphOptions>();
  CLI::App *print = addRunner(graph, dispatch, "print",
                              "Print the model as textual IR", printOpts, runPrint);
  print->add_option("-o,--output", printOpts->output,
                    "Write the IR to this file instead of standard output");

  auto optOpts = std::make_shared<GraphOptions>();
  CLI::App *opt = addRunner(
      graph, dispatch, "opt",
      "Run compiler passes given as a pipeline on the model and print the IR "
      "after them (e.g. --passes 'canonicalize,layout')",
      optOpts, runOpt);
  opt->add_option("--passes", optOpts->passes,
                  "The pipeline: pass names separated by commas, each with "
                  "options as NAME{key=value key=value} (docs/passes.md)")
      ->required();
  addConfigOptions(opt, optOpts->config);
  opt->add_option("-o,--output", optOpts->output,
                  "Write the IR to this file instead of standard output");

  auto evalOpts = std::make_shared<GraphOptions>();
  CLI::App *eval = addRunner(
      graph, dispatch, "eval",
      "Run the model on the host reference evaluator (double precision) and "
      "write each output as float32 .npy",
      evalOpts, runEval);
  CLI::Option *inputs = eval->add_option(
      "--inputs", evalOpts->inputsDir,
      "Folder holding one <input name>.npy per graph input");
  eval->add_option("--outputs", evalOpts->outputsDir,
                   "Folder for the <output name>.npy files (created if "
                   "missing; -: the one output's .npy to standard output)")
      ->required();
  CLI::Option *seed = eval->add_option(
      "--seed", evalOpts->seed,
      "Use deterministic random inputs from this seed (also written to the "
      "outputs folder, so --inputs can replay them)");
  seed->check(wholeNumberIn(0, UINT64_MAX));
  seed->excludes(inputs);
  eval->callback([&dispatch, evalOpts, seed] {
    evalOpts->haveSeed = seed->count() > 0;
    dispatch.run = [evalOpts] { return runEval(*evalOpts); };
  });
}

} // namespace spyre::cli
