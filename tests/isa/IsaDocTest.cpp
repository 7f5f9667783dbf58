// docs/isa.md is generated from the instruction table; this keeps the
// committed copy from drifting (regenerate with spyre-isa-doc -o docs/isa.md).
#include "isa/IsaDoc.h"

#include "isa/InstrTable.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

namespace spyre::isa {
namespace {

TEST(IsaDoc, CommittedReferenceMatchesTheTable) {
  std::string generated = isaReferenceMarkdown();
  EXPECT_EQ(spyre::test::readSource("docs/isa.md"), generated)
      << "docs/isa.md is stale: run build/isa/spyre-isa-doc -o docs/isa.md";
}

TEST(IsaDoc, DocumentsEveryInstruction) {
  std::string doc = isaReferenceMarkdown();
  for (const InstrDesc &d : instructionTable()) {
    EXPECT_NE(doc.find("\n### " + std::string(d.mnemonic) + "\n"),
              std::string::npos)
        << d.mnemonic;
    EXPECT_NE(doc.find("- Syntax: `" + d.syntax() + "`"), std::string::npos)
        << d.mnemonic;
  }
}

} // namespace
} // namespace spyre::isa
