// The HTML report of a run (`spyre report`): one self-contained page with a
// per-core timeline of the engines coloured by source op, a roofline chart
// of the ops, the LX and device-memory counter tracks over time, and the
// summary tables (engine use and stalls, top ops, the critical path).
//
// The page needs no network and no script: CSS is inline and every chart is
// an inline SVG written here, with <title> elements for hover text. The same
// input gives the same bytes.
#pragma once

#include "sim/analysis/Profile.h"
#include "sim/analysis/Summary.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sim {

/// One sample of a counter track: its value from `us` until the next sample.
struct CounterSample {
  double us = 0; ///< the trace's `ts`, microseconds
  double value = 0;
};

/// What a report is drawn from: the summary always; the records and the
/// counter tracks only when the input was a trace.
struct RunData {
  Summary summary;
  /// The trace's records; empty for a statistics JSON.
  std::optional<Profile> profile;
  /// `lx written bytes` per core, in core order (cores without samples are
  /// left out).
  std::vector<std::pair<int, std::vector<CounterSample>>> lxWritten;
  /// `device memory GB/s`: read and write, sampled at the same times.
  std::vector<CounterSample> memoryRead;
  std::vector<CounterSample> memoryWrite;

  bool fromTrace() const { return profile.has_value(); }
};

/// Reads a trace (`spyre sim --trace`) or a statistics JSON (`--stats`),
/// told apart by content as readSummary does. Malformed input is a
/// UserError naming `fileName` and, for a bad field, its key path.
RunData readRunData(std::string_view text, const std::string &fileName);

struct RunReportOptions {
  /// Ops listed in the ops table (the roofline chart shows every op).
  size_t topOps = 20;
  /// At most this many slice rectangles in the timeline: past it, slices
  /// closer than a coarser threshold merge (the page says so).
  size_t maxTimelineRects = 12000;
};

/// The report page. Charts that need a trace are replaced by a note when
/// `run` came from a statistics JSON.
std::string htmlReport(const RunData &run, const RunReportOptions &options = {});

/// The fill colour of an op in every chart: a stable function of its name
/// (`#rrggbb`).
std::string opColour(std::string_view op);

} // namespace spyre::sim
