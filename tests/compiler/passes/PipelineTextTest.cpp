// Pipeline text: it parses to passes with options, prints back to a text
// that parses to the same pipeline, and every mistake is an error located
// in the text with a caret (golden file of all of them).
#include "compiler/pipeline/PassRegistry.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

TEST(PipelineText, ParsesPassesAndOptions) {
  DiagnosticEngine diags;
  std::optional<Pipeline> p = parsePipeline(
      " canonicalize , layout{ f32-ops=softmax,layernorm   default-dtype=f32 }",
      diags);
  ASSERT_TRUE(p) << diags.str();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].pass->name, "canonicalize");
  EXPECT_EQ((*p)[1].pass->name, "layout");
  EXPECT_EQ((*p)[1].options.getString("default-dtype"), "f32");
  EXPECT_EQ((*p)[1].options.getList("f32-ops"),
            (std::vector<std::string>{"softmax", "layernorm"}));
  // Options print in declaration order; the text parses back the same.
  std::string text = pipelineText(*p);
  EXPECT_EQ(text,
            "canonicalize,layout{default-dtype=f32 f32-ops=softmax,layernorm}");
  std::optional<Pipeline> again = parsePipeline(text, diags);
  ASSERT_TRUE(again) << diags.str();
  EXPECT_EQ(pipelineText(*again), text);
  EXPECT_EQ((*again)[1].options.values(), (*p)[1].options.values());
}

TEST(PipelineText, DefaultsAreNotPrintedAndEmptyTextIsAnEmptyPipeline) {
  DiagnosticEngine diags;
  std::optional<Pipeline> p =
      parsePipeline("layout{default-dtype=dl16}", diags);
  ASSERT_TRUE(p) << diags.str();
  EXPECT_EQ(pipelineText(*p), "layout");
  std::optional<Pipeline> empty = parsePipeline("  ", diags);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(PipelineText, ErrorsAreLocatedWithACaret) {
  const char *cases[] = {
      "canonicalize,layot",
      "canonicalize,",
      "canonicalize layout",
      ",layout",
      "layout{dtype=f32}",
      "layout{default-dtype=bf16}",
      "layout{f32-ops=softmax,softmx}",
      "layout{f32-ops=softmax,,gelu}",
      "layout{default-dtype}",
      "layout{default-dtype=f32",
      "layout{default-dtype=f32 default-dtype=dl16}",
      "canonicalize{aggressive=true}",
      "layout{=f32}",
      "canonicalize,\n  layout{default-dtype=f16}",
  };
  std::string out;
  for (const char *text : cases) {
    DiagnosticEngine diags;
    EXPECT_FALSE(parsePipeline(text, diags).has_value()) << text;
    EXPECT_EQ(diags.errorCount(), 1u) << text;
    out += "// " + std::string(text) + "\n" + diags.str() + "\n";
  }
  spyre::test::expectGolden(out, "compiler/passes/pipeline-errors.txt");
}

} // namespace
} // namespace spyre::compiler
