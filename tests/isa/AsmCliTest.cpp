// `spyre asm` and `spyre disasm` run as a user would: exit codes, messages,
// and the files they leave behind.
#include "hw/HwConfig.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace spyre {
namespace {

using spyre::test::firstLine;
using spyre::test::makeTempDir;
using spyre::test::runSpyre;

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AsmCli, AssemblesAndSummarises) {
  std::string dir = makeTempDir();
  std::string out = dir + "/copy.spyre";
  test::ToolResult r =
      runSpyre({"asm", "examples/asm/dma_copy.s", "-o", out});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string bytes = readFile(out, kTextFileLimit);
  EXPECT_EQ(r.out, out + ": 2 streams, 16 instructions, " +
                       std::to_string(bytes.size()) + " bytes (config " +
                       hw::fingerprintString(hw::builtinConfig().fingerprint()) +
                       ")\n");
  EXPECT_EQ(bytes.size(), 924u); // below 1,000: no thousands separator
  EXPECT_EQ(listDir(dir), (std::vector<std::string>{"copy.spyre"}));
}

TEST(AsmCli, PrintsThousandsSeparators) {
  std::string dir = makeTempDir();
  test::ToolResult r = runSpyre(
      {"asm", "examples/asm/ring_exchange.s", "-o", dir + "/r.spyre"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find(": 6 streams, 24 instructions, 1,458 bytes (config "),
            std::string::npos)
      << r.out;
}

TEST(AsmCli, DisassemblesToStdoutOrAFile) {
  std::string dir = makeTempDir();
  std::string prog = dir + "/p.spyre";
  ASSERT_EQ(runSpyre({"asm", "examples/asm/sfu_softmax.s", "-o", prog}).exitCode,
            0);
  test::ToolResult r = runSpyre({"disasm", prog});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  spyre::test::expectGolden(r.out, "isa/sfu_softmax.disasm.s");

  test::ToolResult w = runSpyre({"disasm", prog, "-o", dir + "/p.s"});
  EXPECT_EQ(w.exitCode, 0) << w.err;
  EXPECT_EQ(w.out, "");
  EXPECT_EQ(readFile(dir + "/p.s", kTextFileLimit), r.out);

  // The disassembly assembles back to the same bytes.
  ASSERT_EQ(runSpyre({"asm", dir + "/p.s", "-o", dir + "/q.spyre"}).exitCode, 0);
  EXPECT_EQ(readFile(dir + "/q.spyre", kTextFileLimit), readFile(prog, kTextFileLimit));
}

TEST(AsmCli, DefaultOutputNameReplacesTheExtension) {
  std::string dir = makeTempDir();
  std::string src = dir + "/k.s";
  writeFileAtomic(src, readFile(spyre::test::srcPath("examples/asm/pt_matmul.s"), kTextFileLimit));
  test::ToolResult r = runSpyre({"asm", src});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(firstLine(r.out).substr(0, dir.size() + 10), dir + "/k.spyre: ");
  EXPECT_EQ(listDir(dir), (std::vector<std::string>{"k.s", "k.spyre"}));
}

TEST(AsmCli, AssemblyErrorsExitOneAndWriteNothing) {
  std::string dir = makeTempDir();
  std::string src = dir + "/bad.s";
  writeFileAtomic(src, ".core 0\n.engine pt.0\n    ld 0x0, 0x0\n    halt\n"
                       ".engine pt.0\n    hlt\n");
  test::ToolResult r = runSpyre({"asm", src, "-o", dir + "/bad.spyre"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, src + ":3:5: error: 'ld' cannot run on pt (it runs on "
                         "dma.load)\n"
                         "    ld 0x0, 0x0\n"
                         "    ^\n" +
                       src + ":5:9: error: stream core 0 pt.0 defined twice "
                             "(first on line 2)\n"
                             ".engine pt.0\n"
                             "        ^\n" +
                       src + ":6:5: error: unknown instruction 'hlt'\n"
                             "    hlt\n"
                             "    ^\n");
  EXPECT_EQ(listDir(dir), (std::vector<std::string>{"bad.s"}));
}

TEST(AsmCli, UsesTheGivenConfig) {
  std::string dir = makeTempDir();
  std::string yaml(hw::builtinConfigText());
  size_t at = yaml.find("corelets_per_core: 2");
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, 20, "corelets_per_core: 1");
  writeFileAtomic(dir + "/one.yaml", yaml);
  test::ToolResult ok = runSpyre({"asm", "examples/asm/pt_matmul.s", "-o",
                                  dir + "/m.spyre", "--config",
                                  dir + "/one.yaml"});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_EQ(ok.out.find(hw::fingerprintString(hw::builtinConfig().fingerprint())),
            std::string::npos);

  writeFileAtomic(dir + "/two.s", ".core 0\n.engine sfu.1\nhalt\n");
  test::ToolResult r = runSpyre({"asm", dir + "/two.s", "-o", dir + "/t.spyre",
                                 "--config", dir + "/one.yaml"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(firstLine(r.err),
            dir + "/two.s:2:9: error: no engine 'sfu.1' (valid: sfu.0..sfu.0, "
                  "chip.corelets_per_core = 1)");
}

TEST(AsmCli, BadProgramFilesExitOne) {
  std::string dir = makeTempDir();
  writeFileAtomic(dir + "/short.spyre", "SPYREPRG");
  test::ToolResult r = runSpyre({"disasm", dir + "/short.spyre"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, dir + "/short.spyre: error: truncated: 8 bytes, shorter "
                         "than the 48-byte program header\n");

  std::string prog = dir + "/p.spyre";
  ASSERT_EQ(runSpyre({"asm", "examples/asm/dma_copy.s", "-o", prog}).exitCode, 0);
  std::string bytes = readFile(prog, kTextFileLimit);
  bytes[bytes.size() - 5] ^= 0x10;
  writeFileAtomic(prog, bytes);
  r = runSpyre({"disasm", prog, "-o", dir + "/p.s"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find(prog + ": error: checksum mismatch (stored 0x"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/p.s"));

  r = runSpyre({"disasm", "examples/asm/dma_copy.s"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "examples/asm/dma_copy.s: error: not a Spyre program (bad "
                   "magic)\n");
}

TEST(AsmCli, MissingFilesAndUsage) {
  test::ToolResult r = runSpyre({"asm", "no/such/file.s"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("no/such/file.s: error: cannot open file"),
            std::string::npos)
      << r.err;
  r = runSpyre({"disasm", "no/such/file.spyre"});
  EXPECT_EQ(r.exitCode, 1);
  r = runSpyre({"asm"});
  EXPECT_EQ(r.exitCode, 2);
  r = runSpyre({"disasm", "a", "b", "c"});
  EXPECT_EQ(r.exitCode, 2);
}

} // namespace
} // namespace spyre
