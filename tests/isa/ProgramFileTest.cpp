// The program file: its documented header, and the reader's answer to every
// kind of damage (truncation, flipped bytes, wrong magic, future versions,
// corrupted lengths and instructions behind a valid checksum). Damage must
// end in a UserError naming the file, never in a crash.
#include "isa/Assembler.h"
#include "isa/Program.h"

#include "hw/HwConfig.h"
#include "support/Hash.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <map>

namespace spyre::isa {
namespace {

std::string sampleFile() {
  DiagnosticEngine diags;
  Program p = assemble(spyre::test::readSource("examples/asm/dma_copy.s"),
                       "dma_copy.s", hw::builtinConfig(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  return writeProgram(p);
}

uint64_t getLe(const std::string &b, size_t off, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= uint64_t(static_cast<uint8_t>(b[off + static_cast<size_t>(i)]))
         << (8 * i);
  return v;
}

void setLe(std::string &b, size_t off, int n, uint64_t v) {
  for (int i = 0; i < n; ++i)
    b[off + static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

/// The CRC as docs/program-file.md defines it: over the whole file with the
/// CRC field (bytes 32-35) taken as zero.
uint32_t expectedCrc(std::string b) {
  setLe(b, 32, 4, 0);
  return crc32(b.data(), b.size());
}

void fixCrc(std::string &b) { setLe(b, 32, 4, expectedCrc(b)); }

/// File offsets of each section's header, by tag.
std::map<std::string, size_t> sections(const std::string &b) {
  std::map<std::string, size_t> at;
  size_t pos = 48;
  while (pos + 16 <= b.size()) {
    at[b.substr(pos, 4)] = pos;
    pos += 16 + getLe(b, pos + 8, 8);
  }
  return at;
}

/// The first line of the error reading `bytes` gives, or "" when it loads.
std::string readError(const std::string &bytes) {
  try {
    readProgram(bytes, "p.spyre");
  } catch (const UserError &e) {
    return e.diagnostic().str();
  }
  return "";
}

TEST(ProgramFile, WritesTheDocumentedHeader) {
  std::string b = sampleFile();
  ASSERT_GE(b.size(), 48u);
  EXPECT_EQ(b.substr(0, 8), "SPYREPRG");
  EXPECT_EQ(getLe(b, 8, 2), 1u);
  EXPECT_EQ(getLe(b, 10, 2), 0u);
  EXPECT_EQ(getLe(b, 12, 4), 48u);
  EXPECT_EQ(getLe(b, 16, 8), hw::builtinConfig().fingerprint());
  EXPECT_EQ(getLe(b, 24, 8), b.size() - 48);
  EXPECT_EQ(getLe(b, 32, 4), expectedCrc(b));
  EXPECT_EQ(getLe(b, 36, 4), 0u);
  EXPECT_EQ(getLe(b, 40, 8), 0u);
  std::vector<std::string> tags;
  size_t pos = 48;
  while (pos < b.size()) {
    tags.push_back(b.substr(pos, 4));
    EXPECT_EQ(getLe(b, pos + 4, 4), 0u);
    pos += 16 + getLe(b, pos + 8, 8);
  }
  EXPECT_EQ(pos, b.size());
  EXPECT_EQ(tags, (std::vector<std::string>{"NAME", "STRS", "TENS", "STRM",
                                            "PROV"}));
  size_t name = sections(b)["NAME"];
  EXPECT_EQ(b.substr(name + 16, getLe(b, name + 8, 8)), "dma_copy");
  // Two streams of 8 instructions: count, then per stream 12 bytes of
  // header and 32 bytes per word.
  size_t strm = sections(b)["STRM"];
  EXPECT_EQ(getLe(b, strm + 8, 8), 4u + 2 * (12 + 8 * 32));
}

TEST(ProgramFile, RejectsTruncatedFiles) {
  std::string b = sampleFile();
  for (size_t len : {size_t(0), size_t(1), size_t(47)})
    EXPECT_EQ(readError(b.substr(0, len)),
              "p.spyre: error: truncated: " + std::to_string(len) +
                  " bytes, shorter than the 48-byte program header");
  for (size_t len : {size_t(48), size_t(60), b.size() / 2, b.size() - 1})
    EXPECT_EQ(readError(b.substr(0, len)),
              "p.spyre: error: truncated: the header says the payload is " +
                  std::to_string(b.size() - 48) + " bytes, the file has " +
                  std::to_string(len - 48));
  EXPECT_EQ(readError(b + "xy"),
            "p.spyre: error: 2 unexpected bytes after the payload");
}

TEST(ProgramFile, CatchesEveryFlippedByte) {
  std::string b = sampleFile();
  ASSERT_EQ(readError(b), "");
  for (size_t off = 0; off < b.size(); ++off) {
    std::string bad = b;
    bad[off] = static_cast<char>(bad[off] ^ 0x5a);
    std::string err = readError(bad);
    ASSERT_NE(err, "") << "flip at " << off << " went unnoticed";
    bool header = off < 16 || (off >= 24 && off < 32);
    if (header)
      continue;
    EXPECT_NE(err.find("checksum mismatch"), std::string::npos)
        << "flip at " << off << ": " << err;
  }
  // One flip in the payload, in full.
  std::string bad = b;
  size_t off = b.size() / 2;
  bad[off] = static_cast<char>(bad[off] ^ 0x01);
  EXPECT_EQ(readError(bad), "p.spyre: error: checksum mismatch (stored 0x" +
                                toHex(expectedCrc(b), 8) + ", computed 0x" +
                                toHex(expectedCrc(bad), 8) +
                                "): the file is corrupted");
}

TEST(ProgramFile, RejectsOtherFiles) {
  std::string b = sampleFile();
  b[0] = 'X';
  EXPECT_EQ(readError(b), "p.spyre: error: not a Spyre program (bad magic)");
  std::string text = spyre::test::readSource("examples/asm/dma_copy.s");
  EXPECT_EQ(readError(text), "p.spyre: error: not a Spyre program (bad magic)");
}

TEST(ProgramFile, InstructionsOfIsa12NeedA12File) {
  DiagnosticEngine diags;
  Program p = assemble(".core 0\n.engine dma.load\n    ld 0x0, 0x0\n"
                       "    lr r1, 0x0, 3, limit=10\n    halt\n",
                       "lr.s", hw::builtinConfig(), diags);
  ASSERT_FALSE(diags.hasErrors()) << diags.str();
  std::string b = writeProgram(p);
  // The lowest version that holds it, with the (empty) HOST section 1.1
  // and later carry.
  EXPECT_EQ(getLe(b, 10, 2), 2u);
  EXPECT_EQ(sections(b).count("HOST"), 1u);
  EXPECT_EQ(readError(b), "");
  setLe(b, 10, 2, 1);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: stream 0 instruction 1: 'lr' needs "
                          "ISA 1.2, the file is 1.1");
  // Programs without the new instructions keep their version.
  EXPECT_EQ(getLe(sampleFile(), 10, 2), 0u);
}

TEST(ProgramFile, RejectsFutureIsaVersions) {
  std::string b = sampleFile();
  setLe(b, 8, 2, 2);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: unsupported ISA version 2.0 (this "
                          "build reads 1.2)");
  setLe(b, 8, 2, 1);
  setLe(b, 10, 2, 3);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: unsupported ISA version 1.3 (this "
                          "build reads 1.2)");
  // 1.1 files carry a HOST section; a 1.0 body under a 1.1 header lacks it.
  setLe(b, 10, 2, 1);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: missing section 'HOST'");
}

TEST(ProgramFile, RejectsUnknownHeaderFields) {
  std::string b = sampleFile();
  setLe(b, 12, 4, 64);
  fixCrc(b);
  EXPECT_EQ(readError(b),
            "p.spyre: error: unsupported header size 64 (expected 48)");
  b = sampleFile();
  setLe(b, 36, 4, 1);
  fixCrc(b);
  EXPECT_EQ(readError(b),
            "p.spyre: error: unsupported header flags 0x00000001 (expected 0)");
}

TEST(ProgramFile, RejectsCorruptLengthsBehindAValidChecksum) {
  const std::string good = sampleFile();
  std::map<std::string, size_t> at = sections(good);
  size_t payload = good.size() - 48;

  std::string b = good;
  setLe(b, at["NAME"] + 8, 8, 0xFFFFFFFFFFFFull);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: section 'NAME' at payload byte 0 "
                          "has size 281474976710655, past the end of the "
                          "payload (" +
                              std::to_string(payload - 16) + " bytes left)");

  b = good;
  size_t strm = at["STRM"];
  uint64_t strmSize = getLe(b, strm + 8, 8);
  setLe(b, strm + 16, 4, 0xFFFFFFFF); // stream count
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: section 'STRM': stream count "
                          "4294967295 does not fit in the " +
                              std::to_string(strmSize - 4) + " bytes left");

  b = good;
  setLe(b, strm + 16 + 4 + 8, 4, 100000); // first stream's instruction count
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: section 'STRM': instruction count "
                          "100000 does not fit in the " +
                              std::to_string(strmSize - 4 - 12) +
                              " bytes left");

  b = good;
  size_t strs = at["STRS"];
  setLe(b, strs + 16 + 4, 4, 0x7FFFFFFF); // first string's length
  fixCrc(b);
  EXPECT_NE(readError(b).find("p.spyre: error: section 'STRS': truncated at "
                              "byte 8 (needs 2147483647 more bytes"),
            std::string::npos)
      << readError(b);

  b = good;
  size_t tens = at["TENS"];
  // Section header, tensor count, then x: name, kind/dtype/ranks, dims.
  setLe(b, tens + 16 + 4 + 4 + 4, 8, 7); // x's host dim 0: 3 -> 7
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: section 'TENS': tensor 'x': device "
                          "shape does not follow the stick layout of its host "
                          "shape");

  b = good;
  b.replace(at["PROV"], 4, "XXXX");
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: unknown section 'XXXX'");
}

TEST(ProgramFile, RejectsBadInstructionsBehindAValidChecksum) {
  const std::string good = sampleFile();
  size_t firstWord = sections(good)["STRM"] + 16 + 4 + 12;
  size_t words = 8;

  std::string b = good;
  b[firstWord] = static_cast<char>(0xee);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: stream core 0 dma.load, "
                          "instruction 0: unknown opcode 0xee");

  b = good;
  b[firstWord + 31] = static_cast<char>(0x80);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: stream core 0 dma.load, "
                          "instruction 0: 'li' has reserved bit 255 set");

  b = good;
  b[firstWord] = static_cast<char>(Opcode::Mm);
  fixCrc(b);
  EXPECT_NE(readError(b).find("stream core 0 dma.load, instruction 0: "),
            std::string::npos);

  b = good;
  b[firstWord + (words - 1) * 32] = static_cast<char>(Opcode::Nop);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: stream core 0 dma.load does not "
                          "end with 'halt'");

  // The loop (instruction 2) gets a body of 6, past the final halt.
  b = good;
  size_t loop = firstWord + 2 * 32;
  ASSERT_EQ(static_cast<uint8_t>(b[loop]), static_cast<uint8_t>(Opcode::Loop));
  setLe(b, loop + 3, 2, 6);
  fixCrc(b);
  EXPECT_EQ(readError(b), "p.spyre: error: stream core 0 dma.load, "
                          "instruction 2: loop body runs past the stream's "
                          "final halt");
}

// Random damage behind a valid checksum reaches the structural checks; the
// reader must answer every case with a UserError or a valid program.
TEST(ProgramFile, SurvivesRandomDamage) {
  const std::string good = sampleFile();
  uint64_t state = 0x2545F4914F6CDD1Dull;
  auto rnd = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string b = good;
    int flips = 1 + static_cast<int>(rnd() % 4);
    for (int f = 0; f < flips; ++f) {
      size_t off = 48 + rnd() % (b.size() - 48);
      b[off] = static_cast<char>(rnd());
    }
    fixCrc(b);
    if (!readError(b).empty())
      ++rejected;
  }
  EXPECT_GT(rejected, 1000);
}

// A program file does not know the config it will run on: checkProgramFits
// names the first stream or operand that the config cannot hold (found by
// the `program` fuzz target, where such a file aborted the simulator).
TEST(ProgramFile, ChecksThatAProgramFitsTheConfig) {
  hw::HwConfig big = hw::builtinConfig();
  big.chip.cores = 64;
  big.chip.coreletsPerCore = 4;
  big.limits.syncCountersPerCore = 64;
  big.limits.maxLoopDepth = 6;
  auto assembleFor = [](const hw::HwConfig &c, const std::string &text) {
    DiagnosticEngine diags;
    Program p = assemble(text, "t.s", c, diags);
    EXPECT_FALSE(diags.hasErrors()) << diags.str();
    return p;
  };
  const hw::HwConfig &def = hw::builtinConfig();
  EXPECT_EQ(checkProgramFits(
                assembleFor(def, spyre::test::readSource("examples/asm/ring_exchange.s")), def),
            "");
  EXPECT_EQ(checkProgramFits(
                assembleFor(big, ".core 40\n.engine sfu.0\n halt\n"), def),
            "stream core 40 sfu.0: the config has 32 cores (chip.cores)");
  EXPECT_EQ(checkProgramFits(
                assembleFor(big, ".core 1\n.engine pt.3\n halt\n"), def),
            "stream core 1 pt.3: the config has 2 corelets per core "
            "(chip.corelets_per_core)");
  EXPECT_EQ(checkProgramFits(
                assembleFor(big, ".core 0\n.engine ring\n signal c40, 1\n"
                                 " signal c1, 1, core=50\n halt\n"),
                def),
            "stream core 0 ring, instruction 0 (signal c40, 1): operand "
            "'counter' = 40 does not fit the config (needs counter below "
            "limits.sync_counters_per_core)");
  EXPECT_EQ(checkProgramFits(
                assembleFor(big, ".core 0\n.engine ring\n signal c1, 1, core=50\n"
                                 " halt\n"),
                def),
            "stream core 0 ring, instruction 0 (signal c1, 1, core=50): operand "
            "'core' = 50 does not fit the config (needs core id below "
            "chip.cores)");
  hw::HwConfig small = def;
  small.memory.sizeBytes = 20 * 128;
  EXPECT_EQ(checkProgramFits(
                assembleFor(def, spyre::test::readSource("examples/asm/dma_copy.s")),
                small),
            "tensor 'y' at stick 16 (6 sticks) lies beyond device memory "
            "(memory.size_bytes = 2560)");
  std::string deep = ".core 0\n.engine sfu.0\n";
  for (int i = 0; i < 5; ++i)
    deep += " loop 2, e" + std::to_string(i) + "\n";
  deep += " nop\n";
  for (int i = 4; i >= 0; --i)
    deep += "e" + std::to_string(i) + ":\n";
  deep += " halt\n";
  EXPECT_EQ(checkProgramFits(assembleFor(big, deep), def),
            "stream core 0 sfu.0, instruction 4 (loop 2, +1): loops nested 5 "
            "deep (limits.max_loop_depth = 4)");
}

} // namespace
} // namespace spyre::isa
