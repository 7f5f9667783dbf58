// The charts of the run report (RunCharts.h): the engine timeline, the LX
// and device-memory counter charts and the roofline chart, as inline SVG.
//
// Everything is written with fixed number formats and in a fixed order, so
// the same input gives the same bytes on every machine.
#include "sim/analysis/RunCharts.h"

#include "support/Diagnostic.h"

#include <cmath>
#include <map>
#include <set>

namespace spyre::sim::runreport {

namespace {

// ------------------------------------------------------------ layout

constexpr double kSvgWidth = 1200;
constexpr double kLaneHeight = 8;
constexpr double kLanePitch = 9;
constexpr double kCoreGap = 6;
constexpr double kAxisHeight = 24;
constexpr double kStalledHeight = 2.5;
constexpr const char *kSvgOpen = "<svg xmlns=\"http://www.w3.org/2000/svg\"";

/// Ticks along `y`, labelled in µs, and grid lines from `gridTop` to
/// `gridBottom` (one path).
void timeAxis(std::string &out, const TimeScale &ts, double y, double gridTop,
              double gridBottom, bool labelsAbove) {
  const double step = niceStep(ts.t1 - ts.t0, 10);
  const int decimals = decimalsFor(step);
  std::string grid, ticks, labels;
  const auto first = static_cast<int64_t>(std::ceil(ts.t0 / step - 1e-9));
  for (int64_t k = first;; ++k) {
    const double t = static_cast<double>(k) * step;
    if (t > ts.t1 + step * 1e-9)
      break;
    const double x = ts.x(t);
    grid += fmt::format("M{} {}V{}", px(x), px(gridTop), px(gridBottom));
    ticks += fmt::format("M{} {}v{}", px(x), px(y), labelsAbove ? "-4" : "4");
    labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                          px(x), px(labelsAbove ? y - 7 : y + 14),
                          fmt::format("{:.{}f}", t, decimals));
  }
  out += fmt::format("<path d=\"{}\" stroke=\"#e2e2e2\" stroke-width=\"0.6\"/>", grid);
  out += fmt::format("<path d=\"M{} {}H{}{}\" stroke=\"#555\" stroke-width=\"0.8\" "
                     "fill=\"none\"/>",
                     px(kPlotLeft), px(y), px(kPlotRight), ticks);
  out += "<g class=\"axis\">" + labels;
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">µs</text></g>",
                     px(kPlotLeft - 8), px(labelsAbove ? y - 7 : y + 14));
}

/// A counter track as a filled step area between `yBase` and `yBase -
/// height`. Samples closer than half a pixel fold into one step holding
/// their maximum, so the path stays small on long runs and peaks stay
/// visible.
std::string stepArea(const std::vector<CounterSample> &samples, const TimeScale &ts,
                     double yBase, double height, double vMax) {
  std::vector<std::pair<double, double>> steps; // x, value
  for (const CounterSample &s : samples) {
    const double x = ts.x(s.us);
    if (!steps.empty() && x - steps.back().first < 0.5) {
      steps.back().second = std::max(steps.back().second, s.value);
      continue;
    }
    steps.emplace_back(x, s.value);
  }
  auto y = [&](double v) { return yBase - std::min(v, vMax) / vMax * height; };
  std::string d = fmt::format("M{} {}", px(kPlotLeft), px(yBase));
  for (size_t i = 0; i < steps.size(); ++i) {
    const double xEnd = i + 1 < steps.size() ? steps[i + 1].first : kPlotRight;
    d += fmt::format("H{}V{}H{}", px(steps[i].first), px(y(steps[i].second)), px(xEnd));
  }
  d += fmt::format("H{}V{}Z", px(kPlotRight), px(yBase));
  return d;
}

// ------------------------------------------------------------ timeline

/// One rectangle of a lane: one slice, or neighbouring slices merged.
struct LaneRect {
  Cycle start = 0;
  Cycle end = 0;
  Cycle busy = 0;
  Cycle duration = 0; ///< of the slices themselves, without gaps
  uint64_t slices = 0;
  uint32_t mnemonic = kNoName;                 ///< kNoName once two mnemonics mix
  std::vector<std::pair<uint32_t, Cycle>> ops; ///< op, cycles, first seen first

  uint32_t mainOp() const {
    size_t best = 0;
    for (size_t i = 1; i < ops.size(); ++i)
      if (ops[i].second > ops[best].second)
        best = i;
    return ops[best].first;
  }
  void add(const InstrRecord &r) {
    end = std::max(end, r.end);
    busy += r.busy;
    duration += r.end - r.start;
    if (slices == 0)
      mnemonic = r.mnemonic;
    else if (mnemonic != r.mnemonic)
      mnemonic = kNoName;
    ++slices;
    for (auto &[op, cycles] : ops)
      if (op == r.op) {
        cycles += r.end - r.start;
        return;
      }
    ops.emplace_back(r.op, r.end - r.start);
  }
};

struct Lane {
  uint32_t stream = 0;
  int core = 0;
  std::string engine;
  std::vector<size_t> records; ///< by start cycle
  std::vector<LaneRect> rects;
  double y = 0;
};

bool mostlyStalled(Cycle busy, Cycle duration) { return busy * 2 < duration; }

/// Merges the slices of one lane: a slice joins the rectangle before it
/// when the gap between them is under `threshold` cycles and one of the two
/// is thinner than the threshold, and either both are of the same op and
/// both mostly busy or both mostly stalled (so a short multiply between two
/// long waits stays visible), or both are thinner than the threshold (then
/// the rectangle takes the colour of the op with most cycles in it). Wide
/// slices stay one rectangle each, and a lane has at most about two
/// rectangles per threshold of time.
std::vector<LaneRect> mergeLane(const Profile &p, const std::vector<size_t> &records,
                                double threshold) {
  std::vector<LaneRect> out;
  for (size_t i : records) {
    const InstrRecord &r = p.records[i];
    if (r.end == r.start)
      continue; // `halt`: no time, nothing to draw
    if (!out.empty()) {
      LaneRect &cur = out.back();
      const bool close =
          static_cast<double>(r.start) - static_cast<double>(cur.end) < threshold;
      const bool sameOp =
          cur.ops.size() == 1 && cur.ops[0].first == r.op &&
          mostlyStalled(cur.busy, cur.duration) == mostlyStalled(r.busy, r.end - r.start);
      const bool curThin = static_cast<double>(cur.end - cur.start) < threshold;
      const bool newThin = static_cast<double>(r.end - r.start) < threshold;
      if (close && ((sameOp && (curThin || newThin)) || (curThin && newThin))) {
        cur.add(r);
        continue;
      }
    }
    LaneRect rect;
    rect.start = r.start;
    rect.end = r.start;
    rect.add(r);
    out.push_back(std::move(rect));
  }
  return out;
}

std::vector<Lane> lanesOf(const Profile &p) {
  std::vector<Lane> lanes;
  std::vector<uint32_t> order(p.streams.size());
  for (uint32_t s = 0; s < order.size(); ++s)
    order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return p.streams[a].core < p.streams[b].core;
  });
  std::vector<size_t> laneOf(p.streams.size());
  for (uint32_t s : order) {
    laneOf[s] = lanes.size();
    lanes.push_back({s, p.streams[s].core, p.streams[s].engine, {}, {}, 0});
  }
  for (size_t i = 0; i < p.records.size(); ++i)
    lanes[laneOf[p.records[i].stream]].records.push_back(i);
  for (Lane &lane : lanes)
    std::stable_sort(lane.records.begin(), lane.records.end(), [&](size_t a, size_t b) {
      return p.records[a].start < p.records[b].start;
    });
  return lanes;
}

std::string laneKey(int core, std::string_view engine) {
  return "core " + std::to_string(core) + " " + std::string(engine);
}

std::string rectTitle(const Profile &p, const Lane &lane, const LaneRect &r,
                      double clockGhz) {
  const double usPerCycle = 1.0 / (clockGhz * 1000.0);
  std::string what;
  if (r.slices == 1)
    what = std::string(p.nameOf(r.mnemonic));
  else if (r.mnemonic != kNoName)
    what = fmt::format("{} x{}", p.nameOf(r.mnemonic), r.slices);
  else
    what = fmt::format("{} instructions", r.slices);
  std::string ops = opLabel(p.nameOf(r.mainOp()));
  if (r.ops.size() > 1)
    ops +=
        fmt::format(" and {} other op{}", r.ops.size() - 1, r.ops.size() == 2 ? "" : "s");
  return fmt::format(
      "{} {}: {}, {}; {} to {} ({} cycles), busy {}", laneKey(lane.core, lane.engine),
      ops, what, r.slices > 1 ? "merged" : "one slice",
      usText(static_cast<double>(r.start) * usPerCycle),
      usText(static_cast<double>(r.end) * usPerCycle), r.end - r.start,
      percent(r.duration ? static_cast<double>(r.busy) / static_cast<double>(r.duration)
                         : 0.0));
}

} // namespace

std::vector<std::string> opsOf(const RunData &run) {
  std::set<std::string> names;
  for (const OpSummary &o : run.summary.ops)
    names.insert(o.op);
  return {names.begin(), names.end()};
}

void opLegend(std::string &out, const std::vector<std::string> &ops) {
  constexpr double kColumn = 236;
  constexpr double kRow = 16;
  const auto perRow = static_cast<size_t>(kSvgWidth / kColumn);
  const size_t rows = (ops.size() + perRow - 1) / perRow + 1;
  out += fmt::format("{} width=\"{}\" height=\"{}\" class=\"chart\">", kSvgOpen,
                     px(kSvgWidth), px(static_cast<double>(rows) * kRow + 6));
  out += "<g id=\"op-legend\">";
  for (size_t i = 0; i < ops.size(); ++i) {
    const double x = 6 + static_cast<double>(i % perRow) * kColumn;
    const double y = 4 + static_cast<double>(i / perRow) * kRow;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{}\">{}</text>",
                       px(x), px(y), opColour(ops[i]), px(x + 17), px(y + 9),
                       esc(opLabel(ops[i])));
  }
  const double y = 4 + static_cast<double>(rows - 1) * kRow;
  out += fmt::format(
      "<rect x=\"6\" y=\"{0}\" width=\"12\" height=\"{1}\" fill=\"#888\"/>"
      "<text x=\"23\" y=\"{2}\">thin: the engine was stalled more than busy (waiting "
      "for a signal, a barrier, memory, ...)</text>"
      "<path d=\"M{3} {4}h14\" stroke=\"#111\" stroke-width=\"1.6\"/>"
      "<text x=\"{5}\" y=\"{2}\">critical path</text>",
      px(y + 10 - kStalledHeight), kStalledHeight, px(y + 9), px(6 + 3 * kColumn),
      px(y + 5), px(6 + 3 * kColumn + 19));
  out += "</g></svg>\n";
}

TimelineInfo timeline(std::string &out, const RunData &run, const TimeScale &ts,
                      size_t maxRects) {
  const Profile &p = *run.profile;
  const double clockGhz = p.clockGhz;
  const double cyclesPerPx = (ts.t1 - ts.t0) * clockGhz * 1000.0 / kPlotWidth;
  std::vector<Lane> lanes = lanesOf(p);

  // Coarsen the merge threshold until the rectangles fit the budget.
  TimelineInfo info;
  for (int round = 0; round < 40; ++round) {
    info.rects = 0;
    info.slices = 0;
    info.merged = false;
    for (Lane &lane : lanes) {
      lane.rects = mergeLane(p, lane.records, info.thresholdPx * cyclesPerPx);
      info.rects += lane.rects.size();
      for (const LaneRect &r : lane.rects) {
        info.slices += r.slices;
        info.merged = info.merged || r.slices > 1;
      }
    }
    if (info.rects <= maxRects)
      break;
    info.thresholdPx *= 2;
  }

  // Lane positions: one group per core, the engines in stream order.
  double y = kAxisHeight + 4;
  std::map<std::string, double> laneMid;
  for (size_t i = 0; i < lanes.size(); ++i) {
    if (i > 0 && lanes[i].core != lanes[i - 1].core)
      y += kCoreGap;
    lanes[i].y = y;
    laneMid[laneKey(lanes[i].core, lanes[i].engine)] = y + kLaneHeight / 2;
    y += kLanePitch;
  }
  const double bottom = y + 2;
  const double height = bottom + kAxisHeight;

  out += fmt::format("{} width=\"{}\" height=\"{}\" class=\"chart\">", kSvgOpen,
                     px(kSvgWidth), px(height));
  out += "<g id=\"timeline\">";
  // Core bands and labels.
  for (size_t i = 0; i < lanes.size();) {
    size_t j = i;
    while (j < lanes.size() && lanes[j].core == lanes[i].core)
      ++j;
    const double top = lanes[i].y - 1;
    const double h = lanes[j - 1].y + kLanePitch - top;
    if (lanes[i].core % 2 == 0)
      out += fmt::format("<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" "
                         "fill=\"#f3f4f6\"/>",
                         px(top), px(kSvgWidth), px(h));
    out += fmt::format("<text x=\"6\" y=\"{}\" class=\"core\">core {}</text>",
                       px(top + 10), lanes[i].core);
    i = j;
  }
  timeAxis(out, ts, kAxisHeight, kAxisHeight, bottom, true);
  out += "<g class=\"lane\">";
  for (const Lane &lane : lanes)
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                       px(kPlotLeft - 6), px(lane.y + kLaneHeight - 1), esc(lane.engine));
  out += "</g>";
  const double usPerCycle = 1.0 / (clockGhz * 1000.0);
  out += "<g class=\"slices\">";
  for (const Lane &lane : lanes)
    for (const LaneRect &r : lane.rects) {
      const double x0 = ts.x(static_cast<double>(r.start) * usPerCycle);
      const double x1 = ts.x(static_cast<double>(r.end) * usPerCycle);
      // Wide enough to be seen even when it is one short instruction.
      const double w = std::max(x1 - x0, 0.6);
      // Mostly stalled: a thin bar at the lane's foot, so the work stands
      // out from the waiting.
      const bool stalled = mostlyStalled(r.busy, r.duration);
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
          "<title>{}</title></rect>\n",
          px(x0), px(stalled ? lane.y + kLaneHeight - kStalledHeight : lane.y), px(w),
          px(stalled ? kStalledHeight : kLaneHeight), opColour(p.nameOf(r.mainOp())),
          esc(rectTitle(p, lane, r, clockGhz)));
    }
  out += "</g>";

  // The critical path: a thick line along each run's lane, and a thin one
  // from lane to lane for the release between two runs.
  const std::vector<PathSegment> &path = run.summary.criticalPath;
  std::string runs, releases;
  bool connected = false;
  double lastX = 0, lastY = 0;
  for (const PathSegment &seg : path) {
    if (seg.edge != ReleaseEdge::None)
      continue;
    auto it = laneMid.find(seg.where);
    if (it == laneMid.end()) {
      connected = false; // outside the trace
      continue;
    }
    const double x0 = ts.x(static_cast<double>(seg.start) * usPerCycle);
    const double x1 = ts.x(static_cast<double>(seg.end) * usPerCycle);
    if (connected && (lastX != x0 || lastY != it->second))
      releases +=
          fmt::format("M{} {}L{} {}", px(lastX), px(lastY), px(x0), px(it->second));
    runs += fmt::format("M{} {}H{}", px(x0), px(it->second), px(std::max(x1, x0 + 0.6)));
    connected = true;
    lastX = x1;
    lastY = it->second;
  }
  if (!runs.empty())
    out += fmt::format("<g id=\"timeline-critical-path\"><title>critical path: {} "
                       "segments</title><path d=\"{}\" fill=\"none\" stroke=\"#111\" "
                       "stroke-width=\"0.7\" stroke-opacity=\"0.55\"/><path d=\"{}\" "
                       "fill=\"none\" stroke=\"#111\" stroke-width=\"2\"/></g>",
                       path.size(), releases, runs);
  timeAxis(out, ts, bottom, bottom, bottom, false);
  out += "</g></svg>\n";
  return info;
}

// ------------------------------------------------------------ counters

void lxChart(std::string &out, const RunData &run, const TimeScale &ts) {
  constexpr double kRow = 20;
  constexpr double kRowGap = 4;
  double vMax = 1;
  for (const auto &[core, samples] : run.lxWritten)
    for (const CounterSample &s : samples)
      vMax = std::max(vMax, s.value);
  const double top = 10;
  const double bottom =
      top + static_cast<double>(run.lxWritten.size()) * (kRow + kRowGap);
  out += fmt::format("{} width=\"{}\" height=\"{}\" class=\"chart\">", kSvgOpen,
                     px(kSvgWidth), px(bottom + kAxisHeight + 4));
  out += "<g id=\"lx-occupancy\">";
  timeAxis(out, ts, bottom + 2, top, bottom, false);
  double y = top;
  for (const auto &[core, samples] : run.lxWritten) {
    const double base = y + kRow;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                       "fill=\"#f3f4f6\"/>",
                       px(kPlotLeft), px(y), px(kPlotWidth), px(kRow));
    out += fmt::format("<path d=\"{}\" fill=\"#3b7dd8\" fill-opacity=\"0.75\">"
                       "<title>core {}: LX written so far, up to {}</title></path>",
                       stepArea(samples, ts, base, kRow, vMax), core,
                       kib(samples.empty() ? 0 : samples.back().value));
    out += fmt::format("<text x=\"6\" y=\"{}\" class=\"core\">core {}</text>"
                       "<text x=\"{}\" y=\"{}\">{}</text>",
                       px(base - 6), core, px(kPlotRight + 6), px(base - 6),
                       kib(samples.empty() ? 0 : samples.back().value));
    y += kRow + kRowGap;
  }
  out += "</g></svg>\n";
}

void memoryChart(std::string &out, const RunData &run, const TimeScale &ts) {
  constexpr double kTop = 14;
  constexpr double kHeight = 170;
  const double peak = run.summary.memoryPeakGbps;
  std::vector<CounterSample> total = run.memoryRead;
  double vMax = peak;
  for (size_t i = 0; i < total.size() && i < run.memoryWrite.size(); ++i) {
    total[i].value += run.memoryWrite[i].value;
    vMax = std::max(vMax, total[i].value);
  }
  if (!(vMax > 0))
    vMax = 1;
  const double step = niceStep(vMax * 1.05, 5);
  vMax = std::ceil(vMax * 1.05 / step) * step;
  const double base = kTop + kHeight;
  auto y = [&](double v) { return base - v / vMax * kHeight; };

  out += fmt::format("{} width=\"{}\" height=\"{}\" class=\"chart\">", kSvgOpen,
                     px(kSvgWidth), px(base + kAxisHeight + 6));
  out += "<g id=\"memory-bandwidth\">";
  std::string grid, labels;
  const int decimals = decimalsFor(step);
  for (int64_t k = 0; static_cast<double>(k) * step <= vMax * (1 + 1e-9); ++k) {
    const double v = static_cast<double>(k) * step;
    grid += fmt::format("M{} {}H{}", px(kPlotLeft), px(y(v)), px(kPlotRight));
    labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.{}f}</text>",
                          px(kPlotLeft - 6), px(y(v) + 3), v, decimals);
  }
  out += fmt::format("<path d=\"{}\" stroke=\"#e2e2e2\" stroke-width=\"0.6\"/>", grid);
  out += "<g class=\"axis\">" + labels +
         fmt::format("<text x=\"6\" y=\"{}\">GB/s</text></g>", px(kTop + 4));
  timeAxis(out, ts, base, base, base, false);
  out += fmt::format("<path d=\"{}\" fill=\"#e8913a\" fill-opacity=\"0.85\">"
                     "<title>write</title></path>",
                     stepArea(total, ts, base, kHeight, vMax));
  out += fmt::format("<path d=\"{}\" fill=\"#3b7dd8\" fill-opacity=\"0.85\">"
                     "<title>read</title></path>",
                     stepArea(run.memoryRead, ts, base, kHeight, vMax));
  out += fmt::format("<path d=\"M{} {}H{}\" stroke=\"#c0392b\" stroke-width=\"1.2\" "
                     "stroke-dasharray=\"6 4\"/>"
                     "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#c0392b\">"
                     "peak {:.1f} GB/s</text>",
                     px(kPlotLeft), px(y(peak)), px(kPlotRight), px(kPlotRight),
                     px(y(peak) - 4), peak);
  out += fmt::format(
      "<rect x=\"{0}\" y=\"2\" width=\"12\" height=\"9\" fill=\"#3b7dd8\"/>"
      "<text x=\"{1}\" y=\"10\">read</text>"
      "<rect x=\"{2}\" y=\"2\" width=\"12\" height=\"9\" fill=\"#e8913a\"/>"
      "<text x=\"{3}\" y=\"10\">write (stacked on read)</text>",
      px(kPlotLeft), px(kPlotLeft + 16), px(kPlotLeft + 70), px(kPlotLeft + 86));
  out += "</g></svg>\n";
}

// ------------------------------------------------------------ roofline

namespace {

double pow10(int k) {
  double v = 1;
  for (int i = 0; i < k; ++i)
    v *= 10;
  for (int i = 0; i > k; --i)
    v /= 10;
  return v;
}

int floorLog10(double v) {
  int k = 0;
  while (pow10(k + 1) <= v)
    ++k;
  while (pow10(k) > v)
    --k;
  return k;
}

std::string decadeLabel(int k) {
  if (k >= -3 && k <= 4)
    return fmt::format("{:g}", pow10(k));
  return fmt::format("1e{}", k);
}

struct RoofPoint {
  const OpSummary *op = nullptr;
  double x = 0;
  double y = 0;
  bool infinite = false;
};

} // namespace

void rooflineChart(std::string &out, const RunData &run) {
  const Summary &s = run.summary;
  constexpr double kW = 1000;
  constexpr double kH = 470;
  constexpr double kLeft = 70;
  constexpr double kTop = 16;
  constexpr double kPw = 560;
  constexpr double kPh = 400;
  std::set<int> cores;
  for (const EngineSummary &e : s.engines)
    cores.insert(e.core);
  const int chipCores = std::max<int>(1, static_cast<int>(cores.size()));
  auto computeRoof = [&](int n) {
    return 2.0 * s.peakMacsPerCyclePerCore * n * s.clockGhz / 1000.0; // TFLOP/s
  };
  const double mem = s.memoryPeakGbps; // GB/s: TFLOP/s = FLOP/B x GB/s / 1000
  const double roof = computeRoof(chipCores);

  std::vector<RoofPoint> points;
  std::vector<std::string> skipped;
  std::set<int> coreCounts;
  for (const OpSummary &o : s.ops) {
    if (o.macs == 0 || o.span() == 0 || !(o.roofline.achieved > 0)) {
      skipped.push_back(opLabel(o.op));
      continue;
    }
    points.push_back({&o, o.roofline.intensity, o.roofline.achieved,
                      std::isinf(o.roofline.intensity)});
    coreCounts.insert(o.cores);
  }
  std::sort(skipped.begin(), skipped.end());

  // Axes: whole decades around the points and the ridge point.
  const double ridge = mem > 0 && roof > 0 ? roof * 1000.0 / mem : 1;
  double xMin = ridge / 10, xMax = ridge * 10, yMin = roof / 100, yMax = roof;
  for (const RoofPoint &pt : points) {
    if (!pt.infinite) {
      xMin = std::min(xMin, pt.x);
      xMax = std::max(xMax, pt.x);
    }
    yMin = std::min(yMin, pt.y);
    yMax = std::max(yMax, pt.y);
  }
  if (!(roof > 0) || !(mem > 0)) {
    xMin = std::max(xMin, 1e-3);
    yMin = std::max(yMin, 1e-6);
    yMax = std::max(yMax, yMin * 10);
  }
  // Points keep some room from the frame.
  const int x0 = floorLog10(xMin / 1.5), x1 = floorLog10(xMax * 1.5) + 1;
  const int y0 = floorLog10(yMin / 1.5), y1 = floorLog10(yMax * 1.0001) + 1;
  auto px0 = [&](double v) { return kLeft + (std::log10(v) - x0) / (x1 - x0) * kPw; };
  auto py0 = [&](double v) {
    return kTop + kPh - (std::log10(v) - y0) / (y1 - y0) * kPh;
  };
  const double xLo = pow10(x0), xHi = pow10(x1), yLo = pow10(y0);

  out += fmt::format("{} width=\"{}\" height=\"{}\" class=\"chart\">", kSvgOpen, px(kW),
                     px(kH));
  out += "<g id=\"roofline\">";
  std::string grid, minor, labels;
  for (int k = x0; k <= x1; ++k) {
    const double x = px0(pow10(k));
    grid += fmt::format("M{} {}V{}", px(x), px(kTop), px(kTop + kPh));
    labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                          px(x), px(kTop + kPh + 14), decadeLabel(k));
    for (int m = 2; m < 10 && k < x1; ++m)
      minor += fmt::format("M{} {}V{}", px(px0(m * pow10(k))), px(kTop), px(kTop + kPh));
  }
  for (int k = y0; k <= y1; ++k) {
    const double y = py0(pow10(k));
    grid += fmt::format("M{} {}H{}", px(kLeft), px(y), px(kLeft + kPw));
    labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                          px(kLeft - 5), px(y + 3), decadeLabel(k));
    for (int m = 2; m < 10 && k < y1; ++m)
      minor +=
          fmt::format("M{} {}H{}", px(kLeft), px(py0(m * pow10(k))), px(kLeft + kPw));
  }
  out += fmt::format("<path d=\"{}\" stroke=\"#f0f0f0\" stroke-width=\"0.6\"/>", minor);
  out += fmt::format("<path d=\"{}\" stroke=\"#d6d6d6\" stroke-width=\"0.8\"/>", grid);
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#555\" stroke-width=\"0.8\"/>",
                     px(kLeft), px(kTop), px(kPw), px(kPh));
  out += "<g class=\"axis\">" + labels +
         fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic "
                     "intensity (FLOP per device-memory byte, 2 FLOP per MAC)</text>"
                     "<text transform=\"translate(16 {}) rotate(-90)\" "
                     "text-anchor=\"middle\">achieved TFLOP/s</text></g>",
                     px(kLeft + kPw / 2), px(kTop + kPh + 32), px(kTop + kPh / 2));

  // Roofs: the chip's, and dashed ones for the core counts ops ran on.
  auto roofPath = [&](double top) {
    const double start = std::max(xLo, yLo * 1000.0 / mem);
    const double knee = top * 1000.0 / mem;
    if (knee <= xLo)
      return fmt::format("M{} {}H{}", px(px0(xLo)), px(py0(top)), px(px0(xHi)));
    return fmt::format("M{} {}L{} {}H{}", px(px0(start)), px(py0(start * mem / 1000.0)),
                       px(px0(std::min(knee, xHi))), px(py0(top)), px(px0(xHi)));
  };
  if (roof > 0 && mem > 0) {
    for (int n : coreCounts) {
      if (n == chipCores)
        continue;
      out +=
          fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#7a7a7a\" "
                      "stroke-width=\"1\" stroke-dasharray=\"5 3\"/>"
                      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"roof\">"
                      "{} core{}: {:.2f} TFLOP/s</text>",
                      roofPath(computeRoof(n)), px(kLeft + kPw - 4),
                      px(py0(computeRoof(n)) - 4), n, n == 1 ? "" : "s", computeRoof(n));
    }
    out +=
        fmt::format("<path id=\"roofline-roof\" d=\"{}\" fill=\"none\" stroke=\"#222\" "
                    "stroke-width=\"2\"/>",
                    roofPath(roof));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"roof\">"
                       "compute roof {:.1f} TFLOP/s ({} core{} x {:g} MAC/cycle x "
                       "{:g} GHz)</text>",
                       px(kLeft + kPw - 4), px(py0(roof) - 5), roof, chipCores,
                       chipCores == 1 ? "" : "s", s.peakMacsPerCyclePerCore, s.clockGhz);
    // The slope's label lies on it, above the line, two thirds of the way
    // up, where the points (below the roofs) are least likely to be.
    const double from = std::max(xLo, yLo * 1000.0 / mem);
    const double to = std::min(ridge, xHi);
    if (from < to) {
      const double lx = from * std::pow(to / from, 0.6);
      const double x = px0(lx), y = py0(lx * mem / 1000.0);
      const double angle = std::atan2(py0(to * mem / 1000.0) - py0(from * mem / 1000.0),
                                      px0(to) - px0(from)) *
                           180.0 / 3.141592653589793;
      out +=
          fmt::format("<text transform=\"rotate({:.1f} {} {})\" x=\"{}\" y=\"{}\" "
                      "text-anchor=\"middle\" class=\"roof\">memory {:.1f} GB/s</text>",
                      angle, px(x), px(y), px(x), px(y - 5), mem);
    }
  }

  // Points, top to bottom. Points whose labels would overlap form a group
  // whose labels stand in a column right of the group's rightmost point
  // (left of it for points at infinite intensity, on the right edge), in
  // the points' order, with leader lines; a lone point has its label
  // beside it.
  std::sort(points.begin(), points.end(), [](const RoofPoint &a, const RoofPoint &b) {
    return a.y != b.y ? a.y > b.y : a.op->op < b.op->op;
  });
  constexpr double kLabelH = 12;
  constexpr double kReach = 160; // points further apart in x do not group
  struct Placed {
    const RoofPoint *pt;
    double cx, cy;
  };
  std::vector<std::vector<Placed>> groups;
  for (const RoofPoint &pt : points) {
    const Placed pl{&pt, pt.infinite ? kLeft + kPw : px0(pt.x), py0(pt.y)};
    if (!groups.empty()) {
      const Placed &last = groups.back().back();
      if (last.pt->infinite == pt.infinite && pl.cy - last.cy < kLabelH &&
          std::abs(pl.cx - groups.back().front().cx) < kReach) {
        groups.back().push_back(pl);
        continue;
      }
    }
    groups.push_back({pl});
  }
  out += "<g class=\"points\">";
  double below = kTop; // the lowest label baseline so far, so columns never overlap
  for (const std::vector<Placed> &grp : groups) {
    double edge = grp.front().cx, mid = 0;
    for (const Placed &pl : grp) {
      edge = pl.pt->infinite ? std::min(edge, pl.cx) : std::max(edge, pl.cx);
      mid += pl.cy;
    }
    mid /= static_cast<double>(grp.size());
    const bool left = grp.front().pt->infinite;
    double top = mid - kLabelH * static_cast<double>(grp.size() - 1) / 2 + 4;
    top = std::max(top, below + (below > kTop ? kLabelH : 0));
    for (size_t i = 0; i < grp.size(); ++i) {
      const Placed &pl = grp[i];
      const Roofline &r = pl.pt->op->roofline;
      const std::string label = opLabel(pl.pt->op->op);
      out +=
          fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" stroke=\"#222\" "
                      "stroke-width=\"0.8\"><title>{}: {} FLOP/B, {:.3f} TFLOP/s of "
                      "{:.2f} ({}), {}, {} core{}</title></circle>",
                      px(pl.cx), px(pl.cy), opColour(pl.pt->op->op), esc(label),
                      pl.pt->infinite ? std::string("inf (no device-memory bytes)")
                                      : fmt::format("{:.2f}", r.intensity),
                      r.achieved, r.bound, percent(r.fraction), r.regime,
                      pl.pt->op->cores, pl.pt->op->cores == 1 ? "" : "s");
      const double ly = grp.size() == 1 ? std::max(pl.cy + 4, top)
                                        : top + kLabelH * static_cast<double>(i);
      const double lx =
          left ? edge - (grp.size() == 1 ? 8 : 18) : edge + (grp.size() == 1 ? 8 : 18);
      if (grp.size() > 1 || std::abs(ly - (pl.cy + 4)) > 0.5)
        out +=
            fmt::format("<path d=\"M{} {}L{} {}\" stroke=\"#888\" stroke-width=\"0.6\" "
                        "fill=\"none\"/>",
                        px(pl.cx + (left ? -4.5 : 4.5)), px(pl.cy),
                        px(lx + (left ? 2 : -2)), px(ly - 4));
      out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\"{}>{}</text>", px(lx),
                         px(ly), left ? " text-anchor=\"end\"" : "", esc(label));
      below = std::max(below, ly);
    }
  }
  out += "</g>";
  // What is not on the chart, beside it.
  double ny = kTop + 10;
  const double nx = kLeft + kPw + 14;
  out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"note\">{} op{} plotted</text>",
                     px(nx), px(ny), points.size(), points.size() == 1 ? "" : "s");
  if (!skipped.empty()) {
    ny += 16;
    out +=
        fmt::format("<text x=\"{}\" y=\"{}\" class=\"note\">not plotted, no MACs (data "
                    "movement, SFU work):</text>",
                    px(nx), px(ny));
    for (const std::string &name : skipped) {
      ny += 12;
      if (ny > kH - 10) {
        out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"note\">...</text>", px(nx),
                           px(ny));
        break;
      }
      out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"note\">{}</text>", px(nx + 8),
                         px(ny), esc(name));
    }
  }
  out += "</g></svg>\n";
}

} // namespace spyre::sim::runreport
