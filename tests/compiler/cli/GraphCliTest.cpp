// `spyre graph check|print|eval` run as a user would: output, files, exit
// codes and messages.
#include "support/FileIO.h"
#include "support/Npy.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace spyre {
namespace {

using spyre::test::firstLine;
using spyre::test::makeTempDir;
using spyre::test::runSpyre;

const std::string kGpt = "examples/models/gpt_block/model.json";

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(GraphCli, CheckPrintsASummary) {
  test::ToolResult r = runSpyre({"graph", "check", kGpt});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // 12 weight tensors: 49,984 floats; the inline scale adds 4 bytes.
  EXPECT_EQ(r.out, "gpt_block: 23 ops, 39 values (1 input, 13 constants), 1 output, "
                   "199,940 parameter bytes\n");
}

TEST(GraphCli, PrintWritesTheIr) {
  test::ToolResult r = runSpyre({"graph", "print", kGpt});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  test::expectGolden(r.out, "compiler/ir/gpt_block.ir");
  std::string dir = makeTempDir();
  test::ToolResult w = runSpyre({"graph", "print", kGpt, "-o", dir + "/g.ir"});
  EXPECT_EQ(w.exitCode, 0) << w.err;
  EXPECT_EQ(w.out, "");
  EXPECT_EQ(readFile(dir + "/g.ir", kTextFileLimit), r.out);
}

TEST(GraphCli, EvalWithASeedIsDeterministicAndReplayable) {
  std::string a = makeTempDir(), b = makeTempDir(), c = makeTempDir();
  test::ToolResult r = runSpyre({"graph", "eval", kGpt, "--seed", "7", "--outputs", a});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "x: random f32[16, 64] (seed 7) -> " + a + "/x.npy\n"
                   "out: f32[16, 64] -> " + a + "/out.npy\n");
  EXPECT_EQ(listDir(a), (std::vector<std::string>{"out.npy", "x.npy"}));

  ASSERT_EQ(runSpyre({"graph", "eval", kGpt, "--seed", "7", "--outputs", b}).exitCode, 0);
  EXPECT_EQ(readFile(a + "/x.npy", kTextFileLimit), readFile(b + "/x.npy", kTextFileLimit));
  EXPECT_EQ(readFile(a + "/out.npy", kTextFileLimit), readFile(b + "/out.npy", kTextFileLimit));

  // The random inputs written beside the outputs replay the run.
  test::ToolResult replay = runSpyre({"graph", "eval", kGpt, "--inputs", a, "--outputs", c});
  EXPECT_EQ(replay.exitCode, 0) << replay.err;
  EXPECT_EQ(replay.out, "out: f32[16, 64] -> " + c + "/out.npy\n");
  EXPECT_EQ(readFile(c + "/out.npy", kTextFileLimit), readFile(a + "/out.npy", kTextFileLimit));

  std::string d = makeTempDir();
  ASSERT_EQ(runSpyre({"graph", "eval", kGpt, "--seed", "8", "--outputs", d}).exitCode, 0);
  EXPECT_NE(readFile(d + "/x.npy", kTextFileLimit), readFile(a + "/x.npy", kTextFileLimit));
}

TEST(GraphCli, EvalMatchesTheNumPyReference) {
  std::string out = makeTempDir() + "/new/folder";
  test::ToolResult r = runSpyre({"graph", "eval", kGpt, "--inputs",
                                 "examples/models/gpt_block/reference", "--outputs", out});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::vector<float> got = npyF32Values(readNpy(out + "/out.npy"), "out");
  std::vector<float> want = npyF32Values(
      readNpy(test::srcPath("examples/models/gpt_block/reference/out.npy")), "ref");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::fabs(want[i])) << i;
}

TEST(GraphCli, EvalReportsBadInputFiles) {
  std::string dir = makeTempDir();
  test::ToolResult missing =
      runSpyre({"graph", "eval", kGpt, "--inputs", dir, "--outputs", dir});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_EQ(missing.err, dir + "/x.npy: error: cannot open file: No such file or directory\n");

  writeNpy(dir + "/x.npy", makeNpyF32(std::vector<float>(64, 0), {64}));
  test::ToolResult shape = runSpyre({"graph", "eval", kGpt, "--inputs", dir, "--outputs", dir});
  EXPECT_EQ(shape.exitCode, 1);
  EXPECT_EQ(shape.err, dir + "/x.npy: error: has shape [64], input 'x' is f32[16, 64]\n");

  NpyArray ints;
  ints.dtype = NpyDtype::I32;
  ints.shape = {16, 64};
  ints.data.assign(16 * 64 * 4, '\0');
  writeNpy(dir + "/x.npy", ints);
  test::ToolResult dtype = runSpyre({"graph", "eval", kGpt, "--inputs", dir, "--outputs", dir});
  EXPECT_EQ(dtype.exitCode, 1);
  EXPECT_EQ(dtype.err, dir + "/x.npy: error: holds i32 data, input 'x' is f32[16, 64]\n");
}

TEST(GraphCli, BadModelsExitOneWithTheJsonPath) {
  const std::string bad = "tests/compiler/import/bad/";
  test::ToolResult r = runSpyre({"graph", "check", bad + "dangling.json"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, bad + "dangling.json: error: at 'ops[1].inputs[1]': unknown tensor "
                         "'foo' (not an input, a constant or an op output)\n");
  for (const char *cmd : {"print", "eval"}) {
    std::vector<std::string> args{"graph", cmd, bad + "cycle.json"};
    if (std::string(cmd) == "eval")
      args.insert(args.end(), {"--seed", "1", "--outputs", makeTempDir()});
    test::ToolResult c = runSpyre(args);
    EXPECT_EQ(c.exitCode, 1) << cmd;
    EXPECT_EQ(firstLine(c.err), bad + "cycle.json: error: at 'ops[1]': ops form a cycle: "
                                      "'second' uses 'c' from 'third', 'third' uses 'b' "
                                      "from 'second'")
        << cmd;
  }
  test::ToolResult syntax = runSpyre({"graph", "check", bad + "syntax.json"});
  EXPECT_EQ(syntax.exitCode, 1);
  EXPECT_EQ(syntax.err, bad + "syntax.json:5:1: error: invalid JSON: syntax error while "
                              "parsing object key - unexpected '}'; expected string "
                              "literal\n}\n^\n");
  test::ToolResult none = runSpyre({"graph", "check", "no/such/model.json"});
  EXPECT_EQ(none.exitCode, 1);
  EXPECT_EQ(none.err, "no/such/model.json: error: cannot open file: No such file or directory\n");
}

TEST(GraphCli, UsageErrorsExitTwo) {
  std::string dir = makeTempDir();
  test::ToolResult neither = runSpyre({"graph", "eval", kGpt, "--outputs", dir});
  EXPECT_EQ(neither.exitCode, 2);
  EXPECT_EQ(neither.err, "spyre graph eval: error: give the inputs with --inputs DIR, or "
                         "--seed N for random ones\n");
  test::ToolResult both =
      runSpyre({"graph", "eval", kGpt, "--seed", "1", "--inputs", dir, "--outputs", dir});
  EXPECT_EQ(both.exitCode, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
  EXPECT_EQ(runSpyre({"graph", "eval", kGpt, "--seed", "1"}).exitCode, 2);
  EXPECT_EQ(runSpyre({"graph", "check"}).exitCode, 2);
  EXPECT_EQ(runSpyre({"graph"}).exitCode, 2);
  EXPECT_EQ(runSpyre({"graph", "frobnicate", kGpt}).exitCode, 2);
  EXPECT_EQ(runSpyre({"graph", "eval", kGpt, "--seed", "-3", "--outputs", dir}).exitCode, 2);
  test::ToolResult help = runSpyre({"graph", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  for (const char *sub : {"check", "print", "eval"})
    EXPECT_NE(help.out.find(sub), std::string::npos) << sub;
}

} // namespace
} // namespace spyre
