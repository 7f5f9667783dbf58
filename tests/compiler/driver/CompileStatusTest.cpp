// User errors and internal errors leave the compiler as different statuses,
// and `spyre compile` turns them into different exit codes: 1 for a model
// that cannot be compiled, 70 (ExitCode::Internal) for a bug. A bug is
// forced with the debug hook that makes a pass fail without a diagnostic,
// which the pass manager treats as a broken contract.
#include "compiler/driver/Compile.h"
#include "compiler/ir/Parser.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <utility>
#include <vector>

namespace spyre::compiler {
namespace {

const char *const kRelu = R"(graph @t {
  input %x : f32[4096, 4096]
  %y = relu @r(%x) : f32[4096, 4096]
  return %y
})";

std::unique_ptr<Graph> parse(const std::string &text) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = parseGraph(text, "test.ir", diags);
  EXPECT_TRUE(g) << diags.str();
  return g;
}

TEST(CompileStatus, ACompiledModelIsOk) {
  std::unique_ptr<Graph> g = parse(kRelu);
  ASSERT_TRUE(g);
  DiagnosticEngine diags;
  CompileOutcome r = compile(*g, hw::builtinConfig(), {}, diags);
  EXPECT_EQ(r.status, CompileStatus::Ok) << diags.str();
  EXPECT_TRUE(r.result);
}

TEST(CompilePlacement, PutsPlacedValuesAtTheirAddresses) {
  // %x and %y at fixed addresses (kept between programs), %y in x's sticks
  // (it replaces x in place); the scratch of the program above firstFree.
  std::unique_ptr<Graph> g = parse(R"(graph @t {
  input %x : f32[64, 32]
  %h = relu @r(%x) : f32[64, 32]
  %y = neg @n(%h) : f32[64, 32]
  return %y
})");
  ASSERT_TRUE(g);
  CompileOptions o;
  o.placement.addresses = {{"x", 1000}, {"y", 1000}};
  o.placement.firstFree = 5000;
  DiagnosticEngine diags;
  CompileOutcome r = compile(*g, hw::builtinConfig(), o, diags);
  ASSERT_EQ(r.status, CompileStatus::Ok) << diags.str();
  const isa::Program &p = r.result->program;
  ASSERT_TRUE(p.findTensor("x") && p.findTensor("y"));
  EXPECT_EQ(p.findTensor("x")->address, 1000u);
  EXPECT_EQ(p.findTensor("y")->address, 1000u);
  for (const isa::TensorDecl &t : p.tensors) {
    if (t.name == "x" || t.name == "y")
      continue;
    EXPECT_GE(t.address, 5000u) << t.name;
  }
}

TEST(CompileStatus, AModelThatDoesNotFitIsAUserError) {
  std::unique_ptr<Graph> g = parse(kRelu);
  ASSERT_TRUE(g);
  hw::HwConfig small = hw::builtinConfig();
  small.memory.sizeBytes = 16 << 20;
  DiagnosticEngine diags;
  CompileOutcome r = compile(*g, small, {}, diags);
  EXPECT_EQ(r.status, CompileStatus::UserError);
  EXPECT_FALSE(r.result);
  EXPECT_NE(diags.str().find("the model does not fit device memory"),
            std::string::npos)
      << diags.str();
  EXPECT_EQ(diags.str().find("internal error"), std::string::npos)
      << diags.str();
}

TEST(CompileStatus, APassThatFailsSilentlyIsAnInternalError) {
  std::unique_ptr<Graph> g = parse(kRelu);
  ASSERT_TRUE(g);
  for (const char *pass : {"canonicalize", "layout", "tile"}) {
    CompileOptions co;
    co.debugFailPass = pass;
    DiagnosticEngine diags;
    CompileOutcome r = compile(*g, hw::builtinConfig(), co, diags);
    EXPECT_EQ(r.status, CompileStatus::InternalError) << pass;
    EXPECT_FALSE(r.result) << pass;
    EXPECT_NE(diags.str().find("internal error in pass '" + std::string(pass) +
                               "': it failed without reporting an error"),
              std::string::npos)
        << diags.str();
    // The wrapper for callers that need only the program says no as well.
    DiagnosticEngine again;
    EXPECT_FALSE(compileGraph(*g, hw::builtinConfig(), co, again)) << pass;
  }
}

TEST(CompileStatusCli, AnInternalErrorExitsWith70) {
  const std::string dir = spyre::test::makeTempDir();
  const std::string out = dir + "/m.spyre";
  spyre::test::ToolResult r =
      spyre::test::runSpyre({"compile", "examples/models/mlp_block/model.json",
                             "-o", out, "--debug-fail-pass", "layout"});
  EXPECT_EQ(r.exitCode, static_cast<int>(ExitCode::Internal)) << r.err;
  EXPECT_EQ(r.exitCode, 70);
  EXPECT_NE(r.err.find("error: internal error in pass 'layout': it failed "
                       "without reporting an error"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CompileStatusCli, AUserErrorExitsWith1) {
  const std::string dir = spyre::test::makeTempDir();
  // The built-in config with 16 MiB of device memory (and a tensor span
  // that fits it): the model's 64 MiB input does not fit.
  spyre::test::ToolResult show = spyre::test::runSpyre({"config", "show"});
  ASSERT_EQ(show.exitCode, 0) << show.err;
  std::string config = show.out;
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"size_bytes: 137438953472", "size_bytes: 16777216"},
      {"tensor_span_bytes_per_core: 268435456",
       "tensor_span_bytes_per_core: 16777216"}};
  for (const auto &[from, to] : edits) {
    size_t at = config.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    config.replace(at, from.size(), to);
  }
  writeFileAtomic(dir + "/small.yaml", config);
  writeFileAtomic(dir + "/relu.json", R"({
  "format": "spyre-graph",
  "version": 1,
  "name": "relu",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4096, 4096]}],
  "outputs": ["y"],
  "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}]
})");
  spyre::test::ToolResult r = spyre::test::runSpyre(
      {"compile", dir + "/relu.json", "-o", dir + "/m.spyre", "--config",
       dir + "/small.yaml"});
  EXPECT_EQ(r.exitCode, static_cast<int>(ExitCode::BadInput)) << r.err;
  EXPECT_NE(r.err.find(": error: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

TEST(CompileStatusCli, AnUnknownDebugPassIsAUsageError) {
  const std::string dir = spyre::test::makeTempDir();
  spyre::test::ToolResult r = spyre::test::runSpyre(
      {"compile", "examples/models/mlp_block/model.json", "-o",
       dir + "/m.spyre", "--debug-fail-pass", "layot"});
  EXPECT_EQ(r.exitCode, static_cast<int>(ExitCode::Usage)) << r.err;
  EXPECT_NE(r.err.find("unknown pass 'layot'"), std::string::npos) << r.err;
}

} // namespace
} // namespace spyre::compiler
