// Every kind of mistake in a config file gives a located error naming the
// key: one file per mistake in tests/hw/bad/, each opening with the error it
// must produce (`# expect-error: ...`), in the style of LLVM's expected-error.
#include "hw/HwConfig.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

using namespace spyre;
using namespace spyre::hw;

namespace {

constexpr const char *kExpectPrefix = "# expect-error: ";

std::vector<std::string> badFiles() {
  std::vector<std::string> names;
  for (const auto &entry :
       std::filesystem::directory_iterator(test::srcPath("tests/hw/bad")))
    if (entry.path().extension() == ".yaml")
      names.push_back("tests/hw/bad/" + entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

} // namespace

TEST(ConfigErrors, EachBadFileGivesItsExpectedFirstError) {
  std::vector<std::string> files = badFiles();
  // One file per error class of docs/config.md; guard against an empty loop.
  EXPECT_GE(files.size(), 40u);
  for (const std::string &file : files) {
    SCOPED_TRACE(file);
    std::string text = test::readSource(file);
    ASSERT_EQ(text.rfind(kExpectPrefix, 0), 0u)
        << "first line must be '" << kExpectPrefix << "...'";
    std::string expected =
        test::firstLine(text).substr(std::string(kExpectPrefix).size());
    HwConfig config;
    DiagnosticEngine diags;
    EXPECT_FALSE(parseConfig(text, file, config, diags));
    ASSERT_TRUE(diags.hasErrors());
    EXPECT_EQ(diags.diagnostics().front().str(), expected);
    // One mistake, one error: no cascades from a key already reported.
    if (file.find("multiple-errors") == std::string::npos) {
      EXPECT_EQ(diags.errorCount(), 1u) << diags.str();
    }
  }
}

TEST(ConfigErrors, CollectsEveryErrorInDocumentOrder) {
  const std::string file = "tests/hw/bad/multiple-errors.yaml";
  HwConfig config;
  DiagnosticEngine diags;
  EXPECT_FALSE(parseConfig(test::readSource(file), file, config, diags));
  std::vector<std::string> expected = {
      file + ":5:14: error: chip.clock_ghz: expected a number, got 'fast'",
      file + ":8:3: error: chip.colour: unknown key (keys of 'chip': cores, "
             "clock_ghz, corelets_per_core, stick_bytes)",
      file + ":21:15: error: lx.size_bytes: 1000 is not a whole number of "
             "128-byte sticks",
      file + ":28:29: error: memory.sustained_mixed_gb_per_s: 160.0 GB/s is "
             "above memory.sustained_read_gb_per_s (150.0 GB/s); turnarounds "
             "make mixed traffic slower, not faster",
      file + ":32:25: error: ring.memory_node_position: 40 is outside 0..31 "
             "(chip.cores is 32)",
      file + ":35:1: error: limits.barriers: required key is missing",
      file + ":37:19: error: limits.max_loop_count: 70000 is above 65535, the "
             "largest count the 16-bit loop field of the ISA holds",
  };
  EXPECT_EQ(lines(diags.str()), expected);
}

TEST(ConfigErrors, ParseLeavesTheOutputUntouchedOnError) {
  HwConfig config;
  config.name = "before";
  DiagnosticEngine diags;
  EXPECT_FALSE(parseConfig("name: x\nchip: 3\n", "t.yaml", config, diags));
  EXPECT_EQ(config.name, "before");
}

TEST(ConfigErrors, LoadConfigFileThrowsTheFirstError) {
  const std::string file = "tests/hw/bad/lx-not-whole-sticks.yaml";
  try {
    loadConfigFile(test::srcPath(file));
    FAIL() << "expected a UserError";
  } catch (const UserError &e) {
    EXPECT_EQ(e.exitCode(), ExitCode::BadInput);
    EXPECT_EQ(e.diagnostic().loc.line, 23);
    EXPECT_EQ(e.diagnostic().loc.col, 15);
    EXPECT_EQ(e.diagnostic().loc.keyPath, "lx.size_bytes");
    EXPECT_EQ(e.diagnostic().message,
              "lx.size_bytes: 1000 is not a whole number of 128-byte sticks");
  }
}

TEST(ConfigErrors, MissingFileNamesThePath) {
  try {
    loadConfigFile("/nonexistent/spyre.yaml");
    FAIL() << "expected a UserError";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(), "/nonexistent/spyre.yaml: error: cannot "
                                    "open file: No such file or directory");
  }
}

TEST(ConfigErrors, SuggestsTheKeyWithTheNeighbouringLettersSwapped) {
  HwConfig config;
  DiagnosticEngine diags;
  std::string text = toYaml(builtinConfig(), false);
  text.replace(text.find("  host_gflops:"), 14, "  host_glfops:");
  EXPECT_FALSE(parseConfig(text, "t.yaml", config, diags));
  EXPECT_EQ(diags.diagnostics().front().message,
            "host.host_glfops: unknown key; did you mean 'host_gflops'?");
}
