// A model compiled and simulated in one step (RunModel.h).
#include "run/RunModel.h"

#include "compiler/driver/Compile.h"
#include "compiler/import/GraphJson.h"
#include "compiler/passes/AppendOutputs.h"
#include "compiler/ref/Evaluator.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/core/Machine.h"
#include "sim/core/TensorIo.h"
#include "sim/output/RunOutput.h"
#include "sim/systemc/ChipModule.h"
#include "support/FileIO.h"
#include "support/Gzip.h"
#include "support/TextTable.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

namespace spyre::run {

namespace {

namespace fs = std::filesystem;

/// `head` followed by `tail` along `axis` (equal in every other dimension).
compiler::ref::RefTensor joined(const compiler::ref::RefTensor &head,
                                const compiler::ref::RefTensor &tail,
                                size_t axis) {
  SPYRE_ASSERT(head.shape.size() == tail.shape.size() &&
                   axis < head.shape.size(),
               "joined: tensors of different ranks");
  compiler::ref::RefTensor out;
  out.shape = head.shape;
  out.shape[axis] += tail.shape[axis];
  int64_t outer = 1;
  for (size_t d = 0; d < axis; ++d) {
    SPYRE_ASSERT(head.shape[d] == tail.shape[d], "joined: shapes differ");
    outer *= head.shape[d];
  }
  const auto rowOf = [&](const compiler::ref::RefTensor &t) {
    return outer == 0 ? 0 : t.elementCount() / outer;
  };
  const int64_t headRow = rowOf(head), tailRow = rowOf(tail);
  out.values.reserve(head.values.size() + tail.values.size());
  for (int64_t i = 0; i < outer; ++i) {
    out.values.insert(out.values.end(), head.values.begin() + i * headRow,
                      head.values.begin() + (i + 1) * headRow);
    out.values.insert(out.values.end(), tail.values.begin() + i * tailRow,
                      tail.values.begin() + (i + 1) * tailRow);
  }
  return out;
}
using compiler::Value;

/// Width of the key column of the summary ("findings" and a space or more).
constexpr size_t kKeyWidth = 11;

std::string field(const std::string &key, const std::string &value) {
  return key + std::string(kKeyWidth - key.size(), ' ') + value + "\n";
}

std::string plural(size_t n, const std::string &word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string percent(double fraction) {
  return fmt::format("{:.1f}%", 100.0 * fraction);
}

/// Files written by one run, removed again when a later write fails, so a
/// failed run leaves nothing partial behind. What goes to standard output
/// (`-`) is written last, once every file is in place.
class OutputFiles {
public:
  void createFolder(const std::string &dir) {
    std::error_code ec;
    if (fs::exists(dir, ec))
      return;
    fs::create_directories(dir, ec);
    if (ec)
      throw UserError(SourceLoc{dir},
                      "cannot create outputs folder: " + ec.message());
    createdDir_ = dir;
  }
  void write(const std::string &path, std::string bytes) {
    if (isStdout(path)) {
      toStdout_ = [bytes = std::move(bytes)] {
        writeFileAtomic(kStdoutPath, bytes);
      };
      return;
    }
    place(path, [&] { writeFileAtomic(path, bytes); });
  }
  /// Writes what `produce` makes as it comes, gzipped when `path` ends in
  /// `.gz` (writeFileEncoded). For standard output `produce` runs in
  /// finish(), so what it reads must live until then.
  void writeEncoded(const std::string &path,
                    std::function<void(ByteSink &)> produce) {
    if (isStdout(path)) {
      toStdout_ = [produce = std::move(produce)] {
        writeFileEncoded(kStdoutPath, produce);
      };
      return;
    }
    place(path, [&] { writeFileEncoded(path, produce); });
  }
  /// Writes what goes to standard output, after the files.
  void finish() {
    if (toStdout_)
      toStdout_();
  }
  void rollback() {
    std::error_code ec;
    for (const std::string &path : created_)
      fs::remove(path, ec);
    if (!createdDir_.empty())
      fs::remove(createdDir_, ec);
  }

private:
  /// Runs `writeIt`, which writes `path`, and remembers a file it created.
  void place(const std::string &path, const std::function<void()> &writeIt) {
    std::error_code ec;
    const bool existed = fs::exists(path, ec);
    writeIt();
    if (!existed)
      created_.push_back(path);
  }

  std::vector<std::string> created_;
  std::string createdDir_;
  std::function<void()> toStdout_;
};

/// Whether `dir` is the folder that holds the model file.
bool isModelFolder(const std::string &dir, const std::string &model) {
  fs::path parent = fs::path(model).parent_path();
  std::error_code ec;
  return fs::equivalent(parent.empty() ? fs::path(".") : parent, dir, ec);
}

std::string firstDiagnostic(const DiagnosticEngine &diags) {
  return diags.diagnostics().empty() ? std::string("the compiler failed")
                                     : diags.diagnostics().front().message;
}

SourceLoc firstLoc(const DiagnosticEngine &diags) {
  return diags.diagnostics().empty() ? SourceLoc{"spyre run"}
                                     : diags.diagnostics().front().loc;
}

} // namespace

CompileError::CompileError(const DiagnosticEngine &diags, bool internal)
    : UserError(firstLoc(diags), firstDiagnostic(diags),
                internal ? ExitCode::Internal : ExitCode::BadInput),
      diagnostics_(diags.str()), count_(diags.diagnostics().size()),
      internal_(internal) {}

double RunReport::simulatedUs() const {
  return static_cast<double>(cycles) / (clockGhz * 1000.0);
}

double RunReport::achievedTflops() const {
  const double seconds = simulatedUs() * 1e-6;
  return seconds > 0 ? 2.0 * static_cast<double>(macs) / seconds / 1e12 : 0.0;
}

double RunReport::achievedGbps() const {
  const double seconds = simulatedUs() * 1e-6;
  return seconds > 0
             ? static_cast<double>(readBytes + writeBytes) / seconds / 1e9
             : 0.0;
}

bool RunReport::checkFailed() const {
  return std::any_of(checks.begin(), checks.end(),
                     [](const OutputCheck &c) { return !c.result.ok(); });
}

int RunReport::exitCode() const {
  return findings.empty() && !checkFailed()
             ? static_cast<int>(ExitCode::Ok)
             : static_cast<int>(ExitCode::VerifyFailed);
}

Tolerance outputTolerance(const std::vector<double> &expected) {
  size_t finite = 0;
  for (double e : expected)
    finite += std::isfinite(e) ? 1 : 0;
  // Each term divided first: a sum of values near the largest double would
  // overflow to infinity, and an infinite tolerance lets every number pass.
  double mean = 0;
  for (double e : expected)
    if (std::isfinite(e))
      mean += std::fabs(e) / static_cast<double>(finite);
  const double scale = kCheckDepth * std::ldexp(1.0, -8);
  return {scale * mean, scale};
}

sim::Roofline runRoofline(const RunReport &r) {
  sim::OpSummary whole;
  whole.first = 0;
  whole.last = r.cycles;
  whole.readBytes = r.readBytes;
  whole.writeBytes = r.writeBytes;
  whole.macs = r.macs;
  whole.cores = r.cores;
  return sim::rooflineOf(whole, r.clockGhz, r.peakMacsPerCyclePerCore,
                         r.memoryPeakGbps);
}

compiler::CompileResult compileOrThrow(const compiler::Graph &graph,
                                       const hw::HwConfig &config,
                                       int optLevel, bool constantData,
                                       const std::string &mappingIn) {
  compiler::CompileOptions co;
  co.optLevel = optLevel;
  co.constantData = constantData;
  co.mappingIn = mappingIn;
  DiagnosticEngine diags;
  compiler::CompileOutcome outcome =
      compiler::compile(graph, config, co, diags);
  if (!outcome.result)
    throw CompileError(diags, outcome.status ==
                                  compiler::CompileStatus::InternalError);
  return std::move(*outcome.result);
}

Simulation simulate(const compiler::Graph &graph, const isa::Program &program,
                    const hw::HwConfig &config, const ModelInputs *inputs,
                    bool useSystemC, uint64_t quantum, const SourceLoc &where,
                    const sim::SimOptions &limits, bool records) {
  if (inputs)
    checkHostMemory(sim::numericsMemory(program), physicalMemoryBytes(), where);

  sim::SimOptions so = limits;
  so.numerics = inputs != nullptr;
  // Per-instruction records give the per-op summary and the statistics'
  // per-op figures and critical path.
  so.trace = records;
  Simulation out;
  out.machine = std::make_unique<sim::Machine>(config, program, so);
  sim::Machine &machine = *out.machine;

  // What the device stores is what the reference is fed: each input goes
  // into device memory and is read back from there.
  if (inputs)
    out.refInputs = writeInputs(graph, program, *inputs, machine);

  if (useSystemC)
    sim::runWithSystemC(machine, quantum);
  else
    machine.run();

  if (inputs)
    for (const Value *v : graph.outputs()) {
      const isa::TensorDecl *t =
          findTensor(program, v->name(), isa::TensorKind::Output);
      SPYRE_ASSERT(t,
                   "the program has no output tensor for '" + v->name() + "'");
      NpyArray device = sim::readTensor(*t, machine.deviceMemory());
      // An output the program appends to an input (the append-outputs
      // pass) is that input, as the device holds it, followed by what the
      // program wrote.
      if (const std::optional<compiler::AppendedOutput> append =
              compiler::appendedOutput(graph, *v);
          append && t->hostShape != v->type().shape) {
        SPYRE_ASSERT(out.refInputs.count(append->input->name()),
                     "output '" + v->name() + "' appends to input '" +
                         append->input->name() + "', which was not given");
        device = compiler::ref::toNpyF32(
            joined(out.refInputs.at(append->input->name()),
                   compiler::ref::tensorFromNpy(device),
                   static_cast<size_t>(append->axis)));
        SPYRE_ASSERT(device.shape == v->type().shape,
                     "output '" + v->name() + "' appended to the wrong shape");
      }
      out.outputs.push_back(std::move(device));
    }
  return out;
}

void recordRun(const sim::Machine &machine, RunReport &report) {
  const hw::HwConfig &config = machine.config();
  const sim::MachineRecords records(machine);
  const sim::Profile &profile = records.profile();
  report.cycles = machine.totalCycles();
  report.clockGhz = config.chip.clockGhz;
  report.macs = machine.macOps();
  report.readBytes = machine.deviceReadBytes();
  report.writeBytes = machine.deviceWriteBytes();
  for (const sim::HostRun &h : machine.hostRuns()) {
    ++report.hostOps;
    report.hostPcieCycles += h.pcieCycles();
    report.hostComputeCycles += h.computeCycles();
  }
  report.cores = config.chip.cores;
  report.peakMacsPerCyclePerCore = profile.peakMacsPerCyclePerCore;
  report.memoryPeakGbps = profile.memoryPeakGbps;
  report.ops = sim::opSummaries(profile, records);
  for (const sim::Finding &f : machine.findings())
    report.findings.push_back(f.str());
  report.findingsDropped = machine.findingsDropped();
}

std::vector<OutputCheck>
checkOutputs(const compiler::Graph &graph, const Simulation &sim,
             const std::map<std::string, ExpectedOutput> &expected) {
  SPYRE_ASSERT(sim.outputs.size() == graph.outputs().size(),
               "checkOutputs needs a simulation with numbers");
  std::vector<compiler::ref::RefTensor> reference;
  const bool needReference = std::any_of(
      graph.outputs().begin(), graph.outputs().end(),
      [&](const Value *v) { return !expected.count(v->name()); });
  if (needReference)
    reference = compiler::ref::evaluateGraph(graph, sim.refInputs);
  std::vector<OutputCheck> checks;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const Value *v = graph.outputs()[i];
    OutputCheck c;
    c.output = v->name();
    c.shape = v->type().shape;
    auto e = expected.find(v->name());
    const std::vector<double> &want =
        e != expected.end() ? e->second.values : reference[i].values;
    if (e != expected.end())
      c.against = e->second.file;
    const std::vector<double> got =
        compiler::ref::tensorFromNpy(sim.outputs[i]).values;
    // Integer outputs (token ids, an arg-max) are exact: a tolerance scaled
    // to their values would pass a neighbouring id.
    c.tolerance = v->type().elementType == compiler::ElementType::I32
                      ? Tolerance{0, 0}
                      : outputTolerance(want);
    c.result = compareTensors(got, want, c.tolerance);
    c.got = got[c.result.worst];
    c.expected = want[c.result.worst];
    checks.push_back(std::move(c));
  }
  return checks;
}

std::string checkLine(const OutputCheck &c, size_t width) {
  const std::string name =
      c.output + std::string(width - std::min(width, c.output.size()), ' ');
  const std::string against =
      c.against.empty() ? std::string("the host reference") : c.against;
  const std::string tolerance =
      c.tolerance.rtol == 0 && c.tolerance.atol == 0
          ? std::string("exact")
          : fmt::format("{:.6g} x (|expected| + {:.6g})", c.tolerance.rtol,
                        c.tolerance.rtol > 0
                            ? c.tolerance.atol / c.tolerance.rtol
                            : 0.0);
  if (c.result.ok())
    return fmt::format("  {}  ok: {} elements against {}, max |difference| "
                       "{:.6g}, tolerance {}\n",
                       name, c.result.elements, against, c.result.maxAbsDiff,
                       tolerance);
  return fmt::format("  {}  MISMATCH: {} of {} elements outside the tolerance "
                     "against {}; worst at {}: got {:.8g}, expected {:.8g}, "
                     "tolerance {:.6g}\n",
                     name, c.result.outside, c.result.elements, against,
                     flatIndexText(c.shape, c.result.worst), c.got, c.expected,
                     c.tolerance.allowed(c.expected));
}

RunReport runModel(const RunOptions &o) {
  if (o.timingOnly && !o.outputs.empty())
    throw UserError(
        SourceLoc{"--outputs"},
        "--timing-only computes no numbers, so there are no outputs "
        "to write",
        ExitCode::Usage);
  SPYRE_ASSERT(o.records || (o.stats.empty() && o.trace.empty()),
               "statistics and traces need the per-instruction records");
  if (o.timingOnly && o.check)
    throw UserError(SourceLoc{"--check"},
                    "--timing-only computes no numbers, so there is nothing to "
                    "check",
                    ExitCode::Usage);
  if (!o.inputs.empty() && o.seed)
    throw UserError(SourceLoc{"--seed"},
                    "makes random inputs; it cannot be given with --inputs",
                    ExitCode::Usage);
  // A long run must not be lost to an output path that cannot be written,
  // nor replace one of its inputs.
  const bool outputsToStdout = isStdout(o.outputs);
  checkNotAnInput({o.stats, o.trace, outputsToStdout ? o.outputs : ""},
                  {o.model, o.config});
  for (const std::string *path : {&o.stats, &o.trace})
    if (!path->empty())
      checkWritable(*path);

  const hw::HwConfig config =
      o.configObject ? *o.configObject
                     : hw::loadConfig({o.config, o.configSettings, o.configRoot});
  const sim::TraceFilter traceFilter = sim::traceFilterOf(
      !o.trace.empty(), o.traceWindow, o.traceCores, config.chip.cores);
  std::unique_ptr<compiler::Graph> loaded;
  if (!o.graph)
    loaded = std::make_unique<compiler::Graph>(
        compiler::loadModelOrThrow(o.model, o.load));
  const compiler::Graph &graph = o.graph ? *o.graph : *loaded;
  const std::vector<Value *> graphInputs = graph.inputs();
  if (!o.timingOnly)
    compiler::ref::checkEvaluationMemory(graph);

  RunReport report;
  report.model = o.model;
  report.modelName = graph.name();
  report.optLevel = o.optLevel;
  report.numerics = !o.timingOnly;
  report.hasInputs = !graphInputs.empty();

  ModelInputs inputs;
  if (report.numerics) {
    if (o.given)
      inputs = *o.given;
    else if (!o.inputs.empty())
      inputs =
          readInputsFolder(graph, o.inputs, isModelFolder(o.inputs, o.model));
    else if (o.seed)
      inputs = randomInputs(graph, *o.seed);
    else if (!graphInputs.empty())
      throw UserError(SourceLoc{"spyre run"},
                      "the model has inputs; give them with --inputs DIR, or "
                      "--seed N for random ones (or run --timing-only)",
                      ExitCode::Usage);
    else // a model without inputs: nothing to read
      inputs = randomInputs(graph, 0);
    report.inputsKind = inputs.kind;
    report.inputsDir = inputs.dir;
    report.seed = inputs.seed;
  }

  std::vector<std::string> outputFiles;
  for (const Value *v : graph.outputs())
    outputFiles.push_back(compiler::tensorFileName(v->name()));
  if (outputsToStdout && graph.outputs().size() != 1) {
    std::string names;
    for (const Value *v : graph.outputs())
      names += (names.empty() ? "" : ", ") + v->name();
    throw UserError(SourceLoc{"--outputs"},
                    "'-' writes the one output to standard output, but the "
                    "model has " +
                        std::to_string(graph.outputs().size()) + " (" + names +
                        "); give a folder",
                    ExitCode::Usage);
  }
  if (!o.outputs.empty() && !outputsToStdout) {
    std::map<std::string, std::string> owner;
    for (const Value *v : graph.outputs()) {
      auto [it, fresh] =
          owner.emplace(compiler::tensorFileName(v->name()), v->name());
      if (!fresh && it->second != v->name())
        throw UserError(SourceLoc{o.outputs},
                        "outputs '" + it->second + "' and '" + v->name() +
                            "' would both be written to " + it->first);
    }
    std::vector<std::string> outputPaths, inputPaths = {o.model, o.config};
    for (const std::string &file : outputFiles)
      outputPaths.push_back((fs::path(o.outputs) / file).string());
    if (!o.inputs.empty())
      for (const Value *v : graphInputs)
        inputPaths.push_back(
            (fs::path(o.inputs) / compiler::tensorFileName(v->name())).string());
    checkNotAnInput(outputPaths, inputPaths);
    checkWritableFolder(o.outputs, outputFiles, "outputs folder");
  }

  using Clock = std::chrono::steady_clock;
  const Clock::time_point compileStart = Clock::now();
  std::optional<compiler::CompileResult> compiled;
  if (!o.program) {
    compiled = compileOrThrow(graph, config, o.optLevel,
                              /*constantData=*/report.numerics, o.mappingIn);
    report.compileStatistics = compiled->statistics;
    for (const compiler::OpEstimate &e : compiled->estimates)
      report.estimates[e.op] = e.cycles;
  }
  const Clock::time_point simulateStart = Clock::now();
  report.compileSeconds =
      std::chrono::duration<double>(simulateStart - compileStart).count();
  sim::SimOptions simOptions = o.sim;
  simOptions.activity = !o.trace.empty(); // what only the trace shows
  const Simulation sim =
      simulate(graph, o.program ? *o.program : compiled->program, config,
               report.numerics ? &inputs : nullptr, o.useSystemC, o.quantum,
               SourceLoc{o.model}, simOptions, o.records);
  report.simulateSeconds =
      std::chrono::duration<double>(Clock::now() - simulateStart).count();
  const sim::Machine &machine = *sim.machine;
  const std::vector<NpyArray> &results = sim.outputs;

  if (o.check) {
    report.checked = true;
    report.checks = checkOutputs(graph, sim, inputs.expected);
  }

  OutputFiles written;
  try {
    if (outputsToStdout)
      written.write(o.outputs, serializeNpy(results[0]));
    if (!o.outputs.empty() && !outputsToStdout) {
      written.createFolder(o.outputs);
      for (size_t i = 0; i < results.size(); ++i)
        written.write((fs::path(o.outputs) / outputFiles[i]).string(),
                      serializeNpy(results[i]));
    }
    if (!o.stats.empty())
      written.write(o.stats, sim::statsJson(machine, &report.estimates));
    if (!o.trace.empty())
      written.writeEncoded(o.trace, [&](ByteSink &out) {
        sim::writeTraceJson(machine, out, traceFilter);
      });
    written.finish();
  } catch (...) {
    written.rollback();
    throw;
  }

  recordRun(machine, report);
  report.records = o.records;
  return report;
}

std::string summaryText(const RunReport &r, size_t topOps) {
  std::string out;
  out += field("model", r.modelName + " (" + r.model + ")");
  out += field("level", "-O" + std::to_string(r.optLevel));
  std::string inputs;
  if (!r.numerics)
    inputs = "none (--timing-only)";
  else if (!r.hasInputs)
    inputs = "none (the model has no inputs)";
  else if (r.inputsKind == InputsKind::Random)
    inputs = "random, seed " + std::to_string(r.seed);
  else if (r.inputsKind == InputsKind::Given)
    inputs = "given in memory";
  else
    inputs =
        r.inputsDir + (r.inputsKind == InputsKind::Npy ? " (.npy files)"
                                                       : " (ONNX test data)");
  out += field("inputs", inputs);
  out += field("cycles", fmt::format("{} ({:.3f} us at {} GHz)", r.cycles,
                                     r.simulatedUs(), r.clockGhz));
  out += field("compute", fmt::format("{:.3f} TFLOP/s DL16 ({} MACs)",
                                      r.achievedTflops(), r.macs));
  out +=
      field("memory", fmt::format("{:.2f} GB/s device memory ({} bytes read, "
                                  "{} bytes written)",
                                  r.achievedGbps(), r.readBytes, r.writeBytes));
  if (r.hostOps > 0) {
    const uint64_t host = r.hostPcieCycles + r.hostComputeCycles;
    out += field("host", fmt::format("{} cycles, {} of the run ({} host op{}: "
                                     "{} PCIe, {} compute)",
                                     host,
                                     percent(r.cycles > 0
                                                 ? static_cast<double>(host) /
                                                       static_cast<double>(r.cycles)
                                                 : 0.0),
                                     r.hostOps, r.hostOps == 1 ? "" : "s",
                                     r.hostPcieCycles, r.hostComputeCycles));
  }
  const sim::Roofline roof = runRoofline(r);
  const double computeRoof =
      2.0 * r.peakMacsPerCyclePerCore * r.cores * r.clockGhz * 1e9 / 1e12;
  if (roof.regime == "-")
    out += field("roofline", "- (no MACs and no device-memory traffic)");
  else if (r.macs > 0)
    out +=
        field("roofline",
              fmt::format("{} at {:.2f} FLOP/B: bound {:.2f} TFLOP/s "
                          "(compute {:.2f} = {} cores x {} MAC/cycle, memory "
                          "{} GB/s), reached {}",
                          roof.regime, roof.intensity, roof.bound, computeRoof,
                          r.cores, r.peakMacsPerCyclePerCore, r.memoryPeakGbps,
                          percent(roof.fraction)));
  else
    out += field("roofline",
                 fmt::format("memory-bound (no MACs): bound {} GB/s, "
                             "reached {}",
                             r.memoryPeakGbps, percent(roof.fraction)));

  if (!r.records) {
    out += "\nops by time: not recorded (the run kept no per-instruction "
           "records)\n\n";
    topOps = 0;
  }
  const size_t shown = std::min(topOps, r.ops.size());
  if (r.records)
    out += fmt::format("\nops by time (top {} of {})\n", shown, r.ops.size());
  // The compiler's estimate beside each op's simulated span, and their ratio.
  std::vector<std::vector<std::string>> rows = {
      {"op", "cycles", "share", "estimate", "est/sim", "MACs", "device B",
       "of bound", "regime"}};
  for (size_t i = 0; i < shown; ++i) {
    const sim::OpSummary &op = r.ops[i];
    const bool none = op.roofline.regime == "-";
    const auto est = r.estimates.find(op.op);
    const bool hasEst = est != r.estimates.end();
    rows.push_back(
        {op.op.empty() ? "(none)" : op.op, std::to_string(op.span()),
         percent(r.cycles ? static_cast<double>(op.span()) /
                                static_cast<double>(r.cycles)
                          : 0.0),
         hasEst ? std::to_string(est->second) : "-",
         hasEst && op.span() > 0
             ? fmt::format("{:.2f}", static_cast<double>(est->second) /
                                         static_cast<double>(op.span()))
             : "-",
         std::to_string(op.macs), std::to_string(op.readBytes + op.writeBytes),
         none ? "-" : percent(op.roofline.fraction), op.roofline.regime});
  }
  if (r.records) {
    out += textTable(
        rows, {true, false, false, false, false, false, false, false, true});
    out += "\n";
  }

  if (!r.numerics) {
    out += field("check", "none (--timing-only computes no numbers)");
  } else if (!r.checked) {
    out += field("check", "not asked for (--check)");
  } else {
    size_t failed = 0;
    size_t width = 0;
    for (const OutputCheck &c : r.checks) {
      failed += c.result.ok() ? 0 : 1;
      width = std::max(width, c.output.size());
    }
    out += field("check", failed == 0
                              ? "ok: " + plural(r.checks.size(), "output") +
                                    " within the tolerance"
                              : fmt::format("MISMATCH in {} of {}", failed,
                                            plural(r.checks.size(), "output")));
    for (const OutputCheck &c : r.checks)
      out += checkLine(c, width);
  }
  out +=
      field("findings", std::to_string(r.findings.size() + r.findingsDropped));
  for (const std::string &f : r.findings)
    out += "  " + f + "\n";
  if (r.findingsDropped > 0)
    out += fmt::format("  ({} more not listed)\n", r.findingsDropped);
  return out;
}

const isa::TensorDecl *findTensor(const isa::Program &program,
                                  const std::string &name,
                                  isa::TensorKind kind) {
  for (const std::string &candidate : {name, name + ".out"})
    for (const isa::TensorDecl &t : program.tensors)
      if (t.kind == kind && t.name == candidate)
        return &t;
  return nullptr;
}

compiler::ref::TensorMap writeInputs(const compiler::Graph &graph,
                                     const isa::Program &program,
                                     const ModelInputs &inputs,
                                     sim::Machine &machine) {
  compiler::ref::TensorMap refInputs;
  for (const Value *v : graph.inputs()) {
    const NpyArray &host = inputs.arrays.at(v->name());
    const isa::TensorDecl *t =
        findTensor(program, v->name(), isa::TensorKind::Input);
    if (!t) {
      refInputs[v->name()] = compiler::ref::tensorFromNpy(host);
      continue;
    }
    auto file = inputs.files.find(v->name());
    sim::writeTensor(*t, host,
                     file == inputs.files.end() ? v->name() : file->second,
                     machine.deviceMemory());
    // Read back in the value's own shape: the program holds a scalar
    // (rank 0) as a tensor of one element.
    NpyArray stored = sim::readTensor(*t, machine.deviceMemory());
    stored.shape = v->type().shape;
    refInputs[v->name()] = compiler::ref::tensorFromNpy(stored);
  }
  return refInputs;
}

} // namespace spyre::run
