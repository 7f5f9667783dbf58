// `spyre run` as a library: a model (graph JSON or ONNX) compiled for a
// config and simulated in one step, fed inputs from a folder or a seed
// (run/Inputs.h), its outputs checked against expected files or against the
// host reference evaluator fed the same device-rounded inputs, and a short
// deterministic summary of the run (docs/run.md).
#pragma once

#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/ref/Evaluator.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "run/Inputs.h"
#include "sim/analysis/Summary.h"
#include "sim/core/SimOptions.h"
#include "support/Diagnostic.h"
#include "support/TensorCompare.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spyre::sim {
class Machine;
} // namespace spyre::sim

namespace spyre::run {

struct RunOptions {
  std::string model; ///< the model file, or how to name `graph` in messages
  /// A graph built in memory (not owned); when set, `model` is not read.
  const compiler::Graph *graph = nullptr;
  /// A program compiled from `graph` (not owned), run instead of compiling
  /// `graph` (which still names the inputs and outputs and is the check's
  /// reference); the report's compile statistics and seconds are then empty.
  const isa::Program *program = nullptr;
  /// The inputs to run with (not owned), instead of `inputs` or `seed`.
  const ModelInputs *given = nullptr;
  std::string config; ///< hardware config YAML; empty: the built-in config
  /// A config already loaded, used instead of `config` (the Python
  /// package's spyre.Config); must outlive the run.
  const hw::HwConfig *configObject = nullptr;
  /// `KEY=VALUE` settings over `config` (`--set`; hw::ConfigSource).
  std::vector<std::string> configSettings;
  /// The folder `config`'s bases must lie in (`--config-root`); empty: its
  /// own folder.
  std::string configRoot;
  int optLevel = 2;
  /// A mapping file to replay (`spyre compile --mapping-in`); empty: none.
  std::string mappingIn;
  compiler::ModelLoadOptions load;
  std::string inputs;           ///< inputs folder; empty: random from seed
  std::optional<uint64_t> seed; ///< random inputs (not with `inputs`)
  /// Folder for one NAME.npy per output; `-`: the one output's .npy to
  /// standard output.
  std::string outputs;
  bool check = false;
  std::string stats; ///< statistics JSON file (`-`: standard output)
  std::string trace; ///< trace JSON file (`-`: standard output)
  /// `--trace-window START:END` and `--trace-cores LIST`, as `spyre sim`'s.
  std::string traceWindow;
  std::string traceCores;
  bool timingOnly = false;
  /// Limits, schedule checks and progress, as `spyre sim`'s. `numerics`
  /// follows `timingOnly` and `trace` is always set (the summary's per-op
  /// figures need the records).
  sim::SimOptions sim;
  uint64_t quantum = 1000; ///< cycles between SystemC time steps
  /// false: the run keeps no per-instruction records, only the totals (no
  /// per-op figures): host memory that does not grow with the instructions
  /// executed. Not with `stats` or `trace`.
  bool records = true;
  /// false: the plain-C++ event loop instead of the SystemC kernel. The
  /// results are the same; the kernel can only be elaborated once per
  /// process, so a process that runs several models (a test) needs this.
  bool useSystemC = true;
};

/// The check of one model output.
struct OutputCheck {
  std::string output;  ///< the graph output's name
  std::string against; ///< the expected file, or empty for the host reference
  std::vector<int64_t> shape;
  Tolerance tolerance;
  TensorComparison result;
  double got = 0;      ///< the worst element's value
  double expected = 0; ///< and what was expected there
};

/// What a run did and found: everything the summary prints.
struct RunReport {
  std::string model;     ///< the model file as given
  std::string modelName; ///< the graph's name
  int optLevel = 2;
  InputsKind inputsKind = InputsKind::Random;
  std::string inputsDir;
  uint64_t seed = 0;
  bool numerics = true; ///< false for --timing-only
  bool hasInputs = true;

  uint64_t cycles = 0;
  double clockGhz = 1;
  uint64_t macs = 0;
  uint64_t readBytes = 0; ///< device memory
  uint64_t writeBytes = 0;
  /// Host fallback ops: how many ran, and their PCIe and compute cycles.
  size_t hostOps = 0;
  uint64_t hostPcieCycles = 0;
  uint64_t hostComputeCycles = 0;
  int cores = 0; ///< of the config
  double peakMacsPerCyclePerCore = 0;
  double memoryPeakGbps = 0;
  bool records = true; ///< false: no per-instruction records, no `ops`
  std::vector<sim::OpSummary> ops; ///< longest span first
  /// The compiler's estimate of each op's cycles (compiler/plan/Estimate.h),
  /// set beside the simulated span in the summary and the statistics JSON;
  /// empty when the run was given a program.
  std::map<std::string, int64_t> estimates;

  /// The compiler's statistics text (`spyre compile --stats`), and the
  /// wall-clock seconds of compiling and of simulating, which vary from run
  /// to run and affect nothing else.
  std::string compileStatistics;
  double compileSeconds = 0;
  double simulateSeconds = 0;

  bool checked = false;
  std::vector<OutputCheck> checks; ///< in graph output order
  std::vector<std::string> findings;
  uint64_t findingsDropped = 0;

  double simulatedUs() const;
  /// 2 x MACs over the simulated time, in TFLOP/s.
  double achievedTflops() const;
  /// Device-memory bytes read and written over the simulated time, GB/s.
  double achievedGbps() const;
  bool checkFailed() const;
  /// 0, or 3 (ExitCode::VerifyFailed) for a finding or a failed check.
  int exitCode() const;
};

/// The compiler refused the model; what() is the first diagnostic and
/// `diagnostics` all of them, as `spyre compile` prints them. The exit code
/// is ExitCode::Internal when a pass failed on a bug rather than on the model.
class CompileError : public UserError {
public:
  CompileError(const DiagnosticEngine &diags, bool internal);

  const std::string &diagnostics() const { return diagnostics_; }
  /// How many diagnostics the compiler reported.
  size_t count() const { return count_; }
  /// A pass failed on a bug rather than on the model.
  bool internal() const { return internal_; }

private:
  std::string diagnostics_;
  size_t count_ = 0;
  bool internal_ = false;
};

/// DL16 keeps 9 fraction bits, so every stored value is within 2^-10 of
/// itself, relatively (docs/compiler.md): an output element may differ from
/// its expected value by depth x 2^-8 x (|expected| + mean |expected|), with
/// depth 8 for a model. The mean is over the finite expected values.
constexpr int kCheckDepth = 8;
Tolerance outputTolerance(const std::vector<double> &expected);

/// The roofline of the whole run: compute roof = PT peak x the config's
/// cores, memory roof = FLOP per device-memory byte x the memory peak (for a
/// run without MACs, bandwidth against the memory peak).
sim::Roofline runRoofline(const RunReport &report);

/// Compiles `graph` for `config` at `optLevel`; the compiler's refusal is a
/// CompileError. `constantData` false: constants are declared without their
/// data (CompileOptions::constantData), for a timing-only run.
compiler::CompileResult compileOrThrow(const compiler::Graph &graph,
                                       const hw::HwConfig &config,
                                       int optLevel, bool constantData = true,
                                       const std::string &mappingIn = "");

/// One finished simulation of a program compiled from a graph.
struct Simulation {
  std::unique_ptr<sim::Machine> machine;
  /// Per graph output, in graph order, as the device left them (float32);
  /// empty for a timing-only run.
  std::vector<NpyArray> outputs;
  /// What the host reference is fed: each input as the device stores it.
  compiler::ref::TensorMap refInputs;
};

/// Simulates `program`, compiled from `graph` for `config` (both must
/// outlive the result's machine), with the per-instruction records and the
/// checks, limits and progress of `limits` (its `numerics` and `trace` are
/// set here). `inputs` null is a timing-only run. The numbers' host memory
/// is checked first (a UserError at `where`). `records` false keeps no
/// per-instruction records (RunOptions::records).
Simulation simulate(const compiler::Graph &graph, const isa::Program &program,
                    const hw::HwConfig &config, const ModelInputs *inputs,
                    bool useSystemC, uint64_t quantum, const SourceLoc &where,
                    const sim::SimOptions &limits = {}, bool records = true);

/// The figures of a finished simulation: cycles, bytes, host ops, the ops
/// by time and the findings (the rest of the report is the caller's).
void recordRun(const sim::Machine &machine, RunReport &report);

/// Compares each graph output computed in `sim` with `expected` (by output
/// name) or, for the outputs it lacks, with the host reference fed
/// `sim.refInputs`, within outputTolerance.
std::vector<OutputCheck>
checkOutputs(const compiler::Graph &graph, const Simulation &sim,
             const std::map<std::string, ExpectedOutput> &expected);

/// The summary's line for one check; `width` pads the output's name.
std::string checkLine(const OutputCheck &check, size_t width);

/// Compiles and simulates `options.model`. Every input file is checked and
/// every output path tested for writability before compiling; bad input is
/// a UserError (a CompileError for the compiler's diagnostics) and leaves
/// no file behind. Outputs, statistics and trace are written for exit codes
/// 0 and 3 alike, so a failed check can be inspected.
RunReport runModel(const RunOptions &options);

/// The terminal summary; `topOps` ops are listed.
std::string summaryText(const RunReport &report, size_t topOps = 5);

/// The program tensor of graph value `name` of `kind`, or nullptr: outputs
/// the emitter had to copy are named `NAME.out` (compiler/emit/Emission.cpp).
const isa::TensorDecl *findTensor(const isa::Program &program,
                                  const std::string &name,
                                  isa::TensorKind kind);

/// Puts every graph input into the machine's device memory and returns
/// what the host reference is fed: each input as the device stores it, in
/// the value's own shape (a rank-0 input is one element in the program).
compiler::ref::TensorMap writeInputs(const compiler::Graph &graph,
                                     const isa::Program &program,
                                     const ModelInputs &inputs,
                                     sim::Machine &machine);

} // namespace spyre::run
