// Point results as JSON and the results.csv table (Results.h).
#include "sweep/Results.h"

#include "support/FileIO.h"
#include "support/Nesting.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>

namespace spyre::sweep {

namespace {

using ojson = nlohmann::ordered_json;

ojson valueJson(const hw::ParamValue &v) {
  if (const int64_t *i = std::get_if<int64_t>(&v))
    return *i;
  if (const double *d = std::get_if<double>(&v))
    return *d;
  return std::get<std::string>(v);
}

std::optional<hw::ParamValue> valueFromJson(const nlohmann::json &j) {
  if (j.is_number_integer())
    return hw::ParamValue(j.get<int64_t>());
  if (j.is_number_float())
    return hw::ParamValue(j.get<double>());
  if (j.is_string())
    return hw::ParamValue(j.get<std::string>());
  return std::nullopt;
}

/// Shortest text that reads back to the same double: the same bytes on
/// every machine for the same value.
std::string number(double v) { return fmt::format("{}", v); }

std::string utilColumn(std::string_view kind) {
  std::string name = "util_" + std::string(kind);
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

} // namespace

hw::ParamValue columnValue(const SweepPoint &point, const std::string &key) {
  if (key == kOptLevelKey)
    return hw::ParamValue(static_cast<int64_t>(point.optLevel));
  if (key == kMappingKey)
    return hw::ParamValue(point.mapping);
  if (const ServeKey *k = findServeKey(key))
    return k->get(point.serve);
  const hw::ParamInfo *p = hw::findParam(key);
  SPYRE_ASSERT(p, "result column of an unknown key '" + key + "'");
  return p->field.get(point.config);
}

PointResult resultFor(const SweepPlan &plan, const SweepPoint &point) {
  PointResult r;
  r.index = point.index;
  r.id = point.id;
  r.model = point.model;
  r.modelHash = point.modelHash;
  r.optLevel = point.optLevel;
  r.mapping = point.mapping;
  for (const std::string &key : plan.columns())
    r.parameters.push_back({key, columnValue(point, key)});
  r.numerics = plan.numerics;
  r.configFingerprint = point.configFingerprint;
  r.serve = plan.serve;
  r.serveFingerprint = point.serveFingerprint;
  return r;
}

namespace {

ojson distributionJson(const ServeDistribution &d) {
  return {{"count", d.count}, {"mean", d.mean}, {"p50", d.p50},
          {"p90", d.p90},     {"p99", d.p99}};
}

ServeDistribution distributionFromJson(const nlohmann::json &j) {
  ServeDistribution d;
  d.count = j.at("count").get<int64_t>();
  d.mean = j.at("mean").get<double>();
  d.p50 = j.at("p50").get<double>();
  d.p90 = j.at("p90").get<double>();
  d.p99 = j.at("p99").get<double>();
  return d;
}

ojson serveJson(const ServeFigures &f) {
  ojson j;
  j["requests"] = f.requests;
  j["completed"] = f.completed;
  j["rejected"] = f.rejected;
  j["duration_s"] = f.durationS;
  j["request_throughput"] = f.requestThroughput;
  j["output_throughput"] = f.outputThroughput;
  j["total_token_throughput"] = f.totalTokenThroughput;
  j["goodput"] = f.goodput;
  j["ttft_ms"] = distributionJson(f.ttft);
  j["tpot_ms"] = distributionJson(f.tpot);
  j["itl_ms"] = distributionJson(f.itl);
  j["e2el_ms"] = distributionJson(f.e2el);
  j["mean_queue_ms"] = f.meanQueueMs;
  j["mean_batch"] = f.meanBatch;
  j["steps"] = f.steps;
  j["prefill_steps"] = f.prefillSteps;
  j["kv_blocks"] = f.kvBlocks;
  j["peak_kv_blocks"] = f.peakKvBlocks;
  j["step_shapes"] = f.stepShapes;
  return j;
}

ServeFigures serveFromJson(const nlohmann::json &j) {
  ServeFigures f;
  f.requests = j.at("requests").get<int64_t>();
  f.completed = j.at("completed").get<int64_t>();
  f.rejected = j.at("rejected").get<int64_t>();
  f.durationS = j.at("duration_s").get<double>();
  f.requestThroughput = j.at("request_throughput").get<double>();
  f.outputThroughput = j.at("output_throughput").get<double>();
  f.totalTokenThroughput = j.at("total_token_throughput").get<double>();
  f.goodput = j.at("goodput").get<double>();
  f.ttft = distributionFromJson(j.at("ttft_ms"));
  f.tpot = distributionFromJson(j.at("tpot_ms"));
  f.itl = distributionFromJson(j.at("itl_ms"));
  f.e2el = distributionFromJson(j.at("e2el_ms"));
  f.meanQueueMs = j.at("mean_queue_ms").get<double>();
  f.meanBatch = j.at("mean_batch").get<double>();
  f.steps = j.at("steps").get<int64_t>();
  f.prefillSteps = j.at("prefill_steps").get<int64_t>();
  f.kvBlocks = j.at("kv_blocks").get<int64_t>();
  f.peakKvBlocks = j.at("peak_kv_blocks").get<int64_t>();
  f.stepShapes = j.at("step_shapes").get<int64_t>();
  return f;
}

} // namespace

std::string resultJson(const PointResult &r) {
  ojson j;
  j["index"] = r.index;
  j["id"] = r.id;
  j["model"] = r.model;
  j["model_hash"] = r.modelHash;
  j["opt_level"] = r.optLevel;
  j["mapping"] = r.mapping;
  ojson params = ojson::object();
  for (const Setting &s : r.parameters)
    params[s.key] = valueJson(s.value);
  j["parameters"] = params;
  j["numerics"] = r.numerics;
  j["config_fingerprint"] = r.configFingerprint;
  if (r.serve)
    j["serve_fingerprint"] = r.serveFingerprint;
  j["status"] = r.ok ? "ok" : "error";
  j["error"] = r.error;
  if (r.ok && r.serve) {
    j["serve"] = serveJson(r.serveFigures);
  } else if (r.ok) {
    j["cycles"] = r.cycles;
    j["clock_ghz"] = r.clockGhz;
    j["simulated_us"] = r.simulatedUs;
    j["macs"] = r.macs;
    j["achieved_tflops"] = r.achievedTflops;
    j["memory"] = {{"read_bytes", r.readBytes},
                   {"write_bytes", r.writeBytes},
                   {"read_gbps", r.readGbps},
                   {"write_gbps", r.writeGbps},
                   {"gbps", r.memoryGbps},
                   {"utilization", r.memoryUtilization}};
    ojson util = ojson::object();
    for (size_t k = 0; k < kUtilKinds.size(); ++k)
      util[std::string(kUtilKinds[k])] = r.utilization[k];
    j["utilization"] = util;
    j["lx_peak_bytes"] = r.lxPeakBytes;
    j["lx_plan_peak_bytes"] = r.lxPlanPeakBytes;
    j["check"] = r.check;
    j["findings"] = r.findings;
    j["first_findings"] = r.firstFindings;
  }
  j["wall_seconds"] = {{r.serve ? "step_costs" : "compile", r.compileSeconds},
                       {r.serve ? "server" : "simulate", r.simulateSeconds},
                       {"total", r.wallSeconds}};
  return j.dump(2) + "\n";
}

std::optional<PointResult> parseResult(std::string_view text) {
  // A result too deep to read is like one that does not parse: the point
  // runs again.
  if (findJsonTooDeep(text))
    return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::nullopt;
  try {
    PointResult r;
    r.index = j.at("index").get<size_t>();
    r.id = j.at("id").get<std::string>();
    r.model = j.at("model").get<std::string>();
    r.modelHash = j.at("model_hash").get<std::string>();
    r.optLevel = j.at("opt_level").get<int>();
    r.mapping = j.at("mapping").get<std::string>();
    for (const auto &[key, value] : j.at("parameters").items()) {
      std::optional<hw::ParamValue> v = valueFromJson(value);
      if (!v)
        return std::nullopt;
      r.parameters.push_back({key, *v});
    }
    r.numerics = j.at("numerics").get<bool>();
    r.configFingerprint = j.at("config_fingerprint").get<std::string>();
    r.serve = j.contains("serve_fingerprint");
    if (r.serve)
      r.serveFingerprint = j.at("serve_fingerprint").get<std::string>();
    const std::string status = j.at("status").get<std::string>();
    if (status != "ok" && status != "error")
      return std::nullopt;
    r.ok = status == "ok";
    r.error = j.at("error").get<std::string>();
    if (r.ok && r.serve) {
      r.serveFigures = serveFromJson(j.at("serve"));
    } else if (r.ok) {
      r.cycles = j.at("cycles").get<uint64_t>();
      r.clockGhz = j.at("clock_ghz").get<double>();
      r.simulatedUs = j.at("simulated_us").get<double>();
      r.macs = j.at("macs").get<uint64_t>();
      r.achievedTflops = j.at("achieved_tflops").get<double>();
      const nlohmann::json &m = j.at("memory");
      r.readBytes = m.at("read_bytes").get<uint64_t>();
      r.writeBytes = m.at("write_bytes").get<uint64_t>();
      r.readGbps = m.at("read_gbps").get<double>();
      r.writeGbps = m.at("write_gbps").get<double>();
      r.memoryGbps = m.at("gbps").get<double>();
      r.memoryUtilization = m.at("utilization").get<double>();
      for (size_t k = 0; k < kUtilKinds.size(); ++k)
        r.utilization[k] =
            j.at("utilization").at(std::string(kUtilKinds[k])).get<double>();
      r.lxPeakBytes = j.at("lx_peak_bytes").get<uint64_t>();
      r.lxPlanPeakBytes = j.at("lx_plan_peak_bytes").get<uint64_t>();
      r.check = j.at("check").get<std::string>();
      r.findings = j.at("findings").get<uint64_t>();
      r.firstFindings = j.at("first_findings").get<std::vector<std::string>>();
    }
    const nlohmann::json &w = j.at("wall_seconds");
    r.compileSeconds = w.at(r.serve ? "step_costs" : "compile").get<double>();
    r.simulateSeconds = w.at(r.serve ? "server" : "simulate").get<double>();
    r.wallSeconds = w.at("total").get<double>();
    return r;
  } catch (const nlohmann::json::exception &) {
    return std::nullopt;
  }
}

std::optional<PointResult> readResult(const SweepPlan &plan,
                                      const SweepPoint &point) {
  const std::string path = resultPath(plan, point);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return std::nullopt;
  std::optional<PointResult> r;
  try {
    r = parseResult(readFile(path, kJsonFileLimit));
  } catch (const UserError &) {
    return std::nullopt;
  }
  if (!r || r->id != point.id ||
      r->configFingerprint != point.configFingerprint ||
      r->modelHash != point.modelHash ||
      r->serveFingerprint != point.serveFingerprint)
    return std::nullopt;
  // The index follows the spec's current order.
  r->index = point.index;
  return r;
}

std::string csvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos)
    return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

/// The columns of a serve sweep after the swept keys: the figures of each
/// point's `spyre serve` summary, then the error and the wall clock.
ResultsTable serveResultsTable(const SweepPlan &plan,
                               const std::map<size_t, PointResult> &results,
                               ResultsTable table) {
  static constexpr std::array kFigures = {
      "requests",         "completed",          "rejected",
      "duration_s",       "request_throughput", "output_throughput",
      "total_token_throughput", "goodput",      "ttft_p50_ms",
      "ttft_p99_ms",      "itl_p50_ms",         "itl_p99_ms",
      "tpot_p50_ms",      "tpot_p99_ms",        "e2el_p50_ms",
      "e2el_p99_ms",      "mean_queue_ms",      "mean_batch",
      "steps",            "prefill_steps",      "kv_blocks",
      "peak_kv_blocks",   "step_shapes"};
  std::vector<std::string> &header = table.header;
  header.emplace_back("status");
  header.emplace_back("config_fingerprint");
  header.insert(header.end(), kFigures.begin(), kFigures.end());
  for (const char *name : {"error", "step_cost_s", "server_s", "wall_s"})
    header.emplace_back(name);

  auto text = [](std::string t) {
    return ResultField{t, hw::ParamValue(std::move(t))};
  };
  auto integer = [](int64_t v) {
    return ResultField{std::to_string(v), hw::ParamValue(v)};
  };
  auto real = [](double v) { return ResultField{number(v), hw::ParamValue(v)}; };
  auto seconds = [](double v) {
    return ResultField{fmt::format("{:.3f}", v), hw::ParamValue(v)};
  };
  const std::vector<std::string> columns = plan.columns();
  for (const SweepPoint &p : plan.points) {
    std::vector<ResultField> row = {integer(static_cast<int64_t>(p.index)),
                                    text(p.id), text(p.model)};
    for (const std::string &key : columns) {
      const hw::ParamValue v = columnValue(p, key);
      row.push_back({hw::formatValue(v), v});
    }
    auto it = results.find(p.index);
    if (it == results.end()) {
      row.push_back(text("missing"));
      row.push_back(text(p.configFingerprint));
      row.resize(header.size());
      table.rows.push_back(std::move(row));
      continue;
    }
    const PointResult &r = it->second;
    const ServeFigures &f = r.serveFigures;
    row.push_back(text(r.ok ? "ok" : "error"));
    row.push_back(text(r.configFingerprint));
    if (r.ok) {
      for (const ResultField &field :
           {integer(f.requests), integer(f.completed), integer(f.rejected),
            real(f.durationS), real(f.requestThroughput),
            real(f.outputThroughput), real(f.totalTokenThroughput),
            real(f.goodput), real(f.ttft.p50), real(f.ttft.p99),
            real(f.itl.p50), real(f.itl.p99), real(f.tpot.p50),
            real(f.tpot.p99), real(f.e2el.p50), real(f.e2el.p99),
            real(f.meanQueueMs), real(f.meanBatch), integer(f.steps),
            integer(f.prefillSteps), integer(f.kvBlocks),
            integer(f.peakKvBlocks), integer(f.stepShapes)})
        row.push_back(field);
    } else {
      row.resize(row.size() + kFigures.size());
    }
    row.push_back(r.error.empty() ? ResultField{} : text(r.error));
    row.push_back(seconds(r.compileSeconds));
    row.push_back(seconds(r.simulateSeconds));
    row.push_back(seconds(r.wallSeconds));
    table.rows.push_back(std::move(row));
  }
  return table;
}

} // namespace

ResultsTable resultsTable(const SweepPlan &plan,
                          const std::map<size_t, PointResult> &results) {
  ResultsTable table;
  std::vector<std::string> &header = table.header;
  header = {"index", "id", "model"};
  const std::vector<std::string> columns = plan.columns();
  header.insert(header.end(), columns.begin(), columns.end());
  if (plan.serve)
    return serveResultsTable(plan, results, std::move(table));
  for (const char *name :
       {"status", "config_fingerprint", "cycles", "simulated_us",
        "achieved_tflops", "macs", "read_bytes", "write_bytes", "read_gbps",
        "write_gbps", "memory_gbps", "memory_utilization"})
    header.emplace_back(name);
  for (std::string_view kind : kUtilKinds)
    header.push_back(utilColumn(kind));
  for (const char *name : {"lx_peak_bytes", "lx_plan_peak_bytes", "check",
                           "findings", "error", "compile_s", "simulate_s",
                           "wall_s"})
    header.emplace_back(name);

  auto text = [](std::string t) {
    return ResultField{t, hw::ParamValue(std::move(t))};
  };
  auto integer = [](uint64_t v) {
    return ResultField{std::to_string(v),
                       hw::ParamValue(static_cast<int64_t>(v))};
  };
  auto real = [](double v) { return ResultField{number(v), hw::ParamValue(v)}; };
  auto seconds = [](double v) {
    return ResultField{fmt::format("{:.3f}", v), hw::ParamValue(v)};
  };
  for (const SweepPoint &p : plan.points) {
    std::vector<ResultField> row = {integer(p.index), text(p.id),
                                    text(p.model)};
    for (const std::string &key : columns) {
      const hw::ParamValue v = columnValue(p, key);
      row.push_back({hw::formatValue(v), v});
    }
    auto it = results.find(p.index);
    if (it == results.end()) {
      row.push_back(text("missing"));
      row.push_back(text(p.configFingerprint));
      row.resize(header.size());
      table.rows.push_back(std::move(row));
      continue;
    }
    const PointResult &r = it->second;
    row.push_back(text(r.ok ? "ok" : "error"));
    row.push_back(text(r.configFingerprint));
    if (r.ok) {
      for (const ResultField &f :
           {integer(r.cycles), real(r.simulatedUs), real(r.achievedTflops),
            integer(r.macs), integer(r.readBytes), integer(r.writeBytes),
            real(r.readGbps), real(r.writeGbps), real(r.memoryGbps),
            real(r.memoryUtilization)})
        row.push_back(f);
      for (double u : r.utilization)
        row.push_back(real(u));
      row.push_back(integer(r.lxPeakBytes));
      row.push_back(integer(r.lxPlanPeakBytes));
      row.push_back(text(r.check));
      row.push_back(integer(r.findings));
    } else {
      row.resize(row.size() + 10 + kUtilKinds.size() + 4);
    }
    row.push_back(r.error.empty() ? ResultField{} : text(r.error));
    row.push_back(seconds(r.compileSeconds));
    row.push_back(seconds(r.simulateSeconds));
    row.push_back(seconds(r.wallSeconds));
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::string resultsCsv(const SweepPlan &plan,
                       const std::map<size_t, PointResult> &results) {
  const ResultsTable table = resultsTable(plan, results);
  std::string out;
  for (size_t i = 0; i < table.header.size(); ++i)
    out += (i ? "," : "") + csvField(table.header[i]);
  out += "\n";
  for (const std::vector<ResultField> &row : table.rows) {
    for (size_t i = 0; i < row.size(); ++i)
      out += (i ? "," : "") + csvField(row[i].text);
    out += "\n";
  }
  return out;
}

std::map<size_t, PointResult> readResults(const SweepPlan &plan) {
  std::map<size_t, PointResult> results;
  for (const SweepPoint &p : plan.points)
    if (std::optional<PointResult> r = readResult(plan, p))
      results.emplace(p.index, std::move(*r));
  return results;
}

} // namespace spyre::sweep
