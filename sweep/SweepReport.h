// `spyre sweep report DIR`: what a finished sweep shows. The Pareto front of
// simulated time against a cost proxy (an expression over config keys;
// total LX, lx.size_bytes * chip.cores, by default), one chart per swept
// parameter (time against it, one series per value of another parameter),
// all in one self-contained HTML page (inline SVG and CSS, no script, no
// network, the same bytes for the same results), and the best points as a
// table for the terminal.
#pragma once

#include <string>

namespace spyre::sweep {

/// The default cost proxy: the LX of the whole chip, in bytes.
inline constexpr const char *kDefaultCost = "lx.size_bytes * chip.cores";

struct SweepReportOptions {
  std::string html;   ///< the page to write; empty: DIR/report.html
  std::string x;      ///< chart only this parameter (an axis name); empty: all
  std::string series; ///< the axis that splits each chart into series
  std::string cost = kDefaultCost;
};

struct SweepReport {
  std::string text; ///< the terminal summary: counts and the best points
  std::string html;
  std::string htmlPath;
};

/// Reads DIR/plan.json, the point results and each finished point's
/// config.yaml. A missing or malformed DIR is a UserError (exit 1); a bad
/// --x, --series or --cost a usage error (exit 2).
SweepReport sweepReport(const std::string &dir, const SweepReportOptions &options);

} // namespace spyre::sweep
