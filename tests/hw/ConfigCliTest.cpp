// `spyre config show|check|fingerprint`, run as a user would.
#include "hw/HwConfig.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace spyre;
using namespace spyre::test;

namespace {

std::string builtinFingerprint() {
  return hw::fingerprintString(hw::builtinConfig().fingerprint());
}

std::string writeTemp(const std::string &name, const std::string &text) {
  std::string path = makeTempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

} // namespace

TEST(ConfigCli, ShowPrintsTheBuiltinConfigWithItsFingerprint) {
  ToolResult r = runSpyre({"config", "show"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "");
  expectGolden(r.out, "hw/config-show.yaml");
  // The fingerprint line sits in the header, before the first key.
  size_t fp = r.out.find("# fingerprint: " + builtinFingerprint() + "\n");
  EXPECT_NE(fp, std::string::npos);
  EXPECT_LT(fp, r.out.find("name: "));
}

TEST(ConfigCli, ShowOutputChecksBackWithTheSameFingerprint) {
  ToolResult shown = runSpyre({"config", "show"});
  ASSERT_EQ(shown.exitCode, 0);
  std::string path = writeTemp("shown.yaml", shown.out);
  ToolResult checked = runSpyre({"config", "check", path});
  EXPECT_EQ(checked.exitCode, 0) << checked.err;
  EXPECT_EQ(checked.out,
            path + ": ok (fingerprint " + builtinFingerprint() + ")\n");
  ToolResult again = runSpyre({"config", "show", "--config", path});
  EXPECT_EQ(again.exitCode, 0);
  EXPECT_EQ(again.out, shown.out);
}

TEST(ConfigCli, ShowOfAnEquivalentFileIsTheCanonicalBuiltin) {
  ToolResult builtin = runSpyre({"config", "show"});
  ToolResult other =
      runSpyre({"config", "show", "--config", "tests/hw/good/reordered.yaml"});
  EXPECT_EQ(other.exitCode, 0) << other.err;
  EXPECT_EQ(other.out, builtin.out);
}

TEST(ConfigCli, CheckAcceptsTheShippedConfig) {
  ToolResult r = runSpyre({"config", "check", "configs/spyre.yaml"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "configs/spyre.yaml: ok (fingerprint " +
                       builtinFingerprint() + ")\n");
  EXPECT_EQ(r.err, "");
}

TEST(ConfigCli, CheckPrintsEveryErrorOnePerLineAndExits1) {
  const std::string file = "tests/hw/bad/multiple-errors.yaml";
  ToolResult r = runSpyre({"config", "check", file});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(firstLine(r.err),
            file + ":5:14: error: chip.clock_ghz: expected a number, got "
                   "'fast'");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 7);
}

TEST(ConfigCli, CheckReportsASyntaxErrorAtTheTab) {
  ToolResult r = runSpyre({"config", "check", "tests/hw/bad/syntax-tab.yaml"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "tests/hw/bad/syntax-tab.yaml:4:1: error: tab character "
                   "in indentation; YAML indents with spaces\n");
}

TEST(ConfigCli, MissingFileIsBadInput) {
  ToolResult r = runSpyre({"config", "check", "no-such.yaml"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(
      r.err,
      "no-such.yaml: error: cannot open file: No such file or directory\n");
  ToolResult show = runSpyre({"config", "show", "--config", "no-such.yaml"});
  EXPECT_EQ(show.exitCode, 1);
  EXPECT_EQ(show.out, "");
  EXPECT_EQ(firstLine(show.err),
            "no-such.yaml: error: cannot open file: No such file or directory");
}

TEST(ConfigCli, ShowOfABadFileReportsTheFirstError) {
  ToolResult r = runSpyre(
      {"config", "show", "--config", "tests/hw/bad/sustained-above-peak.yaml"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "tests/hw/bad/sustained-above-peak.yaml:34:28: error: "
                   "memory.sustained_read_gb_per_s: 250.0 GB/s is above "
                   "memory.peak_gb_per_s (204.8 GB/s)\n");
}

TEST(ConfigCli, FingerprintPrintsOnlyTheFingerprint) {
  ToolResult r = runSpyre({"config", "fingerprint"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, builtinFingerprint() + "\n");

  ToolResult same = runSpyre(
      {"config", "fingerprint", "--config", "tests/hw/good/reordered.yaml"});
  EXPECT_EQ(same.out, r.out);

  std::string text = readSource("configs/spyre.yaml");
  text.replace(text.find("  cores: 32\n"), 12, "  cores: 16\n");
  ToolResult changed = runSpyre(
      {"config", "fingerprint", "--config", writeTemp("16.yaml", text)});
  EXPECT_EQ(changed.exitCode, 0) << changed.err;
  EXPECT_NE(changed.out, r.out);
  EXPECT_EQ(changed.out.size(), r.out.size());
}

TEST(ConfigCli, MisuseIsAUsageError) {
  EXPECT_EQ(runSpyre({"config"}).exitCode, 2);
  EXPECT_EQ(runSpyre({"config", "check"}).exitCode, 2);
  EXPECT_EQ(runSpyre({"config", "show", "extra"}).exitCode, 2);
  EXPECT_EQ(runSpyre({"config", "frobnicate"}).exitCode, 2);
}
