// The charts of the run report (RunReport.h), internal to sim/analysis: the
// timeline of the engines, the LX and device-memory counter charts and the
// roofline chart, each written as inline SVG by RunCharts.cpp, with the
// time scale they share and the text helpers the page and the charts both
// use. RunReport.cpp reads the input and assembles the page.
#pragma once

#include "sim/analysis/RunReport.h"
#include "support/Nesting.h"
#include "support/SvgChart.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sim::runreport {

// ------------------------------------------------------------ text

inline std::string esc(std::string_view s) {
  return htmlEscape(s, HtmlQuotes::DoubleAndSingle);
}

inline std::string px(double v) { return svgPx(v); }

inline std::string opLabel(std::string_view op) {
  return op.empty() ? "(no op)" : std::string(op);
}

inline std::string percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

inline std::string usText(double us) { return fmt::format("{:.3f} µs", us); }

inline std::string kib(double bytes) {
  return bytes >= 1024 * 1024 ? fmt::format("{:.2f} MiB", bytes / (1024.0 * 1024.0))
                              : fmt::format("{:.1f} KiB", bytes / 1024.0);
}

// ------------------------------------------------------------ layout

constexpr double kPlotLeft = 130;
constexpr double kPlotWidth = 980;
constexpr double kPlotRight = kPlotLeft + kPlotWidth;

/// Time (µs) to x: one scale shared by the timeline and the counter charts
/// so they line up.
struct TimeScale {
  double t0 = 0;
  double t1 = 1;
  double x(double us) const {
    const double v = kPlotLeft + (us - t0) / (t1 - t0) * kPlotWidth;
    return std::clamp(v, kPlotLeft, kPlotRight);
  }
};

/// The ops of a run in name order, for the legend.
std::vector<std::string> opsOf(const RunData &run);

/// The colour legend of `ops`, as an SVG.
void opLegend(std::string &out, const std::vector<std::string> &ops);

/// What the timeline drew: its slices, the rectangles they became, and the
/// width in pixels under which slices were merged (when `merged`).
struct TimelineInfo {
  size_t slices = 0;
  size_t rects = 0;
  double thresholdPx = 1;
  bool merged = false;
};

/// The timeline of a run from a trace, at most `maxRects` rectangles.
TimelineInfo timeline(std::string &out, const RunData &run, const TimeScale &ts,
                      size_t maxRects);

/// LX written per core over time (the `lx written bytes` track).
void lxChart(std::string &out, const RunData &run, const TimeScale &ts);

/// Device-memory read and write bandwidth over time, against the peak.
void memoryChart(std::string &out, const RunData &run, const TimeScale &ts);

/// The ops that multiply, against the roofs of the run's cores.
void rooflineChart(std::string &out, const RunData &run);

} // namespace spyre::sim::runreport
