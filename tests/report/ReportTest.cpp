// `spyre report` and sim/analysis/RunReport: the page of a compiled example
// (every chart, well-formed SVG, nothing fetched from the network, the ops
// in the legend and on the roofline, the same bytes twice), the page of a
// statistics JSON, the merging of slices on long runs, the roofline's
// log-log placement against hand-computed coordinates, the op colours
// against an independent HSL conversion, and the errors for bad input.
#include "sim/analysis/RunReport.h"

#include "support/Diagnostic.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace spyre::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

// ------------------------------------------------------------ XML checking

/// A strict check of one XML fragment: every tag closed in order, every
/// attribute quoted and unique, only the five XML entities and numeric
/// references, no bare `<` or `&` in text. Returns the first problem, or ""
/// when the fragment is well formed.
std::string xmlProblem(const std::string &s) {
  std::vector<std::string> open;
  auto isName = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
           c == ':' || c == '.';
  };
  auto checkEntity = [&](size_t amp) -> std::string {
    const size_t semi = s.find(';', amp);
    if (semi == std::string::npos || semi - amp > 10)
      return "bare '&' at " + std::to_string(amp);
    const std::string ent = s.substr(amp + 1, semi - amp - 1);
    static const std::regex kEntity("(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+)");
    if (!std::regex_match(ent, kEntity))
      return "unknown entity &" + ent + "; at " + std::to_string(amp);
    return "";
  };
  size_t i = 0;
  bool sawRoot = false;
  while (i < s.size()) {
    if (s[i] == '&') {
      if (std::string p = checkEntity(i); !p.empty())
        return p;
      ++i;
      continue;
    }
    if (s[i] == '>')
      return "bare '>' in text at " + std::to_string(i);
    if (s[i] != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(s[i])))
        return "text outside the root at " + std::to_string(i);
      ++i;
      continue;
    }
    if (s.compare(i, 4, "<!--") == 0) {
      const size_t end = s.find("-->", i + 4);
      if (end == std::string::npos)
        return "unclosed comment";
      i = end + 3;
      continue;
    }
    const bool closing = i + 1 < s.size() && s[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    const size_t nameStart = j;
    while (j < s.size() && isName(s[j]))
      ++j;
    const std::string name = s.substr(nameStart, j - nameStart);
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0])))
      return "bad tag name at " + std::to_string(i);
    if (closing) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j])))
        ++j;
      if (j >= s.size() || s[j] != '>')
        return "bad closing tag </" + name + "> at " + std::to_string(i);
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes <" + (open.empty() ? "" : open.back()) + "> at " +
               std::to_string(i);
      open.pop_back();
      i = j + 1;
      if (open.empty())
        sawRoot = true;
      continue;
    }
    if (open.empty() && sawRoot)
      return "a second root element at " + std::to_string(i);
    std::set<std::string> attrs;
    bool selfClosing = false;
    for (;;) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j])))
        ++j;
      if (j >= s.size())
        return "unclosed tag <" + name + ">";
      if (s[j] == '>')
        break;
      if (s.compare(j, 2, "/>") == 0) {
        selfClosing = true;
        ++j;
        break;
      }
      const size_t a = j;
      while (j < s.size() && isName(s[j]))
        ++j;
      const std::string attr = s.substr(a, j - a);
      if (attr.empty())
        return "bad attribute in <" + name + "> at " + std::to_string(j);
      if (!attrs.insert(attr).second)
        return "attribute " + attr + " twice in <" + name + ">";
      if (j + 1 >= s.size() || s[j] != '=' || (s[j + 1] != '"' && s[j + 1] != '\''))
        return "attribute " + attr + " of <" + name + "> is not quoted";
      const char quote = s[j + 1];
      const size_t end = s.find(quote, j + 2);
      if (end == std::string::npos)
        return "unterminated attribute " + attr;
      for (size_t k = j + 2; k < end; ++k) {
        if (s[k] == '<')
          return "'<' inside attribute " + attr;
        if (s[k] == '&')
          if (std::string p = checkEntity(k); !p.empty())
            return p;
      }
      j = end + 1;
    }
    if (!selfClosing)
      open.push_back(name);
    else if (open.empty())
      sawRoot = true;
    i = j + 1;
  }
  if (!open.empty())
    return "<" + open.back() + "> is never closed";
  if (!sawRoot)
    return "no element";
  return "";
}

/// The inline SVG elements of a page, each from `<svg` to its `</svg>`.
std::vector<std::string> svgParts(const std::string &html) {
  std::vector<std::string> out;
  for (size_t at = html.find("<svg"); at != std::string::npos;
       at = html.find("<svg", at + 1)) {
    const size_t end = html.find("</svg>", at);
    if (end == std::string::npos) {
      out.push_back(html.substr(at)); // unclosed: the checker reports it
      break;
    }
    out.push_back(html.substr(at, end + 6 - at));
  }
  return out;
}

/// The element with `id="ID"` up to its closing tag, for the `<g>` groups
/// the charts are drawn in (groups nest, so count them).
std::string group(const std::string &html, const std::string &id) {
  const size_t at = html.find("<g id=\"" + id + "\"");
  if (at == std::string::npos)
    return "";
  int depth = 0;
  for (size_t i = at; i < html.size(); ++i) {
    if (html.compare(i, 2, "<g") == 0 && (html[i + 2] == ' ' || html[i + 2] == '>'))
      ++depth;
    if (html.compare(i, 4, "</g>") == 0 && --depth == 0)
      return html.substr(at, i + 4 - at);
  }
  return html.substr(at);
}

/// Every `http:` or `https:` in the page that is not an XML namespace.
std::vector<std::string> externalUrls(const std::string &html) {
  std::vector<std::string> out;
  static const std::regex kUrl("https?:[^\"' <>]*");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kUrl);
       it != std::sregex_iterator(); ++it) {
    const size_t pos = static_cast<size_t>(it->position());
    const std::string before = html.substr(pos >= 7 ? pos - 7 : 0, pos >= 7 ? 7 : pos);
    if (before != "xmlns=\"")
      out.push_back(it->str());
  }
  return out;
}

TEST(ReportXmlCheck, FindsWhatIsNotWellFormed) {
  EXPECT_EQ(xmlProblem("<svg a=\"1\"><g><text>x &amp; y &#183;</text></g></svg>"), "");
  EXPECT_EQ(xmlProblem("<svg><rect/><path d='M0 0'/></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><g></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><g></g>"), "");
  EXPECT_NE(xmlProblem("<svg a=1></svg>"), "");
  EXPECT_NE(xmlProblem("<svg a=\"1\" a=\"2\"></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><text>a < b</text></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><text>a &nbsp; b</text></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><text>R&D</text></svg>"), "");
  EXPECT_NE(xmlProblem("<svg title=\"a<b\"></svg>"), "");
  EXPECT_NE(xmlProblem("<svg></svg><svg></svg>"), "");
}

TEST(ReportXmlCheck, FindsExternalUrls) {
  EXPECT_TRUE(externalUrls("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>").empty());
  EXPECT_EQ(externalUrls("<img src=\"https://x.org/a.png\"/>").size(), 1u);
  EXPECT_EQ(externalUrls("<a href='http://x'>").size(), 1u);
}

// ------------------------------------------------------------ a compiled example

/// gpt_block compiled and simulated (timing only: the report needs no
/// numbers) with a trace and statistics, in a fresh folder.
struct ExampleRun {
  std::string dir;
  std::string trace;
  std::string stats;
};

ExampleRun simulateGptBlock() {
  ExampleRun run{makeTempDir(), "", ""};
  const std::string program = run.dir + "/gpt_block.spyre";
  run.trace = run.dir + "/t.json";
  run.stats = run.dir + "/s.json";
  ToolResult c = runSpyre(
      {"compile", srcPath("examples/models/gpt_block/model.json"), "-o", program});
  EXPECT_EQ(c.exitCode, 0) << c.err;
  ToolResult s = runSpyre(
      {"sim", program, "--timing-only", "--trace", run.trace, "--stats", run.stats});
  EXPECT_EQ(s.exitCode, 0) << s.err;
  return run;
}

std::string report(const std::string &input, const std::string &output) {
  ToolResult r = runSpyre({"report", input, "-o", output});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return readText(output);
}

TEST(ReportCli, TraceOfCompiledExampleHasEveryChart) {
  const ExampleRun run = simulateGptBlock();
  const std::string html = report(run.trace, run.dir + "/report.html");
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char *id :
       {"timeline", "op-legend", "roofline", "lx-occupancy", "memory-bandwidth"})
    EXPECT_FALSE(group(html, id).empty()) << "no <g id=\"" << id << "\">";
  for (const char *id :
       {"utilisation-table", "engines-table", "ops-table", "critical-path-table"})
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_EQ(html.find("id=\"stats-only\""), std::string::npos);

  const std::vector<std::string> svgs = svgParts(html);
  EXPECT_EQ(svgs.size(), 5u); // legend, timeline, LX, memory, roofline
  for (const std::string &svg : svgs)
    EXPECT_EQ(xmlProblem(svg), "") << svg.substr(0, 200);
  EXPECT_EQ(externalUrls(html), std::vector<std::string>{});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);

  // Every op of the run is in the legend, and every op that multiplies is
  // labelled on the roofline; ops without MACs are listed beside it.
  const json stats = json::parse(readText(run.stats));
  const std::string legend = group(html, "op-legend");
  const std::string roofline = group(html, "roofline");
  size_t withMacs = 0;
  for (const json &op : stats.at("ops")) {
    const std::string name = op.at("op").get<std::string>();
    const std::string label = name.empty() ? "(no op)" : name;
    EXPECT_NE(legend.find(">" + label + "</text>"), std::string::npos) << label;
    if (op.at("mac_ops").get<uint64_t>() == 0)
      continue;
    ++withMacs;
    EXPECT_NE(roofline.find("class=\"label\">" + label + "</text>"), std::string::npos)
        << label;
  }
  EXPECT_GT(withMacs, 0u);
  EXPECT_NE(roofline.find(fmt::format("{} ops plotted", withMacs)), std::string::npos);
  EXPECT_NE(legend.find(">attn.qkv</text>"), std::string::npos);

  // One LX row per core of the run (gpt_block runs on all 32 cores).
  const std::string lx = group(html, "lx-occupancy");
  EXPECT_NE(lx.find(">core 0</text>"), std::string::npos);
  EXPECT_NE(lx.find(">core 31</text>"), std::string::npos);
  // The critical path is drawn over the timeline.
  EXPECT_NE(group(html, "timeline").find("id=\"timeline-critical-path\""),
            std::string::npos);

  // The same bytes again, and from a copy of the trace elsewhere.
  EXPECT_EQ(report(run.trace, run.dir + "/again.html"), html);
  fs::create_directories(run.dir + "/other");
  fs::copy_file(run.trace, run.dir + "/other/copy.json");
  EXPECT_EQ(report(run.dir + "/other/copy.json", run.dir + "/other/r.html"), html);
}

TEST(ReportCli, StatisticsGiveRooflineAndTablesOnly) {
  const ExampleRun run = simulateGptBlock();
  const std::string html = report(run.stats, run.dir + "/report.html");
  EXPECT_NE(html.find("id=\"stats-only\""), std::string::npos);
  EXPECT_NE(html.find("the timeline, LX occupancy and device-memory bandwidth charts "
                      "need a trace"),
            std::string::npos);
  EXPECT_FALSE(group(html, "roofline").empty());
  for (const char *id : {"timeline", "op-legend", "lx-occupancy", "memory-bandwidth"})
    EXPECT_TRUE(group(html, id).empty()) << id;
  for (const char *id : {"utilisation-table", "ops-table", "critical-path-table"})
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  for (const std::string &svg : svgParts(html))
    EXPECT_EQ(xmlProblem(svg), "");
  EXPECT_EQ(externalUrls(html), std::vector<std::string>{});
  // The roofline and tables agree with the trace's page: the statistics
  // carry the same per-op figures.
  const std::string fromTrace = report(run.trace, run.dir + "/trace.html");
  EXPECT_EQ(group(html, "roofline"), group(fromTrace, "roofline"));
}

TEST(ReportCli, PartialTraceSaysSo) {
  const ExampleRun run = simulateGptBlock();
  const std::string program = run.dir + "/gpt_block.spyre";
  const std::string part = run.dir + "/part.json";
  ToolResult s = runSpyre({"sim", program, "--timing-only", "--trace", part,
                           "--trace-window", "5000:9000", "--trace-cores", "0-3"});
  ASSERT_EQ(s.exitCode, 0) << s.err;
  const std::string html = report(part, run.dir + "/part.html");
  EXPECT_NE(html.find("id=\"partial\""), std::string::npos);
  EXPECT_NE(html.find("4 cores"), std::string::npos);
  const std::string lx = group(html, "lx-occupancy");
  EXPECT_NE(lx.find(">core 3</text>"), std::string::npos);
  EXPECT_EQ(lx.find(">core 4</text>"), std::string::npos);
  for (const std::string &svg : svgParts(html))
    EXPECT_EQ(xmlProblem(svg), "");
}

// ------------------------------------------------------------ bad input

struct BadCase {
  std::string name;
  std::vector<std::string> args; ///< after `report`
  std::string firstLine;         ///< of stderr
};

TEST(ReportCli, BadInputsAreLocatedErrorsAndLeaveNothing) {
  const std::string dir = makeTempDir();
  writeText(dir + "/notjson.json", "{\"traceEvents\": [");
  writeText(dir + "/other.json", "{\"hello\": 1}");
  // A trace whose LX counter has a string for its bytes.
  writeText(
      dir + "/badcounter.json",
      R"({"otherData":{"program":"p","total_cycles":10,"clock_ghz":1.0,)"
      R"("peak_macs_per_cycle_per_core":1024.0,"memory_peak_gbps":100.0,)"
      R"("counter_window_cycles":1000,"complete":true},"traceEvents":[)"
      R"({"ph":"C","name":"lx written bytes","pid":0,"ts":0.0,"args":{"bytes":"x"}}]})");
  writeText(dir + "/good.json",
            R"({"otherData":{"program":"p","total_cycles":10,"clock_ghz":1.0,)"
            R"("peak_macs_per_cycle_per_core":1024.0,"memory_peak_gbps":100.0,)"
            R"("counter_window_cycles":1000,"complete":true},"traceEvents":[]})");
  const std::vector<BadCase> cases = {
      {"missing input",
       {dir + "/missing.json", "-o", dir + "/r.html"},
       dir + "/missing.json: error: cannot open file: No such file or directory"},
      {"not JSON",
       {dir + "/notjson.json", "-o", dir + "/r.html"},
       dir + "/notjson.json: error: not valid JSON"},
      {"not a run",
       {dir + "/other.json", "-o", dir + "/r.html"},
       dir + "/other.json: error: neither a statistics JSON (spyre sim --stats) nor a "
             "trace (spyre sim --trace)"},
      {"bad counter",
       {dir + "/badcounter.json", "-o", dir + "/r.html"},
       dir + "/badcounter.json: error: at 'traceEvents[0].args.bytes': must be a "
             "non-negative number"},
      {"output folder missing",
       {dir + "/good.json", "-o", dir + "/no/such/r.html"},
       dir + "/no/such/r.html: error: cannot write file: No such file or directory"},
  };
  for (const BadCase &c : cases) {
    std::vector<std::string> args = {"report"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    ToolResult r = runSpyre(args);
    EXPECT_EQ(r.exitCode, 1) << c.name << ": " << r.err;
    EXPECT_EQ(firstLine(r.err), c.firstLine) << c.name;
    EXPECT_FALSE(fs::exists(dir + "/r.html")) << c.name;
  }
  // Nothing else appeared either: no temporary file of the atomic write.
  size_t files = 0;
  for ([[maybe_unused]] const auto &e : fs::recursive_directory_iterator(dir))
    ++files;
  EXPECT_EQ(files, 4u);

  ToolResult help = runSpyre({"report", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("-o,--output"), std::string::npos) << help.out;

  ToolResult usage = runSpyre({"report", dir + "/good.json"});
  EXPECT_EQ(usage.exitCode, 2);
  EXPECT_NE(firstLine(usage.err).find("--output is required"), std::string::npos)
      << usage.err;
}

// ------------------------------------------------------------ the library

/// One core with one PT stream: `n` instructions of op `op` back to back,
/// each `len` cycles, all busy.
sim::Profile oneLaneProfile(size_t n, sim::Cycle len) {
  sim::Profile p;
  p.program = "lane";
  p.clockGhz = 1;
  p.peakMacsPerCyclePerCore = 1024;
  p.memoryPeakGbps = 100;
  p.streams.push_back({0, "pt.0"});
  const uint32_t mm = p.intern("mm");
  const uint32_t op = p.intern("matmul");
  for (size_t i = 0; i < n; ++i) {
    sim::InstrRecord r;
    r.index = static_cast<uint32_t>(i);
    r.mnemonic = mm;
    r.op = op;
    r.start = i * len;
    r.end = r.start + len;
    r.ready = r.start;
    r.busy = len;
    p.records.push_back(r);
  }
  p.totalCycles = n * len;
  return p;
}

sim::RunData runOf(sim::Profile p) {
  sim::RunData run;
  run.summary = sim::summarize(p);
  run.profile = std::move(p);
  return run;
}

size_t countOf(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(Report, MergesSlicesBelowAPixel) {
  // 100,000 one-cycle slices on a 980-pixel-wide plot: about 102 cycles a
  // pixel, so back-to-back slices of one op merge into one rectangle, the
  // whole plot wide (x 130 to 1110), in the first lane (below the 24-pixel
  // axis and a 4-pixel margin).
  const std::string html = sim::htmlReport(runOf(oneLaneProfile(100000, 1)));
  const std::string timeline = group(html, "timeline");
  EXPECT_EQ(countOf(timeline, "<rect x=\"130.00\" y=\"28.00\" width=\"980.00\""), 1u);
  EXPECT_NE(html.find("100000 slices drawn as 1 rectangle:"), std::string::npos);
  EXPECT_NE(html.find("mm x100000, merged"), std::string::npos);
  EXPECT_EQ(xmlProblem(svgParts(html).at(1)), "");

  // A few long slices: one rectangle each, and no merge note.
  const std::string few = sim::htmlReport(runOf(oneLaneProfile(4, 1000)));
  EXPECT_EQ(few.find("id=\"timeline-merged\""), std::string::npos);
  EXPECT_EQ(countOf(group(few, "timeline"), "<title>core 0 pt.0 matmul: mm, one slice"),
            4u);
}

TEST(Report, TimelineStaysUnderItsRectangleBudget) {
  // 300 slices of 100 cycles, ops alternating: 30.6 cycles a pixel, so each
  // is 3.27 pixels wide and none merges at one pixel. A budget of 100
  // rectangles coarsens the threshold (2, 4, 8 pixels) until slices
  // thinner than it merge three by three: 100 rectangles.
  sim::Profile p = oneLaneProfile(300, 100);
  const uint32_t other = p.intern("other");
  for (size_t i = 1; i < p.records.size(); i += 2)
    p.records[i].op = other;
  const std::string full = sim::htmlReport(runOf(p));
  EXPECT_EQ(countOf(group(full, "timeline"), "<title>core 0 pt.0"), 300u);
  EXPECT_EQ(full.find("id=\"timeline-merged\""), std::string::npos);
  sim::RunReportOptions options;
  options.maxTimelineRects = 100;
  const std::string html = sim::htmlReport(runOf(p), options);
  EXPECT_EQ(countOf(group(html, "timeline"), "<title>core 0 pt.0"), 100u);
  EXPECT_NE(html.find("300 slices drawn as 100 rectangles: slices thinner than 8 "
                      "pixels (244.9 ns) are merged"),
            std::string::npos);
  EXPECT_EQ(xmlProblem(svgParts(html).at(1)), "");
}

TEST(Report, RooflinePointAtHandComputedPosition) {
  // One core at 1 GHz with 1024 MAC/cycle: compute roof 2.048 TFLOP/s;
  // memory 100 GB/s: ridge at 20.48 FLOP/B. The op: 1e6 MACs (2e6 FLOP)
  // over 1e5 bytes = 20 FLOP/B, in 2000 cycles = 2 us: 1 TFLOP/s.
  // Axes: x from 10^0 (2.048 / 1.5 rounded down to a decade) to 10^3
  // (204.8 x 1.5 rounded up), y from 10^-2 (0.02048 / 1.5) to 10^1.
  // Plot 560 x 400 at (70, 16): x = 70 + log10(20) / 3 x 560 = 312.86,
  // y = 416 - (0 + 2) / 3 x 400 = 149.33.
  sim::Summary s;
  s.program = "roof";
  s.source = "stats";
  s.totalCycles = 2000;
  s.clockGhz = 1;
  s.peakMacsPerCyclePerCore = 1024;
  s.memoryPeakGbps = 100;
  s.engines.push_back({0, "pt.0", 1, 2000, {}, 0});
  sim::OpSummary op;
  op.op = "mm<1>";
  op.first = 0;
  op.last = 2000;
  op.macs = 1000000;
  op.readBytes = 60000;
  op.writeBytes = 40000;
  op.cores = 1;
  op.roofline = sim::rooflineOf(op, 1, 1024, 100);
  s.ops.push_back(op);
  s.hasOps = true;
  sim::RunData run;
  run.summary = s;
  const std::string html = sim::htmlReport(run);
  const std::string roofline = group(html, "roofline");
  EXPECT_NE(roofline.find("<circle cx=\"312.86\" cy=\"149.33\""), std::string::npos)
      << roofline;
  // The name is escaped in the label and the title.
  EXPECT_NE(roofline.find(">mm&lt;1&gt;</text>"), std::string::npos);
  EXPECT_NE(roofline.find("<title>mm&lt;1&gt;: 20.00 FLOP/B, 1.000 TFLOP/s of 2.00"),
            std::string::npos);
  // Roof: the slope from x = 1 (0.1 TFLOP/s: y = 416 - 1/3 x 400 = 282.67)
  // to the ridge (x = 70 + log10(20.48) / 3 x 560 = 314.78, y = 416 -
  // (log10(2.048) + 2) / 3 x 400 = 107.82), then flat to x = 10^3.
  EXPECT_NE(roofline.find("d=\"M70.00 282.67L314.78 107.82H630.00\""), std::string::npos)
      << roofline;
  EXPECT_EQ(xmlProblem(svgParts(html).at(0)), "");
}

TEST(Report, OpColoursFollowTheirNames) {
  // FNV-1a of the name picks hue (h mod 360), saturation (55 + (h >> 16)
  // mod 30 %) and lightness (42 + (h >> 32) mod 18 %); the expected values
  // come from Python's colorsys.hls_to_rgb with those figures.
  EXPECT_EQ(sim::opColour("attn.qkv"), "#366ece");
  EXPECT_EQ(sim::opColour("mm"), "#dd1d20");
  EXPECT_EQ(sim::opColour("relu"), "#d15015");
  EXPECT_EQ(sim::opColour(""), "#9aa0a6");
}

TEST(Report, ReadsCountersFromTrace) {
  const std::string trace =
      R"({"otherData":{"program":"p","total_cycles":3000,"clock_ghz":1.5,)"
      R"("peak_macs_per_cycle_per_core":1024.0,"memory_peak_gbps":204.8,)"
      R"("counter_window_cycles":1000,"complete":true},"traceEvents":[)"
      R"({"ph":"C","name":"device memory GB/s","pid":32,"ts":0.667,"args":{"read":3.0,"write":1.5}},)"
      R"({"ph":"C","name":"device memory GB/s","pid":32,"ts":0.0,"args":{"read":6.0,"write":0.0}},)"
      R"({"ph":"C","name":"lx written bytes","pid":1,"ts":0.2,"args":{"bytes":256}},)"
      R"({"ph":"C","name":"lx written bytes","pid":0,"ts":0.1,"args":{"bytes":128}},)"
      R"({"ph":"C","name":"data ring link use","pid":32,"ts":0.0,"args":{"increasing":0.5}}]})";
  const sim::RunData run = sim::readRunData(trace, "t.json");
  ASSERT_TRUE(run.fromTrace());
  ASSERT_EQ(run.memoryRead.size(), 2u);
  EXPECT_EQ(run.memoryRead[0].us, 0.0); // sorted by time
  EXPECT_EQ(run.memoryRead[0].value, 6.0);
  EXPECT_EQ(run.memoryWrite[1].value, 1.5);
  ASSERT_EQ(run.lxWritten.size(), 2u);
  EXPECT_EQ(run.lxWritten[0].first, 0);
  EXPECT_EQ(run.lxWritten[0].second.at(0).value, 128.0);
  EXPECT_EQ(run.lxWritten[1].first, 1);
  const std::string html = sim::htmlReport(run);
  EXPECT_FALSE(group(html, "memory-bandwidth").empty());
  EXPECT_NE(group(html, "lx-occupancy").find(">core 1</text>"), std::string::npos);
  for (const std::string &svg : svgParts(html))
    EXPECT_EQ(xmlProblem(svg), "");

  try {
    sim::readRunData(R"({"otherData":{"program":"p","total_cycles":1,"clock_ghz":1,)"
                     R"("peak_macs_per_cycle_per_core":1,"memory_peak_gbps":1,)"
                     R"("complete":true},"traceEvents":[{"ph":"C","name":)"
                     R"("device memory GB/s","ts":0,"args":{"read":1}}]})",
                     "t.json");
    ADD_FAILURE() << "no error for a counter without 'write'";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              "t.json: error: at 'traceEvents[0].args': missing 'write'");
  }
}

} // namespace
} // namespace spyre::test
