// A serve point (ServePoint.h): the trace read or generated and scaled, the
// serving knobs turned into serve::ServeOptions, the server run over step
// costs shared through the sweep's folder, and the summary's figures kept.
#include "sweep/ServePoint.h"

#include "serve/Metrics.h"
#include "serve/Serve.h"
#include "serve/Trace.h"
#include "support/FileIO.h"
#include "support/Hash.h"
#include "support/Nesting.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>

namespace spyre::sweep {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Step costs kept in a folder, one file per shape, in front of the
/// simulation: a point asks for a shape, finds it when another point of
/// the same model and hardware simulated it, else simulates and writes it
/// (atomically, so points running at once never see half a file; two of
/// them may simulate the same shape, with the same result). The simulation
/// is deterministic, and a double's JSON text reads back to the same
/// double, so a cached cost is the cost: results do not depend on which
/// points ran first.
class FolderStepCost final : public serve::StepCostModel {
public:
  FolderStepCost(std::string dir, std::string keyPrefix,
                 serve::SimulatedCostOptions options)
      : dir_(std::move(dir)), keyPrefix_(std::move(keyPrefix)),
        simulated_(std::move(options)) {}

  serve::StepCost cost(const serve::StepShape &shape) override {
    auto it = memo_.find(shape);
    if (it != memo_.end())
      return it->second;
    const Clock::time_point start = Clock::now();
    const std::string key =
        keyPrefix_ +
        fmt::format("shape={} batch {} tokens {} context {}\n",
                    shape.kind == serve::StepKind::Prefill ? "prefill"
                                                           : "decode",
                    shape.batch, shape.tokens, shape.context);
    const std::string file =
        (fs::path(dir_) / (toHex(fnv1a64(key), 16) + ".json")).string();
    std::optional<serve::StepCost> c = read(file, key);
    if (c) {
      ++cached_;
    } else {
      c = simulated_.cost(shape);
      nlohmann::ordered_json j;
      j["key"] = key;
      j["layer_us"] = c->layerUs;
      j["head_us"] = c->headUs;
      j["device_us"] = c->deviceUs;
      std::error_code ec;
      fs::create_directories(dir_, ec);
      if (ec)
        throw UserError(SourceLoc{dir_}, "cannot create the step-cost "
                                         "folder: " + ec.message());
      writeFileAtomic(file, j.dump(2) + "\n");
    }
    seconds_ += secondsSince(start);
    memo_.emplace(shape, *c);
    return *c;
  }

  const std::map<serve::StepShape, serve::StepCost> &memo() const override {
    return memo_;
  }

  size_t cached() const { return cached_; }
  double seconds() const { return seconds_; }

private:
  /// The cost in `file` when it is there, parses and is for `key` (a file
  /// of another key, a hash collision, or a damaged one is simulated again).
  static std::optional<serve::StepCost> read(const std::string &file,
                                             const std::string &key) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      return std::nullopt;
    try {
      const std::string text = readFile(file, kJsonFileLimit);
      if (findJsonTooDeep(text))
        return std::nullopt;
      const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("key") ||
          j.at("key") != key)
        return std::nullopt;
      serve::StepCost c;
      c.layerUs = j.at("layer_us").get<double>();
      c.headUs = j.at("head_us").get<double>();
      c.deviceUs = j.at("device_us").get<double>();
      return c;
    } catch (const UserError &) {
      return std::nullopt;
    } catch (const nlohmann::json::exception &) {
      return std::nullopt;
    }
  }

  std::string dir_;
  std::string keyPrefix_;
  serve::SimulatedStepCost simulated_;
  std::map<serve::StepShape, serve::StepCost> memo_;
  size_t cached_ = 0;
  double seconds_ = 0;
};

std::vector<serve::WarmupShape> warmupShapes(const std::string &text) {
  std::vector<serve::WarmupShape> out;
  if (text.empty())
    return out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(serve::parseWarmupShape(
        text.substr(start, comma == std::string::npos ? std::string::npos
                                                      : comma - start),
        "serve.warmup_shapes"));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

std::vector<serve::Request> requestsOf(const SweepPlan &plan,
                                       const ServeSettings &s) {
  std::vector<serve::Request> requests;
  if (!plan.requestsPath.empty()) {
    requests = serve::loadTrace(plan.requestsPath);
  } else {
    serve::GenOptions g;
    g.rate = s.rate;
    g.arrivals = s.arrivals == "fixed" ? serve::Arrivals::Fixed
                                       : serve::Arrivals::Poisson;
    g.prompt = serve::parseLengthDist(s.prompt, "serve.prompt");
    g.output = serve::parseLengthDist(s.output, "serve.output");
    g.count = s.count;
    g.seed = static_cast<uint64_t>(s.seed);
    g.prefixTokens = s.prefixTokens;
    g.prefixGroups = s.prefixGroups;
    requests = serve::generateTrace(g);
  }
  int64_t outputTokens = 0;
  for (serve::Request &r : requests) {
    // To the microsecond, as a trace file holds them.
    r.arrivalS = std::round(r.arrivalS / s.rateScale * 1e6) / 1e6;
    outputTokens += r.outputTokens;
  }
  if (!requests.empty() && requests.back().arrivalS > serve::kMaxArrivalS)
    throw UserError(SourceLoc{"serve.rate_scale"},
                    "the trace would last past 10^7 s; fewer requests or a "
                    "higher rate");
  if (outputTokens > serve::kMaxTraceOutputTokens)
    throw UserError(SourceLoc{"serve.count"},
                    fmt::format("the trace asks for {} output tokens, more "
                                "than the {} a run takes",
                                outputTokens, serve::kMaxTraceOutputTokens));
  return requests;
}

ServeDistribution distributionOf(const serve::Distribution &d) {
  return {d.count, d.mean, d.p50, d.p90, d.p99};
}

} // namespace

std::string stepCostDir(const SweepPlan &plan) {
  return (fs::path(plan.outDir) / "step-costs").string();
}

void runServePoint(const SweepPlan &plan, const SweepPoint &p, PointResult &r,
                   std::string &note) {
  const std::string problem =
      serveSettingsProblem(p.serve, plan.requestsPath.empty());
  if (!problem.empty()) {
    r.error = problem;
    return;
  }
  const ServeSettings &s = p.serve;
  const std::vector<serve::Request> requests = requestsOf(plan, s);

  serve::ServeOptions o;
  o.modelConfig = p.modelPath;
  o.hwConfig = (fs::path(pointDir(plan, p)) / "config.yaml").string();
  o.trace = plan.requests.empty() ? "generated" : plan.requests;
  o.batching = s.batching == "static" ? serve::Batching::Static
                                      : serve::Batching::Continuous;
  o.maxNumSeqs = s.maxNumSeqs;
  o.maxModelLen = s.maxModelLen;
  o.chunkSize = s.chunkSize;
  o.prefixCaching = s.prefixCaching == "on";
  o.warmupShapes = warmupShapes(s.warmupShapes);
  o.numKvBlocks = s.numKvBlocks;
  o.memoryUtilization = s.memoryUtilization;
  if (!s.slo.empty())
    o.slo = serve::parseSlo(s.slo);
  o.optLevel = p.optLevel;
  o.simulatedLayers = s.simulatedLayers;
  o.buckets.contextBase = s.contextBucket;

  // What a step's device time depends on besides its shape.
  const std::string keyPrefix = fmt::format(
      "model={}\nconfig={}\nopt_level={}\nsimulated_layers={}\n", p.modelHash,
      p.configFingerprint, p.optLevel, s.simulatedLayers);
  FolderStepCost costs(stepCostDir(plan), keyPrefix,
                       {o.modelConfig, o.hwConfig, o.optLevel,
                        o.simulatedLayers});
  const Clock::time_point start = Clock::now();
  const serve::ServeReport report = serve::runServe(o, requests, &costs);
  r.compileSeconds = costs.seconds();
  r.simulateSeconds = secondsSince(start) - costs.seconds();

  const serve::Summary &m = report.summary;
  ServeFigures &f = r.serveFigures;
  f.requests = m.requests;
  f.completed = m.completed;
  f.rejected = m.rejected;
  f.durationS = m.durationS;
  f.requestThroughput = m.requestThroughput;
  f.outputThroughput = m.outputThroughput;
  f.totalTokenThroughput = m.totalTokenThroughput;
  f.goodput = m.goodput;
  f.ttft = distributionOf(m.ttft);
  f.tpot = distributionOf(m.tpot);
  f.itl = distributionOf(m.itl);
  f.e2el = distributionOf(m.e2el);
  f.meanQueueMs = m.queue.mean;
  f.meanBatch = m.meanBatch;
  f.steps = m.steps;
  f.prefillSteps = m.prefillSteps;
  f.kvBlocks = report.server.kvBlocks;
  f.peakKvBlocks = m.peakKvBlocks;
  f.stepShapes = static_cast<int64_t>(report.stepCosts.size());
  note = fmt::format("{} step shapes, {} from the sweep's cache",
                     report.stepCosts.size(), costs.cached());
  r.ok = true;
}

} // namespace spyre::sweep
