// The sweep report (SweepReport.h): results read back from DIR, the Pareto front
// per model, the charts as inline SVG and the terminal table.
#include "sweep/SweepReport.h"

#include "hw/HwConfig.h"
#include "support/FileIO.h"
#include "support/Nesting.h"
#include "support/SvgChart.h"
#include "sweep/Expr.h"
#include "sweep/Results.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

namespace spyre::sweep {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct PlanAxis {
  std::string name;
  std::vector<std::string> keys;
};

struct ReportPoint {
  size_t index = 0;
  std::string id;
  std::string model;
  std::string fingerprint;
  std::map<std::string, hw::ParamValue> values; ///< by result column
  std::optional<PointResult> result;
  std::optional<double> cost;

  bool ok() const { return result && result->ok; }
  double us() const { return result->simulatedUs; }
  // A serve point's two figures of the front.
  double throughput() const { return result->serveFigures.outputThroughput; }
  double itlP99() const { return result->serveFigures.itl.p99; }
};

/// What a chart plots of a point, and which way is better.
struct Metric {
  double (*value)(const ReportPoint &);
  bool higherIsBetter = false;
  std::string title; ///< the y axis
};

const Metric kTimeMetric = {[](const ReportPoint &p) { return p.us(); }, false,
                            "simulated time (µs)"};
const Metric kItlMetric = {[](const ReportPoint &p) { return p.itlP99(); },
                           false, "ITL p99 (ms)"};
const Metric kThroughputMetric = {
    [](const ReportPoint &p) { return p.throughput(); }, true,
    "output-token throughput (tokens/s)"};

struct PlanData {
  std::string spec;
  bool serve = false; ///< a serve sweep (plan.json's kind)
  std::vector<PlanAxis> axes;
  std::vector<std::string> columns;
  std::vector<ReportPoint> points;
};

// ------------------------------------------------------------------ reading

std::optional<hw::ParamValue> valueFromJson(const json &j) {
  if (j.is_number_integer())
    return hw::ParamValue(j.get<int64_t>());
  if (j.is_number_float())
    return hw::ParamValue(j.get<double>());
  if (j.is_string())
    return hw::ParamValue(j.get<std::string>());
  return std::nullopt;
}

PlanData readPlan(const std::string &dir) {
  const std::string path = (fs::path(dir) / "plan.json").string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError(SourceLoc{dir}, "no such sweep folder");
  if (!fs::exists(path, ec))
    throw UserError(SourceLoc{dir},
                    "not a sweep folder: it has no plan.json (run `spyre "
                    "sweep SPEC -o DIR`, or `--aggregate` after a cluster "
                    "run, first)");
  const std::string text = readFile(path, kJsonFileLimit);
  checkJsonDepth(text, path);
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw UserError(SourceLoc{path}, "not valid JSON");
  try {
    PlanData plan;
    plan.spec = j.at("spec").get<std::string>();
    plan.serve = j.value("kind", "") == "serve";
    for (const json &a : j.at("axes"))
      plan.axes.push_back({a.at("name").get<std::string>(),
                           a.at("keys").get<std::vector<std::string>>()});
    plan.columns = j.at("columns").get<std::vector<std::string>>();
    for (const json &p : j.at("points")) {
      ReportPoint rp;
      rp.index = p.at("index").get<size_t>();
      rp.id = p.at("id").get<std::string>();
      // The id names the point's files: hex digits only, never a path.
      if (rp.id.empty() || rp.id.size() > 32 ||
          rp.id.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw UserError(SourceLoc{path, 0, 0, "points[].id"},
                        "must be the point's id in hex digits");
      rp.model = p.at("model").get<std::string>();
      rp.fingerprint = p.at("config_fingerprint").get<std::string>();
      for (const std::string &c : plan.columns) {
        std::optional<hw::ParamValue> v = valueFromJson(p.at("values").at(c));
        if (!v)
          throw UserError(SourceLoc{path, 0, 0, "points[].values." + c},
                          "must be a number or a string");
        rp.values.emplace(c, *v);
      }
      plan.points.push_back(std::move(rp));
    }
    return plan;
  } catch (const json::exception &e) {
    throw UserError(SourceLoc{path}, std::string("not a sweep plan: ") +
                                         e.what());
  }
}

void readResults(const std::string &dir, PlanData &plan, const Expr &cost) {
  for (ReportPoint &p : plan.points) {
    const fs::path file = fs::path(dir) / "points" / (p.id + ".json");
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      continue;
    std::optional<PointResult> r = parseResult(readFile(file.string(), kJsonFileLimit));
    if (!r || r->id != p.id || r->configFingerprint != p.fingerprint)
      continue;
    p.result = std::move(r);
    if (!p.ok())
      continue;
    const fs::path config = fs::path(dir) / "points" / p.id / "config.yaml";
    if (!fs::is_regular_file(config, ec))
      continue;
    const hw::HwConfig c = hw::loadConfigFile(config.string());
    p.cost = cost.eval([&](const std::string &name) -> double {
      if (name == kOptLevelKey)
        return p.result->optLevel;
      const hw::ParamValue v = hw::findParam(name)->field.get(c);
      if (const int64_t *i = std::get_if<int64_t>(&v))
        return static_cast<double>(*i);
      return std::get<double>(v);
    });
    if (!std::isfinite(*p.cost))
      p.cost.reset();
  }
}

Expr parseCost(const std::string &text) {
  Expr e = Expr::parse(text, SourceLoc{"--cost", 1, 1}, ExitCode::Usage);
  for (size_t i = 0; i < e.names().size(); ++i) {
    const std::string &name = e.names()[i];
    const hw::ParamInfo *p = hw::findParam(name);
    if (name == kOptLevelKey || (p && p->field.type != hw::ParamType::String))
      continue;
    throw UserError(SourceLoc{"--cost", 1, 1 + static_cast<int>(e.nameOffset(i))},
                    "'" + name + "' is not a numeric config key (names are "
                    "config keys such as lx.size_bytes, or opt_level)",
                    ExitCode::Usage);
  }
  return e;
}

// ------------------------------------------------------------------ analysis

/// The points of `model` no other point beats on both time and cost,
/// cheapest first (then fastest, then by index).
std::vector<const ReportPoint *>
paretoFront(const std::vector<const ReportPoint *> &points) {
  std::vector<const ReportPoint *> front;
  for (const ReportPoint *a : points) {
    if (!a->cost)
      continue;
    bool dominated = false;
    for (const ReportPoint *b : points)
      if (b->cost && *b->cost <= *a->cost && b->us() <= a->us() &&
          (*b->cost < *a->cost || b->us() < a->us()))
        dominated = true;
    if (!dominated)
      front.push_back(a);
  }
  std::stable_sort(front.begin(), front.end(),
                   [](const ReportPoint *a, const ReportPoint *b) {
                     if (*a->cost != *b->cost)
                       return *a->cost < *b->cost;
                     return a->us() < b->us();
                   });
  return front;
}

const ReportPoint *fastest(const std::vector<const ReportPoint *> &points) {
  const ReportPoint *best = nullptr;
  for (const ReportPoint *p : points)
    if (!best || p->us() < best->us())
      best = p;
  return best;
}

/// The text of one axis's value at a point: its keys' values joined by '/'.
std::string axisValue(const PlanAxis &axis, const ReportPoint &p) {
  std::string out;
  for (const std::string &key : axis.keys)
    out += (out.empty() ? "" : "/") + hw::formatValue(p.values.at(key));
  return out;
}

/// The distinct values of `axis` among `points`, in order of appearance.
std::vector<std::string>
categories(const PlanAxis &axis, const std::vector<const ReportPoint *> &points) {
  std::vector<std::string> out;
  for (const ReportPoint *p : points) {
    std::string v = axisValue(axis, *p);
    if (std::find(out.begin(), out.end(), v) == out.end())
      out.push_back(std::move(v));
  }
  return out;
}

std::string costText(double cost, bool bytes) {
  if (bytes && cost >= 1024 * 1024)
    return fmt::format("{:g} MiB", cost / (1024.0 * 1024.0));
  if (bytes && cost >= 1024)
    return fmt::format("{:g} KiB", cost / 1024.0);
  return fmt::format("{:g}", cost);
}

// ------------------------------------------------------------------ HTML

std::string esc(std::string_view s) { return htmlEscape(s); }

std::string px(double v) { return svgPx(v); }

/// Series colours, distinguishable in print and for most colour vision.
constexpr std::array<const char *, 8> kColours = {
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
    "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

constexpr double kWidth = 660;
constexpr double kHeight = 360;
constexpr double kLeft = 72;
constexpr double kRight = 170; ///< room for the legend
constexpr double kTop = 20;
constexpr double kBottom = 58;

/// A nice axis over [lo, hi]: bounds on multiples of a 1-2-5 step.
struct NiceAxis {
  double step = 1;
  double v0 = 0;
  double v1 = 1;
  NiceAxis(double lo, double hi) {
    const double span = hi > lo ? hi - lo : std::max(hi, 1.0);
    step = niceStep(span, 5);
    v0 = std::floor(lo / step) * step;
    v1 = std::ceil(hi / step) * step;
    if (v1 <= v0)
      v1 = v0 + step;
  }
};

/// A chart with ordinal x (categories evenly spaced) and linear y (µs, or
/// the quantity `yTitle` names).
class Chart {
public:
  Chart(std::vector<std::string> xLabels, double yMin, double yMax,
        std::string yTitle = "simulated time (µs)")
      : xLabels_(std::move(xLabels)), yTitle_(std::move(yTitle)) {
    const NiceAxis a(yMin, yMax);
    step_ = a.step;
    y0_ = a.v0;
    y1_ = a.v1;
  }

  /// A chart with linear x over [xMin, xMax] too.
  Chart(double xMin, double xMax, double yMin, double yMax, std::string yTitle)
      : Chart({}, yMin, yMax, std::move(yTitle)) {
    xAxis_ = NiceAxis(xMin, xMax);
  }

  /// Linear x: where value `v` goes.
  double xAt(double v) const {
    const double plot = kWidth - kLeft - kRight;
    return kLeft + (v - xAxis_->v0) / (xAxis_->v1 - xAxis_->v0) * plot;
  }

  double x(size_t i) const {
    const double plot = kWidth - kLeft - kRight;
    if (xLabels_.size() <= 1)
      return kLeft + plot / 2;
    return kLeft + 20 + (plot - 40) * static_cast<double>(i) /
                            static_cast<double>(xLabels_.size() - 1);
  }
  double y(double us) const {
    const double plot = kHeight - kTop - kBottom;
    return kTop + plot - (us - y0_) / (y1_ - y0_) * plot;
  }

  /// Frame, grid, ticks and axis titles.
  std::string axes(const std::string &xTitle) const {
    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" "
        "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n",
        kWidth, kHeight);
    const double bottom = kHeight - kBottom;
    const double right = kWidth - kRight;
    const int decimals = decimalsFor(step_);
    const int ticks = static_cast<int>(std::lround((y1_ - y0_) / step_));
    for (int t = 0; t <= ticks; ++t) {
      const double v = y0_ + step_ * t;
      out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" "
                         "class=\"grid\"/>\n",
                         px(kLeft), px(y(v)), px(right), px(y(v)));
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.{}f}"
                         "</text>\n",
                         px(kLeft - 6), px(y(v) + 3), v, decimals);
    }
    if (xAxis_) {
      const int xDecimals = decimalsFor(xAxis_->step);
      const int xTicks = static_cast<int>(
          std::lround((xAxis_->v1 - xAxis_->v0) / xAxis_->step));
      for (int t = 0; t <= xTicks; ++t) {
        const double v = xAxis_->v0 + xAxis_->step * t;
        out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" "
                           "y2=\"{2}\" class=\"axis\"/>\n",
                           px(xAt(v)), px(bottom), px(bottom + 4));
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">"
                           "{:.{}f}</text>\n",
                           px(xAt(v)), px(bottom + 16), v, xDecimals);
      }
    }
    // Every label when they fit, else every k-th.
    const size_t every = std::max<size_t>(1, (xLabels_.size() + 9) / 10);
    for (size_t i = 0; i < xLabels_.size(); ++i) {
      out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
                         "class=\"axis\"/>\n",
                         px(x(i)), px(bottom), px(bottom + 4));
      if (i % every == 0)
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}"
                           "</text>\n",
                           px(x(i)), px(bottom + 16), esc(xLabels_[i]));
    }
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                       "class=\"frame\"/>\n",
                       px(kLeft), px(kTop), px(right - kLeft),
                       px(bottom - kTop));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
                       "class=\"title\">{}</text>\n",
                       px((kLeft + right) / 2), px(kHeight - 14), esc(xTitle));
    out += fmt::format("<text transform=\"translate(16,{}) rotate(-90)\" "
                       "text-anchor=\"middle\" class=\"title\">{}</text>\n",
                       px((kTop + bottom) / 2), esc(yTitle_));
    return out;
  }

  static std::string legend(size_t row, const std::string &colour,
                            const std::string &label) {
    const double ly = kTop + 8 + 16 * static_cast<double>(row);
    return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" "
                       "fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                       px(kWidth - kRight + 14), px(ly - 8), colour,
                       px(kWidth - kRight + 30), px(ly + 1), esc(label));
  }

private:
  std::vector<std::string> xLabels_;
  std::string yTitle_;
  std::optional<NiceAxis> xAxis_;
  double step_ = 1;
  double y0_ = 0;
  double y1_ = 1;
};

std::string pointTitle(const PlanData &plan, const ReportPoint &p) {
  std::string t = fmt::format("point {} ({})", p.index, p.id);
  for (const std::string &c : plan.columns)
    t += fmt::format("\n{} = {}", c, hw::formatValue(p.values.at(c)));
  if (p.result->serve) {
    const ServeFigures &f = p.result->serveFigures;
    t += fmt::format("\n{:.2f} output tokens/s, {:.3f} requests/s\nITL p99 "
                     "{:.3f} ms, TTFT p99 {:.3f} ms, {} rejected",
                     f.outputThroughput, f.requestThroughput, f.itl.p99,
                     f.ttft.p99, f.rejected);
    return t;
  }
  t += fmt::format("\n{:.3f} µs, {} cycles", p.us(), p.result->cycles);
  if (p.cost)
    t += fmt::format("\ncost {:g}", *p.cost);
  return t;
}

std::pair<double, double> metricRange(const std::vector<const ReportPoint *> &ok,
                                      const Metric &metric) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  for (const ReportPoint *p : ok) {
    lo = std::min(lo, metric.value(*p));
    hi = std::max(hi, metric.value(*p));
  }
  return {lo, hi};
}

std::pair<double, double> timeRange(const std::vector<const ReportPoint *> &ok) {
  return metricRange(ok, kTimeMetric);
}

/// Simulated time against one swept parameter: a line per value of the
/// series parameter through the best time at each value, and every point
/// as a dot.
std::string parameterChart(const PlanData &plan, const PlanAxis &axis,
                           const PlanAxis *series,
                           const std::vector<const ReportPoint *> &ok,
                           const Metric &metric = kTimeMetric) {
  const std::vector<std::string> xs = categories(axis, ok);
  const std::vector<std::string> ss =
      series ? categories(*series, ok) : std::vector<std::string>{""};
  const auto [lo, hi] = metricRange(ok, metric);
  Chart chart(xs, lo, hi, metric.title);
  auto better = [&](const ReportPoint *a, const ReportPoint *b) {
    return metric.higherIsBetter ? metric.value(*a) > metric.value(*b)
                                 : metric.value(*a) < metric.value(*b);
  };
  std::string title = axis.name;
  if (axis.keys.size() > 1 || axis.keys.front() != axis.name) {
    // Keys of the section the axis is named after are shown by their leaf.
    std::string keys;
    for (const std::string &k : axis.keys)
      keys += (keys.empty() ? "" : " / ") +
              (k.starts_with(axis.name + ".") ? k.substr(axis.name.size() + 1)
                                              : k);
    title += " (" + keys + ")";
  }
  std::string out = chart.axes(title);
  for (size_t s = 0; s < ss.size(); ++s) {
    const std::string colour = kColours[s % kColours.size()];
    std::string line;
    for (size_t i = 0; i < xs.size(); ++i) {
      const ReportPoint *best = nullptr;
      for (const ReportPoint *p : ok)
        if (axisValue(axis, *p) == xs[i] &&
            (!series || axisValue(*series, *p) == ss[s]) &&
            (!best || better(p, best)))
          best = p;
      if (best)
        line += fmt::format("{}{},{}", line.empty() ? "" : " ", px(chart.x(i)),
                            px(chart.y(metric.value(*best))));
    }
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" "
                       "stroke-width=\"1.5\"/>\n",
                       line, colour);
    if (series)
      out += Chart::legend(s, colour, series->name + " = " + ss[s]);
  }
  for (const ReportPoint *p : ok) {
    const size_t i = static_cast<size_t>(
        std::find(xs.begin(), xs.end(), axisValue(axis, *p)) - xs.begin());
    const size_t s =
        series ? static_cast<size_t>(std::find(ss.begin(), ss.end(),
                                               axisValue(*series, *p)) -
                                     ss.begin())
               : 0;
    out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\" "
                       "fill-opacity=\"0.6\"><title>{}</title></circle>\n",
                       px(chart.x(i)), px(chart.y(metric.value(*p))),
                       kColours[s % kColours.size()],
                       esc(pointTitle(plan, *p)));
  }
  return out + "</svg>\n";
}

/// Simulated time against the cost: every point grey, the Pareto front
/// joined and labelled with the point indices. The cost axis is ordinal
/// (each distinct cost evenly spaced), so costs that differ by orders of
/// magnitude stay readable without a log scale.
std::string paretoChart(const PlanData &plan,
                        const std::vector<const ReportPoint *> &ok,
                        const std::vector<const ReportPoint *> &front,
                        const std::string &costExpr, bool bytes) {
  std::vector<double> costs;
  for (const ReportPoint *p : ok)
    if (p->cost)
      costs.push_back(*p->cost);
  std::sort(costs.begin(), costs.end());
  costs.erase(std::unique(costs.begin(), costs.end()), costs.end());
  std::vector<std::string> labels;
  for (double c : costs)
    labels.push_back(costText(c, bytes));
  const auto [lo, hi] = timeRange(ok);
  Chart chart(labels, lo, hi);
  auto xOf = [&](double cost) {
    return chart.x(static_cast<size_t>(
        std::lower_bound(costs.begin(), costs.end(), cost) - costs.begin()));
  };
  std::string out = chart.axes("cost: " + costExpr + " (ordinal scale)");
  for (const ReportPoint *p : ok)
    if (p->cost)
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#9aa3ab\">"
                         "<title>{}</title></circle>\n",
                         px(xOf(*p->cost)), px(chart.y(p->us())),
                         esc(pointTitle(plan, *p)));
  std::string line;
  for (const ReportPoint *p : front)
    line += fmt::format("{}{},{}", line.empty() ? "" : " ", px(xOf(*p->cost)),
                        px(chart.y(p->us())));
  out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#d62728\" "
                     "stroke-width=\"1.5\"/>\n",
                     line);
  for (const ReportPoint *p : front)
    out += fmt::format("<circle cx=\"{0}\" cy=\"{1}\" r=\"4.5\" "
                       "fill=\"#d62728\"><title>{3}</title></circle>"
                       "<text x=\"{0}\" y=\"{2}\" text-anchor=\"middle\" "
                       "class=\"label\">{4}</text>\n",
                       px(xOf(*p->cost)), px(chart.y(p->us())),
                       px(chart.y(p->us()) - 8), esc(pointTitle(plan, *p)),
                       p->index);
  out += Chart::legend(0, "#9aa3ab", "point");
  out += Chart::legend(1, "#d62728", "Pareto front");
  return out + "</svg>\n";
}

std::vector<std::string> pointCells(const PlanData &plan,
                                    const ReportPoint &p, bool bytes) {
  std::vector<std::string> row = {std::to_string(p.index), p.id};
  for (const std::string &c : plan.columns)
    row.push_back(hw::formatValue(p.values.at(c)));
  row.push_back(p.cost ? costText(*p.cost, bytes) : "-");
  row.push_back(fmt::format("{:.3f}", p.us()));
  row.push_back(std::to_string(p.result->cycles));
  return row;
}

std::vector<std::string> headerCells(const PlanData &plan) {
  std::vector<std::string> h = {"index", "id"};
  h.insert(h.end(), plan.columns.begin(), plan.columns.end());
  h.emplace_back("cost");
  h.emplace_back("simulated us");
  h.emplace_back("cycles");
  return h;
}

std::string htmlTable(const std::vector<std::vector<std::string>> &rows,
                      size_t textColumns) {
  std::string out = "<table>\n<tr>";
  for (const std::string &h : rows.front())
    out += "<th>" + esc(h) + "</th>";
  out += "</tr>\n";
  for (size_t r = 1; r < rows.size(); ++r) {
    out += "<tr>";
    for (size_t c = 0; c < rows[r].size(); ++c)
      out += (c < textColumns && c > 0 ? "<td class=\"text\">" : "<td>") +
             esc(rows[r][c]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// ------------------------------------------------------------ serve sweeps

/// A serve point the front compares: finished, with at least one gap
/// between two tokens (a point whose requests were all rejected, or all
/// made one token, has no ITL to compare).
bool hasItl(const ReportPoint &p) {
  return p.ok() && p.result->serveFigures.itl.count > 0;
}

/// The serve points no other point beats on both ITL p99 (lower) and
/// output-token throughput (higher), lowest ITL first (then highest
/// throughput, then by index).
std::vector<const ReportPoint *>
serveParetoFront(const std::vector<const ReportPoint *> &points) {
  std::vector<const ReportPoint *> front;
  for (const ReportPoint *a : points) {
    bool dominated = false;
    for (const ReportPoint *b : points)
      if (b->itlP99() <= a->itlP99() && b->throughput() >= a->throughput() &&
          (b->itlP99() < a->itlP99() || b->throughput() > a->throughput()))
        dominated = true;
    if (!dominated)
      front.push_back(a);
  }
  std::stable_sort(front.begin(), front.end(),
                   [](const ReportPoint *a, const ReportPoint *b) {
                     if (a->itlP99() != b->itlP99())
                       return a->itlP99() < b->itlP99();
                     return a->throughput() > b->throughput();
                   });
  return front;
}

/// ITL p99 against output-token throughput, both linear: every point grey,
/// the front joined in red and labelled with the point indices.
std::string serveParetoChart(const PlanData &plan,
                             const std::vector<const ReportPoint *> &points,
                             const std::vector<const ReportPoint *> &front) {
  const auto [xlo, xhi] = metricRange(points, kThroughputMetric);
  const auto [ylo, yhi] = metricRange(points, kItlMetric);
  Chart chart(xlo, xhi, ylo, yhi, kItlMetric.title);
  std::string out = chart.axes(kThroughputMetric.title);
  for (const ReportPoint *p : points)
    out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#9aa3ab\">"
                       "<title>{}</title></circle>\n",
                       px(chart.xAt(p->throughput())), px(chart.y(p->itlP99())),
                       esc(pointTitle(plan, *p)));
  std::string line;
  for (const ReportPoint *p : front)
    line += fmt::format("{}{},{}", line.empty() ? "" : " ",
                        px(chart.xAt(p->throughput())),
                        px(chart.y(p->itlP99())));
  out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#d62728\" "
                     "stroke-width=\"1.5\"/>\n",
                     line);
  for (const ReportPoint *p : front)
    out += fmt::format("<circle cx=\"{0}\" cy=\"{1}\" r=\"4.5\" "
                       "fill=\"#d62728\" class=\"front\"><title>{3}</title>"
                       "</circle><text x=\"{0}\" y=\"{2}\" "
                       "text-anchor=\"middle\" class=\"label\">{4}</text>\n",
                       px(chart.xAt(p->throughput())), px(chart.y(p->itlP99())),
                       px(chart.y(p->itlP99()) - 8), esc(pointTitle(plan, *p)),
                       p->index);
  out += Chart::legend(0, "#9aa3ab", "point");
  out += Chart::legend(1, "#d62728", "Pareto front");
  return out + "</svg>\n";
}

std::vector<std::string> serveHeaderCells(const PlanData &plan) {
  std::vector<std::string> h = {"index", "id"};
  h.insert(h.end(), plan.columns.begin(), plan.columns.end());
  for (const char *name : {"output tok/s", "req/s", "ITL p99 ms",
                           "TTFT p99 ms", "E2EL p99 ms", "rejected"})
    h.emplace_back(name);
  return h;
}

std::vector<std::string> serveCells(const PlanData &plan, const ReportPoint &p) {
  std::vector<std::string> row = {std::to_string(p.index), p.id};
  for (const std::string &c : plan.columns)
    row.push_back(hw::formatValue(p.values.at(c)));
  const ServeFigures &f = p.result->serveFigures;
  row.push_back(fmt::format("{:.2f}", f.outputThroughput));
  row.push_back(fmt::format("{:.3f}", f.requestThroughput));
  row.push_back(fmt::format("{:.3f}", f.itl.p99));
  row.push_back(fmt::format("{:.3f}", f.ttft.p99));
  row.push_back(fmt::format("{:.3f}", f.e2el.p99));
  row.push_back(std::to_string(f.rejected));
  return row;
}

constexpr std::string_view kStyle =
    R"(body{margin:24px;max-width:1240px;color:#1d232a;
  font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
h3{font-size:15px;margin:16px 0 6px}
.meta{color:#4a5560;margin:0 0 8px}
svg.chart{display:block;font:10px "DejaVu Sans",sans-serif;fill:#1d232a}
svg .grid{stroke:#e6e8eb}svg .axis{stroke:#555}svg .frame{fill:none;stroke:#888}
svg .title{font-size:11px}svg .label{font-size:10px;fill:#d62728}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{padding:2px 7px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f3f4f6}td.text{text-align:left}
)";

SweepReport finishReport(const PlanData &plan, SweepReport &report,
                         bool bytes);

/// The series axis of the chart of `axis`: the chosen one, else the next
/// swept one after it; none when that is `axis` itself.
const PlanAxis *seriesFor(const PlanData &plan, const PlanAxis &axis,
                          const PlanAxis *chosen) {
  const PlanAxis *series = chosen;
  if (!series && plan.axes.size() > 1) {
    const size_t i = static_cast<size_t>(&axis - plan.axes.data());
    series = &plan.axes[(i + 1) % plan.axes.size()];
  }
  return series == &axis ? nullptr : series;
}

/// A serve sweep's part of the report, per model: the Pareto front of ITL
/// p99 against output-token throughput (table and chart), then throughput
/// and ITL p99 against each swept parameter.
void serveSections(const PlanData &plan, const std::vector<std::string> &models,
                   const PlanAxis *onlyX, const PlanAxis *seriesAxis,
                   const std::string &counts, std::string &text,
                   std::string &html) {
  html += "<p class=\"meta\">" + esc(counts) +
          "; each point is a simulated server over the trace; the front is the points no other beats on both ITL p99 "
          "(lower) and output-token throughput (higher).</p>\n";
  for (const std::string &model : models) {
    std::vector<const ReportPoint *> okPoints, withItl;
    for (const ReportPoint &p : plan.points)
      if (p.model == model && p.ok()) {
        okPoints.push_back(&p);
        if (hasItl(p))
          withItl.push_back(&p);
      }
    text += fmt::format("\nmodel      {}: {} ok point{}", model,
                        okPoints.size(), okPoints.size() == 1 ? "" : "s");
    if (withItl.size() != okPoints.size())
      text += fmt::format(", {} without an inter-token gap (left out)",
                          okPoints.size() - withItl.size());
    text += "\n";
    html += "<h2>" + esc(model) + "</h2>\n";
    if (withItl.empty()) {
      html += "<p>No point of this model finished with an inter-token "
              "gap.</p>\n";
      continue;
    }
    const ReportPoint *best = withItl.front();
    for (const ReportPoint *p : withItl)
      if (p->throughput() > best->throughput())
        best = p;
    text += fmt::format("highest    point {} ({}): {:.2f} output tokens/s, "
                        "ITL p99 {:.3f} ms\n",
                        best->index, best->id, best->throughput(),
                        best->itlP99());
    const std::vector<const ReportPoint *> front = serveParetoFront(withItl);
    text += fmt::format("pareto front of ITL p99 against output-token "
                        "throughput, lowest ITL first ({} point{})\n",
                        front.size(), front.size() == 1 ? "" : "s");
    std::vector<std::vector<std::string>> rows = {serveHeaderCells(plan)};
    for (const ReportPoint *p : front)
      rows.push_back(serveCells(plan, *p));
    text += textTable(rows, {false, true});

    html += "<h3>Pareto front: ITL p99 against output-token throughput</h3>\n";
    html += serveParetoChart(plan, withItl, front);
    html += htmlTable(rows, 2);
    for (const PlanAxis &axis : plan.axes) {
      if (onlyX && &axis != onlyX)
        continue;
      const PlanAxis *series = seriesFor(plan, axis, seriesAxis);
      for (const Metric *metric : {&kThroughputMetric, &kItlMetric}) {
        const std::string what =
            metric == &kItlMetric ? "ITL p99" : "Output-token throughput";
        html += "<h3>" + what + " against " + esc(axis.name) +
                (series ? ", one line per " + esc(series->name) +
                              " through the best point at each value"
                        : std::string(", the best point at each value")) +
                "</h3>\n";
        html += parameterChart(plan, axis, series, withItl, *metric);
      }
    }
  }
}

} // namespace

SweepReport sweepReport(const std::string &dir, const SweepReportOptions &options) {
  const Expr cost = parseCost(options.cost);
  PlanData plan = readPlan(dir);
  auto findAxis = [&](const std::string &name,
                      const char *flag) -> const PlanAxis * {
    if (name.empty())
      return nullptr;
    for (const PlanAxis &a : plan.axes)
      if (a.name == name)
        return &a;
    std::string names;
    for (const PlanAxis &a : plan.axes)
      names += (names.empty() ? "" : ", ") + a.name;
    throw UserError(SourceLoc{flag},
                    "'" + name + "' is not a swept parameter of this sweep "
                    "(swept: " + (names.empty() ? "none" : names) + ")",
                    ExitCode::Usage);
  };
  const PlanAxis *onlyX = findAxis(options.x, "--x");
  const PlanAxis *seriesAxis = findAxis(options.series, "--series");
  readResults(dir, plan, cost);
  const bool bytes = options.cost == kDefaultCost;

  SweepReport report;
  report.htmlPath = options.html.empty()
                        ? (fs::path(dir) / "report.html").string()
                        : options.html;
  size_t ok = 0, failed = 0, missing = 0;
  std::vector<std::string> models;
  for (const ReportPoint &p : plan.points) {
    if (!p.result)
      ++missing;
    else if (p.ok())
      ++ok;
    else
      ++failed;
    if (std::find(models.begin(), models.end(), p.model) == models.end())
      models.push_back(p.model);
  }
  const std::string specName = fs::path(plan.spec).filename().string();
  const std::string counts =
      fmt::format("{} points, {} ok, {} failed, {} missing", plan.points.size(),
                  ok, failed, missing);

  std::string &text = report.text;
  text += fmt::format("sweep      {}: {}\n", specName, counts);
  if (plan.serve)
    text += "front      ITL p99 against output-token throughput\n";
  else
    text += "cost       " + options.cost + "\n";

  std::string &html = report.html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
          "charset=\"utf-8\">\n<title>Sweep " +
          esc(specName) + "</title>\n<style>\n" + std::string(kStyle) +
          "</style>\n</head>\n<body>\n";
  html += "<h1>Sweep " + esc(specName) + "</h1>\n";
  if (plan.serve) {
    serveSections(plan, models, onlyX, seriesAxis, counts, text, html);
    return finishReport(plan, report, bytes);
  }
  html += "<p class=\"meta\">" + esc(counts) + "; cost proxy <b>" +
          esc(options.cost) +
          "</b>; time is the simulated time of each point.</p>\n";

  for (const std::string &model : models) {
    std::vector<const ReportPoint *> okPoints;
    for (const ReportPoint &p : plan.points)
      if (p.model == model && p.ok())
        okPoints.push_back(&p);
    text += fmt::format("\nmodel      {}: {} ok point{}\n", model,
                        okPoints.size(), okPoints.size() == 1 ? "" : "s");
    html += "<h2>" + esc(model) + "</h2>\n";
    if (okPoints.empty()) {
      html += "<p>No point of this model finished.</p>\n";
      continue;
    }
    const std::vector<const ReportPoint *> front = paretoFront(okPoints);
    const ReportPoint *best = fastest(okPoints);
    text += fmt::format("fastest    point {} ({}): {:.3f} us, {} cycles\n",
                        best->index, best->id, best->us(),
                        best->result->cycles);
    text += fmt::format("pareto front of simulated time against cost, "
                        "cheapest first ({} point{})\n",
                        front.size(), front.size() == 1 ? "" : "s");
    std::vector<std::vector<std::string>> rows = {headerCells(plan)};
    for (const ReportPoint *p : front)
      rows.push_back(pointCells(plan, *p, bytes));
    std::vector<bool> left = {false, true};
    text += textTable(rows, left);

    html += "<h3>Pareto front: simulated time against " + esc(options.cost) +
            "</h3>\n";
    html += paretoChart(plan, okPoints, front, options.cost, bytes);
    html += htmlTable(rows, 2);
    for (const PlanAxis &axis : plan.axes) {
      if (onlyX && &axis != onlyX)
        continue;
      // Series: the chosen axis, else the next swept one after this.
      const PlanAxis *series = seriesAxis;
      if (!series && plan.axes.size() > 1) {
        const size_t i = static_cast<size_t>(&axis - plan.axes.data());
        series = &plan.axes[(i + 1) % plan.axes.size()];
      }
      if (series == &axis)
        series = nullptr;
      html += "<h3>Simulated time against " + esc(axis.name) +
              (series ? ", one line per " + esc(series->name) +
                            " through the best point at each value"
                      : std::string(", the best point at each value")) +
              "</h3>\n";
      html += parameterChart(plan, axis, series, okPoints);
    }
  }

  return finishReport(plan, report, bytes);
}

namespace {

SweepReport finishReport(const PlanData &plan, SweepReport &report,
                         bool bytes) {
  std::string &html = report.html;
  std::string &text = report.text;
  // Every point, failures with their error.
  html += "<h2>All points</h2>\n";
  std::vector<std::vector<std::string>> all = {
      plan.serve ? serveHeaderCells(plan) : headerCells(plan)};
  all.front().emplace_back("status");
  for (const ReportPoint &p : plan.points) {
    if (p.ok()) {
      all.push_back(plan.serve ? serveCells(plan, p)
                               : pointCells(plan, p, bytes));
      all.back().emplace_back("ok");
      continue;
    }
    std::vector<std::string> row = {std::to_string(p.index), p.id};
    for (const std::string &c : plan.columns)
      row.push_back(hw::formatValue(p.values.at(c)));
    row.resize(all.front().size() - 1, "-");
    row.push_back(p.result ? "failed: " + p.result->error : "missing");
    all.push_back(std::move(row));
  }
  html += htmlTable(all, 2);
  html += "</body>\n</html>\n";

  writeFileAtomic(report.htmlPath, html);
  text += "\nreport     " + report.htmlPath + "\n";
  return report;
}

} // namespace

} // namespace spyre::sweep
