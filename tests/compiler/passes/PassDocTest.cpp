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

/// The lines of `list` that describe pass `name` (its summary line up to the
/// next pass's).
std::string passBlock(const std::string &list, std::string_view name) {
  const std::string head = std::string(name) + ": ";
  size_t begin = list.rfind(head, 0) == 0 ? 0 : list.find("\n" + head);
  if (begin == std::string::npos)
    return "";
  if (begin != 0)
    ++begin;
  size_t end = begin;
  while ((end = list.find('\n', end)) != std::string::npos &&
         end + 1 < list.size() && list[end + 1] == ' ')
    ++end;
  return list.substr(begin, end == std::string::npos ? end : end - begin);
}

TEST(PassDoc, ShowsWhatEachPassRequiresBeforeIt) {
  const std::string list = passListText();
  const std::string markdown = passReferenceMarkdown();
  // Emission reads what these passes annotate (Emit.cpp declares them).
  EXPECT_NE(passBlock(list, "emit").find(
                "\n  requires before it, in order: layout, divide, schedule, "
                "lx-plan, tile"),
            std::string::npos)
      << passBlock(list, "emit");
  EXPECT_NE(markdown.find("Requires before it, in this order (checked before a "
                          "pipeline runs): `layout`, `divide`, `schedule`, "
                          "`lx-plan`, `tile`."),
            std::string::npos);
  for (const PassInfo *p : passRegistry()) {
    for (std::string_view needed : p->requiredBefore) {
      std::string block = passBlock(list, needed);
      size_t line = block.find("\n  required before: ");
      ASSERT_NE(line, std::string::npos) << block;
      EXPECT_NE(block.find(std::string(p->name), line), std::string::npos)
          << block;
    }
  }
  // A pass nothing requires says nothing about it.
  EXPECT_EQ(passBlock(list, "emit").find("required before:"),
            std::string::npos);
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
