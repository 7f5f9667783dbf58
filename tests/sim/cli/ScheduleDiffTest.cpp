// Debugging a schedule from its trace, end to end on the GPT-style example:
// compiled at -O0 (the naive plan) and -O2, simulated with statistics and a
// trace, the trace checked and matched to the statistics, the summary's
// critical path and stall reasons adding up, and `spyre trace diff`
// showing where -O2 gained: the bias adds the naive plan runs as ops of
// their own are gone (folded into the matmuls).
#include "SimRun.h"

#include "testlib/Golden.h"
#include "testlib/RunTool.h"
#include "testlib/TraceCheck.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace spyre::test {
namespace {

SimRun compileAndSimulate(const std::string &level, const std::string &dir) {
  const std::string program = dir + "/gpt" + level + ".spyre";
  ToolResult c = runSpyre({"compile", srcPath("examples/models/gpt_block/model.json"),
                           "-O" + level, "-o", program});
  EXPECT_EQ(c.exitCode, 0) << c.err;
  SimArgs args;
  args.timingOnly = true;
  return simulate(program, args);
}

TEST(ScheduleDebugging, NaivePlanAgainstTheBestShowsWhereTimeWent) {
  const std::string dir = makeTempDir();
  SimRun o0 = compileAndSimulate("0", dir);
  SimRun o2 = compileAndSimulate("2", dir);
  ASSERT_EQ(o0.tool.exitCode, 0) << o0.tool.err;
  ASSERT_EQ(o2.tool.exitCode, 0) << o2.tool.err;
  for (const SimRun *r : {&o0, &o2}) {
    TraceCheckResult check = checkTrace(r->traceText);
    EXPECT_TRUE(check.ok()) << check.errorText();
    expectTraceMatchesStats(r->traceText, r->stats);
  }
  const int64_t cycles0 = o0.stats["total_cycles"].get<int64_t>();
  const int64_t cycles2 = o2.stats["total_cycles"].get<int64_t>();
  EXPECT_LT(cycles2, cycles0);

  // The summary's critical path covers the whole run, segment by segment.
  ToolResult sum = runSpyre({"trace", "summary", o0.dir + "/stats.json", "--json"});
  ASSERT_EQ(sum.exitCode, 0) << sum.err;
  nlohmann::json s = nlohmann::json::parse(sum.out);
  int64_t pathCycles = 0;
  for (const nlohmann::json &seg : s["critical_path"])
    pathCycles += seg["cycles"].get<int64_t>();
  EXPECT_EQ(pathCycles, cycles0);
  EXPECT_EQ(s["critical_path_cycles"].get<int64_t>(), cycles0);

  ToolResult diff =
      runSpyre({"trace", "diff", o0.dir + "/stats.json", o2.dir + "/stats.json"});
  ASSERT_EQ(diff.exitCode, 0) << diff.err;
  EXPECT_NE(diff.out.find("total cycles  " + std::to_string(cycles0) + " -> " +
                          std::to_string(cycles2)),
            std::string::npos)
      << diff.out;
  for (const char *bias : {"attn.qkv.bias", "attn.proj.bias", "mlp.fc.bias",
                           "mlp.proj.bias"}) {
    const size_t at = diff.out.find(std::string("\n  ") + bias + " ");
    ASSERT_NE(at, std::string::npos) << bias << "\n" << diff.out;
    const std::string line = diff.out.substr(at + 1, diff.out.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find("-100.0%"), std::string::npos) << line;
  }
}

} // namespace
} // namespace spyre::test
