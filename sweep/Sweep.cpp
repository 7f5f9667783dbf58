// The plan's paths and command lines, plan.json, the dry-run listing and the
// aggregation into results.csv (Sweep.h).
#include "sweep/Sweep.h"

#include "support/FileIO.h"
#include "sweep/Results.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>

namespace spyre::sweep {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

/// ` with --set K=V --set ...` for the settings over the base config.
std::string settingsText(const std::vector<std::string> &settings) {
  std::string out;
  for (const std::string &s : settings)
    out += (out.empty() ? " with --set " : " --set ") + s;
  return out;
}

/// `path` made absolute; empty stays empty (a dry run has no folder).
std::string absolute(const std::string &path) {
  if (path.empty())
    return path;
  return fs::absolute(path).lexically_normal().string();
}

ojson valueJson(const hw::ParamValue &v) {
  if (const int64_t *i = std::get_if<int64_t>(&v))
    return *i;
  if (const double *d = std::get_if<double>(&v))
    return *d;
  return std::get<std::string>(v);
}

ojson valuesJson(const SweepPlan &plan, const SweepPoint &p) {
  ojson values = ojson::object();
  for (const std::string &key : plan.columns())
    values[key] = valueJson(columnValue(p, key));
  return values;
}

std::string planJson(const SweepPlan &plan) {
  ojson j;
  j["spec"] = absolute(plan.specPath);
  j["base_config"] = plan.baseConfig;
  if (!plan.baseSettings.empty())
    j["base_settings"] = plan.baseSettings;
  j["numerics"] = plan.numerics;
  j["seed"] = plan.seed;
  if (plan.serve) {
    j["kind"] = "serve";
    j["requests"] = plan.requests;
    j["requests_hash"] = plan.requestsHash;
  }
  ojson axes = ojson::array();
  for (const Axis &a : plan.axes)
    axes.push_back({{"name", a.name}, {"keys", a.keys}, {"values", a.values}});
  j["axes"] = axes;
  j["columns"] = plan.columns();
  ojson points = ojson::array();
  for (const SweepPoint &p : plan.points) {
    points.push_back({{"index", p.index},
                      {"id", p.id},
                      {"model", p.model},
                      {"config_fingerprint", p.configFingerprint},
                      {"values", valuesJson(plan, p)}});
    if (plan.serve)
      points.back()["serve_fingerprint"] = p.serveFingerprint;
  }
  j["points"] = points;
  ojson dropped = ojson::array();
  for (const DroppedPoint &d : plan.dropped)
    dropped.push_back({{"model", d.point.model},
                       {"values", valuesJson(plan, d.point)},
                       {"constraint", d.constraint}});
  j["dropped"] = dropped;
  return j.dump(2) + "\n";
}

/// The first validation error of a point's config or serving knobs, or
/// empty.
std::string configProblem(const SweepPlan &plan, const SweepPoint &p) {
  DiagnosticEngine diags;
  if (hw::validateConfig(p.config, "config", diags))
    return plan.serve
               ? serveSettingsProblem(p.serve, plan.requestsPath.empty())
               : "";
  const Diagnostic &d = diags.diagnostics().front();
  return d.loc.keyPath.empty() ? d.message : d.loc.keyPath + ": " + d.message;
}

std::vector<std::string> pointRow(const SweepPlan &plan, const SweepPoint &p) {
  std::vector<std::string> row = {p.model};
  for (const std::string &key : plan.columns())
    row.push_back(hw::formatValue(columnValue(p, key)));
  return row;
}

} // namespace

std::vector<std::string> SweepPlan::columns() const {
  std::vector<std::string> out;
  for (const Axis &a : axes)
    out.insert(out.end(), a.keys.begin(), a.keys.end());
  if (std::find(out.begin(), out.end(), kOptLevelKey) == out.end())
    out.emplace_back(kOptLevelKey);
  return out;
}

std::string currentExecutable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  SPYRE_ASSERT(!ec, "cannot read /proc/self/exe: " + ec.message());
  return exe.string();
}

std::vector<std::string> pointArgv(const SweepPlan &plan, size_t index,
                                   const std::string &spyreExe) {
  std::vector<std::string> argv = {spyreExe, "sweep", absolute(plan.specPath),
                                   "-o", absolute(plan.outDir)};
  if (plan.maxPoints != kDefaultMaxPoints)
    argv.insert(argv.end(), {"--max-points", std::to_string(plan.maxPoints)});
  for (const std::string &setting : plan.baseSettings)
    argv.insert(argv.end(), {"--set", setting});
  argv.insert(argv.end(), {"--point", std::to_string(index)});
  return argv;
}

std::string pointDir(const SweepPlan &plan, const SweepPoint &point) {
  return (fs::path(plan.outDir) / "points" / point.id).string();
}

std::string resultPath(const SweepPlan &plan, const SweepPoint &point) {
  return (fs::path(plan.outDir) / "points" / (point.id + ".json")).string();
}

ResultState resultState(const SweepPlan &plan, const SweepPoint &point) {
  std::optional<PointResult> r = readResult(plan, point);
  if (!r)
    return ResultState::Missing;
  return r->ok ? ResultState::Ok : ResultState::Failed;
}

void prepareOutDir(const SweepPlan &plan) {
  const fs::path points = fs::path(plan.outDir) / "points";
  std::error_code ec;
  if (fs::exists(plan.outDir, ec) && !fs::is_directory(plan.outDir, ec))
    throw UserError(SourceLoc{plan.outDir},
                    "the output folder is a file, not a folder");
  fs::create_directories(points, ec);
  if (ec)
    throw UserError(SourceLoc{plan.outDir},
                    "cannot create the output folder: " + ec.message());
  writeFileAtomic((fs::path(plan.outDir) / "plan.json").string(),
                  planJson(plan));
}

int aggregate(const SweepPlan &plan, std::ostream &out) {
  prepareOutDir(plan);
  const std::map<size_t, PointResult> results = readResults(plan);
  std::vector<std::string> failed, missing;
  for (const SweepPoint &p : plan.points) {
    auto r = results.find(p.index);
    if (r == results.end())
      missing.push_back(fmt::format("  point {} ({})", p.index, p.id));
    else if (!r->second.ok)
      failed.push_back(
          fmt::format("  point {} ({}): {}", p.index, p.id, r->second.error));
  }
  const std::string csv = (fs::path(plan.outDir) / "results.csv").string();
  writeFileAtomic(csv, resultsCsv(plan, results));

  const size_t ok = results.size() - failed.size();
  out << fmt::format("sweep      {}: {} points, {} ok, {} failed, {} missing\n",
                     plan.specPath, plan.points.size(), ok, failed.size(),
                     missing.size());
  if (!failed.empty()) {
    out << "failed\n";
    for (const std::string &f : failed)
      out << f << "\n";
  }
  if (!missing.empty()) {
    out << "missing\n";
    for (const std::string &m : missing)
      out << m << "\n";
  }
  out << "results    " << csv << "\n";
  return failed.empty() && missing.empty()
             ? static_cast<int>(ExitCode::Ok)
             : static_cast<int>(ExitCode::VerifyFailed);
}

std::string dryRunText(const SweepPlan &plan) {
  std::string out = "sweep      " + plan.specPath + "\n";
  out += fmt::format("points     {} of {}", plan.points.size(), plan.gridSize);
  if (!plan.dropped.empty())
    out += fmt::format(" ({} dropped by the constraints)", plan.dropped.size());
  out += "\n";
  std::string axes;
  for (const Axis &a : plan.axes)
    axes += (axes.empty() ? "" : ", ") +
            fmt::format("{} ({} value{})", a.name, a.values,
                        a.values == 1 ? "" : "s");
  out += "axes       " + (axes.empty() ? std::string("none") : axes) + "\n";
  out += "config     " +
         (plan.baseConfig.empty()
              ? std::string("the built-in config")
              : fs::path(plan.baseConfig).filename().string()) +
         settingsText(plan.baseSettings) +
         (plan.numerics ? fmt::format(", numerics with seed {}", plan.seed)
                        : std::string(", timing only")) +
         "\n";
  if (plan.serve)
    out += "serve      " +
           (plan.requests.empty()
                ? std::string("a generated trace per point")
                : "requests from " + plan.requests) +
           "\n";
  out += "\n";

  const std::vector<std::string> columns = plan.columns();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"index", "id", "model"};
  header.insert(header.end(), columns.begin(), columns.end());
  rows.push_back(header);
  std::vector<std::string> invalid;
  for (const SweepPoint &p : plan.points) {
    std::vector<std::string> row = {std::to_string(p.index), p.id};
    for (std::string &cell : pointRow(plan, p))
      row.push_back(std::move(cell));
    rows.push_back(std::move(row));
    const std::string problem = configProblem(plan, p);
    if (!problem.empty())
      invalid.push_back(fmt::format("  point {}: {}", p.index, problem));
  }
  std::vector<bool> left = {false, true, true};
  for (const std::string &key : columns)
    left.push_back(key == kMappingKey);
  out += textTable(rows, left);

  if (!invalid.empty()) {
    out += "\nconfigs that fail their checks (these points will fail)\n";
    for (const std::string &line : invalid)
      out += line + "\n";
  }
  if (!plan.dropped.empty()) {
    out += "\ndropped by the constraints\n";
    std::vector<std::vector<std::string>> drows;
    std::vector<std::string> dheader = {"model"};
    dheader.insert(dheader.end(), columns.begin(), columns.end());
    dheader.emplace_back("fails");
    drows.push_back(dheader);
    for (const DroppedPoint &d : plan.dropped) {
      std::vector<std::string> row = pointRow(plan, d.point);
      row.push_back(d.constraint);
      drows.push_back(std::move(row));
    }
    std::vector<bool> dleft = {true};
    for (const std::string &key : columns)
      dleft.push_back(key == kMappingKey);
    dleft.push_back(true);
    out += textTable(drows, dleft);
  }
  return out;
}

} // namespace spyre::sweep
