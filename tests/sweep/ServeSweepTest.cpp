// Serve sweeps as a user runs them: a small sweep of the tiny Granite config
// over batch size and request rate runs locally; every point's result has
// the serving figures; throughput stays under the bound the hardware
// config's host costs and an independently simulated decode step give, and
// saturates above capacity while the queue grows; the points share their
// step costs; a rerun gives the same results; and the report's Pareto front
// of ITL p99 against throughput is the one a brute-force dominance check
// over results.csv finds, highlighted in the page's chart.
#include "Csv.h"
#include "hw/HwConfig.h"
#include "llm/LlmRun.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace spyre {
namespace {

namespace fs = std::filesystem;
using test::csvRecords;
using test::runSpyre;
using test::srcPath;
using test::ToolResult;

const char *const kServeSmall = "tests/sweep/data/serve_small.yaml";

std::string all(const ToolResult &r) {
  return "exit " + std::to_string(r.exitCode) + "\nstdout:\n" + r.out +
         "\nstderr:\n" + r.err;
}

double num(const std::map<std::string, std::string> &rec,
           const std::string &key) {
  return std::stod(rec.at(key));
}

size_t filesIn(const std::string &dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    n += e.is_regular_file() ? 1 : 0;
  return n;
}

/// The device time of a decode step of batch 1 at the lowest context edge
/// of the tiny model (both layers, LM head), simulated here apart from the
/// sweep: no step of a server is shorter.
double smallestDecodeUs() {
  llm::LlmRunOptions o;
  o.modelConfig = srcPath("examples/llm/tiny-granite.json");
  o.shape.mode = llm::Mode::Decode;
  o.shape.batch = 1;
  o.shape.tokens = 1;
  o.shape.context = 256;
  o.shape.lmHead = true;
  o.timingOnly = true;
  o.useSystemC = false;
  return llm::runLlm(o).stepUs();
}

class ServeSweep : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    out_ = new std::string(test::makeTempDir() + "/out");
    run_ = new ToolResult(
        runSpyre({"sweep", kServeSmall, "-o", *out_, "-j", "2"}));
  }
  static void TearDownTestSuite() {
    delete out_;
    delete run_;
  }
  static std::string *out_;
  static ToolResult *run_;
};

std::string *ServeSweep::out_ = nullptr;
ToolResult *ServeSweep::run_ = nullptr;

TEST_F(ServeSweep, RunsLocallyAndEveryPointHasTheFigures) {
  ASSERT_EQ(run_->exitCode, 0) << all(*run_);
  EXPECT_EQ(run_->out, "sweep      " + std::string(kServeSmall) +
                           ": 8 points, 8 ok, 0 failed, 0 missing\nresults  "
                           "  " + *out_ + "/results.csv\n");
  const auto records = csvRecords(*out_ + "/results.csv");
  ASSERT_EQ(records.size(), 8u);
  const std::vector<std::pair<std::string, std::string>> grid = {
      {"1", "0.25"}, {"1", "1.0"}, {"1", "4.0"}, {"1", "16.0"},
      {"4", "0.25"}, {"4", "1.0"}, {"4", "4.0"}, {"4", "16.0"}};
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE("point " + std::to_string(i));
    const auto &rec = records[i];
    EXPECT_EQ(rec.at("model"), "../../../examples/llm/tiny-granite.json");
    EXPECT_EQ(rec.at("serve.max_num_seqs"), grid[i].first);
    EXPECT_EQ(rec.at("serve.rate_scale"), grid[i].second);
    EXPECT_EQ(rec.at("opt_level"), "2");
    EXPECT_EQ(rec.at("status"), "ok");
    EXPECT_EQ(rec.at("requests"), "40");
    EXPECT_EQ(num(rec, "completed") + num(rec, "rejected"), 40);
    EXPECT_EQ(rec.at("rejected"), "0");
    for (const char *key :
         {"ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms",
          "e2el_p50_ms", "e2el_p99_ms", "request_throughput",
          "output_throughput", "total_token_throughput", "duration_s"})
      EXPECT_GT(num(rec, key), 0) << key;
    EXPECT_LE(num(rec, "ttft_p50_ms"), num(rec, "ttft_p99_ms"));
    EXPECT_LE(num(rec, "itl_p50_ms"), num(rec, "itl_p99_ms"));
    EXPECT_LE(num(rec, "ttft_p99_ms"), num(rec, "e2el_p99_ms"));
    EXPECT_LE(num(rec, "mean_batch"), num(rec, "serve.max_num_seqs"));
    // The point's JSON carries the same figures, and its serving knobs.
    const std::string json =
        readFile(*out_ + "/points/" + rec.at("id") + ".json", kTextFileLimit);
    EXPECT_NE(json.find("\"serve_fingerprint\""), std::string::npos);
    EXPECT_NE(json.find("\"itl_ms\""), std::string::npos);
  }
}

TEST_F(ServeSweep, ThroughputStaysUnderCapacityAndSaturates) {
  ASSERT_EQ(run_->exitCode, 0) << all(*run_);
  const auto records = csvRecords(*out_ + "/results.csv");
  ASSERT_EQ(records.size(), 8u);
  // No step is shorter than the host's fixed share (step overhead, a
  // launch, the PCIe latency of the token ids in) plus the smallest decode
  // step, and a step makes at most one token per slot.
  const hw::HwConfig &hw = hw::builtinConfig();
  const double latencyUs =
      hw.host.pcieLatencyCycles / (hw.chip.clockGhz * 1e3);
  const double minStepUs = hw.host.stepOverheadUs + hw.host.launchUs +
                           latencyUs + smallestDecodeUs();
  for (const auto &rec : records) {
    SCOPED_TRACE("point " + rec.at("index"));
    const double capacity = num(rec, "serve.max_num_seqs") * 1e6 / minStepUs;
    EXPECT_LE(num(rec, "output_throughput"), capacity);
  }
  for (size_t b = 0; b < 2; ++b) {
    SCOPED_TRACE("max_num_seqs " + records[4 * b].at("serve.max_num_seqs"));
    // Rates 0.25, 1, 4 and 16 times the trace's: throughput never falls as
    // the rate grows, and requests wait longer.
    for (size_t i = 4 * b + 1; i < 4 * b + 4; ++i) {
      EXPECT_GE(num(records[i], "output_throughput"),
                num(records[i - 1], "output_throughput"));
      EXPECT_GT(num(records[i], "mean_queue_ms"),
                num(records[i - 1], "mean_queue_ms"));
    }
    // Up to 4x the offered rate the server keeps up (every request is
    // served at about the rate it arrives); from 4x to 16x it cannot:
    // throughput grows by less than half the offered factor.
    EXPECT_GT(num(records[4 * b + 1], "output_throughput"),
              3.5 * num(records[4 * b], "output_throughput"));
    EXPECT_LT(num(records[4 * b + 3], "output_throughput"),
              2 * num(records[4 * b + 2], "output_throughput"));
  }
  // One slot is saturated at 4x: 16x adds less than 10%.
  EXPECT_LT(num(records[3], "output_throughput"),
            1.1 * num(records[2], "output_throughput"));
  // More slots serve more at the highest rate.
  EXPECT_GT(num(records[7], "output_throughput"),
            num(records[3], "output_throughput"));
}

TEST_F(ServeSweep, PointsShareTheirStepCostsAndRerunsAreIdentical) {
  ASSERT_EQ(run_->exitCode, 0) << all(*run_);
  const auto records = csvRecords(*out_ + "/results.csv");
  std::set<std::string> shapes;
  int64_t used = 0;
  for (const auto &rec : records)
    used += std::stoll(rec.at("step_shapes"));
  // Each shape is simulated once for the sweep: fewer files than the
  // shapes the points used together (they share one hardware config).
  const size_t files = filesIn(*out_ + "/step-costs");
  EXPECT_GT(files, 0u);
  EXPECT_LT(static_cast<int64_t>(files), used);

  // A fresh sweep, one point at a time (so it meets the cache in another
  // order), gives the same bytes but for the wall clock.
  const std::string other = test::makeTempDir() + "/out";
  ToolResult fresh = runSpyre({"sweep", kServeSmall, "-o", other, "-j", "1"});
  ASSERT_EQ(fresh.exitCode, 0) << all(fresh);
  EXPECT_EQ(test::withoutWallClock(other + "/results.csv"),
            test::withoutWallClock(*out_ + "/results.csv"));
  EXPECT_EQ(filesIn(other + "/step-costs"), files);
}

TEST_F(ServeSweep, ReportShowsTheParetoFrontOfItlAgainstThroughput) {
  ASSERT_EQ(run_->exitCode, 0) << all(*run_);
  ToolResult r = runSpyre({"sweep", "report", *out_});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  const auto records = csvRecords(*out_ + "/results.csv");

  // The front by brute force over results.csv: no other row at most as
  // slow in ITL p99 and at least as fast in throughput, better in one.
  std::set<std::string> expected;
  for (const auto &a : records) {
    bool dominated = false;
    for (const auto &b : records) {
      const double ia = num(a, "itl_p99_ms"), ib = num(b, "itl_p99_ms");
      const double ta = num(a, "output_throughput"),
                   tb = num(b, "output_throughput");
      if (ib <= ia && tb >= ta && (ib < ia || tb > ta))
        dominated = true;
    }
    if (!dominated)
      expected.insert(a.at("index"));
  }
  ASSERT_FALSE(expected.empty());

  // The table under "pareto front", its first column the point index.
  const size_t at = r.out.find("pareto front of ITL p99 against output-token "
                               "throughput, lowest ITL first (" +
                               std::to_string(expected.size()) + " point");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream lines(r.out.substr(at));
  std::string line;
  std::getline(lines, line); // the title
  std::getline(lines, line); // the header
  EXPECT_NE(line.find("serve.max_num_seqs"), std::string::npos) << line;
  EXPECT_NE(line.find("ITL p99 ms"), std::string::npos) << line;
  std::set<std::string> listed;
  std::vector<double> itl;
  while (std::getline(lines, line) && !line.empty()) {
    std::istringstream words(line);
    std::string index;
    words >> index;
    listed.insert(index);
    itl.push_back(num(records.at(std::stoul(index)), "itl_p99_ms"));
  }
  EXPECT_EQ(listed, expected) << r.out;
  EXPECT_TRUE(std::is_sorted(itl.begin(), itl.end())) << "lowest ITL first";

  // The page: the front's points highlighted in the chart, one each.
  const std::string html = readFile(*out_ + "/report.html", kTextFileLimit);
  std::set<std::string> highlighted;
  for (size_t p = html.find("class=\"front\"><title>point ");
       p != std::string::npos;
       p = html.find("class=\"front\"><title>point ", p + 1)) {
    std::istringstream words(html.substr(p + 27));
    std::string index;
    words >> index;
    highlighted.insert(index);
  }
  EXPECT_EQ(highlighted, expected);
  EXPECT_NE(html.find("ITL p99 (ms)"), std::string::npos);
  EXPECT_NE(html.find("output-token throughput (tokens/s)"), std::string::npos);
  // The same results give the same page.
  ToolResult again = runSpyre({"sweep", "report", *out_, "-o",
                               *out_ + "/again.html"});
  ASSERT_EQ(again.exitCode, 0) << all(again);
  EXPECT_EQ(readFile(*out_ + "/again.html", kTextFileLimit), html);
}

TEST(ServeSweepSpec, PrefixCachingIsAKnob) {
  const std::string out = test::makeTempDir() + "/prefix";
  ToolResult r = runSpyre(
      {"sweep", "tests/sweep/data/serve_prefix.yaml", "-o", out, "-j", "2"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  const auto records = csvRecords(out + "/results.csv");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("serve.prefix_caching"), "on");
  EXPECT_EQ(records[1].at("serve.prefix_caching"), "off");
  for (const auto &rec : records)
    EXPECT_EQ(rec.at("completed"), "16");
  // Prefilling the shared 192 tokens once per prefix, not once per
  // request, gives every later request its first token sooner.
  EXPECT_LT(num(records[0], "ttft_p50_ms"), num(records[1], "ttft_p50_ms"));
}

TEST(ServeSweepSpec, DryRunListsTheServingKnobs) {
  ToolResult r = runSpyre({"sweep", kServeSmall, "--dry-run"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  test::expectGolden(r.out, "sweep/serve-small-dry-run.txt");
}

} // namespace
} // namespace spyre
