// docs/passes.md carries a pass reference generated from the registry; this
// keeps the committed copy from drifting (regenerate with
// build/compiler/pipeline/spyre-pass-doc --update docs/passes.md).
#include "compiler/pipeline/PassDoc.h"

#include "compiler/pipeline/PassRegistry.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

TEST(PassDoc, CommittedPassReferenceMatchesTheRegistry) {
  std::string doc = spyre::test::readSource("docs/passes.md");
  std::optional<std::string> updated = updatePassReference(doc);
  ASSERT_TRUE(updated.has_value())
      << "docs/passes.md lacks the pass reference markers";
  EXPECT_EQ(doc, *updated) << "docs/passes.md is stale: run "
                              "build/compiler/pipeline/spyre-pass-doc --update "
                              "docs/passes.md";
}

TEST(PassDoc, DocumentsEveryPassOptionAndStatistic) {
  std::string markdown = passReferenceMarkdown();
  std::string list = passListText();
  for (const PassInfo *p : passRegistry()) {
    std::string name(p->name);
    EXPECT_NE(markdown.find("\n### " + name + "\n"), std::string::npos) << name;
    EXPECT_NE(list.find(name + ": " + std::string(p->summary) + "\n"),
              std::string::npos)
        << name;
    for (const OptionSpec &o : p->options) {
      EXPECT_NE(markdown.find("| `" + std::string(o.name) + "` |"),
                std::string::npos);
      EXPECT_NE(list.find("  option " + std::string(o.name) + "=<"),
                std::string::npos);
    }
    for (const StatisticSpec &s : p->statistics) {
      EXPECT_NE(markdown.find("| `" + std::string(s.name) + "` |"),
                std::string::npos);
      EXPECT_NE(list.find("  statistic " + std::string(s.name) + ": "),
                std::string::npos);
    }
  }
  EXPECT_NE(list.find("pipelines:\n  -O0: " + pipelineText(o0Pipeline()) +
                      "\n  -O1: " + pipelineText(levelPipeline(1)) +
                      "\n  -O2: " + pipelineText(o2Pipeline()) + "\n"),
            std::string::npos)
      << list;
}

TEST(PassDoc, UpdateNeedsBothMarkers) {
  EXPECT_FALSE(updatePassReference("no markers\n").has_value());
  EXPECT_FALSE(updatePassReference(std::string(kPassReferenceEnd) + "\n" +
                                   kPassReferenceBegin + "\n")
                   .has_value());
  std::string doc = std::string("intro\n") + kPassReferenceBegin + "\nold\n" +
                    kPassReferenceEnd + "\noutro\n";
  std::optional<std::string> updated = updatePassReference(doc);
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(*updated, std::string("intro\n") + kPassReferenceBegin + "\n\n" +
                          passReferenceMarkdown() + "\n" + kPassReferenceEnd +
                          "\noutro\n");
  EXPECT_EQ(updatePassReference(*updated), updated);
}

} // namespace
} // namespace spyre::compiler
