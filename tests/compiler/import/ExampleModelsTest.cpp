// The example models in examples/models/: each loads and verifies, prints as
// its golden IR, and survives the IR text and graph JSON round trips.
#include "compiler/import/GraphJson.h"
#include "compiler/ir/Parser.h"
#include "compiler/ir/Printer.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <map>

namespace spyre::compiler {
namespace {

class ExampleModel : public ::testing::TestWithParam<std::string> {
protected:
  std::unique_ptr<Graph> load() {
    DiagnosticEngine diags;
    auto g = loadGraphJson(
        spyre::test::srcPath("examples/models/" + GetParam() + "/model.json"), diags);
    EXPECT_NE(g, nullptr) << diags.str();
    return g;
  }
};

TEST_P(ExampleModel, PrintsAsItsGoldenIr) {
  auto g = load();
  ASSERT_NE(g, nullptr);
  spyre::test::expectGolden(printGraph(*g), "compiler/ir/" + GetParam() + ".ir");
}

TEST_P(ExampleModel, IrTextRoundTrips) {
  auto g = load();
  ASSERT_NE(g, nullptr);
  ConstantPool pool;
  pool.addGraph(*g);
  std::string text = printGraph(*g);
  DiagnosticEngine diags;
  auto parsed = parseGraph(text, GetParam() + ".ir", diags, &pool);
  ASSERT_NE(parsed, nullptr) << diags.str();
  EXPECT_EQ(graphDifference(*g, *parsed), "");
  EXPECT_EQ(printGraph(*parsed), text);
}

TEST_P(ExampleModel, GraphJsonRoundTrips) {
  auto g = load();
  ASSERT_NE(g, nullptr);
  std::string dir = spyre::test::makeTempDir();
  writeGraphJson(*g, dir + "/model.json");
  DiagnosticEngine diags;
  auto back = loadGraphJson(dir + "/model.json", diags);
  ASSERT_NE(back, nullptr) << diags.str();
  EXPECT_EQ(graphDifference(*g, *back), "");
}

INSTANTIATE_TEST_SUITE_P(Models, ExampleModel,
                         ::testing::Values("mlp_block", "norm_softmax", "gpt_block"));

TEST(ExampleModels, GptBlockHasTheExpectedStructure) {
  DiagnosticEngine diags;
  auto g = loadGraphJson(spyre::test::srcPath("examples/models/gpt_block/model.json"), diags);
  ASSERT_NE(g, nullptr) << diags.str();
  std::map<std::string, int> kinds;
  for (const Op *op : g->ops())
    ++kinds[std::string(op->kindName())];
  EXPECT_EQ(kinds, (std::map<std::string, int>{{"add", 2},
                                               {"causal_mask_add", 1},
                                               {"gelu", 1},
                                               {"layernorm", 2},
                                               {"linear", 4},
                                               {"matmul", 2},
                                               {"mul", 1},
                                               {"reshape", 4},
                                               {"softmax", 1},
                                               {"split", 1},
                                               {"transpose", 4}}));
  EXPECT_EQ(g->findValue("x")->type().str(), "f32[16, 64]");
  EXPECT_EQ(g->findValue("scores")->type().str(), "f32[4, 16, 16]");
  EXPECT_EQ(g->outputs().front()->type().str(), "f32[16, 64]");
}

} // namespace
} // namespace spyre::compiler
