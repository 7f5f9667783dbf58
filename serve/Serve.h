// `spyre serve` as a library: a request trace run through a model of one
// server (Server.h) whose step times come from simulated programs
// (StepCost.h), and what the run writes: a terminal summary with the
// figures of `vllm bench serve`, requests.csv, summary.json, a Perfetto
// trace and a self-contained HTML report (docs/serve.md).
#pragma once

#include "llm/LlmConfig.h"
#include "serve/Metrics.h"
#include "serve/Server.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spyre::serve {

struct ServeOptions {
  std::string modelConfig; ///< config.json
  std::string hwConfig;    ///< empty: built-in
  std::string trace;       ///< the request trace
  std::string outDir;      ///< empty: no files
  Batching batching = Batching::Continuous;
  int64_t maxNumSeqs = 4;
  int64_t maxModelLen = 4096;
  int64_t chunkSize = 512;
  bool prefixCaching = true;
  std::vector<WarmupShape> warmupShapes;
  /// KV-cache blocks; 0: from the device memory left after the weights.
  int64_t numKvBlocks = 0;
  /// Share of the device memory weights and cache may take.
  double memoryUtilization = 0.9;
  Slo slo;
  int optLevel = 2;
  int64_t simulatedLayers = 1;
  BucketRule buckets;
};

/// One-time costs, apart from the steps.
struct OneTimeCosts {
  int64_t weightBytes = 0;
  double weightLoadS = 0; ///< the weights over PCIe
  /// Programs compiled before serving: the step shapes the run met
  /// (continuous) or two per warmup shape (static).
  int64_t programs = 0;
};

struct ServeReport {
  ServeOptions options;
  llm::LlmConfig model;
  std::string hwName;
  ServerOptions server;
  int64_t kvBytesPerToken = 0;
  OneTimeCosts oneTime;
  ServeResult result;
  Summary summary;
  /// Each simulated step shape and its cost.
  std::map<StepShape, StepCost> stepCosts;
};

/// Everything but the files. Bad inputs are UserErrors; the output folder
/// is checked for writability before the first simulation.
ServeReport runServe(const ServeOptions &options, StepCostModel *costs = nullptr);

/// The same over requests already read (or generated); `options.trace` only
/// names them in the outputs.
ServeReport runServe(const ServeOptions &options,
                     const std::vector<Request> &requests,
                     StepCostModel *costs = nullptr);

/// Writes requests.csv, summary.json, trace.json and report.html into
/// options.outDir (created when missing).
void writeServeOutputs(const ServeReport &report);

std::string serveSummaryText(const ServeReport &report);
std::string requestsCsv(const ServeReport &report);
std::string summaryJson(const ServeReport &report);
std::string perfettoTrace(const ServeReport &report);
std::string htmlReport(const ServeReport &report);

/// The files writeServeOutputs writes.
const std::vector<std::string> &serveOutputNames();

} // namespace spyre::serve
