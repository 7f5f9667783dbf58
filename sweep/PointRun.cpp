// One sweep point in this process (runPoint in Sweep.h): the effective config
// written and validated, then `spyre run` on it through the run library
// (run::runModel: the model compiled and simulated through the SystemC
// kernel, or the plain-C++ event loop for a process that runs several
// points, timing-only unless the spec asks for numerics), and the figures of
// the run's statistics recorded as the point's result; or, for a serve
// sweep, `spyre serve` (ServePoint.h). Any user error on the way (a config
// that fails its checks, a model the compiler refuses) is the point's
// failure, written to its result like a success.
#include "sweep/Sweep.h"

#include "run/RunModel.h"
#include "support/FileIO.h"
#include "sweep/Results.h"
#include "sweep/ServePoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <ostream>
#include <sstream>

namespace spyre::sweep {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// Cycles between SystemC time steps, as `spyre run` uses.
constexpr uint64_t kQuantum = 1000;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The first diagnostic, and how many more there were.
std::string firstError(const DiagnosticEngine &diags) {
  if (diags.diagnostics().empty())
    return "the compiler failed without a message";
  std::string text = diags.diagnostics().front().str();
  text = text.substr(0, text.find('\n'));
  if (diags.diagnostics().size() > 1)
    text += fmt::format(" (and {} more)", diags.diagnostics().size() - 1);
  return text;
}

/// The compiler's LX plan peak from its statistics text (the `peak-lx-bytes`
/// line of the lx-plan pass), 0 when it is not there.
uint64_t planPeakLx(const std::string &statistics) {
  std::istringstream in(statistics);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    uint64_t value = 0;
    if (words >> name && name == "peak-lx-bytes" && words >> value)
      return value;
  }
  return 0;
}

/// Engines of one kind on the whole chip: PT and SFU are per corelet.
double enginesOfKind(std::string_view kind, const hw::HwConfig &config) {
  const int perCore = kind == "pt" || kind == "sfu"
                          ? config.chip.coreletsPerCore
                          : 1;
  return static_cast<double>(config.chip.cores) * perCore;
}

bool isKind(const std::string &engine, std::string_view kind) {
  return engine == kind ||
         (engine.size() > kind.size() && engine.starts_with(kind) &&
          engine[kind.size()] == '.');
}

/// The figures of the statistics JSON (docs/sim-output.md).
void readStats(const std::string &statsText, const hw::HwConfig &config,
               PointResult &r) {
  const nlohmann::json s = nlohmann::json::parse(statsText);
  r.cycles = s.at("total_cycles").get<uint64_t>();
  r.clockGhz = s.at("clock_ghz").get<double>();
  r.simulatedUs = s.at("simulated_us").get<double>();
  r.macs = s.at("mac_ops").get<uint64_t>();
  r.achievedTflops = s.at("achieved_tflops").get<double>();
  r.readBytes = s.at("dram_read_bytes").get<uint64_t>();
  r.writeBytes = s.at("dram_write_bytes").get<uint64_t>();
  r.memoryGbps = s.at("achieved_dram_gbps").get<double>();
  const double seconds = r.simulatedUs * 1e-6;
  if (seconds > 0) {
    r.readGbps = static_cast<double>(r.readBytes) / seconds / 1e9;
    r.writeGbps = static_cast<double>(r.writeBytes) / seconds / 1e9;
  }
  const double cycles = static_cast<double>(r.cycles);
  if (r.cycles > 0)
    r.memoryUtilization = s.at("memory").at("busy_cycles").get<double>() / cycles;
  std::array<double, kUtilKinds.size()> busy{};
  for (const nlohmann::json &core : s.at("cores")) {
    r.lxPeakBytes = std::max(r.lxPeakBytes,
                             core.at("lx_high_water_bytes").get<uint64_t>());
    for (const nlohmann::json &e : core.at("engines")) {
      const std::string engine = e.at("engine").get<std::string>();
      for (size_t k = 0; k < kUtilKinds.size(); ++k)
        if (isKind(engine, kUtilKinds[k]))
          busy[k] += e.at("busy_cycles").get<double>();
    }
  }
  for (size_t k = 0; k < kUtilKinds.size(); ++k)
    if (r.cycles > 0)
      r.utilization[k] = busy[k] / (cycles * enginesOfKind(kUtilKinds[k], config));
  r.findings = s.at("findings").size() + s.at("findings_dropped").get<uint64_t>();
}

/// The check's outcome, as `spyre run --check` finds it.
std::string checkText(const run::RunReport &report) {
  size_t failed = 0;
  for (const run::OutputCheck &c : report.checks)
    failed += c.result.ok() ? 0 : 1;
  if (failed == 0)
    return "ok";
  return fmt::format("mismatch in {} of {} outputs", failed,
                     report.checks.size());
}

/// A serve library error names the `spyre serve` flag it checks; a sweep
/// point names the serving knob that sets it.
std::string serveErrorText(const UserError &e) {
  static const std::map<std::string, std::string> kKnobs = {
      {"--warmup-shape", "serve.warmup_shapes"},
      {"--num-kv-blocks", "serve.num_kv_blocks"},
      {"--memory-utilization", "serve.memory_utilization"},
      {"--simulated-layers", "serve.simulated_layers"},
      {"--slo", "serve.slo"},
      {"--max-model-len", "serve.max_model_len"},
      {"--max-num-seqs", "serve.max_num_seqs"}};
  Diagnostic d = e.diagnostic();
  auto it = kKnobs.find(d.loc.file);
  if (it != kKnobs.end())
    d.loc.file = it->second;
  const std::string text = d.str();
  return text.substr(0, text.find('\n'));
}

void simulate(const SweepPlan &plan, const SweepPoint &p, bool useSystemC,
              PointResult &r, std::string &note) {
  DiagnosticEngine configDiags;
  if (!hw::validateConfig(p.config, "points/" + p.id + "/config.yaml",
                          configDiags)) {
    r.error = firstError(configDiags);
    return;
  }
  if (plan.serve) {
    runServePoint(plan, p, r, note);
    return;
  }
  // `spyre run` on the point's config: timing only, or random inputs from
  // the seed with the outputs checked; the statistics go to the point's
  // folder, where they stay with keep_stats.
  const std::string dir = pointDir(plan, p);
  const std::string stats = (fs::path(dir) / "stats.json").string();
  run::RunOptions o;
  o.model = p.modelPath;
  o.config = (fs::path(dir) / "config.yaml").string();
  o.optLevel = p.optLevel;
  o.mappingIn = p.mappingPath;
  o.timingOnly = !plan.numerics;
  if (plan.numerics) {
    o.seed = plan.seed;
    o.check = true;
  }
  o.stats = stats;
  o.quantum = kQuantum;
  o.useSystemC = useSystemC;
  run::RunReport report;
  try {
    report = run::runModel(o);
  } catch (const run::CompileError &e) {
    const std::string text = e.diagnostic().str();
    r.error = text.substr(0, text.find('\n'));
    if (e.count() > 1)
      r.error += fmt::format(" (and {} more)", e.count() - 1);
    return;
  }
  r.compileSeconds = report.compileSeconds;
  r.simulateSeconds = report.simulateSeconds;
  r.lxPlanPeakBytes = planPeakLx(report.compileStatistics);
  readStats(readFile(stats, kJsonFileLimit), p.config, r);
  if (!plan.keepStats)
    fs::remove(stats);
  for (const std::string &f : report.findings) {
    if (r.firstFindings.size() == kListedFindings)
      break;
    r.firstFindings.push_back(f);
  }
  if (plan.numerics)
    r.check = checkText(report);
  r.ok = true;
}

} // namespace

int runPoint(const SweepPlan &plan, size_t index, std::ostream &out,
             bool useSystemC) {
  SPYRE_ASSERT(index < plan.points.size(), "point index out of range");
  const SweepPoint &p = plan.points[index];
  const Clock::time_point start = Clock::now();
  const std::string dir = pointDir(plan, p);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw UserError(SourceLoc{dir},
                    "cannot create the point's folder: " + ec.message());
  writeFileAtomic((fs::path(dir) / "config.yaml").string(),
                  hw::toYaml(p.config, true));

  PointResult r = resultFor(plan, p);
  std::string note;
  try {
    simulate(plan, p, useSystemC, r, note);
  } catch (const UserError &e) {
    r.ok = false;
    r.error = serveErrorText(e);
  }
  r.wallSeconds = secondsSince(start);
  writeFileAtomic(resultPath(plan, p), resultJson(r));
  std::string outcome = "failed: " + r.error;
  if (r.ok && plan.serve)
    outcome = fmt::format("ok, {:g} output tokens/s, ITL p99 {:.3f} ms ({})",
                          r.serveFigures.outputThroughput,
                          r.serveFigures.itl.p99, note);
  else if (r.ok)
    outcome = fmt::format("ok, {} cycles", r.cycles);
  out << fmt::format("point {} ({}): {}\n", p.index, p.id, outcome);
  return static_cast<int>(ExitCode::Ok);
}

} // namespace spyre::sweep
