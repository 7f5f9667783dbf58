// `spyre sweep`: design-space sweeps (sweep/Sweep.h; docs/sweep.md). Runs a
// spec's points locally or through Slurm, one point in this process
// (--point, what every backend's workers run), the aggregation of the
// results (--aggregate), the expansion only (--dry-run); and `spyre sweep
// report DIR` for the Pareto front and the charts.
#include "Commands.h"
#include "ConfigOptions.h"
#include "IntOption.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/ParseNumber.h"
#include "sweep/SweepReport.h"
#include "sweep/Slurm.h"
#include "sweep/Sweep.h"

#include <cstdint>
#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct SweepCliOptions {
  std::string spec;
  std::vector<std::string> settings; ///< --set over the spec's base config
  std::string dir;
  int jobs = 1;
  std::string backend = "local";
  bool submit = false;
  bool dryRun = false;
  int64_t point = -1;
  bool aggregate = false;
  bool retryFailed = false;
  std::string maxPoints; ///< as given; empty for the default
};

UserError usage(const std::string &where, const std::string &message) {
  return UserError(SourceLoc{where}, message, ExitCode::Usage);
}

/// --max-points: a whole number from 1, read exactly (no rounding through a
/// double, no wrapping of a negative or too large value).
uint64_t maxPointsOf(const std::string &text) {
  if (text.empty())
    return sweep::kDefaultMaxPoints;
  int64_t value = 0;
  if (parseInt64(text, value) != IntParse::Ok || value < 1)
    throw usage("--max-points",
                "expected a whole number from 1 to " +
                    std::to_string(INT64_MAX) + ", got '" + text + "'");
  return static_cast<uint64_t>(value);
}

int runSweep(const SweepCliOptions &o) {
  if (o.spec.empty())
    throw usage("spyre sweep", "a sweep spec is required: spyre sweep SPEC "
                               "-o DIR (or spyre sweep report DIR)");
  if (o.dir.empty() && !o.dryRun)
    throw usage("spyre sweep", "-o DIR is required: the folder for the "
                               "results (or --dry-run to list the points)");
  if (o.submit && o.backend != "slurm")
    throw usage("--submit", "submits a Slurm job array; it needs "
                            "--backend slurm");
  if (o.backend == "slurm" && (o.point >= 0 || o.aggregate || o.dryRun))
    throw usage("--backend", "--point, --aggregate and --dry-run run here; "
                             "--backend slurm does not apply to them");
  const sweep::SweepPlan plan = sweep::planSweep(o.spec, o.dir, maxPointsOf(o.maxPoints), o.settings);
  if (o.dryRun) {
    std::cout << sweep::dryRunText(plan);
    return static_cast<int>(ExitCode::Ok);
  }
  if (o.point >= 0) {
    if (static_cast<size_t>(o.point) >= plan.points.size())
      throw usage("--point", "point " + std::to_string(o.point) +
                                 " does not exist: the spec expands to " +
                                 std::to_string(plan.points.size()) +
                                 " points (0 to " +
                                 std::to_string(plan.points.size() - 1) + ")");
    return sweep::runPoint(plan, static_cast<size_t>(o.point), std::cout);
  }
  if (o.aggregate)
    return sweep::aggregate(plan, std::cout);

  sweep::SweepRunOptions run;
  run.jobs = o.jobs;
  run.submit = o.submit;
  run.retryFailed = o.retryFailed;
  run.spyreExe = sweep::currentExecutable();
  if (o.backend == "slurm")
    return sweep::runSlurm(plan, run);
  return sweep::runLocal(plan, run, std::cout, std::cerr);
}

int runReport(const std::string &dir, const sweep::SweepReportOptions &o) {
  const sweep::SweepReport report = sweep::sweepReport(dir, o);
  // With the page on standard output, the summary goes to the side.
  (isStdout(report.htmlPath) ? std::cerr : std::cout) << report.text;
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addSweepCommand(CLI::App &app, Dispatch &dispatch) {
  auto o = std::make_shared<SweepCliOptions>();
  CLI::App *cmd = app.add_subcommand(
      "sweep", "Run a design-space sweep: every point of a spec compiled and "
               "simulated in its own process, results in DIR/results.csv");
  cmd->add_option("spec", o->spec, "Sweep spec YAML (docs/sweep.md)");
  addSetOption(cmd, o->settings, "the spec's base config");
  cmd->add_option("-o,--output", o->dir,
                  "Folder for the results (DIR/points/<id>.json, "
                  "DIR/results.csv); a second run resumes");
  cmd->add_option("-j,--jobs", o->jobs, "Points run at once (default 1)")
      ->check(wholeNumberIn(1, 1024));
  cmd->add_option("--backend", o->backend,
                  "local (default): child processes here; slurm: a job array")
      ->check(CLI::IsMember({"local", "slurm"}));
  cmd->add_flag("--submit", o->submit,
                "With --backend slurm: submit the job array");
  CLI::Option *dry = cmd->add_flag(
      "--dry-run", o->dryRun,
      "List the expanded points and the ones the constraints drop; run "
      "nothing");
  CLI::Option *point = cmd->add_option(
      "--point", o->point,
      "Run only point I (0-based, in expansion order) in this process and "
      "write its result; exit 0 even when the point fails");
  point->check(wholeNumberIn(0, INT64_MAX));
  CLI::Option *agg = cmd->add_flag(
      "--aggregate", o->aggregate,
      "Write DIR/results.csv from the results present and print the "
      "summary (exit 3 when points are missing or failed)");
  cmd->add_flag("--retry-failed", o->retryFailed,
                "Run again the points whose result is a failure");
  cmd->add_option("--max-points", o->maxPoints,
                  "Refuse a spec that expands to more points than this, "
                  "before the constraints (default " +
                      std::to_string(sweep::kDefaultMaxPoints) + ")");
  dry->excludes(point)->excludes(agg);
  point->excludes(agg);

  auto report = std::make_shared<std::pair<std::string, sweep::SweepReportOptions>>();
  CLI::App *rep = cmd->add_subcommand(
      "report", "Pareto front and one chart per swept parameter of a sweep's "
                "results, as one HTML page; prints the best points");
  rep->add_option("dir", report->first, "The sweep's folder (-o of the sweep)")
      ->required();
  rep->add_option("-o,--output", report->second.html,
                  "HTML file to write (default DIR/report.html; -: standard "
                  "output)");
  rep->add_option("--x", report->second.x,
                  "Chart only this swept parameter (default: every one)");
  rep->add_option("--series", report->second.series,
                  "The swept parameter that splits each chart into lines "
                  "(default: the next one in the spec)");
  rep->add_option("--cost", report->second.cost,
                  "Cost proxy for the Pareto front: an expression over "
                  "config keys (default: lx.size_bytes * chip.cores)");
  rep->callback([report, &dispatch] {
    dispatch.run = [report] { return runReport(report->first, report->second); };
  });
  cmd->callback([o, rep, &dispatch] {
    if (rep->parsed())
      return;
    dispatch.run = [o] { return runSweep(*o); };
  });
}

} // namespace spyre::cli
