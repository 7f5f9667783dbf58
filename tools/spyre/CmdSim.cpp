// `spyre sim`: run a program file on the simulated card.
#include "Commands.h"
#include "ConfigOptions.h"
#include "SimFlags.h"

#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/core/Machine.h"
#include "sim/output/RunOutput.h"
#include "sim/core/TensorIo.h"
#include "sim/systemc/ChipModule.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/Gzip.h"

#include <algorithm>
#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct SimCliOptions {
  std::string program;
  hw::ConfigSource config;
  std::string inputs;
  std::string outputs;
  std::string stats;
  std::string trace;
  bool timingOnly = false;
  SimFlags sim;
};

int runSim(const SimCliOptions &o) {
  hw::HwConfig config = hw::loadConfig(o.config);
  isa::Program program = isa::readProgram(readFile(o.program, kProgramFileLimit), o.program);
  if (program.configFingerprint != config.fingerprint())
    throw UserError(SourceLoc{o.program},
                    "compiled for config " +
                        hw::fingerprintString(program.configFingerprint) +
                        " but the simulated config " +
                        describeConfig(o.config) +
                        " is " + hw::fingerprintString(config.fingerprint()) +
                        "; recompile, or pass the config it was compiled for");
  // A file with the right fingerprint may still have been made by hand.
  if (std::string misfit = isa::checkProgramFits(program, config); !misfit.empty())
    throw UserError(SourceLoc{o.program}, misfit);
  if (o.timingOnly && !o.outputs.empty())
    throw UserError(SourceLoc{"--outputs"},
                    "--timing-only computes no numbers, so there are no outputs "
                    "to write",
                    ExitCode::Usage);

  const sim::TraceFilter traceFilter = sim::traceFilterOf(
      !o.trace.empty(), o.sim.traceWindow, o.sim.traceCores, config.chip.cores);

  // `--outputs -` writes the one output tensor's .npy to standard output.
  const isa::TensorDecl *stdoutTensor = nullptr;
  if (isStdout(o.outputs)) {
    std::string names;
    size_t count = 0;
    for (const isa::TensorDecl &t : program.tensors)
      if (t.kind == isa::TensorKind::Output) {
        stdoutTensor = &t;
        names += (count++ ? ", " : "") + isa::printableName(t.name);
      }
    if (count != 1)
      throw UserError(SourceLoc{"--outputs"},
                      "'-' writes the one output tensor to standard output, "
                      "but the program has " +
                          std::to_string(count) + " (" + names +
                          "); give a folder",
                      ExitCode::Usage);
  }

  // A long run must not be lost to an output path that cannot be written,
  // nor replace one of its inputs.
  std::vector<std::string> outputs = {o.stats, o.trace};
  std::vector<std::string> inputs = {o.program, o.config.path};
  if (stdoutTensor)
    outputs.push_back(kStdoutPath);
  for (const isa::TensorDecl &t : program.tensors) {
    if (t.kind == isa::TensorKind::Output && !o.outputs.empty() &&
        !stdoutTensor)
      outputs.push_back(sim::tensorFilePath(o.outputs, t));
    if (t.kind == isa::TensorKind::Input && !o.inputs.empty())
      inputs.push_back(sim::tensorFilePath(o.inputs, t));
  }
  checkNotAnInput(outputs, inputs);
  for (const std::string *path : {&o.stats, &o.trace})
    if (!path->empty())
      checkWritable(*path);
  if (!o.outputs.empty() && !stdoutTensor) {
    std::vector<std::string> files;
    for (const isa::TensorDecl &t : program.tensors)
      if (t.kind == isa::TensorKind::Output)
        files.push_back(t.name + ".npy");
    checkWritableFolder(o.outputs, files, "outputs folder");
  }

  if (!o.timingOnly)
    checkHostMemory(sim::numericsMemory(program), physicalMemoryBytes(),
                    SourceLoc{o.program});

  sim::SimOptions options;
  options.numerics = !o.timingOnly;
  applySimFlags(o.sim, "spyre sim", options);
  // Per-instruction records feed the trace and the statistics' per-op
  // figures and critical path.
  options.trace = !o.trace.empty() || !o.stats.empty();
  options.activity = !o.trace.empty();
  sim::Machine machine(config, program, options);
  if (options.numerics)
    sim::loadInputs(program, o.inputs, o.program, machine.deviceMemory());

  sim::runWithSystemC(machine, o.sim.quantum);

  if (stdoutTensor)
    writeFileAtomic(kStdoutPath, serializeNpy(sim::readTensor(
                                     *stdoutTensor, machine.deviceMemory())));
  else if (!o.outputs.empty())
    sim::saveOutputs(program, o.outputs, machine.deviceMemory());
  if (!o.stats.empty())
    writeFileAtomic(o.stats, sim::statsJson(machine));
  if (!o.trace.empty())
    writeFileEncoded(o.trace, [&](ByteSink &out) {
      sim::writeTraceJson(machine, out, traceFilter);
    });
  // With an output on standard output the summary goes to the side.
  const bool stdoutTaken = std::any_of(
      outputs.begin(), outputs.end(),
      [](const std::string &path) { return isStdout(path); });
  (stdoutTaken ? std::cerr : std::cout) << sim::summaryText(machine);
  return machine.findings().empty() ? static_cast<int>(ExitCode::Ok)
                                    : static_cast<int>(ExitCode::VerifyFailed);
}

} // namespace

void addSimCommand(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<SimCliOptions>();
  CLI::App *sim = app.add_subcommand(
      "sim", "Run a program file on the simulated card, check its schedule, "
             "and report cycles");
  sim->add_option("program", opts->program, "Program file (.spyre)")->required();
  addConfigOptions(sim, opts->config);
  sim->add_option("--inputs", opts->inputs,
                  "Folder with one NAME.npy (float32 or float16) per program input");
  sim->add_option("--outputs", opts->outputs,
                  "Folder to write one NAME.npy (float32) per program output "
                  "(-: the one output's .npy to standard output)");
  sim->add_option("--stats", opts->stats,
                  "Write statistics JSON to this file (-: standard output)");
  sim->add_option("--trace", opts->trace,
                  "Write a Chrome trace-event JSON (Perfetto UI) to this file "
                  "(gzipped when it ends in .gz; -: standard output)");
  sim->add_flag("--timing-only", opts->timingOnly,
                "Skip the numbers: time and check the schedule only");
  addSimFlags(*sim, opts->sim);
  sim->callback([opts, &dispatch] {
    dispatch.run = [opts] { return runSim(*opts); };
  });
}

} // namespace spyre::cli
