// Encoding and decoding of single instructions: round trips at the extremes
// of every field, encodings computed by hand from the bit layout, golden
// encodings of representative instructions, and the decoder's rejections.
#include "isa/Assembler.h"
#include "isa/Instr.h"

#include "hw/HwConfig.h"
#include "support/Hash.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>

namespace spyre::isa {
namespace {

std::string hexWord(const Word &w) {
  std::string s;
  for (uint8_t b : w)
    s += toHex(b, 2);
  return s;
}

/// Largest valid value of a field (the top of its range, rounded down to a
/// multiple).
int64_t topValue(const FieldDesc &f) {
  return f.maxValue / f.multipleOf * f.multipleOf;
}

Instr withValues(const InstrDesc &d, bool top) {
  Instr in;
  in.opcode = d.opcode;
  for (size_t i = 0; i < d.fields.size(); ++i) {
    const FieldDesc &f = d.fields[i];
    in.value[i] = top ? topValue(f) : f.minValue;
    if (f.isAddress())
      in.base[i] = top ? kNumRegs - 1 : 0;
  }
  return in;
}

void expectRoundTrip(const Instr &in, const std::string &what) {
  Word w = encode(in);
  std::string error;
  std::optional<Instr> out = decode(w.data(), &error);
  ASSERT_TRUE(out.has_value()) << what << ": " << error;
  EXPECT_EQ(*out, in) << what;
  EXPECT_EQ(encode(*out), w) << what;
}

TEST(Codec, RoundTripsEveryOpcodeAtItsExtremes) {
  for (const InstrDesc &d : instructionTable()) {
    std::string name(d.mnemonic);
    expectRoundTrip(withValues(d, false), name + " all minimum");
    expectRoundTrip(withValues(d, true), name + " all maximum");
    // Each field alone at its extremes, the others at the opposite end, so a
    // field that leaks into its neighbour shows up.
    for (size_t i = 0; i < d.fields.size(); ++i) {
      Instr lo = withValues(d, true);
      lo.value[i] = d.fields[i].minValue;
      lo.base[i] = 0;
      expectRoundTrip(lo, name + "." + std::string(d.fields[i].name) + " min");
      Instr hi = withValues(d, false);
      hi.value[i] = topValue(d.fields[i]);
      if (d.fields[i].isAddress())
        hi.base[i] = kNumRegs - 1;
      expectRoundTrip(hi, name + "." + std::string(d.fields[i].name) + " max");
    }
  }
}

// Expected words worked out by hand from the layout in docs/isa.md.
TEST(Codec, EncodesAsTheBitLayoutSays) {
  Instr li;
  li.opcode = Opcode::Li;
  li.value[0] = 1; // rd, bits 8-11
  li.value[1] = 5; // imm, bits 12-43
  EXPECT_EQ(hexWord(encode(li)), "0251" + std::string(60, '0'));

  li.value[0] = 15;
  li.value[1] = -1; // 32 ones in bits 12-43
  EXPECT_EQ(hexWord(encode(li)), "02ffffffff0f" + std::string(52, '0'));

  // ld [r2+0x10], 0x20, run=3: lx base 8-11, offset 12-31; mem base 32-35,
  // offset 36-67; run 68-83; n1 84-99 = 1; n2 148-163 = 1.
  Instr ld;
  ld.opcode = Opcode::Ld;
  ld.base[0] = 2;
  ld.value[0] = 0x10;
  ld.value[1] = 0x20;
  ld.value[2] = 3;
  ld.value[3] = 1;
  ld.value[6] = 1;
  EXPECT_EQ(hexWord(encode(ld)),
            "10020100000200003000100000000000" "000010" + std::string(26, '0'));
}

TEST(Codec, GoldenEncodings) {
  const char *lines[] = {
      "nop",
      "li r1, -2",
      "addi r2, r1, 0x7fffff",
      "signal c3, 2, core=7",
      "wait c31, 65535",
      "barrier 15, 64",
      "halt",
      "ld [r1+0x10], [r2-0x8], run=4, n1=3, lxs1=4, ms1=-100, n2=2, lxs2=12, "
      "ms2=4096",
      "st 0x3fffffff, [r15], run=65535",
      "mm [r1], 0x100, 0x200, m=16, k=128, n=64, as=32, out=dl16, acc=1",
      "mmi8 0x0, 0x10, 0x20, m=1, k=256, n=128",
      "exp 0x0, 0x10, n=4, m=3, ds=8, ss=-4, count=100, fmt=f32",
      "sub 0x0, 0x10, 0x20, n=2, s2=stick, s2s=1",
      "adds 0x0, 0x10, -0.1",
      "pows 0x0, 0x10, 3",
      "bcast 0x0, 0x10, 63, n=2, m=2",
      "cvt 0x0, 0x10, to=f32, n=3",
      "rsum 0x0, 0x10, n=2, count=100, fmt=f32",
      "cmax 0x0, 0x10, n=2, m=8",
      "send 31, 0x0, n=4",
      "racc 1, [r3+0x20], n=2, m=2, s=8",
  };
  std::string out;
  for (const char *line : lines) {
    // Each instruction alone in a stream of the engine it runs on.
    const InstrDesc *d =
        findInstr(std::string_view(line, std::strcspn(line, " ")));
    ASSERT_NE(d, nullptr) << line;
    Engine engine = Engine::DmaLoad;
    for (int e = 0; e < kNumEngines; ++e)
      if (d->runsOn(static_cast<Engine>(e))) {
        engine = static_cast<Engine>(e);
        break;
      }
    std::string text = ".core 0\n.engine " + engineUnitName(engine, 0) +
                       "\n" + line + "\nhalt\n";
    DiagnosticEngine diags;
    Program p = assemble(text, "golden.s", hw::builtinConfig(), diags);
    ASSERT_FALSE(diags.hasErrors()) << diags.str();
    ASSERT_EQ(p.streams.size(), 1u);
    const Instr &in = p.streams[0].code[0];
    out += line;
    out += "\n  " + hexWord(encode(in)) + "\n  " + formatInstr(in) + "\n";
  }
  spyre::test::expectGolden(out, "isa/encodings.txt");
}

TEST(Codec, RejectsZeroWordAndUnknownOpcodes) {
  Word w{};
  std::string error;
  EXPECT_FALSE(decode(w.data(), &error).has_value());
  EXPECT_EQ(error, "unknown opcode 0x00");
  w[0] = 0xee;
  EXPECT_FALSE(decode(w.data(), &error).has_value());
  EXPECT_EQ(error, "unknown opcode 0xee");
}

TEST(Codec, RejectsReservedBits) {
  Instr halt;
  halt.opcode = Opcode::Halt;
  Word w = encode(halt);
  w[31] = 0x80;
  std::string error;
  EXPECT_FALSE(decode(w.data(), &error).has_value());
  EXPECT_EQ(error, "'halt' has reserved bit 255 set");

  Instr li;
  li.opcode = Opcode::Li;
  li.value[0] = 3;
  w = encode(li);
  w[5] |= 0x10; // bit 44, the first after li's imm
  EXPECT_FALSE(decode(w.data(), &error).has_value());
  EXPECT_EQ(error, "'li' has reserved bit 44 set");
}

TEST(Codec, RejectsFieldsOutOfRange) {
  Instr li;
  li.opcode = Opcode::Li;
  li.value[0] = 1;
  Word w = encode(li);
  w[1] &= 0xf0; // rd = r0
  std::string error;
  EXPECT_FALSE(decode(w.data(), &error).has_value());
  EXPECT_EQ(error, "'li' operand 'rd' 0 is out of range (valid: r1..r15)");

  Instr ld = withValues(instrDesc(Opcode::Ld), false);
  w = encode(ld);
  w[8] &= 0x0f; // run (bits 68-83) = 0
  EXPECT_FALSE(decode(w.data(), &error).has_value());
  EXPECT_EQ(error, "'ld' operand 'run' 0 is out of range (valid: 1..65535)");

  Instr mm = withValues(instrDesc(Opcode::Mm), false);
  w = encode(mm);
  w[12] |= 0x01; // k (bits 96-111) = 65: not a multiple of 64
  EXPECT_FALSE(decode(w.data(), &error).has_value());
  EXPECT_EQ(error, "'mm' operand 'k' 65 is out of range (valid: 64..65472, "
                   "multiple of 64)");
}

TEST(Codec, FloatsPrintShortestAndExact) {
  EXPECT_EQ(formatFloat(1.0f), "1");
  EXPECT_EQ(formatFloat(0.1f), "0.1");
  EXPECT_EQ(formatFloat(-0.0f), "-0");
  EXPECT_EQ(formatFloat(1e10f), "1e+10");
  EXPECT_EQ(formatFloat(std::numeric_limits<float>::denorm_min()), "1e-45");
  EXPECT_EQ(formatFloat(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(formatFloat(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(formatFloat(std::numeric_limits<float>::quiet_NaN()), "nan");
  EXPECT_EQ(formatFloat(std::bit_cast<float>(0x3dcccccdu)), "0.1");
  EXPECT_EQ(formatFloat(std::bit_cast<float>(0x3dccccceu)), "0.10000001");
}

TEST(Codec, FormatsOneInstruction) {
  Instr ld;
  ld.opcode = Opcode::Ld;
  ld.value = {0, 0, 1, 1, 0, 0, 1, 0, 0}; // run, n1, n2 at their default 1
  ld.base[0] = 1;
  ld.value[0] = 0x10;
  ld.value[1] = 0x2a;
  ld.value[2] = 4;
  EXPECT_EQ(formatInstr(ld), "ld [r1+0x10], 0x2a, run=4");
  ld.value[0] = -4;
  ld.base[1] = 3;
  ld.value[1] = 0;
  EXPECT_EQ(formatInstr(ld), "ld [r1-0x4], [r3], run=4");

  Instr loop;
  loop.opcode = Opcode::Loop;
  loop.value[0] = 6;
  loop.value[1] = 3;
  EXPECT_EQ(formatInstr(loop), "loop 6, +3");
  EXPECT_EQ(formatInstr(loop, [](int64_t body) {
              return "end" + std::to_string(body);
            }),
            "loop 6, end3");

  Instr sig;
  sig.opcode = Opcode::Signal;
  sig.value = {2, 1, kCoreSelf};
  EXPECT_EQ(formatInstr(sig), "signal c2, 1");
  sig.value[2] = 5;
  EXPECT_EQ(formatInstr(sig), "signal c2, 1, core=5");
}

} // namespace
} // namespace spyre::isa
