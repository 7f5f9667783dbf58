// The extension module `spyre._spyre` (docs/python.md): the libraries as
// Python objects, and nothing more. A model is compiled by run::compileOrThrow
// and simulated by run::simulate, as `spyre run` does; inputs are checked by
// run::givenInputs, outputs by run::checkOutputs; statistics, traces and
// reports are the simulator's writers. This file converts between NumPy and
// the libraries' arrays, releases the GIL while the libraries work, and turns
// their errors into the exception classes below, which carry the located
// message and the CLI's exit code (1 InputError, 2 UsageError, 3 CheckError,
// 70 InternalError).
#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/ir/Graph.h"
#include "hw/ConfigSchema.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "llm/LlmGenerate.h"
#include "llm/LlmRun.h"
#include "run/Inputs.h"
#include "run/RunModel.h"
#include "sim/analysis/RunReport.h"
#include "sim/output/RunOutput.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/Gzip.h"
#include "support/Npy.h"
#include "sweep/Results.h"
#include "sweep/Sweep.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <exception>
#include <new>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;

namespace spyre::python {

namespace {

// ---------------------------------------------------------------------------
// Errors

/// The exception classes, made once when the module loads; the module's
/// attributes own them.
struct ErrorClasses {
  py::handle base, input, usage, check, internal;
};

ErrorClasses &errorClasses() {
  static ErrorClasses classes;
  return classes;
}

py::handle errorClassFor(int code) {
  const ErrorClasses &c = errorClasses();
  switch (static_cast<ExitCode>(code)) {
  case ExitCode::BadInput:
    return c.input;
  case ExitCode::Usage:
    return c.usage;
  case ExitCode::VerifyFailed:
    return c.check;
  case ExitCode::Internal:
    return c.internal;
  default:
    return c.base;
  }
}

/// Raises the class of `code` with `message` and its `exit_code`.
void setError(int code, std::string message) {
  while (!message.empty() && message.back() == '\n')
    message.pop_back();
  py::handle cls = errorClassFor(code);
  py::object error = cls(message);
  error.attr("exit_code") = code;
  PyErr_SetObject(cls.ptr(), error.ptr());
}

void translateError(std::exception_ptr p) {
  try {
    if (p)
      std::rethrow_exception(p);
  } catch (const run::CompileError &e) {
    setError(static_cast<int>(e.exitCode()), e.diagnostics());
  } catch (const UserError &e) {
    setError(static_cast<int>(e.exitCode()), e.diagnostic().str());
  } catch (const py::error_already_set &) {
    throw; // a Python exception on its way: pybind11 restores it
  } catch (const py::builtin_exception &) {
    throw; // pybind11's own (TypeError, ValueError, ...)
  } catch (const std::bad_alloc &) {
    throw; // MemoryError
  } catch (const std::exception &e) {
    // Anything else escaped the libraries' two error channels: a bug, as
    // the command reports it.
    setError(static_cast<int>(ExitCode::Internal),
             std::string("spyre: internal error: uncaught exception: ") +
                 e.what());
  }
}

UserError usage(const std::string &where, const std::string &message) {
  return UserError(SourceLoc{where}, message, ExitCode::Usage);
}

// ---------------------------------------------------------------------------
// Arrays

std::optional<NpyDtype> npyDtypeOf(const py::dtype &d) {
  if (d.kind() == 'f' && d.itemsize() == 4)
    return NpyDtype::F32;
  if (d.kind() == 'f' && d.itemsize() == 2)
    return NpyDtype::F16;
  if (d.kind() == 'i' && d.itemsize() == 1)
    return NpyDtype::I8;
  if (d.kind() == 'i' && d.itemsize() == 4)
    return NpyDtype::I32;
  return std::nullopt;
}

/// A model input's array: any array-like, float64 taken as float32 for a
/// float input (the device stores DL16 either way); other dtypes as they
/// are, for run::givenInputs to check.
NpyArray toNpy(const py::handle &value, const compiler::Value &input,
               const SourceLoc &loc) {
  py::array a = py::array::ensure(value);
  if (!a)
    throw UserError(loc, "is not an array (give a numpy.ndarray)");
  if (compiler::isFloatType(input.type().elementType) &&
      a.dtype().kind() == 'f' && a.dtype().itemsize() == 8)
    a = a.attr("astype")("float32");
  a = py::array::ensure(a, py::array::c_style);
  const std::optional<NpyDtype> dtype = npyDtypeOf(a.dtype());
  const char order = a.dtype().attr("byteorder").cast<std::string>()[0];
  if (!dtype || order == '>')
    throw UserError(loc, "input '" + input.name() + "' is " +
                             py::str(a.dtype()).cast<std::string>() +
                             "; the device takes float32, float16, int8 or "
                             "int32 (native byte order)");
  NpyArray out;
  out.dtype = *dtype;
  out.shape.assign(a.shape(), a.shape() + a.ndim());
  out.data.assign(static_cast<const char *>(a.data()),
                  static_cast<size_t>(a.nbytes()));
  return out;
}

py::array toNumpy(const NpyArray &a) {
  static const char *const kNames[] = {"float32", "float16", "int8", "int32"};
  const py::dtype dtype(kNames[static_cast<int>(a.dtype)]);
  std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
  py::array out(dtype, shape);
  std::memcpy(out.mutable_data(), a.data.data(), a.data.size());
  return out;
}

// ---------------------------------------------------------------------------
// Config

hw::ParamValue paramValueOf(const py::handle &value, const std::string &key,
                            const std::string &where) {
  // bool is an int in Python; no key takes one.
  if (py::isinstance<py::bool_>(value))
    throw UserError(SourceLoc{where, 0, 0, key},
                    "takes a number or a name, got a bool", ExitCode::Usage);
  if (py::isinstance<py::int_>(value)) {
    try {
      return hw::ParamValue(value.cast<int64_t>());
    } catch (const py::cast_error &) {
      throw UserError(SourceLoc{where, 0, 0, key},
                      py::str(value).cast<std::string>() +
                          " does not fit in a 64-bit integer",
                      ExitCode::Usage);
    }
  }
  if (py::isinstance<py::float_>(value))
    return hw::ParamValue(value.cast<double>());
  if (py::isinstance<py::str>(value))
    return hw::ParamValue(value.cast<std::string>());
  throw UserError(SourceLoc{where, 0, 0, key},
                  "takes a number or a name, got " +
                      py::str(value.get_type().attr("__name__"))
                          .cast<std::string>(),
                  ExitCode::Usage);
}

py::object pythonValue(const hw::ParamValue &v) {
  if (const int64_t *i = std::get_if<int64_t>(&v))
    return py::int_(*i);
  if (const double *d = std::get_if<double>(&v))
    return py::float_(*d);
  return py::str(std::get<std::string>(v));
}

/// Sets every key of `settings`, then validates the whole config once: a
/// value out of range, or keys that disagree, is an InputError and leaves
/// the config as it was.
void setParams(hw::HwConfig &config, const py::dict &settings,
               const std::string &where) {
  hw::HwConfig changed = config;
  for (const auto &[key, value] : settings) {
    const std::string name = py::str(key).cast<std::string>();
    hw::setParam(changed, name, paramValueOf(value, name, where), where);
  }
  DiagnosticEngine diags;
  if (!hw::validateConfig(changed, where, diags))
    diags.throwIfErrors();
  config = std::move(changed);
}

// ---------------------------------------------------------------------------
// Programs and results

/// A model compiled for a config: what a Program holds, shared with the
/// Results of its runs (a simulation refers to the program and config).
struct Compiled {
  std::string model;
  hw::HwConfig config;
  int optLevel = 2;
  compiler::Graph graph;
  compiler::CompileResult result;
};

struct Program {
  std::shared_ptr<const Compiled> compiled;
};

struct Result {
  std::shared_ptr<const Compiled> compiled;
  run::Simulation sim;
  run::RunReport report;
};

Program compileModel(const std::string &model, int level,
                     const std::optional<hw::HwConfig> &config,
                     const std::vector<std::string> &shapes,
                     bool hostFallback) {
  if (level < 0 || level > 2)
    throw usage("spyre.compile", "level is 0, 1 or 2, got " +
                                     std::to_string(level));
  compiler::ModelLoadOptions load = compiler::shapeOverrideOptions(shapes);
  load.hostFallback = hostFallback;
  py::gil_scoped_release unlocked;
  auto c = std::make_shared<Compiled>(Compiled{
      model, config ? *config : hw::builtinConfig(), level,
      compiler::loadModelOrThrow(model, load), {}});
  c->result = run::compileOrThrow(c->graph, c->config, level);
  return Program{std::move(c)};
}

py::dict tensorShapes(const std::vector<compiler::Value *> &values) {
  py::dict out;
  for (const compiler::Value *v : values)
    out[py::str(v->name())] = py::tuple(py::cast(v->type().shape));
  return out;
}

py::dict tensorDtypes(const std::vector<compiler::Value *> &values) {
  py::dict out;
  for (const compiler::Value *v : values)
    out[py::str(v->name())] =
        npyDtypeName(compiler::toNpyDtype(v->type().elementType));
  return out;
}

Result runProgram(const Program &p, const py::object &inputs,
                  bool timingOnly, const std::optional<uint64_t> &seed) {
  const Compiled &c = *p.compiled;
  const std::string where = "Program.run";
  if (timingOnly && (!inputs.is_none() || seed))
    throw usage(where, "timing_only computes no numbers; it takes no inputs "
                       "and no seed");
  if (!inputs.is_none() && seed)
    throw usage(where, "seed makes random inputs; it cannot be given with "
                       "inputs");
  run::ModelInputs given;
  if (!timingOnly) {
    if (seed) {
      given = run::randomInputs(c.graph, *seed);
    } else if (inputs.is_none()) {
      if (!c.graph.inputs().empty())
        throw usage(where, "the model has inputs; give them as a dict of "
                           "arrays, or seed=N for random ones (or "
                           "timing_only=True)");
      given = run::randomInputs(c.graph, 0);
    } else {
      if (!py::isinstance<py::dict>(inputs))
        throw usage(where, "inputs is a dict of arrays by input name");
      std::map<std::string, NpyArray> arrays;
      for (const auto &[key, value] : inputs.cast<py::dict>()) {
        const std::string name = py::str(key).cast<std::string>();
        const compiler::Value *input = nullptr;
        for (const compiler::Value *v : c.graph.inputs())
          input = v->name() == name ? v : input;
        if (input)
          arrays[name] = toNpy(value, *input, SourceLoc{where, 0, 0, name});
        else // givenInputs names it
          arrays[name] = NpyArray{};
      }
      given = run::givenInputs(c.graph, std::move(arrays), where);
    }
  }

  Result r{p.compiled, {}, {}};
  run::RunReport &report = r.report;
  report.model = c.model;
  report.modelName = c.graph.name();
  report.optLevel = c.optLevel;
  report.numerics = !timingOnly;
  report.hasInputs = !c.graph.inputs().empty();
  report.inputsKind = given.kind;
  report.seed = given.seed;
  for (const compiler::OpEstimate &e : c.result.estimates)
    report.estimates[e.op] = e.cycles;
  py::gil_scoped_release unlocked;
  // Several runs may share a process: the plain-C++ event loop, not the
  // SystemC kernel (which elaborates once per process; the same results).
  r.sim = run::simulate(c.graph, c.result.program, c.config,
                        timingOnly ? nullptr : &given, false, 1000,
                        SourceLoc{c.model});
  run::recordRun(*r.sim.machine, report);
  return r;
}

py::dict outputsOf(const Result &r) {
  py::dict out;
  const std::vector<compiler::Value *> &values = r.compiled->graph.outputs();
  for (size_t i = 0; i < r.sim.outputs.size(); ++i)
    out[py::str(values[i]->name())] = toNumpy(r.sim.outputs[i]);
  return out;
}

/// Compares the outputs with `expected` (by output name; the host
/// reference for the others) as `spyre run --check` does: the check lines
/// of the summary on success, a CheckError with them on a mismatch or a
/// schedule finding.
std::string checkResult(Result &r, const py::object &expected) {
  const std::string where = "Result.check";
  const Compiled &c = *r.compiled;
  if (!r.report.numerics)
    throw usage(where, "a timing_only run computed no numbers, so there is "
                       "nothing to check");
  std::map<std::string, run::ExpectedOutput> want;
  if (!expected.is_none()) {
    if (!py::isinstance<py::dict>(expected))
      throw usage(where, "expected is a dict of arrays by output name");
    for (const auto &[key, value] : expected.cast<py::dict>()) {
      const std::string name = py::str(key).cast<std::string>();
      const compiler::Value *output = nullptr;
      for (const compiler::Value *v : c.graph.outputs())
        output = v->name() == name ? v : output;
      const SourceLoc loc{where, 0, 0, name};
      if (!output)
        throw UserError(loc, "names no output of the model");
      py::array a = py::array::ensure(value);
      if (!a)
        throw UserError(loc, "is not an array (give a numpy.ndarray)");
      a = py::array::ensure(a.attr("astype")("float64"), py::array::c_style);
      const std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
      if (shape != output->type().shape)
        throw UserError(loc, "expected output '" + name + "' has shape " +
                                 shapeText(shape) + " but the model gives " +
                                 shapeText(output->type().shape));
      const auto *data = static_cast<const double *>(a.data());
      want[name] = {"expected['" + name + "']",
                    std::vector<double>(data, data + a.size())};
    }
  }
  std::string text;
  {
    py::gil_scoped_release unlocked;
    r.report.checked = true;
    r.report.checks = run::checkOutputs(c.graph, r.sim, want);
    size_t width = 0;
    for (const run::OutputCheck &check : r.report.checks)
      width = std::max(width, check.output.size());
    for (const run::OutputCheck &check : r.report.checks)
      text += run::checkLine(check, width);
    for (const std::string &f : r.report.findings)
      text += "  finding: " + f + "\n";
  }
  if (r.report.exitCode() != 0)
    throw UserError(SourceLoc{c.model},
                    "check failed:\n" + text.substr(0, text.size() - 1),
                    ExitCode::VerifyFailed);
  return text;
}

/// Writes what `make` returns to `path`, checked first as the CLI checks
/// its outputs (never one of the run's inputs; writable).
template <typename Make>
void writeOutput(const Result &r, const std::string &path, Make make) {
  checkNotAnInput({path}, {r.compiled->model});
  checkWritable(path);
  std::string bytes;
  {
    py::gil_scoped_release unlocked;
    bytes = make();
  }
  writeFileAtomic(path, bytes);
}

// ---------------------------------------------------------------------------
// Sweeps

/// Runs a sweep spec in this process: every point that has no result yet
/// in `outDir`, one after another, then results.csv; returns the results
/// table (header, rows of values) and the summary text.
/// One step of a decoder LLM, timing only, as `spyre llm CONFIG --mode
/// MODE` runs it with --embedding --lm-head: from its token ids to its
/// greedy next token. tokens, context and layers <= 0: the command's
/// defaults (512 new tokens in prefill, a context of 4096 in decode, all
/// the model's layers).
py::dict runLlmStep(const std::string &model,
                    const std::optional<hw::HwConfig> &config,
                    const std::string &mode, int64_t batch, int64_t tokens,
                    int64_t context, int64_t layers, int level,
                    bool unrolled) {
  if (mode != "prefill" && mode != "decode")
    throw usage("spyre.llm",
                "mode is 'prefill' or 'decode', got '" + mode + "'");
  if (level < 0 || level > 2)
    throw usage("spyre.llm",
                "level is 0, 1 or 2, got " + std::to_string(level));
  llm::LlmRunOptions o;
  o.modelConfig = model;
  if (config)
    o.hwObject = &*config;
  o.optLevel = level;
  o.timingOnly = true;
  o.useSystemC = false;
  o.records = false;
  o.unrolled = unrolled;
  o.layers = layers > 0 ? layers : 0;
  llm::StepShape &s = o.shape;
  const bool prefill = mode == "prefill";
  s.mode = prefill ? llm::Mode::Prefill : llm::Mode::Decode;
  s.batch = batch;
  s.tokens = tokens > 0 ? tokens : prefill ? 512 : 1;
  s.context = context >= 0 ? context : prefill ? 0 : 4096;
  s.embedding = s.tokenIds = s.lmHead = s.greedy = true;
  llm::LlmReport r;
  {
    py::gil_scoped_release unlocked;
    r = llm::runLlm(o);
  }
  py::dict d;
  d["mode"] = mode;
  d["batch"] = r.shape.batch;
  d["tokens"] = r.shape.tokens;
  d["context"] = r.shape.context;
  d["layers"] = r.shape.layers;
  d["model_layers"] = r.config.numLayers;
  d["cycles"] = r.run.cycles;
  d["step_us"] = r.stepUs();
  d["model_us"] = r.modelUs();
  d["extrapolated"] = r.extrapolated();
  d["bound_us"] = r.boundUs();
  d["memory_bound_us"] = r.memoryBoundUs();
  d["compute_bound_us"] = r.computeBoundUs();
  d["bound_reached"] = r.boundReached();
  d["weights_bytes"] = r.bytes.weights;
  d["cache_bytes"] = r.bytes.cache;
  d["macs"] = r.macs;
  d["program_bytes"] = r.programBytes;
  d["instructions"] = r.instructions;
  d["looped"] = r.looped;
  d["host_ops"] = r.run.hostOps;
  d["findings"] = py::cast(r.run.findings);
  d["summary"] = llm::llmSummaryText(r);
  return d;
}

/// Greedy generation on the persistent device, as `spyre llm CONFIG
/// --generate STEPS` runs it. chunk, context and layers < 0: none (the
/// whole prompt in one step, a prefill, all the model's layers).
py::dict runGenerate(const std::string &model,
                     const std::optional<hw::HwConfig> &config, int64_t steps,
                     int64_t prompt, int64_t batch, int64_t chunk,
                     int64_t context, int64_t layers, int level, bool paged,
                     bool hostSampling, bool timingOnly, bool check,
                     uint64_t seed, bool unrolled) {
  if (level < 0 || level > 2)
    throw usage("spyre.generate",
                "level is 0, 1 or 2, got " + std::to_string(level));
  llm::GenerateOptions o;
  o.modelConfig = model;
  if (config)
    o.hwObject = &*config;
  o.steps = steps;
  o.promptTokens = prompt;
  o.batch = batch;
  if (chunk >= 0)
    o.chunk = chunk;
  if (context >= 0)
    o.context = context;
  o.layers = layers > 0 ? layers : 0;
  o.optLevel = level;
  o.paged = paged;
  o.hostSampling = hostSampling;
  o.timingOnly = timingOnly;
  o.check = check;
  o.seed = seed;
  o.unrolled = unrolled;
  llm::GenerateReport r;
  {
    py::gil_scoped_release unlocked;
    r = llm::runGeneration(o);
  }
  py::list steplist;
  uint64_t ttft = 0, decodeCycles = 0;
  size_t decodeSteps = 0;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const llm::DeviceStep &s = r.steps[i];
    const bool prefill = s.shape.mode == llm::Mode::Prefill;
    py::dict d;
    d["kind"] = prefill ? "prefill" : "decode";
    d["positions"] = py::cast(s.shape.positions);
    d["tokens"] = s.shape.tokens;
    d["program_us"] = r.us(s.programCycles);
    d["inputs_us"] = r.us(s.inputCycles);
    d["launch_us"] = r.us(s.launchCycles);
    d["outputs_us"] = r.us(s.outputCycles);
    d["total_us"] = r.us(s.cycles());
    d["bytes_in"] = s.inputBytes;
    d["bytes_out"] = s.outputBytes;
    d["program_bytes"] = s.programBytes;
    d["findings"] = py::cast(s.run.findings);
    steplist.append(d);
    if (i < r.prefillSteps)
      ttft += s.cycles();
    if (!prefill) {
      decodeCycles += s.cycles();
      ++decodeSteps;
    }
  }
  py::dict d;
  d["prompts"] = py::cast(r.prompts);
  d["tokens"] = py::cast(timingOnly ? std::vector<std::vector<int64_t>>{}
                                    : r.tokens);
  d["steps"] = steplist;
  d["prefill_steps"] = r.prefillSteps;
  d["ttft_us"] = r.prefillSteps > 0 ? py::cast(r.us(ttft)) : py::none();
  d["per_token_us"] = r.us(decodeCycles) / static_cast<double>(decodeSteps);
  d["layers"] = r.layers;
  d["model_layers"] = r.config.numLayers;
  d["capacity"] = r.capacity;
  d["block_tables"] = py::cast(r.blockTables);
  d["weight_bytes"] = r.weightBytes;
  d["weight_load_us"] = r.us(r.weightLoadCycles);
  py::object checks = py::none();
  if (check) {
    py::list l;
    for (const llm::SequenceCheck &c : r.checks) {
      py::dict k;
      k["reference"] = py::cast(c.reference);
      k["tokens_equal"] = c.tokensEqual;
      k["logits_outside"] = c.logitsOutside;
      k["max_abs_diff"] = c.maxAbsDiff;
      k["allowed"] = c.worstAllowed;
      l.append(k);
    }
    checks = l;
  }
  d["check"] = checks;
  d["ok"] = r.exitCode() == 0;
  d["findings"] = r.findings();
  d["summary"] = llm::generationText(r);
  return d;
}

py::tuple runSweep(const std::string &spec, const std::string &outDir,
                   bool retryFailed) {
  std::string summary;
  sweep::ResultsTable table;
  {
    py::gil_scoped_release unlocked;
    const sweep::SweepPlan plan = sweep::planSweep(spec, outDir);
    sweep::prepareOutDir(plan);
    std::ostringstream log;
    for (const sweep::SweepPoint &p : plan.points) {
      const sweep::ResultState state = sweep::resultState(plan, p);
      if (state == sweep::ResultState::Ok ||
          (state == sweep::ResultState::Failed && !retryFailed))
        continue;
      sweep::runPoint(plan, p.index, log, false);
    }
    std::ostringstream out;
    sweep::aggregate(plan, out);
    summary = out.str();
    table = sweep::resultsTable(plan, sweep::readResults(plan));
  }
  py::list rows;
  for (const std::vector<sweep::ResultField> &row : table.rows) {
    py::dict d;
    for (size_t i = 0; i < row.size(); ++i)
      d[py::str(table.header[i])] =
          row[i].value ? pythonValue(*row[i].value) : py::none();
    rows.append(d);
  }
  return py::make_tuple(py::cast(table.header), rows, summary);
}

} // namespace

} // namespace spyre::python

PYBIND11_MODULE(_spyre, m) {
  using namespace spyre;
  using namespace spyre::python;
  m.doc() = "spyre: compiler and cycle-approximate simulator for the IBM "
            "Spyre accelerator (docs/python.md)";

  ErrorClasses &errors = errorClasses();
  errors.base = py::exception<ErrorClasses>(m, "Error");
  errors.input =
      py::exception<ErrorClasses>(m, "InputError", errors.base.ptr());
  errors.usage =
      py::exception<ErrorClasses>(m, "UsageError", errors.base.ptr());
  errors.check =
      py::exception<ErrorClasses>(m, "CheckError", errors.base.ptr());
  errors.internal =
      py::exception<ErrorClasses>(m, "InternalError", errors.base.ptr());
  // Shown as spyre.InputError, where the package exports them.
  for (py::handle cls : {errors.base, errors.input, errors.usage, errors.check,
                         errors.internal})
    cls.attr("__module__") = "spyre";
  py::register_exception_translator(&translateError);

  py::class_<hw::HwConfig>(m, "Config",
                           "A hardware config (docs/config.md): the built-in "
                           "one, or loaded from a YAML file")
      .def(py::init([] { return hw::builtinConfig(); }),
           "The built-in config (configs/spyre.yaml)")
      .def_static(
          "load",
          [](const std::string &path) {
            py::gil_scoped_release unlocked;
            return hw::loadConfigFile(path);
          },
          py::arg("path"), "Reads and validates a config YAML file")
      .def(
          "set",
          [](hw::HwConfig &c, const std::string &key, const py::object &v) {
            py::dict one;
            one[py::str(key)] = v;
            setParams(c, one, "Config.set");
          },
          py::arg("key"), py::arg("value"),
          "Sets one key (`lx.size_bytes`, as `spyre config show` prints "
          "it) and validates the config")
      .def(
          "update",
          [](hw::HwConfig &c, const py::dict &settings) {
            setParams(c, settings, "Config.update");
          },
          py::arg("settings"),
          "Sets several keys at once, then validates the config")
      .def(
          "get",
          [](const hw::HwConfig &c, const std::string &key) {
            const hw::ParamInfo *p = hw::findParam(key);
            if (!p)
              throw UserError(SourceLoc{"Config.get", 0, 0, key},
                              "unknown config key (keys as `spyre config "
                              "show` prints them, e.g. lx.size_bytes)",
                              ExitCode::Usage);
            return pythonValue(p->field.get(c));
          },
          py::arg("key"), "The value of one key")
      .def_property_readonly(
          "fingerprint",
          [](const hw::HwConfig &c) {
            return hw::fingerprintString(c.fingerprint());
          },
          "`0x` + 16 hex digits, as `spyre config fingerprint` prints")
      .def(
          "yaml",
          [](const hw::HwConfig &c) { return hw::toYaml(c, true); },
          "The effective config as `spyre config show` prints it")
      .def("__repr__", [](const hw::HwConfig &c) {
        return "<spyre.Config " + c.name + " " +
               hw::fingerprintString(c.fingerprint()) + ">";
      });

  py::class_<Program>(m, "Program", "A model compiled for a config")
      .def_property_readonly(
          "model", [](const Program &p) { return p.compiled->model; })
      .def_property_readonly(
          "name", [](const Program &p) { return p.compiled->graph.name(); })
      .def_property_readonly(
          "level", [](const Program &p) { return p.compiled->optLevel; })
      .def_property_readonly(
          "config", [](const Program &p) { return p.compiled->config; })
      .def_property_readonly(
          "inputs",
          [](const Program &p) {
            return tensorShapes(p.compiled->graph.inputs());
          },
          "Shape of every model input, by name")
      .def_property_readonly(
          "input_dtypes",
          [](const Program &p) {
            return tensorDtypes(p.compiled->graph.inputs());
          },
          "NumPy dtype name of every model input")
      .def_property_readonly(
          "outputs",
          [](const Program &p) {
            return tensorShapes(p.compiled->graph.outputs());
          },
          "Shape of every model output, by name")
      .def_property_readonly(
          "statistics",
          [](const Program &p) { return p.compiled->result.statistics; },
          "The compiler's pass statistics and program summary")
      .def_property_readonly(
          "mapping",
          [](const Program &p) { return p.compiled->result.mappingJson; },
          "The mapping of every op, as `spyre compile --mapping-out` "
          "writes it")
      .def(
          "save",
          [](const Program &p, const std::string &path) {
            checkNotAnInput({path}, {p.compiled->model});
            writeFileAtomic(path, isa::writeProgram(p.compiled->result.program));
          },
          py::arg("path"), "Writes the program file (.spyre)")
      .def("run", &runProgram, py::arg("inputs") = py::none(),
           py::kw_only(), py::arg("timing_only") = false,
           py::arg("seed") = py::none(),
           "Simulates the program; inputs is a dict of arrays by input name")
      .def("__repr__", [](const Program &p) {
        return "<spyre.Program " + p.compiled->graph.name() + " -O" +
               std::to_string(p.compiled->optLevel) + ">";
      });

  py::class_<Result>(m, "Result", "One simulation of a program")
      .def_property_readonly("outputs", &outputsOf,
                             "Every model output as an array, by name "
                             "(empty for a timing_only run)")
      .def_property_readonly(
          "stats_json",
          [](const Result &r) {
            py::gil_scoped_release unlocked;
            return sim::statsJson(*r.sim.machine, &r.report.estimates);
          },
          "The statistics JSON, as `spyre run --stats` writes it")
      .def_property_readonly(
          "cycles", [](const Result &r) { return r.report.cycles; })
      .def_property_readonly(
          "simulated_us",
          [](const Result &r) { return r.report.simulatedUs(); })
      .def_property_readonly(
          "tflops", [](const Result &r) { return r.report.achievedTflops(); },
          "2 x MACs over the simulated time")
      .def_property_readonly(
          "gbps", [](const Result &r) { return r.report.achievedGbps(); },
          "Device-memory bytes moved over the simulated time")
      .def_property_readonly("macs",
                             [](const Result &r) { return r.report.macs; })
      .def_property_readonly(
          "findings", [](const Result &r) { return r.report.findings; },
          "The schedule checks' findings (races, uninitialised reads, ...)")
      .def_property_readonly(
          "exit_code", [](const Result &r) { return r.report.exitCode(); },
          "What `spyre run` would exit with: 0, or 3 after a finding or a "
          "failed check")
      .def(
          "summary",
          [](const Result &r, size_t top) {
            return run::summaryText(r.report, top);
          },
          py::arg("top") = 5, "The summary `spyre run` prints")
      .def("check", &checkResult, py::arg("expected") = py::none(),
           "Compares the outputs with `expected` (a dict of arrays), or "
           "with the host reference, as `spyre run --check`")
      .def(
          "write_stats",
          [](const Result &r, const std::string &path) {
            writeOutput(r, path, [&] {
              return sim::statsJson(*r.sim.machine, &r.report.estimates);
            });
          },
          py::arg("path"), "Writes the statistics JSON (`spyre run --stats`)")
      .def(
          "write_trace",
          [](const Result &r, const std::string &path) {
            // Streamed to the file as it is made, gzipped for a `.gz` name,
            // as `spyre run --trace` writes it.
            checkNotAnInput({path}, {r.compiled->model});
            checkWritable(path);
            py::gil_scoped_release unlocked;
            writeFileEncoded(path, [&](ByteSink &out) {
              sim::writeTraceJson(*r.sim.machine, out);
            });
          },
          py::arg("path"),
          "Writes the Chrome trace-event JSON (`spyre run --trace`), gzipped "
          "when the name ends in .gz")
      .def(
          "write_report",
          [](const Result &r, const std::string &path, size_t top) {
            writeOutput(r, path, [&] {
              sim::RunReportOptions options;
              options.topOps = top;
              return sim::htmlReport(
                  sim::readRunData(sim::traceJson(*r.sim.machine),
                                   r.compiled->model),
                  options);
            });
          },
          py::arg("path"), py::arg("top") = 20,
          "Writes the HTML report (`spyre report`)");

  m.def("_compile", &compileModel, py::arg("model"), py::arg("level"),
        py::arg("config"), py::arg("shapes"), py::arg("host_fallback"));
  m.def("_sweep", &runSweep, py::arg("spec"), py::arg("out_dir"),
        py::arg("retry_failed"));
  m.def("_llm", &runLlmStep, py::arg("model"), py::arg("config"),
        py::arg("mode"), py::arg("batch"), py::arg("tokens"),
        py::arg("context"), py::arg("layers"), py::arg("level"),
        py::arg("unrolled"));
  m.def("_generate", &runGenerate, py::arg("model"), py::arg("config"),
        py::arg("steps"), py::arg("prompt"), py::arg("batch"),
        py::arg("chunk"), py::arg("context"), py::arg("layers"),
        py::arg("level"), py::arg("paged"), py::arg("host_sampling"),
        py::arg("timing_only"), py::arg("check"), py::arg("seed"),
        py::arg("unrolled"));
}
