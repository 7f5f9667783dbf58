// Graph JSON: what the loader builds, the order it gives ops, exact inline
// data, and a writer whose output loads back to an equal graph.
#include "compiler/import/GraphJson.h"
#include "compiler/ir/Printer.h"
#include "testlib/Golden.h"
#include "testlib/RandomGraph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

namespace spyre::compiler {
namespace {

std::unique_ptr<Graph> parseOk(const std::string &text, const std::string &dir = "") {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = parseGraphJson(text, "m.json", dir, diags);
  EXPECT_NE(g, nullptr) << diags.str();
  return g;
}

std::vector<std::string> opNames(const Graph &g) {
  std::vector<std::string> names;
  for (const Op *op : g.ops())
    names.push_back(op->name());
  return names;
}

const char *kHeader = R"("format": "spyre-graph", "version": 1, "name": "g", )";

TEST(GraphJson, LoadsInputsConstantsOpsAndOutputs) {
  auto g = parseOk(std::string("{") + kHeader + R"(
    "inputs": [{"name": "x", "dtype": "f32", "shape": [7, 3]}],
    "outputs": ["y", "x"],
    "constants": [{"name": "s", "dtype": "f32", "shape": [], "data": [0.5]}],
    "ops": [{"name": "m", "op": "mul", "inputs": ["x", "s"], "outputs": ["p"]},
            {"name": "sm", "op": "softmax", "inputs": ["p"], "outputs": ["y"]}]})");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name(), "g");
  EXPECT_EQ(g->findValue("x")->type().str(), "f32[7, 3]");
  EXPECT_EQ(g->findValue("s")->constantData().element(0), 0.5);
  EXPECT_EQ(g->findValue("y")->type().str(), "f32[7, 3]");
  // Defaults are filled in; ops remember their JSON path.
  EXPECT_EQ(g->findOp("sm")->attrs().str(), "{axis = -1}");
  EXPECT_EQ(g->findOp("sm")->loc().str(), "m.json");
  EXPECT_EQ(g->findOp("sm")->loc().keyPath, "ops[1]");
  ASSERT_EQ(g->outputs().size(), 2u);
  EXPECT_EQ(g->outputs()[1], g->findValue("x"));
}

TEST(GraphJson, SortsOpsTopologicallyAndStably) {
  auto g = parseOk(std::string("{") + kHeader + R"(
    "inputs": [{"name": "x", "dtype": "f32", "shape": [3]}], "outputs": ["d"],
    "ops": [{"name": "D", "op": "add", "inputs": ["b", "c"], "outputs": ["d"]},
            {"name": "B", "op": "neg", "inputs": ["a"], "outputs": ["b"]},
            {"name": "A", "op": "relu", "inputs": ["x"], "outputs": ["a"]},
            {"name": "C", "op": "abs", "inputs": ["x"], "outputs": ["c"]}]})");
  ASSERT_NE(g, nullptr);
  // A and C are ready first (A listed before C), then B, then D.
  EXPECT_EQ(opNames(*g), (std::vector<std::string>{"A", "B", "C", "D"}));

  auto ordered = parseOk(std::string("{") + kHeader + R"(
    "inputs": [{"name": "x", "dtype": "f32", "shape": [3]}], "outputs": ["d"],
    "ops": [{"name": "C", "op": "abs", "inputs": ["x"], "outputs": ["c"]},
            {"name": "A", "op": "relu", "inputs": ["x"], "outputs": ["a"]},
            {"name": "B", "op": "neg", "inputs": ["a"], "outputs": ["b"]},
            {"name": "D", "op": "add", "inputs": ["b", "c"], "outputs": ["d"]}]})");
  ASSERT_NE(ordered, nullptr);
  EXPECT_EQ(opNames(*ordered), (std::vector<std::string>{"C", "A", "B", "D"}));
}

TEST(GraphJson, ConvertsAttributesBySchema) {
  auto g = parseOk(std::string("{") + kHeader + R"(
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}], "outputs": ["y"],
    "ops": [{"name": "p", "op": "pow", "inputs": ["x"], "outputs": ["q"], "attrs": {"exponent": 2}},
            {"name": "t", "op": "transpose", "inputs": ["q"], "outputs": ["y"], "attrs": {"perm": [1, 0]}}]})");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->findOp("p")->attrs().get("exponent"), Attribute(2.0));
  EXPECT_EQ(g->findOp("t")->intsAttr("perm"), (std::vector<int64_t>{1, 0}));
}

TEST(GraphJson, ReadsAndWritesInlineDataExactly) {
  auto g = std::make_unique<Graph>("data");
  std::vector<float> f{0.1f, 1e-45f, 3.4028235e38f, -0.0f, 16777217.0f, 1.0f / 3.0f};
  std::string bytes(f.size() * 4, '\0');
  std::memcpy(bytes.data(), f.data(), bytes.size());
  g->addConstant("f", ConstantData::create({ElementType::F32, {6}}, bytes));
  g->addConstant("h", ConstantData::fromDoubles({ElementType::F16, {3}}, {65504.0, -6e-8, 0.1}));
  g->addConstant("b", ConstantData::fromDoubles({ElementType::I8, {2}}, {-128, 127}));
  g->addConstant("i", ConstantData::fromDoubles({ElementType::I32, {2}}, {-2147483648.0, 2147483647.0}));
  g->setOutputs({g->findValue("f"), g->findValue("h"), g->findValue("b"), g->findValue("i")});
  GraphJsonFiles out = serializeGraphJson(*g);
  EXPECT_TRUE(out.constantFiles.empty()) << "small finite constants are inline";
  auto back = parseOk(out.json);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(graphDifference(*g, *back), "");
  EXPECT_NE(out.json.find("\"data\": [0.1, 1e-45, 3.4028235e+38, -0.0, 16777216.0, 0.33333334]"),
            std::string::npos)
      << out.json;
}

TEST(GraphJson, WritesLargeAndNonFiniteConstantsAsFiles) {
  auto g = std::make_unique<Graph>("files");
  g->addConstant("big/w", ConstantData::fromDoubles({ElementType::F32, {17}},
                                                    std::vector<double>(17, 1.0)));
  g->addConstant("big_w", ConstantData::fromDoubles({ElementType::F32, {1}},
                                                    {std::numeric_limits<double>::infinity()}));
  g->setOutputs({g->findValue("big/w"), g->findValue("big_w")});
  GraphJsonFiles out = serializeGraphJson(*g);
  ASSERT_EQ(out.constantFiles.size(), 2u);
  // Two names that sanitise alike get distinct files.
  EXPECT_EQ(out.constantFiles[0].first, "big_w.npy");
  EXPECT_EQ(out.constantFiles[1].first, "big_w_1.npy");

  std::string dir = spyre::test::makeTempDir();
  writeGraphJson(*g, dir + "/model.json");
  DiagnosticEngine diags;
  auto back = loadGraphJson(dir + "/model.json", diags);
  ASSERT_NE(back, nullptr) << diags.str();
  EXPECT_EQ(graphDifference(*g, *back), "");
}

TEST(GraphJson, TensorFileNames) {
  EXPECT_EQ(tensorFileName("fc1.weight"), "fc1.weight.npy");
  EXPECT_EQ(tensorFileName("a/b c"), "a_b_c.npy");
  EXPECT_EQ(tensorFileName("../up"), "_._up.npy");
  EXPECT_EQ(tensorFileName(".hidden"), "_hidden.npy");
}

TEST(GraphJson, WriterOutputMatchesGolden) {
  DiagnosticEngine diags;
  auto g = loadGraphJson(spyre::test::srcPath("examples/models/norm_softmax/model.json"), diags);
  ASSERT_NE(g, nullptr) << diags.str();
  spyre::test::expectGolden(serializeGraphJson(*g).json, "compiler/json/norm_softmax.json");
}

TEST(GraphJson, RoundTripsRandomGraphs) {
  test::RandomGraphOptions options;
  options.annotations = false; // compiler state, not part of the file format
  options.controlCharNames = false;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto g = test::randomGraph(seed, options);
    std::string dir = spyre::test::makeTempDir();
    writeGraphJson(*g, dir + "/model.json");
    DiagnosticEngine diags;
    auto back = loadGraphJson(dir + "/model.json", diags);
    ASSERT_NE(back, nullptr) << diags.str();
    EXPECT_EQ(graphDifference(*g, *back), "");
    // Writing what was read gives the same text.
    EXPECT_EQ(serializeGraphJson(*back).json, serializeGraphJson(*g).json);
  }
}

} // namespace
} // namespace spyre::compiler
