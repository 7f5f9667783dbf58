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

TEST(Diagnostic, ShowsAWindowOfALongLine) {
  // 1,000 characters: the 160 around the column, cut marks, caret below.
  std::string line(1000, 'a');
  line[600] = 'X';
  Diagnostic d{Severity::Error, {"f.s", 1, 601}, "bad", line};
  const std::string window =
      "..." + std::string(80, 'a') + "X" + std::string(79, 'a') + "...";
  EXPECT_EQ(d.str(), "f.s:1:601: error: bad\n" + window + "\n" +
                         std::string(83, ' ') + "^");
  // Near the start no cut mark is needed before the caret.
  d.loc.col = 2;
  EXPECT_EQ(d.str(), "f.s:1:2: error: bad\n" + std::string(160, 'a') +
                         "...\n ^");
  // Near the end the window ends with the line.
  d.loc.col = 1000;
  EXPECT_EQ(d.str(), "f.s:1:1000: error: bad\n..." + std::string(160, 'a') +
                         "\n" + std::string(3 + 159, ' ') + "^");
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
