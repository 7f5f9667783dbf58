// The HTML report of a run (RunReport.h): reading a trace's counter tracks,
// the summary tables, and the page that puts them together with the charts
// (RunCharts.cpp: the timeline, the roofline chart, the LX and device-memory
// charts as inline SVG).
//
// Everything is written with fixed number formats and in a fixed order (op
// names sorted, records by stream and time), so the same input gives the
// same bytes on every machine.
#include "sim/analysis/RunReport.h"

#include "sim/analysis/RunCharts.h"
#include "support/Diagnostic.h"
#include "support/Hash.h"
#include "support/Nesting.h"
#include "support/SvgChart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace spyre::sim {

namespace {

using namespace runreport;
using nlohmann::json;

// ------------------------------------------------------------ reading

constexpr std::string_view kLxCounter = "lx written bytes";
constexpr std::string_view kMemoryCounter = "device memory GB/s";

std::string keyPath(size_t event, std::string_view rest) {
  return "traceEvents[" + std::to_string(event) + "]" + std::string(rest);
}

double counterNumber(const json &obj, const char *key, const std::string &file,
                     const std::string &path) {
  if (!obj.is_object() || !obj.contains(key))
    throw UserError(SourceLoc{file, 0, 0, path}, std::string("missing '") + key + "'");
  const json &v = obj[key];
  if (!v.is_number() || !(v.get<double>() >= 0))
    throw UserError(SourceLoc{file, 0, 0, path + "." + key},
                    "must be a non-negative number");
  return v.get<double>();
}

/// The counter tracks the report draws; other counters (ring link use) are
/// left to trace viewers.
void readCounters(const json &events, const std::string &file, RunData &run) {
  std::map<int, std::vector<CounterSample>> lx;
  for (size_t i = 0; i < events.size(); ++i) {
    const json &e = events[i];
    if (!e.is_object() || e.value("ph", "") != "C")
      continue;
    const std::string name = e.value("name", "");
    if (name != kLxCounter && name != kMemoryCounter)
      continue;
    const double us = counterNumber(e, "ts", file, keyPath(i, ""));
    if (!e.contains("args"))
      throw UserError(SourceLoc{file, 0, 0, keyPath(i, "")}, "missing 'args'");
    const json &args = e["args"];
    const std::string argsPath = keyPath(i, ".args");
    if (name == kMemoryCounter) {
      run.memoryRead.push_back({us, counterNumber(args, "read", file, argsPath)});
      run.memoryWrite.push_back({us, counterNumber(args, "write", file, argsPath)});
      continue;
    }
    if (!e.contains("pid") || !e["pid"].is_number_integer() ||
        e["pid"].get<int64_t>() < 0 || e["pid"].get<int64_t>() > 0xFFFF)
      throw UserError(SourceLoc{file, 0, 0, keyPath(i, ".pid")}, "must be a core id");
    lx[static_cast<int>(e["pid"].get<int64_t>())].push_back(
        {us, counterNumber(args, "bytes", file, argsPath)});
  }
  auto byTime = [](const CounterSample &a, const CounterSample &b) {
    return a.us < b.us;
  };
  std::stable_sort(run.memoryRead.begin(), run.memoryRead.end(), byTime);
  std::stable_sort(run.memoryWrite.begin(), run.memoryWrite.end(), byTime);
  for (auto &[core, samples] : lx) {
    std::stable_sort(samples.begin(), samples.end(), byTime);
    run.lxWritten.emplace_back(core, std::move(samples));
  }
}


// ------------------------------------------------------------ tables

std::string utilColour(double u) {
  // White to blue: the busier, the darker.
  const auto mix = [&](int from, int to) {
    return static_cast<int>(std::lround(from + (to - from) * std::clamp(u, 0.0, 1.0)));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(255, 43), mix(255, 108), mix(255, 196));
}

void utilisationTables(std::string &out, const Summary &s) {
  // Engine names in the order they first appear, as the columns.
  std::vector<std::string> engines;
  std::map<int, std::map<std::string, const EngineSummary *>> byCore;
  for (const EngineSummary &e : s.engines) {
    if (std::find(engines.begin(), engines.end(), e.engine) == engines.end())
      engines.push_back(e.engine);
    byCore[e.core][e.engine] = &e;
  }
  std::vector<size_t> reasons;
  for (size_t r = 0; r < kNumStallReasons; ++r)
    for (const EngineSummary &e : s.engines)
      if (e.stall[r] > 0) {
        reasons.push_back(r);
        break;
      }
  const auto total = static_cast<double>(std::max<Cycle>(s.totalCycles, 1));
  auto stallText = [&](const EngineSummary &e) {
    std::string t = fmt::format("busy {} cycles", e.busy);
    for (size_t r : reasons)
      if (e.stall[r] > 0)
        t += fmt::format(", {} {}", stallReasonName(static_cast<StallReason>(r)),
                         e.stall[r]);
    return t + fmt::format(", idle {}", e.idle);
  };

  out += "<h3>Utilisation by core (busy / total cycles)</h3>\n"
         "<table id=\"utilisation-table\" class=\"heat\"><tr><th>core</th>";
  for (const std::string &e : engines)
    out += "<th>" + esc(e) + "</th>";
  out += "<th class=\"text\">main stall (share of the core's engine time)</th></tr>\n";
  for (const auto &[core, row] : byCore) {
    out += fmt::format("<tr><th>{}</th>", core);
    for (const std::string &name : engines) {
      auto it = row.find(name);
      if (it == row.end()) {
        out += "<td></td>";
        continue;
      }
      const double u = static_cast<double>(it->second->busy) / total;
      out += fmt::format("<td style=\"background:{}{}\" title=\"{}\">{}</td>",
                         utilColour(u), u > 0.55 ? ";color:#fff" : "",
                         esc(stallText(*it->second)), percent(u));
    }
    StallCycles stalls{};
    Cycle engineTime = 0;
    for (const auto &[name, e] : row) {
      for (size_t r = 0; r < kNumStallReasons; ++r)
        stalls[r] += e->stall[r];
      engineTime += e->total();
    }
    size_t top = 0;
    for (size_t r = 1; r < kNumStallReasons; ++r)
      if (stalls[r] > stalls[top])
        top = r;
    out +=
        stalls[top] == 0
            ? std::string("<td class=\"text\">none</td>")
            : fmt::format("<td class=\"text\">{} {}</td>",
                          stallReasonName(static_cast<StallReason>(top)),
                          percent(static_cast<double>(stalls[top]) /
                                  static_cast<double>(std::max<Cycle>(engineTime, 1))));
    out += "</tr>\n";
  }
  out += "</table>\n";

  out += "<details><summary>Every engine: busy, stalls by reason, idle "
         "(cycles; busy + stalls + idle = total)</summary>\n"
         "<table id=\"engines-table\"><tr><th>core</th><th>engine</th><th>instrs</th>"
         "<th>busy</th><th>util</th>";
  for (size_t r : reasons)
    out += fmt::format("<th>{}</th>", stallReasonName(static_cast<StallReason>(r)));
  out += "<th>idle</th><th>total</th></tr>\n";
  for (const EngineSummary &e : s.engines) {
    const double u = static_cast<double>(e.busy) / total;
    out +=
        fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                    "<td class=\"bar\"><span style=\"width:{:.1f}px\"></span>{}</td>",
                    e.core, esc(e.engine), e.instructions, e.busy, 60.0 * u, percent(u));
    for (size_t r : reasons)
      out += fmt::format("<td>{}</td>", e.stall[r]);
    out += fmt::format("<td>{}</td><td>{}</td></tr>\n", e.idle, e.total());
  }
  out += "</table></details>\n";
}

std::string intensityText(const Roofline &r) {
  if (r.regime == "-")
    return "-";
  if (std::isinf(r.intensity))
    return "inf";
  return fmt::format("{:.2f}", r.intensity);
}

void opsTable(std::string &out, const Summary &s, size_t topOps) {
  const size_t shown = std::min(topOps, s.ops.size());
  const double usPerCycle = 1.0 / (s.clockGhz * 1000.0);
  out += fmt::format("<p>The {} longest of {} ops by span (first instruction to last, "
                     "waits included); busy cycles by engine kind.</p>\n",
                     shown, s.ops.size());
  out += "<table id=\"ops-table\"><tr><th>op</th><th>span (cycles)</th><th>µs</th>"
         "<th>instrs</th>";
  for (std::string_view k : kEngineKinds)
    out += fmt::format("<th>{}</th>", k);
  out += "<th>read B</th><th>write B</th><th>MACs</th><th>cores</th><th>FLOP/B</th>"
         "<th>bound</th><th>achieved</th><th>of bound</th><th>regime</th></tr>\n";
  for (size_t i = 0; i < shown; ++i) {
    const OpSummary &o = s.ops[i];
    const Roofline &r = o.roofline;
    out += fmt::format("<tr><td class=\"op\"><span class=\"sw\" style=\"background:{}\">"
                       "</span>{}</td><td>{}</td><td>{:.3f}</td><td>{}</td>",
                       opColour(o.op), esc(opLabel(o.op)), o.span(),
                       static_cast<double>(o.span()) * usPerCycle, o.instructions);
    for (Cycle b : o.busy)
      out += fmt::format("<td>{}</td>", b);
    out += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                       o.readBytes, o.writeBytes, o.macs, o.cores, intensityText(r));
    if (r.regime == "-")
      out += "<td>-</td><td>-</td><td>-</td><td>-</td></tr>\n";
    else
      out += fmt::format(
          "<td>{:.2f} {}</td><td>{:.3f} {}</td><td>{}</td><td>{}</td></tr>\n", r.bound,
          esc(r.unit), r.achieved, esc(r.unit), percent(r.fraction), esc(r.regime));
  }
  out += "</table>\n";
}

void criticalPathTables(std::string &out, const Summary &s) {
  if (!s.hasCriticalPath) {
    out += "<p class=\"missing\">This file has no critical path (spyre sim writes it "
           "with --stats or --trace).</p>\n";
    return;
  }
  Cycle sum = 0;
  std::map<std::string, Cycle> byOp;
  Cycle edges = 0;
  for (const PathSegment &seg : s.criticalPath) {
    sum += seg.cycles();
    if (seg.edge == ReleaseEdge::None)
      byOp[seg.op] += seg.cycles();
    else
      edges += seg.cycles();
  }
  std::vector<std::pair<std::string, Cycle>> ranked(byOp.begin(), byOp.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  const auto total = static_cast<double>(std::max<Cycle>(sum, 1));
  out += fmt::format("<p>{} cycles in {} segments: runs of one stream and one op, and "
                     "the releases between them (signal, transfer, barrier). Its cycles "
                     "add up to the run's.</p>\n",
                     sum, s.criticalPath.size());
  out += "<table id=\"critical-path-ops\"><tr><th>on the path</th><th>cycles</th>"
         "<th>share</th></tr>\n";
  for (const auto &[op, cycles] : ranked)
    out += fmt::format("<tr><td class=\"op\"><span class=\"sw\" style=\"background:{}\">"
                       "</span>{}</td><td>{}</td><td class=\"bar\"><span style=\"width:"
                       "{:.1f}px\"></span>{}</td></tr>\n",
                       opColour(op), esc(opLabel(op)), cycles,
                       60.0 * static_cast<double>(cycles) / total,
                       percent(static_cast<double>(cycles) / total));
  if (edges > 0)
    out += fmt::format("<tr><td>releases (edges)</td><td>{}</td><td>{}</td></tr>\n",
                       edges, percent(static_cast<double>(edges) / total));
  out += "</table>\n";

  out += "<details><summary>Every segment, in time order</summary>\n"
         "<table id=\"critical-path-table\"><tr><th>cycles</th><th>start</th><th>end</th>"
         "<th>kind</th><th>where</th><th>op</th><th>busy</th><th>bw wait</th>"
         "<th>instructions</th></tr>\n";
  for (const PathSegment &seg : s.criticalPath) {
    const bool runSeg = seg.edge == ReleaseEdge::None;
    const bool hasInstrs = runSeg && seg.instructions > 0;
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>\n",
        seg.cycles(), seg.start, seg.end,
        runSeg ? "run" : std::string(releaseEdgeName(seg.edge)), esc(seg.where),
        hasInstrs ? esc(opLabel(seg.op)) : "", hasInstrs ? std::to_string(seg.busy) : "",
        hasInstrs ? std::to_string(seg.bandwidth) : "", esc(seg.what));
  }
  out += "</table></details>\n";
}

/// The page's style: system fonts, compact tables, charts as blocks.
constexpr std::string_view kStyle = R"(body{margin:24px;max-width:1240px;color:#1d232a;
  font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
h3{font-size:15px;margin:16px 0 6px}
.meta{color:#4a5560;margin:0 0 8px}.meta b{color:#1d232a}.note{color:#4a5560}
p.missing{background:#fff6e0;border-left:4px solid #e0a800;padding:6px 10px}
nav a{margin-right:14px}
svg.chart{display:block;font:10px "DejaVu Sans",sans-serif;fill:#1d232a}
svg .core{font-weight:bold}svg .lane{font-size:8px}
svg .roof{font-size:11px;fill:#333}svg .label{font-size:10px}
svg text.note{font-size:10px;fill:#4a5560}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{padding:2px 7px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f3f4f6}td.op,td.text{text-align:left}
table.heat td{min-width:46px}
td.bar span{display:inline-block;height:9px;background:#3b7dd8;margin-right:6px;
  vertical-align:middle}
span.sw{display:inline-block;width:10px;height:10px;margin-right:6px;vertical-align:middle}
details{margin:8px 0}summary{cursor:pointer;color:#2b5fa8}
)";

} // namespace

// ------------------------------------------------------------ public

RunData readRunData(std::string_view text, const std::string &fileName) {
  checkJsonDepth(text, fileName);
  json root = json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded())
    throw UserError(SourceLoc{fileName}, "not valid JSON");
  RunData run;
  if (!root.is_object() || !root.contains("traceEvents")) {
    run.summary = readSummary(text, fileName);
    return run;
  }
  run.profile = profileFromTrace(root, fileName);
  run.summary = summarize(*run.profile);
  readCounters(root["traceEvents"], fileName, run);
  return run;
}

std::string opColour(std::string_view op) {
  if (op.empty())
    return "#9aa0a6"; // instructions without a source op: neutral grey
  const uint64_t h = fnv1a64(op);
  const double hue = static_cast<double>(h % 360);
  const double sat = static_cast<double>(55 + (h >> 16) % 30) / 100.0;
  const double light = static_cast<double>(42 + (h >> 32) % 18) / 100.0;
  // HSL to RGB (the CSS Color 3 formulas), so the colour is plain #rrggbb.
  const double c = (1 - std::abs(2 * light - 1)) * sat;
  const double hp = hue / 60;
  const double x = c * (1 - std::abs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(hp)) {
  case 0:
    r = c;
    g = x;
    break;
  case 1:
    r = x;
    g = c;
    break;
  case 2:
    g = c;
    b = x;
    break;
  case 3:
    g = x;
    b = c;
    break;
  case 4:
    r = x;
    b = c;
    break;
  default:
    r = c;
    b = x;
    break;
  }
  const double m = light - c / 2;
  auto byte = [&](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b));
}

std::string htmlReport(const RunData &run, const RunReportOptions &options) {
  const Summary &s = run.summary;
  const std::string program = s.program.empty() ? "(unnamed)" : s.program;
  const double usTotal = static_cast<double>(s.totalCycles) / (s.clockGhz * 1000.0);
  std::set<int> cores;
  for (const EngineSummary &e : s.engines)
    cores.insert(e.core);
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += fmt::format("<title>spyre report: {}</title>\n", esc(program));
  out += "<style>\n" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += fmt::format("<h1>{}</h1>\n", esc(program));
  out += fmt::format(
      "<p class=\"meta\"><b>{}</b> cycles = <b>{:.3f} µs</b> at {:g} GHz &#183; {} "
      "core{} &#183; PT peak {:g} MAC/cycle per core &#183; device memory peak {:.1f} "
      "GB/s &#183; from a {}</p>\n",
      s.totalCycles, usTotal, s.clockGhz, cores.size(), cores.size() == 1 ? "" : "s",
      s.peakMacsPerCyclePerCore, s.memoryPeakGbps,
      run.fromTrace() ? "trace (spyre sim --trace)"
                      : "statistics JSON (spyre sim --stats)");
  if (!run.fromTrace())
    out += "<p class=\"missing\" id=\"stats-only\">Made from a statistics JSON: the "
           "timeline, LX occupancy and device-memory bandwidth charts need a trace "
           "(spyre sim --trace FILE). This page has the roofline chart and the "
           "tables.</p>\n";
  if (!s.complete)
    out += "<p class=\"missing\" id=\"partial\">The trace holds part of the run "
           "(--trace-window or --trace-cores): the charts and tables count only the "
           "slices it holds.</p>\n";
  out += "<nav>";
  if (run.fromTrace())
    out += "<a href=\"#timeline-section\">timeline</a>";
  if (run.fromTrace())
    out += "<a href=\"#counters-section\">LX and memory</a>";
  out += "<a href=\"#roofline-section\">roofline</a>";
  out += "<a href=\"#engines-section\">engines</a><a href=\"#ops-section\">ops</a>"
         "<a href=\"#critical-path-section\">critical path</a></nav>\n";

  if (run.fromTrace()) {
    const Profile &p = *run.profile;
    TimeScale ts{0, usTotal};
    if (!p.complete && !p.records.empty()) {
      Cycle lo = p.records.front().start, hi = 0;
      for (const InstrRecord &r : p.records) {
        lo = std::min(lo, r.start);
        hi = std::max(hi, r.end);
      }
      ts = {static_cast<double>(lo) / (s.clockGhz * 1000.0),
            static_cast<double>(hi) / (s.clockGhz * 1000.0)};
    }
    if (!(ts.t1 > ts.t0))
      ts.t1 = ts.t0 + 0.001;

    out += "<h2 id=\"timeline-section\">Timeline</h2>\n";
    out += "<p>One row group per core, one lane per engine stream. Each slice is one "
           "instruction, stalls included, coloured by its source op; hover for "
           "details. The black line is the critical path.</p>\n";
    opLegend(out, opsOf(run));
    std::string chart;
    const TimelineInfo info = timeline(chart, run, ts, options.maxTimelineRects);
    if (info.merged)
      out +=
          fmt::format("<p class=\"note\" id=\"timeline-merged\">{} slices drawn as {} "
                      "rectangle{}: slices thinner than {:g} pixel{} ({:.1f} ns) are "
                      "merged with their neighbours of the same op, and with each other "
                      "when of different ops (coloured by the op with most time); "
                      "hover a rectangle for what it holds.</p>\n",
                      info.slices, info.rects, info.rects == 1 ? "" : "s",
                      info.thresholdPx, info.thresholdPx == 1 ? "" : "s",
                      info.thresholdPx * (ts.t1 - ts.t0) * 1000.0 / kPlotWidth);
    out += chart;

    out += "<h2 id=\"counters-section\">LX and device memory over time</h2>\n";
    out += "<h3>LX written per core</h3>\n<p>The trace's <code>lx written bytes</code> "
           "track: the LX bytes of each core that some instruction has written so far "
           "(a high-water mark: the simulator does not know when data dies). Every "
           "row has the same scale, up to the largest value, written at its right.</p>\n";
    if (run.lxWritten.empty())
      out += "<p class=\"missing\">This trace has no LX counter track.</p>\n";
    else
      lxChart(out, run, ts);
    out += "<h3>Device-memory bandwidth</h3>\n<p>The trace's <code>device memory "
           "GB/s</code> track: bytes the memory channel moved in each window of the "
           "counter, read and write stacked, against the interface peak.</p>\n";
    if (run.memoryRead.empty())
      out += "<p class=\"missing\">This trace has no device-memory counter track.</p>\n";
    else
      memoryChart(out, run, ts);
  }

  out += "<h2 id=\"roofline-section\">Roofline</h2>\n";
  out +=
      "<p>Each op that multiplies, at its arithmetic intensity (2 FLOP per MAC over "
      "the device-memory bytes its loads and stores moved) and the TFLOP/s it achieved "
      "over its span. The solid roof is the whole run's cores: the memory slope at the "
      "device-memory peak, then the PT compute peak; dashed roofs are for ops that ran "
      "on fewer cores. Each op's own bound is in the ops table.</p>\n";
  if (s.hasOps)
    rooflineChart(out, run);
  else
    out += "<p class=\"missing\">This file has no per-op records (spyre sim writes them "
           "with --stats or --trace).</p>\n";

  out += "<h2 id=\"engines-section\">Engines</h2>\n";
  utilisationTables(out, s);
  out += "<h2 id=\"ops-section\">Ops</h2>\n";
  if (s.hasOps)
    opsTable(out, s, options.topOps);
  else
    out += "<p class=\"missing\">This file has no per-op records.</p>\n";
  out += "<h2 id=\"critical-path-section\">Critical path</h2>\n";
  criticalPathTables(out, s);
  out +=
      "<p class=\"note\">Written by spyre report. docs/report.md describes each chart; "
      "docs/sim-output.md the figures.</p>\n</body>\n</html>\n";
  return out;
}

} // namespace spyre::sim
