// docs/ir.md carries an op reference generated from the registry; this keeps
// the committed copy from drifting (regenerate with
// build/compiler/ir/spyre-ir-doc --update docs/ir.md).
#include "compiler/ir/IrDoc.h"

#include "compiler/ir/OpRegistry.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

TEST(IrDoc, CommittedOpReferenceMatchesTheRegistry) {
  std::string doc = spyre::test::readSource("docs/ir.md");
  std::optional<std::string> updated = updateOpReference(doc);
  ASSERT_TRUE(updated.has_value()) << "docs/ir.md lacks the op reference markers";
  EXPECT_EQ(doc, *updated)
      << "docs/ir.md is stale: run build/compiler/ir/spyre-ir-doc --update docs/ir.md";
}

TEST(IrDoc, DocumentsEveryOpAndAttribute) {
  std::string ref = opReferenceMarkdown();
  for (const OpDef &d : opTable()) {
    EXPECT_NE(ref.find("\n### " + std::string(d.name) + "\n"), std::string::npos)
        << d.name;
    for (const AttrSpec &a : d.attrs)
      EXPECT_NE(ref.find("  - `" + std::string(a.name) + "` ("), std::string::npos)
          << d.name << "." << a.name;
  }
}

TEST(IrDoc, UpdateNeedsBothMarkers) {
  EXPECT_FALSE(updateOpReference("no markers here\n").has_value());
  std::string doc = std::string("intro\n") + kOpReferenceBegin + "\nold\n" +
                    kOpReferenceEnd + "\noutro\n";
  std::optional<std::string> updated = updateOpReference(doc);
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(*updated, std::string("intro\n") + kOpReferenceBegin + "\n\n" +
                          opReferenceMarkdown() + "\n" + kOpReferenceEnd + "\noutro\n");
  EXPECT_EQ(updateOpReference(*updated), updated);
}

} // namespace
} // namespace spyre::compiler
