// `spyre run`: compile a model and simulate it in one step, with inputs from
// a folder or a seed, an optional check of the outputs, and a summary of the
// run (run/RunModel.h; docs/run.md).
#include "Commands.h"
#include "ConfigOptions.h"
#include "IntOption.h"
#include "SimFlags.h"

#include "run/RunModel.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct RunCliOptions {
  run::RunOptions run;
  hw::ConfigSource config;
  std::vector<std::string> shapes; ///< --shape NAME=D0,D1,...
  uint64_t seed = 0;
  bool noFallback = false;
  SimFlags sim;
};

int runRun(RunCliOptions &o, bool haveSeed) {
  o.run.config = o.config.path;
  o.run.configSettings = o.config.settings;
  o.run.configRoot = o.config.baseRoot;
  o.run.load = compiler::shapeOverrideOptions(o.shapes);
  o.run.load.hostFallback = !o.noFallback;
  if (haveSeed)
    o.run.seed = o.seed;
  o.run.traceWindow = o.sim.traceWindow;
  o.run.traceCores = o.sim.traceCores;
  o.run.quantum = o.sim.quantum;
  applySimFlags(o.sim, "spyre run", o.run.sim);
  try {
    const run::RunReport report = run::runModel(o.run);
    // With an output on standard output the summary goes to the side.
    const bool stdoutTaken = isStdout(o.run.outputs) ||
                             isStdout(o.run.stats) || isStdout(o.run.trace);
    (stdoutTaken ? std::cerr : std::cout) << run::summaryText(report);
    return report.exitCode();
  } catch (const run::CompileError &e) {
    std::cout.flush();
    std::cerr << e.diagnostics();
    return static_cast<int>(e.exitCode());
  }
}

} // namespace

void addRunCommand(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<RunCliOptions>();
  CLI::App *cmd = app.add_subcommand(
      "run", "Compile a model and simulate it in one step; check its outputs "
             "and summarise the run");
  cmd->add_option("model", opts->run.model,
                  "Model file: graph JSON (.json) or ONNX (.onnx)")
      ->required();
  addConfigOptions(cmd, opts->config);
  cmd->add_option("-O", opts->run.optLevel,
                  "Optimisation level: -O0 the naive plan, -O1 cost-model work "
                  "division, -O2 (default) overlapped phases")
      ->check(wholeNumberIn(0, 2));
  CLI::Option *inputs = cmd->add_option(
      "--inputs", opts->run.inputs,
      "Folder with NAME.npy per model input (and expected_NAME.npy per "
      "output), or ONNX test data (input_N.pb, output_N.pb)");
  CLI::Option *seed = cmd->add_option(
      "--seed", opts->seed,
      "Use deterministic random inputs from this seed (as `spyre graph eval "
      "--seed`), rounded to what the device stores");
  seed->check(wholeNumberIn(0, UINT64_MAX));
  seed->excludes(inputs);
  cmd->add_option("--outputs", opts->run.outputs,
                  "Folder to write one NAME.npy (float32) per model output "
                  "(-: the one output's .npy to standard output)");
  cmd->add_flag("--check", opts->run.check,
                "Compare the outputs with output_N.pb / expected_NAME.npy of "
                "the inputs folder, else with the host reference (exit 3 on a "
                "mismatch)");
  cmd->add_option("--stats", opts->run.stats,
                  "Write the simulator's statistics JSON to this file (-: "
                  "standard output)");
  cmd->add_option("--trace", opts->run.trace,
                  "Write a Chrome trace-event JSON (Perfetto UI) to this file "
                  "(gzipped when it ends in .gz; -: standard output)");
  cmd->add_flag("--timing-only", opts->run.timingOnly,
                "Skip the numbers: time and check the schedule only");
  addSimFlags(*cmd, opts->sim);
  cmd->add_flag("--no-fallback", opts->noFallback,
                "Make a node the device cannot run an error instead of "
                "running it on the host");
  cmd->add_option("--shape", opts->shapes,
                  "Static shape of an ONNX input whose dimensions are dynamic: "
                  "NAME=D0,D1,... (repeat for each input)");
  cmd->callback([opts, seed, &dispatch] {
    const bool haveSeed = seed->count() > 0;
    dispatch.run = [opts, haveSeed] { return runRun(*opts, haveSeed); };
  });
}

} // namespace spyre::cli
