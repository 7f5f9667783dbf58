#include "support/Diagnostic.h"

#include <gtest/gtest.h>

using namespace spyre;

TEST(Diagnostic, FormatsFileLineColumn) {
  Diagnostic d{Severity::Error, SourceLoc{"a.yaml", 3, 7, "pt.rows"},
               "must be positive", {}};
  EXPECT_EQ(d.str(), "a.yaml:3:7: error: must be positive");
}

TEST(Diagnostic, UsesKeyPathWhenThereIsNoLine) {
  Diagnostic d{Severity::Error, SourceLoc{"m.json", 0, 0, "ops[3].inputs"},
               "unknown tensor 'x'", {}};
  EXPECT_EQ(d.str(), "m.json: error: at 'ops[3].inputs': unknown tensor 'x'");
}

TEST(Diagnostic, DrawsCaretUnderColumn) {
  Diagnostic d{Severity::Error, SourceLoc{"p.s", 2, 5}, "unknown mnemonic",
               "    frob r1"};
  EXPECT_EQ(d.str(), "p.s:2:5: error: unknown mnemonic\n    frob r1\n    ^");
}

TEST(DiagnosticEngine, CountsErrorsAndThrowsFirst) {
  DiagnosticEngine diags;
  diags.warning(SourceLoc{"f"}, "w");
  EXPECT_FALSE(diags.hasErrors());
  EXPECT_NO_THROW(diags.throwIfErrors());
  diags.error(SourceLoc{"f", 1, 1}, "first");
  diags.error(SourceLoc{"f", 2, 1}, "second");
  EXPECT_EQ(diags.errorCount(), 2u);
  try {
    diags.throwIfErrors();
    FAIL() << "expected a UserError";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().message, "first");
    EXPECT_EQ(e.exitCode(), ExitCode::BadInput);
  }
}

TEST(DiagnosticDeathTest, AssertAbortsWithContext) {
  EXPECT_DEATH(SPYRE_ASSERT(1 + 1 == 3, "arithmetic broke"),
               "internal error: .*arithmetic broke");
}
