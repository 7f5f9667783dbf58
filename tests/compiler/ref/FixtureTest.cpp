// The reference evaluator against NumPy: each folder of
// tests/compiler/ref/fixtures/ holds a graph JSON, its inputs, and what NumPy
// computes for its outputs (made by make_fixtures.py there). The GPT block of
// examples/models/ is checked against its NumPy reference the same way.
#include "compiler/import/GraphJson.h"
#include "compiler/ref/Evaluator.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <filesystem>
#include <set>

namespace spyre::compiler::ref {
namespace {

/// Evaluates `dir/model.json` on `inputsDir/<input>.npy` and compares each
/// output with `expectedDir/<output>.npy`: |a - e| <= rtol * |e| + atol, and
/// infinities and NaNs must match exactly.
void checkModel(const std::string &dir, const std::string &inputsDir,
                const std::string &expectedDir, double rtol, double atol) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = loadGraphJson(dir + "/model.json", diags);
  ASSERT_NE(g, nullptr) << diags.str();
  TensorMap inputs;
  for (const Value *v : g->inputs())
    inputs[v->name()] = tensorFromNpy(readNpy(inputsDir + "/" + v->name() + ".npy"));
  std::vector<RefTensor> outputs = evaluateGraph(*g, inputs);
  ASSERT_EQ(outputs.size(), g->outputs().size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = g->outputs()[i]->name();
    SCOPED_TRACE(name);
    NpyArray expected = readNpy(expectedDir + "/" + name + ".npy");
    std::vector<float> actual = npyF32Values(toNpyF32(outputs[i]), name);
    std::vector<float> want = npyF32Values(expected, name);
    ASSERT_EQ(outputs[i].shape, expected.shape);
    size_t bad = 0;
    for (size_t k = 0; k < want.size(); ++k) {
      bool ok = std::isnan(want[k]) ? std::isnan(actual[k])
                : std::isinf(want[k])
                    ? actual[k] == want[k]
                    : std::fabs(double(actual[k]) - want[k]) <=
                          rtol * std::fabs(double(want[k])) + atol;
      if (!ok && bad++ < 5)
        ADD_FAILURE() << "element " << k << ": " << actual[k] << ", NumPy "
                      << want[k];
    }
    EXPECT_EQ(bad, 0u);
  }
}

std::vector<std::string> fixtures() {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(
           spyre::test::srcPath("tests/compiler/ref/fixtures")))
    if (e.is_directory())
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class NumPyFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(NumPyFixture, MatchesNumPy) {
  std::string dir = spyre::test::srcPath("tests/compiler/ref/fixtures/" + GetParam());
  // Both sides compute in double and round once to float32; only summation
  // order and libm's last bits differ.
  checkModel(dir, dir + "/inputs", dir + "/expected", 2e-6, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(Cases, NumPyFixture, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<std::string> &i) {
                           return i.param;
                         });

TEST(NumPyFixture, CoverEveryOpKind) {
  std::set<OpKind> seen;
  for (const std::string &name : fixtures()) {
    DiagnosticEngine diags;
    auto g = loadGraphJson(
        spyre::test::srcPath("tests/compiler/ref/fixtures/" + name + "/model.json"), diags);
    ASSERT_NE(g, nullptr) << diags.str();
    for (const Op *op : g->ops())
      seen.insert(op->kind());
  }
  for (const OpDef &d : opTable())
    EXPECT_TRUE(seen.contains(d.kind)) << d.name << " has no NumPy fixture";
}

TEST(GptBlock, MatchesItsNumPyReference) {
  std::string dir = spyre::test::srcPath("examples/models/gpt_block");
  checkModel(dir, dir + "/reference", dir + "/reference", 1e-5, 0);
}

} // namespace
} // namespace spyre::compiler::ref
