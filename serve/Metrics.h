// The figures `vllm bench serve` reports, from a simulated run
// (docs/serve.md): time to first token (TTFT), time per output token after
// the first (TPOT), inter-token latency (ITL, every gap between two tokens
// of a request), end-to-end latency (E2EL), each as mean, median (p50), p90
// and p99; request and token throughput over the run; goodput, the
// requests per second that met every given service-level objective.
#pragma once

#include "serve/Server.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spyre::serve {

/// Milliseconds; all 0 for no sample.
struct Distribution {
  int64_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

/// The p-th percentile (0..100) of sorted values, interpolated linearly
/// between the two nearest ranks as numpy.percentile does by default (what
/// vllm bench serve uses).
double percentile(const std::vector<double> &sorted, double p);
Distribution distribution(std::vector<double> values);

/// Service-level objectives, milliseconds: a request is good when its TTFT,
/// every one of its inter-token gaps, its TPOT and its E2EL are within the
/// objectives given.
struct Slo {
  std::optional<double> ttftMs, itlMs, tpotMs, e2elMs;
  bool any() const { return ttftMs || itlMs || tpotMs || e2elMs; }
};

/// Parses `ttft=500,itl=50` (milliseconds; keys ttft, itl, tpot, e2el); a
/// UserError (usage) naming --slo.
Slo parseSlo(const std::string &text);

/// One request's figures, milliseconds.
struct RequestMetrics {
  double queueMs = 0; ///< arrival to its first step
  double ttftMs = 0;
  double tpotMs = 0; ///< 0 for a single output token
  double meanItlMs = 0;
  double maxItlMs = 0;
  double e2elMs = 0;
  bool good = false;
};

RequestMetrics requestMetrics(const RequestRecord &r, const Slo &slo);

struct Summary {
  int64_t requests = 0;
  int64_t completed = 0;
  int64_t rejected = 0;
  double durationS = 0; ///< first arrival to last finish
  int64_t inputTokens = 0; ///< of completed requests
  int64_t outputTokens = 0;
  double requestThroughput = 0;      ///< completed requests / s
  double outputThroughput = 0;       ///< output tokens / s
  double totalTokenThroughput = 0;   ///< (input + output) tokens / s
  Distribution ttft, tpot, itl, e2el, queue;
  Slo slo;
  int64_t good = 0;
  double goodput = 0; ///< good requests / s
  int64_t steps = 0;
  int64_t prefillSteps = 0;
  double meanBatch = 0; ///< sequences per decode step
  int64_t peakKvBlocks = 0;
  /// Whether the trace names shared prefixes, and the prompt tokens of
  /// completed requests found in the prefix cache.
  bool prefixes = false;
  int64_t cachedTokens = 0;
};

Summary summarize(const ServeResult &result, const Slo &slo);

} // namespace spyre::serve
