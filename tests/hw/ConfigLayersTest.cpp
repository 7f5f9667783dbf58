// Layered configs (docs/config.md, "Layers"): a file over its `base:` and
// `--set` settings over a config, both read by the config file reader.
#include "hw/HwConfig.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace spyre;
using namespace spyre::hw;

namespace {

namespace fs = std::filesystem;

std::string writeFile(const std::string &path, const std::string &text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// The first diagnostic and exit code loadConfig throws for `source`.
std::pair<std::string, ExitCode> loadError(const ConfigSource &source) {
  try {
    loadConfig(source);
  } catch (const UserError &e) {
    return {e.diagnostic().str(), e.exitCode()};
  }
  ADD_FAILURE() << "no error";
  return {};
}

} // namespace

TEST(ConfigLayers, AFileOverDefaultGivesOnlyWhatDiffers) {
  HwConfig config;
  DiagnosticEngine diags;
  ASSERT_TRUE(parseConfig("base: default\nlx:\n  size_bytes: 1048576\n",
                          "small.yaml", config, diags))
      << diags.str();
  HwConfig expected = builtinConfig();
  expected.lx.sizeBytes = 1048576;
  EXPECT_EQ(toYaml(config, false), toYaml(expected, false));
}

TEST(ConfigLayers, WithoutABaseEveryRequiredKeyIsStillNeeded) {
  HwConfig config;
  DiagnosticEngine diags;
  EXPECT_FALSE(parseConfig("lx:\n  size_bytes: 1048576\n", "small.yaml",
                           config, diags));
  EXPECT_EQ(diags.diagnostics().front().str(),
            "small.yaml:1:1: error: name: required key is missing");
}

TEST(ConfigLayers, BasesChainRelativeToEachFile) {
  const std::string dir = test::makeTempDir();
  writeFile(dir + "/cards/wide.yaml",
            "base: default\npt:\n  pe_rows: 16\n  pe_cols: 16\n");
  writeFile(dir + "/cards/variants/wide-fast.yaml",
            "base: ../wide.yaml\nmemory:\n  peak_gb_per_s: 409.6\n");
  const std::string top = writeFile(dir + "/mine.yaml",
                                    "base: cards/variants/wide-fast.yaml\n"
                                    "name: mine\n");
  HwConfig expected = builtinConfig();
  expected.name = "mine";
  expected.pt.peRows = 16;
  expected.pt.peCols = 16;
  expected.memory.peakGBps = 409.6;
  EXPECT_EQ(toYaml(loadConfigFile(top), false), toYaml(expected, false));
}

TEST(ConfigLayers, EachFileIsCheckedOnItsOwn) {
  // The base breaks a rule that the file over it would mend: the base is
  // refused, at its own line.
  const std::string dir = test::makeTempDir();
  writeFile(dir + "/base.yaml",
            "base: default\nmemory:\n  sustained_read_gb_per_s: 300\n");
  const std::string top = writeFile(
      dir + "/top.yaml", "base: base.yaml\nmemory:\n  peak_gb_per_s: 409.6\n");
  auto [message, code] = loadError({top, {}});
  EXPECT_EQ(message, dir + "/base.yaml:3:28: error: "
                           "memory.sustained_read_gb_per_s: 300.0 GB/s is "
                           "above memory.peak_gb_per_s (204.8 GB/s)");
  EXPECT_EQ(code, ExitCode::BadInput);
}

TEST(ConfigLayers, ARuleBrokenOverABasePointsAtTheValueWrittenLast) {
  HwConfig config;
  DiagnosticEngine diags;
  EXPECT_FALSE(parseConfig("base: default\nmemory:\n  peak_gb_per_s: 100.0\n",
                           "slow.yaml", config, diags));
  EXPECT_EQ(diags.str(),
            "slow.yaml:3:18: error: memory.sustained_read_gb_per_s: 150.0 "
            "GB/s is above memory.peak_gb_per_s (100.0 GB/s)\n");
}

TEST(ConfigLayers, SettingsApplyInOrderOverTheFile) {
  const std::string dir = test::makeTempDir();
  const std::string file =
      writeFile(dir + "/c.yaml", "base: default\nchip:\n  cores: 16\n");
  HwConfig config = loadConfig(
      {file, {"chip.cores=8", "name=eight", "memory.peak_gb_per_s=300"}});
  EXPECT_EQ(config.chip.cores, 8);
  EXPECT_EQ(config.name, "eight");
  EXPECT_EQ(config.memory.peakGBps, 300.0);
  EXPECT_EQ(loadConfig({file, {"chip.cores=8", "chip.cores=4"}}).chip.cores, 4);
  // Two keys that must change together are two settings, checked together.
  HwConfig faster = loadConfig({"",
                                {"memory.sustained_read_gb_per_s=300",
                                 "memory.peak_gb_per_s=409.6"}});
  EXPECT_EQ(faster.memory.sustainedReadGBps, 300.0);
}

TEST(ConfigLayers, ASettingIsReadLikeTheSameKeyInAFile) {
  EXPECT_EQ(loadError({"", {"chip.cores=32.5"}}),
            std::pair(std::string("--set chip.cores=32.5: error: at "
                                  "'chip.cores': expected an integer, got 32.5"),
                      ExitCode::Usage));
  EXPECT_EQ(loadError({"", {"chip.corse=4"}}).first,
            "--set chip.corse=4: error: at 'chip.corse': unknown key; did you "
            "mean 'cores'?");
  EXPECT_EQ(loadError({"", {"chip.cores=99999999999"}}).first,
            "--set chip.cores=99999999999: error: at 'chip.cores': "
            "99999999999 does not fit in a 32-bit integer");
  // The first setting in order is reported first, whatever the order of
  // the keys in the schema.
  EXPECT_EQ(loadError({"", {"chip.cores=0", "name=1x"}}).first,
            "--set chip.cores=0: error: at 'chip.cores': must be positive, "
            "got 0");
}

TEST(ConfigLayers, AFileThatChangesTheStickIsWrongWhateverComesAfter) {
  // The stick is the instruction set's, not a parameter: a layer may only
  // restate 128, and one that states another size is reported at its line
  // even when a later setting restates 128.
  const std::string dir = test::makeTempDir();
  const std::string file =
      writeFile(dir + "/c.yaml", "base: default\nchip:\n  stick_bytes: 64\n");
  EXPECT_EQ(loadError({file, {"chip.stick_bytes=128"}}),
            std::pair(file + ":3:16: error: chip.stick_bytes: 64 is not 128: "
                             "fixed by the instruction set "
                             "(isa::kStickBytes): its addresses, strides and "
                             "lane counts are in 128-byte sticks",
                      ExitCode::BadInput));
  EXPECT_NO_THROW(loadConfig({"", {"chip.stick_bytes=128"}}));
}

TEST(ConfigLayers, ASettingLeavesTheFileErrorsTheirOwn) {
  const std::string dir = test::makeTempDir();
  const std::string bad = writeFile(dir + "/bad.yaml", "base: default\nchip:\n  cores: x\n");
  auto [message, code] = loadError({bad, {"chip.cores=8"}});
  EXPECT_EQ(message, bad + ":3:10: error: chip.cores: expected an integer, got 'x'");
  EXPECT_EQ(code, ExitCode::BadInput);
}

TEST(ConfigLayers, ABaseTooLargeToReadIsReportedAtTheBaseLine) {
  const std::string dir = test::makeTempDir();
  writeFile(dir + "/huge.yaml", std::string((1 << 20) + 1, '#'));
  HwConfig config;
  DiagnosticEngine diags;
  EXPECT_FALSE(parseConfig("name: x\nbase: huge.yaml\n", dir + "/top.yaml",
                           config, diags));
  EXPECT_EQ(diags.str(), dir + "/top.yaml:2:7: error: base: '" + dir +
                             "/huge.yaml' is 1048577 bytes, more than the 1 "
                             "MiB a config may have\n");
}
