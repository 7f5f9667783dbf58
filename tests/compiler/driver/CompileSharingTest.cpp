// Matmul operand sharing through the compiler: mappings that ask for A
// shared along grid rows (`share_a`) and B panels kept in LX (`keep_b`) on
// odd shapes, compiled, simulated with numerics and the schedule checks (no
// finding allowed) and compared with the host reference; saved mappings
// carry the decisions so a replay gives the same program; impossible ones
// are errors naming the op and the reason. Tolerance as CompileTest.cpp:
// depth * 2^-8 * (|reference| + mean |reference|) + 2^-31.
#include "compiler/codegen/KernelHarness.h"
#include "compiler/driver/Compile.h"
#include "compiler/import/GraphJson.h"
#include "compiler/ref/Evaluator.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>

namespace spyre::compiler {
namespace {

/// A one-matmul graph JSON: a [M, K] x b [K, N] -> c.
std::string matmulGraph(int64_t m, int64_t k, int64_t n) {
  auto shape = [](int64_t r, int64_t c) {
    return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
  };
  return R"({"format": "spyre-graph", "version": 1, "name": "mm",
    "inputs": [{"name": "a", "dtype": "f32", "shape": )" +
         shape(m, k) + R"(},
               {"name": "b", "dtype": "f32", "shape": )" +
         shape(k, n) + R"(}],
    "outputs": ["c"],
    "ops": [{"name": "mm", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}]})";
}

std::unique_ptr<Graph> load(const std::string &dir, const std::string &json) {
  const std::string path = dir + "/model.json";
  writeFileAtomic(path, json);
  return loadGraphJsonOrThrow(path);
}

std::optional<CompileResult> compileWith(const Graph &g, int level,
                                         const std::string &mapping,
                                         DiagnosticEngine &diags) {
  CompileOptions co;
  co.optLevel = level;
  co.mappingIn = mapping;
  return compileGraph(g, hw::builtinConfig(), co, diags);
}

/// Compiles with `mapping`, runs on random inputs, compares with the
/// reference (depth 3: DL16 inputs and output); returns the mapping JSON.
std::string checkShared(const Graph &g, const std::string &dir,
                        const std::string &mapping) {
  const std::string path = dir + "/mapping.json";
  writeFileAtomic(path, mapping);
  DiagnosticEngine diags;
  std::optional<CompileResult> r = compileWith(g, 2, path, diags);
  EXPECT_TRUE(r) << diags.str();
  if (!r)
    return {};
  EXPECT_EQ(codegen::test::programFileProblem(r->program), "");
  codegen::test::SimRequest req;
  ref::TensorMap inputs;
  uint32_t seed = 11;
  for (const Value *in : g.inputs()) {
    std::vector<float> v = codegen::test::randomValues(
        static_cast<size_t>(in->type().elementCount()), seed++, -2, 2,
        isa::DType::Dl16);
    req.inputs[in->name()] = v;
    inputs[in->name()] = {in->type().shape,
                          std::vector<double>(v.begin(), v.end())};
  }
  codegen::test::SimResult sim = codegen::test::simulate(r->program, req);
  EXPECT_TRUE(sim.findings.empty()) << sim.findings.front();
  std::vector<ref::RefTensor> expected = ref::evaluateGraph(g, inputs);
  const std::vector<double> &want = expected[0].values;
  double mean = 0;
  for (double w : want)
    mean += std::abs(w) / static_cast<double>(want.size());
  std::vector<double> tol;
  for (double w : want)
    tol.push_back(3 * std::ldexp(1.0, -8) * (std::abs(w) + mean) +
                  std::ldexp(1.0, -31));
  EXPECT_TRUE(codegen::test::allClose(sim.outputs["c"], want, tol))
      << r->mappingJson;
  return r->mappingJson;
}

TEST(CompileSharing, SharedAndKeptOperandsMatchTheReference) {
  const std::string dir = spyre::test::makeTempDir();
  // Odd M, K past several tiles with a tail, N over many cores: the
  // planner tiles under the sharing decisions the mapping gives.
  std::unique_ptr<Graph> g = load(dir, matmulGraph(77, 300, 2000));
  for (const char *m : {
           R"({"ops": {"mm": {"share_a": true, "keep_b": true}}})",
           R"({"ops": {"mm": {"share_a": true, "keep_b": false}}})",
           R"({"ops": {"mm": {"share_a": false, "keep_b": true}}})",
       }) {
    SCOPED_TRACE(m);
    const std::string json = checkShared(*g, dir, m);
    const bool shareA =
        std::string(m).find("\"share_a\": true") != std::string::npos;
    EXPECT_NE(json.find(shareA ? "\"share_a\":true" : "\"share_a\":false"),
              std::string::npos)
        << json;
  }
  // A whole grid over 32 cores: the rows' chains on both sides of the
  // memory node, several M tiles and two N tiles per core.
  std::unique_ptr<Graph> wide = load(dir, matmulGraph(300, 200, 4096));
  checkShared(*wide, dir,
              R"({"ops": {"mm": {"cores": 32, "first_core": 0, "grid": [1, 32],
                  "tile": [64, 64, 64], "n_outer": true, "share_a": true,
                  "keep_b": true}}})");
}

TEST(CompileSharing, ASavedSharingMappingReplaysTheSameProgram) {
  const std::string dir = spyre::test::makeTempDir();
  std::unique_ptr<Graph> g = load(dir, matmulGraph(1024, 1024, 1024));
  DiagnosticEngine diags;
  std::optional<CompileResult> first = compileWith(*g, 2, "", diags);
  ASSERT_TRUE(first) << diags.str();
  // The cost planner shares A at this size (docs/kernels.md, Figures).
  EXPECT_NE(first->mappingJson.find("\"share_a\":true"), std::string::npos)
      << first->mappingJson;
  const std::string path = dir + "/mapping.json";
  writeFileAtomic(path, first->mappingJson);
  std::optional<CompileResult> again = compileWith(*g, 0, path, diags);
  ASSERT_TRUE(again) << diags.str();
  EXPECT_EQ(isa::writeProgram(again->program),
            isa::writeProgram(first->program));
  EXPECT_EQ(again->mappingJson, first->mappingJson);
  // -O0 keeps the plain plan: no sharing.
  std::optional<CompileResult> plain = compileWith(*g, 0, "", diags);
  ASSERT_TRUE(plain) << diags.str();
  EXPECT_NE(plain->mappingJson.find("\"keep_b\":false"), std::string::npos);
  EXPECT_NE(plain->mappingJson.find("\"share_a\":false"), std::string::npos);
}

TEST(CompileSharing, ImpossibleSharingIsANamedError) {
  const std::string dir = spyre::test::makeTempDir();
  std::unique_ptr<Graph> g = load(dir, matmulGraph(77, 300, 200));
  struct Case {
    std::string json, error;
  };
  const std::vector<Case> cases = {
      {R"({"ops": {"mm": {"cores": 1, "first_core": 0, "grid": [1, 1], "tile": [80, 128, 256], "share_a": true}}})",
       "op 'mm' (matmul): mapping cannot be used: share_a needs a grid row "
       "of at least 2 cores (grid 1x1)"},
      {R"({"ops": {"mm": {"cores": 3, "first_core": 0, "grid": [1, 3], "tile": [80, 128, 64], "share_a": true}}})",
       "share_a needs the same number of N tiles on every core of a grid "
       "row (tile N 64 does not give that with grid 1x3)"},
      {R"({"ops": {"mm": {"cores": 2, "first_core": 0, "grid": [1, 2], "tile": [80, 128, 64], "n_outer": false, "keep_b": true}}})",
       "keep_b needs N tiles outside M tiles (n_outer) when a core has "
       "several"},
      {R"({"ops": {"mm": {"share_a": 3}}})", "'share_a' must be true or false"},
      {R"({"ops": {"mm": {"keep_b": "yes"}}})",
       "'keep_b' must be true or false"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.json);
    const std::string path = dir + "/mapping.json";
    writeFileAtomic(path, c.json);
    DiagnosticEngine diags;
    std::optional<CompileResult> r = compileWith(*g, 2, path, diags);
    EXPECT_FALSE(r);
    EXPECT_NE(diags.str().find(c.error), std::string::npos) << diags.str();
  }
}

} // namespace
} // namespace spyre::compiler
