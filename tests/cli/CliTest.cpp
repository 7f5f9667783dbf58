// The `spyre` executable's common behaviour: help, version, usage errors and
// their exit codes (0 ok, 1 bad input, 2 usage, 3 verification failure).
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

using spyre::test::firstLine;
using spyre::test::runSpyre;

TEST(Cli, HelpListsEverySubcommand) {
  auto r = runSpyre({"--help"});
  EXPECT_EQ(r.exitCode, 0);
  for (const char *cmd : {"config", "dlf16", "asm", "disasm", "sim", "compare",
                          "graph", "verify"})
    EXPECT_NE(r.out.find(cmd), std::string::npos)
        << cmd << " missing from help";
}

TEST(Cli, VersionPrintsNameAndVersion) {
  auto r = runSpyre({"--version"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(firstLine(r.out).rfind("spyre ", 0), 0u) << r.out;
}

TEST(Cli, SubcommandHelpExitsZero) {
  for (const char *cmd : {"config", "dlf16", "asm", "disasm", "sim", "compare",
                          "graph", "verify"}) {
    auto r = runSpyre({cmd, "--help"});
    EXPECT_EQ(r.exitCode, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd;
  }
}

TEST(Cli, NoSubcommandIsUsageError) {
  auto r = runSpyre({});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(firstLine(r.err).rfind("spyre: error: ", 0), 0u) << r.err;
}

TEST(Cli, UnknownSubcommandIsUsageError) {
  auto r = runSpyre({"frobnicate"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

TEST(Cli, UnknownOptionIsUsageError) {
  auto r = runSpyre({"asm", "examples/asm/dma_copy.s", "--no-such-flag"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--no-such-flag"), std::string::npos) << r.err;
}
