// `spyre verify`: the listing of a good program (golden text, with sizes
// checked by hand), the same refusals as `spyre sim` (config fingerprint,
// a program that does not fit its config), and exit code 1 on every failure.
// The damaged-file cases are in the bad-input catalogue (tests/bad-inputs/).
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include "hw/HwConfig.h"
#include "isa/Program.h"

#include <gtest/gtest.h>

#include <fstream>

namespace spyre::test {
namespace {

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Every tensor kind and dtype, and streams on two cores. By the stick rule
// (docs/hardware.md#device-layout): x dl16 [3, 100] is 2 blocks x 3 rows =
// 6 sticks = 768 bytes; w fp32 [2, 2] is 1 x 2 = 2 sticks = 256 bytes; t int8
// [4, 200] is 2 x 4 = 8 sticks = 1024 bytes; y int32 [1, 33] is 2 x 1 = 2
// sticks = 256 bytes. Together 2304 device bytes.
const char *const kKindsProgram = R"(.program "kinds"
.tensor input   x dl16  [3, 100] @ 0x0
.tensor const   w fp32  [2, 2]   @ 0x10 = [1.0, -2.5, 0.25, 4]
.tensor scratch t int8  [4, 200] @ 0x20
.tensor output  y int32 [1, 33]  @ 0x30

.core 0
.engine dma.load
    ld      0x0, 0x0, run=6
    signal  c0, 1
    halt
.engine sfu.1
    wait    c0, 1
    halt

.core 3
.engine dma.store
    halt
)";

/// Assembles `text` as `dir/NAME.s` into `dir/NAME.spyre` (extra `asm`
/// arguments in `extra`).
void assemble(const std::string &dir, const std::string &name,
              const std::string &text,
              const std::vector<std::string> &extra = {}) {
  writeText(dir + "/" + name + ".s", text);
  std::vector<std::string> args = {"asm", name + ".s", "-o", name + ".spyre"};
  args.insert(args.end(), extra.begin(), extra.end());
  ToolResult r = runSpyre(args, dir);
  ASSERT_EQ(r.exitCode, 0) << r.err;
}

TEST(VerifyCli, ListsStreamsTensorsAndTotals) {
  std::string dir = makeTempDir();
  ASSERT_NO_FATAL_FAILURE(assemble(dir, "kinds", kKindsProgram));
  ToolResult r = runSpyre({"verify", "kinds.spyre"}, dir);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "");
  expectGolden(r.out, "cli/verify-kinds.txt");

  // The figures the golden file holds, from the stick rule (above).
  EXPECT_NE(r.out.find("x     input    dl16   [3, 100]    0x0      768\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("t     scratch  int8   [4, 200]    0x1000   1024\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("device bytes   2304\n"), std::string::npos) << r.out;
  std::ifstream file(dir + "/kinds.spyre", std::ios::binary | std::ios::ate);
  EXPECT_NE(r.out.find("program bytes  " + std::to_string(file.tellg()) + "\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("streams        3 streams on 2 cores, 6 instructions\n"),
            std::string::npos)
      << r.out;
}

TEST(VerifyCli, ChecksAgainstTheConfigGiven) {
  std::string dir = makeTempDir();
  // The built-in config with one value changed: half the LX.
  std::string yaml = readSource("configs/spyre.yaml");
  const std::string from = "size_bytes: 2097152", to = "size_bytes: 1048576";
  size_t at = yaml.find(from);
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, from.size(), to);
  writeText(dir + "/half-lx.yaml", yaml);
  ASSERT_NO_FATAL_FAILURE(
      assemble(dir, "kinds", kKindsProgram, {"--config", "half-lx.yaml"}));
  ToolResult builtin = runSpyre({"config", "fingerprint"});
  ToolResult half =
      runSpyre({"config", "fingerprint", "--config", "half-lx.yaml"}, dir);
  ASSERT_EQ(builtin.exitCode, 0);
  ASSERT_EQ(half.exitCode, 0);
  std::string builtinPrint = firstLine(builtin.out),
              halfPrint = firstLine(half.out);
  ASSERT_NE(builtinPrint, halfPrint);

  ToolResult ok =
      runSpyre({"verify", "kinds.spyre", "--config", "half-lx.yaml"}, dir);
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_NE(
      ok.out.find("config         " + halfPrint + ", matches half-lx.yaml\n"),
      std::string::npos)
      << ok.out;

  ToolResult bad = runSpyre({"verify", "kinds.spyre"}, dir);
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err,
            "kinds.spyre: error: compiled for config " + halfPrint +
                " but the config (built-in) is " + builtinPrint +
                "; recompile, or pass the config it was compiled for\n");
}

// A file can carry the right fingerprint and still not fit the config (made
// by hand, or by a broken tool): verify refuses it exactly as sim does.
TEST(VerifyCli, RefusesAProgramThatDoesNotFitLikeSim) {
  const hw::HwConfig &config = hw::builtinConfig();
  isa::Program p;
  p.name = "too_far";
  p.configFingerprint = config.fingerprint();
  isa::Stream s;
  s.core = config.chip.cores; // one past the last core
  s.engine = isa::Engine::DmaLoad;
  s.code.push_back(isa::Instr{isa::Opcode::Halt, {}, {}});
  s.provenance.push_back(isa::kNoProvenance);
  p.streams.push_back(s);
  std::string dir = makeTempDir();
  writeText(dir + "/far.spyre", isa::writeProgram(p));

  std::string expected =
      "far.spyre: error: stream core " + std::to_string(config.chip.cores) +
      " dma.load: the config has " + std::to_string(config.chip.cores) +
      " cores (chip.cores)";
  ToolResult verify = runSpyre({"verify", "far.spyre"}, dir);
  EXPECT_EQ(verify.exitCode, 1);
  EXPECT_EQ(firstLine(verify.err), expected);
  ToolResult sim = runSpyre({"sim", "far.spyre", "--timing-only"}, dir);
  EXPECT_EQ(sim.exitCode, 1);
  EXPECT_EQ(firstLine(sim.err), expected);
}

TEST(VerifyCli, MissingProgramIsBadInput) {
  std::string dir = makeTempDir();
  ToolResult r = runSpyre({"verify", "nope.spyre"}, dir);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(firstLine(r.err),
            "nope.spyre: error: cannot open file: No such file or directory");
}

TEST(VerifyCli, MissingArgumentIsUsageError) {
  ToolResult r = runSpyre({"verify"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(firstLine(r.err).rfind("spyre: error: ", 0), 0u) << r.err;
}

} // namespace
} // namespace spyre::test
