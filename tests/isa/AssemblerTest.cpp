// The assembler and disassembler: the example programs (golden disassembly,
// byte-identical reassembly, sync balance), one small file per assembler
// error in tests/isa/bad/, and the rules of the text format.
#include "isa/Assembler.h"
#include "isa/Disassembler.h"

#include "hw/HwConfig.h"
#include "numerics/Dlf16.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

namespace spyre::isa {
namespace {

const char *const kExamples[] = {"dma_copy", "pt_matmul", "sfu_softmax",
                                 "ring_exchange"};

Program assembleOk(const std::string &text, const std::string &name,
                   const hw::HwConfig &config = hw::builtinConfig()) {
  DiagnosticEngine diags;
  Program p = assemble(text, name, config, diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  EXPECT_TRUE(diags.diagnostics().empty()) << diags.str();
  return p;
}

/// First line of the first error when assembling `text` with `config`.
std::string firstError(const std::string &text,
                       const hw::HwConfig &config = hw::builtinConfig()) {
  DiagnosticEngine diags;
  assemble(text, "t.s", config, diags);
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error)
      return d.str().substr(0, d.str().find('\n'));
  return "";
}

TEST(Examples, DisassembleToGolden) {
  for (const char *name : kExamples) {
    std::string file = std::string("examples/asm/") + name + ".s";
    Program p = assembleOk(spyre::test::readSource(file), file);
    spyre::test::expectGolden(disassemble(p),
                              std::string("isa/") + name + ".disasm.s");
  }
}

/// Every program in examples/asm/, sorted by name.
std::vector<std::string> allExamples() {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(
           spyre::test::srcPath("examples/asm")))
    if (e.path().extension() == ".s")
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Examples, ReassembleToIdenticalBytes) {
  std::vector<std::string> names = allExamples();
  EXPECT_GE(names.size(), 12u);
  for (const std::string &name : names) {
    std::string file = "examples/asm/" + name + ".s";
    Program p = assembleOk(spyre::test::readSource(file), file);
    std::string bytes = writeProgram(p);
    Program back = readProgram(bytes, name);
    EXPECT_EQ(back, p) << name;
    Program again = assembleOk(disassemble(back), "disassembly");
    EXPECT_EQ(writeProgram(again), bytes) << name;
  }
}

/// Runs a stream's control flow (loops, li, addi) and calls `visit` for each
/// executed instruction with the registers at that point.
void walk(const Stream &s,
          const std::function<void(const Instr &, const int64_t *)> &visit) {
  int64_t regs[kNumRegs] = {};
  std::function<void(size_t, size_t)> run = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const Instr &in = s.code[i];
      visit(in, regs);
      if (in.opcode == Opcode::Li)
        regs[in[0]] = in[1];
      if (in.opcode == Opcode::Addi)
        regs[in[0]] = regs[in[1]] + in[2];
      if (in.opcode == Opcode::Loop) {
        size_t bodyEnd = i + 1 + static_cast<size_t>(in[1]);
        for (int64_t k = 0; k < in[0]; ++k)
          run(i + 1, bodyEnd);
        i = bodyEnd - 1;
      }
    }
  };
  run(0, s.code.size());
}

// The examples are programs a simulator can run to completion: every
// counter is signalled exactly as much as it is waited for, sends and
// receives pair up with equal sizes, barriers fill up, and every DMA stays
// inside a declared tensor.
TEST(Examples, AreBalancedAndInBounds) {
  for (const char *name : kExamples) {
    SCOPED_TRACE(name);
    std::string file = std::string("examples/asm/") + name + ".s";
    Program p = assembleOk(spyre::test::readSource(file), file);
    std::map<std::pair<int, int64_t>, int64_t> signalled, waited;
    std::map<std::pair<int, int>, std::vector<int64_t>> sent, received;
    std::map<int64_t, int64_t> barrierArrivals, barrierCount;
    for (const Stream &s : p.streams) {
      walk(s, [&](const Instr &in, const int64_t *regs) {
        switch (in.opcode) {
        case Opcode::Signal: {
          int core = in[2] == kCoreSelf ? s.core : static_cast<int>(in[2]);
          signalled[{core, in[0]}] += in[1];
          break;
        }
        case Opcode::Wait:
          waited[{s.core, in[0]}] += in[1];
          break;
        case Opcode::Send:
          sent[{s.core, static_cast<int>(in[0])}].push_back(in[2] * in[3]);
          break;
        case Opcode::Recv:
          received[{static_cast<int>(in[0]), s.core}].push_back(in[2] * in[3]);
          break;
        case Opcode::Barrier:
          barrierArrivals[in[0]] += 1;
          barrierCount[in[0]] = in[1];
          break;
        case Opcode::Ld:
        case Opcode::St: {
          size_t memField = in.opcode == Opcode::Ld ? 1 : 0;
          int64_t addr = regs[in.base[memField]] + in[memField];
          int64_t sticks = in[2] * in[3] * in[6];
          const TensorDecl *hit = nullptr;
          for (const TensorDecl &t : p.tensors)
            if (addr >= static_cast<int64_t>(t.address) &&
                addr + sticks <= static_cast<int64_t>(t.address + t.sizeSticks))
              hit = &t;
          ASSERT_NE(hit, nullptr) << formatInstr(in) << " at " << addr;
          EXPECT_TRUE((in.opcode == Opcode::Ld) ==
                      (hit->kind != TensorKind::Output))
              << formatInstr(in) << " touches " << hit->name;
          break;
        }
        default:
          break;
        }
      });
    }
    EXPECT_EQ(signalled, waited);
    EXPECT_EQ(sent, received);
    for (const auto &[id, arrivals] : barrierArrivals)
      EXPECT_EQ(arrivals % barrierCount[id], 0) << "barrier " << id;
  }
}

// ---- One file per assembler error ----

std::vector<std::string> badFiles() {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(
           spyre::test::srcPath("tests/isa/bad")))
    if (e.path().extension() == ".s")
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class BadAssembly : public ::testing::TestWithParam<std::string> {};

// Each file starts with `; expect: <first error line>`; the first error must
// be exactly that line, followed by the offending source line and a caret.
TEST_P(BadAssembly, ReportsItsError) {
  std::string name = GetParam() + ".s";
  std::string text = spyre::test::readSource("tests/isa/bad/" + name);
  const std::string marker = "; expect: ";
  ASSERT_EQ(text.rfind(marker, 0), 0u) << name << " lacks its expect line";
  std::string expected =
      text.substr(marker.size(), text.find('\n') - marker.size());

  DiagnosticEngine diags;
  assemble(text, name, hw::builtinConfig(), diags);
  ASSERT_TRUE(diags.hasErrors()) << name << " assembled without error";
  const Diagnostic &d = diags.diagnostics().front();
  EXPECT_EQ(d.str().substr(0, d.str().find('\n')), expected);
  if (d.loc.line > 0) {
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos;
         start = nl + 1)
      lines.push_back(text.substr(start, nl - start));
    ASSERT_LE(static_cast<size_t>(d.loc.line), lines.size());
    EXPECT_EQ(d.sourceLine, lines[static_cast<size_t>(d.loc.line) - 1]);
    EXPECT_NE(d.str().find("\n" + std::string(static_cast<size_t>(d.loc.col) - 1, ' ') + "^"),
              std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, BadAssembly, ::testing::ValuesIn(badFiles()),
                         [](const ::testing::TestParamInfo<std::string> &i) {
                           return i.param;
                         });

// ---- Rules of the text format ----

TEST(Assembler, ReportsSeveralErrorsInOneRun) {
  DiagnosticEngine diags;
  assemble(".core 0\n"
           ".engine dma.load\n"
           "    li r0, 1\n"
           "    frob r1\n"
           "    ld 0x0, 0x0, run=0\n"
           "    halt\n",
           "t.s", hw::builtinConfig(), diags);
  ASSERT_EQ(diags.errorCount(), 3u) << diags.str();
  EXPECT_EQ(diags.diagnostics()[0].loc.line, 3);
  EXPECT_EQ(diags.diagnostics()[1].loc.line, 4);
  EXPECT_EQ(diags.diagnostics()[2].loc.line, 5);
  EXPECT_EQ(diags.str(),
            "t.s:3:8: error: r0 cannot be a destination (it always reads 0): "
            "operand 'rd' of 'li'\n"
            "    li r0, 1\n"
            "       ^\n"
            "t.s:4:5: error: unknown instruction 'frob'\n"
            "    frob r1\n"
            "    ^\n"
            "t.s:5:22: error: operand 'run' of 'ld' is out of range: 0 "
            "(valid: 1..65535)\n"
            "    ld 0x0, 0x0, run=0\n"
            "                     ^\n");
}

TEST(Assembler, StopsAfterTooManyErrors) {
  std::string text = ".core 0\n.engine ring\n";
  for (int i = 0; i < 200; ++i)
    text += "    bogus\n";
  DiagnosticEngine diags;
  assemble(text, "t.s", hw::builtinConfig(), diags);
  EXPECT_EQ(diags.errorCount(), 50u);
  EXPECT_EQ(diags.diagnostics().back().message, "too many errors, stopping");
}

TEST(Assembler, SortsStreamsWhateverTheTextOrder) {
  std::string sorted = ".core 0\n.engine dma.load\nhalt\n.engine sfu.1\nhalt\n"
                       ".core 1\n.engine pt.0\nhalt\n";
  std::string shuffled = ".core 1\n.engine pt.0\nhalt\n.core 0\n"
                         ".engine sfu.1\nhalt\n.engine dma.load\nhalt\n";
  Program a = assembleOk(sorted, "a.s");
  Program b = assembleOk(shuffled, "b.s");
  ASSERT_EQ(b.streams.size(), 3u);
  EXPECT_EQ(b.streams[0].name(), "core 0 dma.load");
  EXPECT_EQ(b.streams[1].name(), "core 0 sfu.1");
  EXPECT_EQ(b.streams[2].name(), "core 1 pt.0");
  EXPECT_EQ(writeProgram(a), writeProgram(b));
}

TEST(Assembler, ResolvesDefaultsAndOmitsThemWhenPrinting) {
  Program p = assembleOk(".core 0\n.engine pt.1\n"
                         "mm 0x0, 0x100, 0x200, m=16, k=128, n=64\n"
                         "mm 0x0, 0x100, 0x200, m=16, k=128, n=64, as=16, "
                         "bs=128, cs=16, out=f32, acc=0\n"
                         "mm 0x0, 0x100, 0x200, m=16, k=128, n=64, bs=200\n"
                         "halt\n",
                         "t.s");
  const InstrDesc &mm = instrDesc(Opcode::Mm);
  const Instr &first = p.streams[0].code[0];
  EXPECT_EQ(first[static_cast<size_t>(mm.fieldIndex("as"))], 16);
  EXPECT_EQ(first[static_cast<size_t>(mm.fieldIndex("bs"))], 128);
  EXPECT_EQ(first[static_cast<size_t>(mm.fieldIndex("cs"))], 16);
  EXPECT_EQ(first[static_cast<size_t>(mm.fieldIndex("out"))], 1);
  EXPECT_EQ(p.streams[0].code[1], first);
  EXPECT_EQ(formatInstr(first), "mm 0x0, 0x100, 0x200, m=16, k=128, n=64");
  EXPECT_EQ(formatInstr(p.streams[0].code[2]),
            "mm 0x0, 0x100, 0x200, m=16, k=128, n=64, bs=200");

  Program q = assembleOk(".core 0\n.engine sfu.0\n"
                         "cvt 0x0, 0x10, to=f32, n=3\n"
                         "cvt 0x0, 0x10, to=dl16, n=3, m=2\n"
                         "add 0x0, 0x10, 0x20, n=5\n"
                         "halt\n",
                         "t.s");
  const InstrDesc &cvt = instrDesc(Opcode::Cvt);
  size_t ds = static_cast<size_t>(cvt.fieldIndex("ds"));
  EXPECT_EQ(q.streams[0].code[0][ds], 6);
  EXPECT_EQ(q.streams[0].code[1][ds], 2);
  const InstrDesc &add = instrDesc(Opcode::Add);
  for (const char *f : {"ds", "ss", "s2s"})
    EXPECT_EQ(q.streams[0].code[2][static_cast<size_t>(add.fieldIndex(f))], 5)
        << f;
}

TEST(Assembler, AcceptsEveryAddressForm) {
  Program p = assembleOk(".core 0\n.engine dma.load\n"
                         "ld [r1+0x10], [r2-8], run=2\n"
                         "ld [r3], 42\n"
                         "ld [r0+5], [r0]\n"
                         "halt\n",
                         "t.s");
  const std::vector<Instr> &c = p.streams[0].code;
  EXPECT_EQ(c[0].base[0], 1);
  EXPECT_EQ(c[0][0], 0x10);
  EXPECT_EQ(c[0].base[1], 2);
  EXPECT_EQ(c[0][1], -8);
  EXPECT_EQ(c[1].base[0], 3);
  EXPECT_EQ(c[1][0], 0);
  EXPECT_EQ(c[1][1], 42);
  EXPECT_EQ(formatInstr(c[0]), "ld [r1+0x10], [r2-0x8], run=2");
  EXPECT_EQ(formatInstr(c[2]), "ld 0x5, 0x0");
}

TEST(Assembler, EncodesLoopBodiesAndLabels) {
  Program p = assembleOk(".core 0\n.engine sfu.0\n"
                         "    li r1, 0\n"
                         "    loop 4, outer\n"
                         "    loop 3, inner\n"
                         "    addi r1, r1, 1\n"
                         "inner: addi r1, r1, 2\n"
                         "outer:\n"
                         "    loop 2, last\n"
                         "    nop\n"
                         "last: halt\n",
                         "t.s");
  const std::vector<Instr> &c = p.streams[0].code;
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[1][0], 4);
  EXPECT_EQ(c[1][1], 3); // loop 3, addi, addi
  EXPECT_EQ(c[2][0], 3);
  EXPECT_EQ(c[2][1], 1);
  EXPECT_EQ(c[5][1], 1);
  EXPECT_EQ(disassemble(p), ".core 0\n"
                            ".engine sfu.0\n"
                            "    li      r1, 0\n"
                            "    loop    4, L1\n"
                            "    loop    3, L0\n"
                            "    addi    r1, r1, 1\n"
                            "L0:\n"
                            "    addi    r1, r1, 2\n"
                            "L1:\n"
                            "    loop    2, L2\n"
                            "    nop\n"
                            "L2:\n"
                            "    halt\n");
}

TEST(Assembler, RecordsSourceOpsPerStream) {
  Program p = assembleOk(".core 0\n.engine ring\n"
                         "nop\n"
                         ".op \"b\"\n"
                         "nop\n"
                         ".op \"a\"\n"
                         "nop\n"
                         ".op\n"
                         "halt\n"
                         ".core 0\n.engine dma.load\n"
                         ".op \"a\"\n"
                         "halt\n",
                         "t.s");
  // Canonical order: first use over the sorted streams (dma.load first).
  EXPECT_EQ(p.strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.streams[0].provenance, (std::vector<uint32_t>{0}));
  EXPECT_EQ(p.streams[1].provenance,
            (std::vector<uint32_t>{kNoProvenance, 1, 0, kNoProvenance}));
  EXPECT_EQ(disassemble(p), ".core 0\n"
                            ".engine dma.load\n"
                            ".op \"a\"\n"
                            "    halt\n"
                            "\n"
                            ".engine ring\n"
                            "    nop\n"
                            ".op \"b\"\n"
                            "    nop\n"
                            ".op \"a\"\n"
                            "    nop\n"
                            ".op\n"
                            "    halt\n");
}

// DL16 constant [2, 65]: 65 columns need two 64-lane blocks, so the device
// layout is [2, 2, 64] = 4 sticks; element (r, c) sits in stick
// (c / 64) * 2 + r at lane c % 64. Values are 1.0 (DL16 0x3E00) and -2.0
// (sign set, exponent one higher: 0xC000).
TEST(Assembler, StoresConstantsInTheDeviceLayout) {
  std::string values;
  for (int i = 0; i < 130; ++i)
    values += std::string(i ? ", " : "") + (i == 64 ? "-2" : "1");
  Program p = assembleOk(".tensor const w dl16 [2, 65] @ 0x40 = [" + values +
                             "]\n",
                         "t.s");
  ASSERT_EQ(p.tensors.size(), 1u);
  const TensorDecl &t = p.tensors[0];
  EXPECT_EQ(t.deviceShape, (std::vector<int64_t>{2, 2, 64}));
  EXPECT_EQ(t.sizeSticks, 4u);
  EXPECT_EQ(t.address, 0x40u);
  ASSERT_EQ(t.data.size(), 4u * 128);
  auto at = [&](size_t stick, size_t lane) {
    return t.data[stick * 128 + lane * 2] | t.data[stick * 128 + lane * 2 + 1] << 8;
  };
  EXPECT_EQ(at(0, 0), 0x3E00);  // (0, 0)
  EXPECT_EQ(at(0, 63), 0x3E00); // (0, 63)
  EXPECT_EQ(at(2, 0), 0xC000);  // (0, 64): -2
  EXPECT_EQ(at(1, 0), 0x3E00);  // (1, 0)
  EXPECT_EQ(at(3, 0), 0x3E00);  // (1, 64)
  EXPECT_EQ(at(2, 1), 0);       // padding
  EXPECT_EQ(at(3, 63), 0);      // padding
  EXPECT_EQ(disassemble(p).substr(0, 47),
            ".tensor const w dl16 [2, 65] @ 0x40 = [\n    1, ");
}

TEST(Assembler, ConstantsRoundTripInEveryDtype) {
  std::string text =
      ".tensor const a fp32 [3] @ 0x0 = [0.1, -0, 1e-45]\n"
      ".tensor const b int8 [2, 2] @ 0x1 = [-128, 127, 0, -1]\n"
      ".tensor const c int32 [2] @ 0x3 = [-2147483648, 2147483647]\n"
      ".tensor const d dl16 [4] @ 0x4 = [8573157376, -0, inf, 0.333]\n"
      ".tensor const \"odd name/0\" fp32 [1] @ 0x5 = [nan]\n"
      ".tensor scratch s int8 [300] @ 0x6\n";
  Program p = assembleOk(text, "t.s");
  std::string dis = disassemble(p);
  Program back = assembleOk(dis, "dis.s");
  EXPECT_EQ(writeProgram(back), writeProgram(p)) << dis;
  // 0.333 is not a DL16 value: it prints as the DL16 it rounded to.
  EXPECT_NE(dis.find("8573157376, -0, nan, 0.3330078"), std::string::npos)
      << dis;
  EXPECT_NE(dis.find(".tensor const \"odd name/0\" fp32 [1] @ 0x5"),
            std::string::npos);
  EXPECT_EQ(p.tensors[5].sizeSticks, 3u); // 300 int8 = ceil(300 / 128) sticks
}

TEST(Assembler, ChecksAgainstTheConfig) {
  hw::HwConfig small = hw::builtinConfig();
  small.lx.sizeBytes = 16 * 128;
  small.chip.cores = 2;
  small.limits.syncCountersPerCore = 4;
  small.limits.maxLoopDepth = 1;
  EXPECT_EQ(firstError(".core 0\n.engine dma.load\nld 0x10, 0x0\nhalt\n", small),
            "t.s:3:4: error: operand 'lx' of 'ld' is out of range: offset "
            "0x10 (valid: |offset| < 0x10, the LX size in sticks)");
  EXPECT_EQ(firstError(".core 2\n", small),
            "t.s:1:7: error: core 2 is out of range (valid: 0..1, chip.cores "
            "= 2)");
  EXPECT_EQ(firstError(".core 0\n.engine ring\nsignal c1, 1, core=2\nhalt\n",
                       small),
            "t.s:3:20: error: operand 'core' of 'signal' is out of range: 2 "
            "(valid: 0..1, chip.cores = 2)");
  EXPECT_EQ(firstError(".core 0\n.engine ring\nwait c4, 1\nhalt\n", small),
            "t.s:3:6: error: operand 'counter' of 'wait' is out of range: c4 "
            "(valid: c0..c3, limits.sync_counters_per_core = 4)");
  EXPECT_EQ(firstError(".core 0\n.engine ring\nloop 2, a\nloop 2, b\nnop\n"
                       "b: nop\na: halt\n",
                       small),
            "t.s:4:1: error: loops nested 2 deep; limits.max_loop_depth = 1");
  Program p = assembleOk(".core 0\n.engine ring\nhalt\n", "t.s", small);
  EXPECT_EQ(p.configFingerprint, small.fingerprint());
  EXPECT_NE(p.configFingerprint, hw::builtinConfig().fingerprint());
}

TEST(Assembler, AcceptsAnOutputThatReplacesAnInputInPlace) {
  // The same sticks, size and dtype: the output replaces the input (a cache
  // page written back); it survives the program file and reassembles.
  const std::string text = ".tensor input page dl16 [4, 10] @ 0x0\n"
                           ".tensor output page2 dl16 [4, 11] @ 0x0\n"
                           ".core 0\n.engine dma.load\nhalt\n";
  Program p = assembleOk(text, "t.s", hw::builtinConfig());
  EXPECT_TRUE(replacesInPlace(p.tensors[0], p.tensors[1]));
  EXPECT_EQ(readProgram(writeProgram(p), "t.spyre"), p);
  // Anything less than the same sticks is still an overlap.
  EXPECT_EQ(firstError(".tensor input a dl16 [4, 10] @ 0x0\n"
                       ".tensor output b fp32 [4, 10] @ 0x0\n",
                       hw::builtinConfig()),
            "t.s:2:33: error: tensor 'b' at sticks [0x0, 0x4) overlaps "
            "tensor 'a' at [0x0, 0x4) (line 1)");
  EXPECT_EQ(firstError(".tensor input a dl16 [4, 10] @ 0x0\n"
                       ".tensor input b dl16 [4, 10] @ 0x0\n",
                       hw::builtinConfig()),
            "t.s:2:32: error: tensor 'b' at sticks [0x0, 0x4) overlaps "
            "tensor 'a' at [0x0, 0x4) (line 1)");
}

} // namespace
} // namespace spyre::isa
