// `spyre serve` and `spyre serve gen` as a user runs them, on the tiny
// Granite config: every output written, byte-identical on a rerun, both
// batching modes, and the usage errors of the options.
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace spyre {
namespace {

using test::runSpyre;
using test::ToolResult;

std::string all(const ToolResult &r) {
  return "exit " + std::to_string(r.exitCode) + "\nstdout:\n" + r.out +
         "\nstderr:\n" + r.err;
}

std::string slurp(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The value printed after `key:` in the summary.
std::string field(const std::string &out, const std::string &key) {
  const size_t at = out.find("\n" + key + ":");
  if (at == std::string::npos)
    return "(no " + key + ")";
  const size_t start = out.find_first_not_of(' ', at + key.size() + 2);
  return out.substr(start, out.find('\n', start) - start);
}

/// A folder of this test process's own (test::makeTempDir), so runs from
/// several build folders at once never share one.
std::filesystem::path freshDir(const std::string &name) {
  const std::filesystem::path dir =
      std::filesystem::path(test::makeTempDir()) / name;
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ServeCli, GenWritesTheSameTraceForTheSameSeed) {
  const std::vector<std::string> args = {
      "serve", "gen", "--rate", "50", "--prompt", "lognormal:100:0.5",
      "--output", "uniform:2:12", "--count", "30", "--seed", "7"};
  const ToolResult a = runSpyre(args);
  ASSERT_EQ(a.exitCode, 0) << all(a);
  EXPECT_EQ(test::firstLine(a.out), "arrival_s,prompt_tokens,output_tokens");
  EXPECT_EQ(a.out, runSpyre(args).out);
}

TEST(ServeCli, SharedPrefixesAreCachedUnlessTurnedOff) {
  const std::filesystem::path dir = freshDir("prefixes");
  const std::string trace = (dir / "t.csv").string();
  ToolResult g =
      runSpyre({"serve", "gen", "--rate", "20", "--prompt", "uniform:20:80",
                "--output", "fixed:4", "--count", "12", "--prefix-tokens",
                "192", "--prefix-groups", "2", "-o", trace});
  ASSERT_EQ(g.exitCode, 0) << all(g);
  EXPECT_EQ(test::firstLine(slurp(trace)),
            "arrival_s,prompt_tokens,output_tokens,prefix_id,prefix_tokens");
  const std::vector<std::string> args = {"serve",
                                         "examples/llm/tiny-granite.json",
                                         "--requests",
                                         trace,
                                         "--num-kv-blocks",
                                         "200",
                                         "-o",
                                         (dir / "on").string()};
  ToolResult on = runSpyre(args);
  ASSERT_EQ(on.exitCode, 0) << all(on);
  // Twelve prompts, two prefixes: each computed once (or while the
  // first request naming it is still prefilling it), so most of the
  // other prompts' first 192 tokens are hits.
  const std::string hits = field(on.out, "Prefix cache hits");
  EXPECT_NE(hits.find(" of the input tokens ("), std::string::npos) << on.out;
  EXPECT_GE(std::stoll(hits), 8 * 192) << hits;
  const std::string csv = slurp(dir / "on" / "requests.csv");
  EXPECT_NE(csv.find(",cached_tokens,"), std::string::npos);
  std::vector<std::string> off = args;
  off.back() = (dir / "off").string();
  off.push_back("--no-prefix-caching");
  ToolResult r = runSpyre(off);
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(std::stoll(field(r.out, "Prefix cache hits")), 0) << r.out;
  EXPECT_NE(r.out.find(", no prefix caching"), std::string::npos) << r.out;
  EXPECT_LT(std::stod(field(on.out, "Mean TTFT (ms)")),
            std::stod(field(r.out, "Mean TTFT (ms)")));
  // One of the two flags alone is a usage error.
  ToolResult bad = runSpyre({"serve", "gen", "--rate", "1", "--prompt",
                             "fixed:10", "--output", "fixed:1", "--count", "2",
                             "--prefix-tokens", "64"});
  EXPECT_EQ(bad.exitCode, 2) << all(bad);
  EXPECT_EQ(test::firstLine(bad.err),
            "--prefix-groups: error: --prefix-tokens and --prefix-groups "
            "come together");
}

TEST(ServeCli, ContinuousWritesEverythingAndRerunsByteIdentical) {
  const std::filesystem::path dir = freshDir("continuous");
  const std::string trace = (dir / "trace.csv").string();
  ToolResult g = runSpyre({"serve", "gen", "--rate", "400", "--prompt",
                           "uniform:20:300", "--output", "uniform:1:20",
                           "--count", "60", "--seed", "3", "-o", trace});
  ASSERT_EQ(g.exitCode, 0) << all(g);
  const std::vector<std::string> names = {"requests.csv", "summary.json",
                                          "trace.json", "report.html"};
  std::vector<std::string> first;
  for (const char *out : {"a", "b"}) {
    ToolResult r = runSpyre({"serve", "examples/llm/tiny-granite.json",
                             "--requests", trace, "-o", (dir / out).string(),
                             "--max-num-seqs", "4", "--chunk-size", "128",
                             "--slo", "ttft=5,itl=2"});
    ASSERT_EQ(r.exitCode, 0) << all(r);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(field(r.out, "Successful requests"), "60") << r.out;
    EXPECT_NE(r.out.find("Request goodput (req/s):"), std::string::npos);
    EXPECT_NE(r.out.find("P99 ITL (ms):"), std::string::npos);
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string bytes = slurp(dir / out / names[i]);
      ASSERT_FALSE(bytes.empty()) << names[i];
      if (first.size() < names.size())
        first.push_back(bytes);
      else
        EXPECT_EQ(bytes, first[i]) << names[i] << " differs on a rerun";
    }
  }
  // One row per request after the header.
  EXPECT_EQ(std::count(first[0].begin(), first[0].end(), '\n'), 61);
  const nlohmann::json summary = nlohmann::json::parse(first[1]);
  EXPECT_EQ(summary["completed"], 60);
  EXPECT_TRUE(summary.contains("request_goodput"));
  // The trace parses; it has a track per slot, a slice per slot per step,
  // and one flow (start and end) per request.
  const nlohmann::json events = nlohmann::json::parse(first[2]);
  size_t slots = 0, flowStarts = 0, flowEnds = 0, slices = 0;
  for (const auto &e : events["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] != 0)
      ++slots;
    flowStarts += e["ph"] == "s" ? 1 : 0;
    flowEnds += e["ph"] == "f" ? 1 : 0;
    slices += e["ph"] == "X" && e["tid"] != 0 ? 1 : 0;
  }
  EXPECT_EQ(slots, 4u);
  EXPECT_EQ(flowStarts, 60u);
  EXPECT_EQ(flowEnds, 60u);
  // Every output token comes from one slice, and a prefill chunk that does
  // not end its prompt is a slice without a token.
  EXPECT_GE(slices, static_cast<size_t>(summary["total_output_tokens"]));
  size_t svgs = 0;
  for (size_t at = first[3].find("<svg"); at != std::string::npos;
       at = first[3].find("<svg", at + 1))
    ++svgs;
  EXPECT_EQ(svgs, 4u); // TTFT, ITL, occupancy, KV cache
  EXPECT_EQ(first[3].find("http://"), first[3].find("http://www.w3.org"))
      << "the report loads nothing from the network";
}

TEST(ServeCli, StaticRejectsWhatNoShapeFits) {
  const std::filesystem::path dir = freshDir("static");
  const std::string trace = (dir / "trace.csv").string();
  std::ofstream(trace) << "arrival_s,prompt_tokens,output_tokens\n"
                          "0,100,4\n0,60,2\n0.001,500,3\n0.002,30,9\n";
  ToolResult r = runSpyre({"serve", "examples/llm/tiny-granite.json",
                           "--requests", trace, "-o", (dir / "out").string(),
                           "--batching", "static", "--warmup-shape",
                           "128:8:2", "--warmup-shape", "64:16:1"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(field(r.out, "Successful requests"), "3") << r.out;
  EXPECT_EQ(field(r.out, "Rejected requests"), "1") << r.out;
  const std::string csv = slurp(dir / "out" / "requests.csv");
  EXPECT_NE(csv.find("2,0.001000,,,500,3,,,,,,,,rejected: no warmup shape "
                     "fits a prompt of 500 and 3 new tokens\n"),
            std::string::npos)
      << csv;
}

TEST(ServeCli, UsageErrorsNameTheOption) {
  ToolResult r = runSpyre({"serve", "examples/llm/tiny-granite.json",
                           "--requests", "traces/poisson-granite.csv",
                           "--batching", "static", "--warmup-shape", "64:8"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--warmup-shape: error: expected PROMPT:NEW_TOKENS:BATCH, got "
            "'64:8'");
  r = runSpyre({"serve", "examples/llm/tiny-granite.json", "--requests",
                "traces/poisson-granite.csv", "--slo", "ttft=fast"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--slo: error: the milliseconds must be a number in (0, 1e9] in "
            "'ttft=fast'; expected KEY=MS,... with keys ttft, itl, tpot, e2el");
  // nan passes CLI11's own range check; it then surfaced as an empty KV
  // cache under another option's name.
  r = runSpyre({"serve", "examples/llm/tiny-granite.json", "--requests",
                "traces/poisson-granite.csv", "--memory-utilization", "nan"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "spyre: error: --memory-utilization: must be a share in 0.01..1, "
            "got 'nan'");
}

} // namespace
} // namespace spyre
