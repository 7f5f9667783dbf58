// The result of one sweep point (DIR/points/<id>.json) and the table of all
// of them (DIR/results.csv): what a point ran, what it measured, or why it
// failed. Formats in docs/sweep.md.
#pragma once

#include "support/TextTable.h"
#include "sweep/Sweep.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sweep {

/// Engine kinds whose utilisation a result records, as in the statistics
/// (sim::kEngineKinds).
inline constexpr std::array<std::string_view, 5> kUtilKinds = {
    "dma.load", "dma.store", "pt", "sfu", "ring"};

/// Findings a result lists in full (all are counted).
inline constexpr size_t kListedFindings = 3;

/// A distribution of a serve point, milliseconds (serve::Distribution).
struct ServeDistribution {
  int64_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
};

/// What a serve point measured: the figures of `spyre serve`'s summary
/// (docs/serve.md).
struct ServeFigures {
  int64_t requests = 0;
  int64_t completed = 0;
  int64_t rejected = 0;
  double durationS = 0;
  double requestThroughput = 0;    ///< completed requests / s
  double outputThroughput = 0;     ///< output tokens / s
  double totalTokenThroughput = 0; ///< (input + output) tokens / s
  double goodput = 0;              ///< requests / s within serve.slo
  ServeDistribution ttft, tpot, itl, e2el;
  double meanQueueMs = 0;
  double meanBatch = 0; ///< sequences per decode step
  int64_t steps = 0;
  int64_t prefillSteps = 0;
  int64_t kvBlocks = 0;
  int64_t peakKvBlocks = 0;
  int64_t stepShapes = 0; ///< distinct step shapes whose costs it used
};

struct PointResult {
  size_t index = 0;
  std::string id;
  std::string model; ///< as the spec writes it
  std::string modelHash;
  int optLevel = 2;
  std::string mapping;
  /// The value of every result column of the plan (SweepPlan::columns).
  std::vector<Setting> parameters;
  bool numerics = false;
  std::string configFingerprint;
  /// A serve point: the fingerprint of its knobs and trace, and its figures
  /// (instead of cycles, memory and utilisation).
  bool serve = false;
  std::string serveFingerprint;
  ServeFigures serveFigures;

  bool ok = false;
  std::string error; ///< the first diagnostic, when !ok

  uint64_t cycles = 0;
  double clockGhz = 0;
  double simulatedUs = 0;
  uint64_t macs = 0;
  double achievedTflops = 0;
  uint64_t readBytes = 0; ///< device memory
  uint64_t writeBytes = 0;
  double readGbps = 0;
  double writeGbps = 0;
  double memoryGbps = 0;
  /// The memory channel's busy cycles over the run's cycles.
  double memoryUtilization = 0;
  /// Busy cycles of each kind summed over every engine of that kind on the
  /// chip, over (cycles x engines of that kind): by kUtilKinds.
  std::array<double, kUtilKinds.size()> utilization{};
  /// The simulator's LX high-water mark: the most of any core
  /// (cores[].lx_high_water_bytes of the statistics).
  uint64_t lxPeakBytes = 0;
  /// The compiler's LX plan: the largest LX in use on a core in one phase
  /// (the lx-plan pass's peak-lx-bytes).
  uint64_t lxPlanPeakBytes = 0;
  /// "none" (timing only), "ok", or "mismatch in N of M outputs".
  std::string check = "none";
  uint64_t findings = 0;
  std::vector<std::string> firstFindings;

  // Wall-clock seconds: they vary from run to run and affect nothing else.
  // A serve point's "compile" is the time spent on step costs (compiling
  // and simulating step programs, or reading them from the sweep's cache),
  // its "simulate" the server's event loop.
  double compileSeconds = 0;
  double simulateSeconds = 0;
  double wallSeconds = 0;
};

/// The identity part of a result (index, id, model, parameters, ...) from
/// the plan; the outcome is left to the caller.
PointResult resultFor(const SweepPlan &plan, const SweepPoint &point);

/// Pretty-printed JSON, keys in a fixed order.
std::string resultJson(const PointResult &result);
/// A result file's contents, or nullopt when it is not one.
std::optional<PointResult> parseResult(std::string_view text);
/// The result of `point` when its file is there and belongs to it (same id,
/// config fingerprint and model hash).
std::optional<PointResult> readResult(const SweepPlan &plan,
                                      const SweepPoint &point);

/// One field of the results table: its text in results.csv and its value,
/// none for an empty field (a point without a result, or a failed one).
struct ResultField {
  std::string text;
  std::optional<hw::ParamValue> value;
};

/// The results table: the header and one row per point in index order.
struct ResultsTable {
  std::vector<std::string> header;
  std::vector<std::vector<ResultField>> rows;
};

/// The results of the plan's points that have one (readResult), by index.
std::map<size_t, PointResult> readResults(const SweepPlan &plan);

/// What results.csv holds, typed: points without a result have status
/// `missing`. Columns in a fixed order, the wall-clock ones last.
ResultsTable resultsTable(const SweepPlan &plan,
                          const std::map<size_t, PointResult> &results);

/// results.csv: a header and one row per point in index order; points
/// without a result have status `missing`. Columns in a fixed order, the
/// wall-clock ones last.
std::string resultsCsv(const SweepPlan &plan,
                       const std::map<size_t, PointResult> &results);

/// One CSV field, quoted when it holds a comma, a quote or a line break.
std::string csvField(std::string_view text);

/// The value of result column `key` for a point: its effective config
/// value, serving knob, -O level or mapping.
hw::ParamValue columnValue(const SweepPoint &point, const std::string &key);

} // namespace spyre::sweep
