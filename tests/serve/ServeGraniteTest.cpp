// Granite-3.3-8B over the checked-in example trace: both batching modes
// complete every request they accept (static rejects the prompts longer
// than its one warmup shape), the continuous run is byte-identical when
// repeated, and throughput stays under the largest decode batch over the
// fastest decode step.
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace spyre {
namespace {

std::string slurp(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ServeGranite, ContinuousAndStaticOnTheExampleTrace) {
  const std::filesystem::path dir = test::makeTempDir();
  for (const std::string mode : {"continuous", "static"}) {
    std::vector<std::string> args = {
        "serve", "examples/llm/granite-3.3-8b.json", "--requests",
        "traces/poisson-granite.csv", "-o", (dir / mode).string(),
        "--batching", mode};
    if (mode == "static")
      args.insert(args.end(), {"--warmup-shape", "1024:256:4"});
    else
      args.insert(args.end(), {"--max-num-seqs", "8"});
    const test::ToolResult r = test::runSpyre(args);
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const nlohmann::json s =
        nlohmann::json::parse(slurp(dir / mode / "summary.json"));
    EXPECT_EQ(s["completed"].get<int64_t>() + s["rejected"].get<int64_t>(),
              s["num_prompts"].get<int64_t>());
    EXPECT_GT(s["completed"].get<int64_t>(), 0);
    double fastestDecode = 1e30;
    int64_t batch = 0;
    for (const auto &c : s["step_costs"])
      if (c["mode"] == "decode") {
        fastestDecode = std::min(fastestDecode, c["device_us"].get<double>());
        batch = std::max(batch, c["batch"].get<int64_t>());
      }
    EXPECT_LE(s["output_throughput"].get<double>(),
              static_cast<double>(batch) / (fastestDecode / 1e6));
    if (mode == "continuous") {
      const test::ToolResult again = test::runSpyre(
          {"serve", "examples/llm/granite-3.3-8b.json", "--requests",
           "traces/poisson-granite.csv", "-o", (dir / "again").string(),
           "--max-num-seqs", "8"});
      ASSERT_EQ(again.exitCode, 0) << again.err;
      for (const char *f :
           {"requests.csv", "summary.json", "trace.json", "report.html"})
        EXPECT_EQ(slurp(dir / mode / f), slurp(dir / "again" / f)) << f;
    }
  }
}

} // namespace
} // namespace spyre
