// The xpose instruction: its footprint, its data movement against a naive
// element-by-element reference, its operand checks, its cost in the
// simulator and its assembly round trip. Every execution test compares the
// whole LX image with an expected image built from a copy taken before the
// run, so writes outside the destination and the zeroed lanes are checked at
// once.
#include "sim/core/Semantics.h"

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/Disassembler.h"
#include "isa/InstrTable.h"
#include "numerics/Dlf16.h"
#include "sim/core/Machine.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

using namespace spyre;
using namespace spyre::sim;
using isa::Instr;

namespace {

constexpr int64_t kStickBytes = isa::kStickBytes;

using isa::Field;
using isa::makeInstr;
using isa::Opcode;

/// An LX image filled with a byte pattern that no test writes, so untouched
/// sticks are recognisable.
std::vector<uint8_t> image(int64_t sticks) {
  return std::vector<uint8_t>(static_cast<size_t>(sticks * kStickBytes), 0xA5);
}

uint16_t code(const std::vector<uint8_t> &lx, int64_t stick, int64_t lane) {
  uint16_t c;
  std::memcpy(&c, lx.data() + stick * kStickBytes + lane * 2, 2);
  return c;
}
void setCode(std::vector<uint8_t> &lx, int64_t stick, int64_t lane,
             uint16_t c) {
  std::memcpy(lx.data() + stick * kStickBytes + lane * 2, &c, 2);
}
uint32_t word(const std::vector<uint8_t> &lx, int64_t stick, int64_t lane) {
  uint32_t v;
  std::memcpy(&v, lx.data() + stick * kStickBytes + lane * 4, 4);
  return v;
}
void setWord(std::vector<uint8_t> &lx, int64_t stick, int64_t lane,
             uint32_t v) {
  std::memcpy(lx.data() + stick * kStickBytes + lane * 4, &v, 4);
}

/// Distinct DL16 codes per (stick, lane), including the special code, -0
/// and values of both signs.
uint16_t dl16Pattern(int64_t stick, int64_t lane) {
  if (stick == 3 && lane == 5)
    return dlf16::kSpecial;
  if (stick == 4 && lane == 6)
    return dlf16::kNegZero;
  float v = static_cast<float>(stick * 64 + lane) * 0.25f *
            ((stick + lane) % 3 == 0 ? -1.0f : 1.0f);
  return dlf16::fromFloat(v);
}

/// The reference: the expected image after `xpose dst, src, m, k, ss, ds`
/// on `before`, element by element.
std::vector<uint8_t> expectedXpose(const std::vector<uint8_t> &before,
                                   int64_t dst, int64_t src, int64_t m,
                                   int64_t k, int64_t ss, int64_t ds,
                                   bool f32) {
  std::vector<uint8_t> out = before;
  const int64_t lanes = f32 ? 32 : 64;
  for (int64_t j = 0; j < k; ++j)
    for (int64_t i = 0; i < lanes; ++i) {
      if (f32)
        setWord(out, dst + j * ds, i,
                i < m ? word(before, src + i * ss, j) : 0u);
      else
        setCode(out, dst + j * ds, i,
                i < m ? code(before, src + i * ss, j) : uint16_t(0));
    }
  return out;
}

TEST(XposeFootprint, ReadsMRowsAndWritesKSticks) {
  std::vector<Footprint> fp;
  footprint(makeInstr(Opcode::Xpose, {{Field::Dst, 0x100},
                                {Field::Src, 0x10},
                                {Field::M, 5},
                                {Field::K, 3},
                                {Field::Ss, 2},
                                {Field::Ds, -4}}),
            fp);
  ASSERT_EQ(fp.size(), 2u);
  EXPECT_EQ(fp[0], (Footprint{{0x10, 1, 5, 2}, false, false}));
  EXPECT_EQ(fp[1], (Footprint{{0x100, 1, 3, -4}, true, false}));
  EXPECT_EQ(fp[1].region.lowest(), 0x100 - 8);
}

TEST(Xpose, FullDl16TileMovesEveryCodeUnchanged) {
  std::vector<uint8_t> lx = image(160);
  for (int64_t s = 0; s < 64; ++s)
    for (int64_t l = 0; l < 64; ++l)
      setCode(lx, s, l, dl16Pattern(s, l));
  std::vector<uint8_t> before = lx;
  executeCompute(
      makeInstr(Opcode::Xpose, {{Field::Dst, 64}, {Field::Src, 0}, {Field::M, 64}, {Field::K, 64}}),
      lx.data());
  EXPECT_EQ(lx, expectedXpose(before, 64, 0, 64, 64, 1, 1, false));
  // Spot checks by hand: the special code and -0 travel as codes.
  EXPECT_EQ(code(lx, 64 + 5, 3), dlf16::kSpecial);
  EXPECT_EQ(code(lx, 64 + 6, 4), dlf16::kNegZero);
  EXPECT_EQ(code(lx, 64 + 7, 2), dl16Pattern(2, 7));
}

TEST(Xpose, PartialTileZeroesLanesBeyondMAndWritesOnlyKSticks) {
  std::vector<uint8_t> lx = image(200);
  for (int64_t s = 0; s < 100; ++s)
    for (int64_t l = 0; l < 64; ++l)
      setCode(lx, s, l, dl16Pattern(s, l));
  std::vector<uint8_t> before = lx;
  // 7 rows at stride 3, 5 lanes, destination every other stick.
  executeCompute(
      makeInstr(Opcode::Xpose,
          {{Field::Dst, 150}, {Field::Src, 1}, {Field::M, 7}, {Field::K, 5}, {Field::Ss, 3}, {Field::Ds, 2}}),
      lx.data());
  EXPECT_EQ(lx, expectedXpose(before, 150, 1, 7, 5, 3, 2, false));
  EXPECT_EQ(code(lx, 152, 6), dl16Pattern(1 + 6 * 3, 1));
  EXPECT_EQ(code(lx, 152, 7), 0u);
  EXPECT_EQ(code(lx, 151, 0), 0xA5A5u); // between destination sticks
  EXPECT_EQ(code(lx, 160, 0), 0xA5A5u); // past the k-th stick
}

TEST(Xpose, NegativeStridesWalkDownwards) {
  std::vector<uint8_t> lx = image(140);
  for (int64_t s = 0; s < 70; ++s)
    for (int64_t l = 0; l < 64; ++l)
      setCode(lx, s, l, dl16Pattern(s, l));
  std::vector<uint8_t> before = lx;
  executeCompute(makeInstr(Opcode::Xpose, {{Field::Dst, 139},
                                     {Field::Src, 63},
                                     {Field::M, 64},
                                     {Field::K, 9},
                                     {Field::Ss, -1},
                                     {Field::Ds, -1}}),
                 lx.data());
  EXPECT_EQ(lx, expectedXpose(before, 139, 63, 64, 9, -1, -1, false));
}

TEST(Xpose, F32TileKeepsBitPatternsIncludingNaNPayloads) {
  std::vector<uint8_t> lx = image(80);
  for (int64_t s = 0; s < 32; ++s)
    for (int64_t l = 0; l < 32; ++l)
      setWord(lx, s, l,
              std::bit_cast<uint32_t>(static_cast<float>(s * 32 + l) - 500.5f));
  setWord(lx, 2, 9, 0x7FA01234u); // a signalling NaN with a payload
  std::vector<uint8_t> before = lx;
  executeCompute(
      makeInstr(Opcode::Xpose,
                {{Field::Dst, 40}, {Field::Src, 0}, {Field::M, 30}, {Field::K, 32}, {Field::Fmt, 1}}),
      lx.data());
  EXPECT_EQ(lx, expectedXpose(before, 40, 0, 30, 32, 1, 1, true));
  EXPECT_EQ(word(lx, 40 + 9, 2), 0x7FA01234u);
  EXPECT_EQ(word(lx, 40 + 9, 30), 0u);
}

TEST(XposeOperands, LanesBeyondTheFormatAreReported) {
  EXPECT_EQ(operandError(makeInstr(Opcode::Xpose, {{Field::Dst, 64}, {Field::Src, 0}, {Field::M, 64}, {Field::K, 64}})),
            "");
  EXPECT_EQ(
      operandError(makeInstr(Opcode::Xpose, {{Field::Dst, 64}, {Field::Src, 0}, {Field::M, 33}, {Field::K, 4}, {Field::Fmt, 1}})),
      "xpose m=33 is beyond the 32 lanes of a f32 stick");
  EXPECT_EQ(
      operandError(makeInstr(Opcode::Xpose, {{Field::Dst, 64}, {Field::Src, 0}, {Field::M, 4}, {Field::K, 40}, {Field::Fmt, 1}})),
      "xpose k=40 is beyond the 32 lanes of a f32 stick");
}

TEST(XposeOperands, SharedSticksAreReportedInterleavedAreNot) {
  // Row 3 of the source (stick 0x13) is destination stick 0.
  EXPECT_EQ(operandError(makeInstr(Opcode::Xpose, {{Field::Dst, 0x13}, {Field::Src, 0x10}, {Field::M, 4}, {Field::K, 4}})),
            "xpose source row 3 is destination stick 0 (lx 0x13): source and "
            "destination must not share a stick");
  // Source on even sticks, destination on odd ones: spans overlap, sticks
  // do not.
  Instr interleaved = makeInstr(Opcode::Xpose,
      {{Field::Dst, 0x11}, {Field::Src, 0x10}, {Field::M, 8}, {Field::K, 8}, {Field::Ss, 2}, {Field::Ds, 2}});
  EXPECT_EQ(operandError(interleaved), "");
  std::vector<uint8_t> lx = image(64);
  for (int64_t s = 0; s < 64; ++s)
    for (int64_t l = 0; l < 64; ++l)
      setCode(lx, s, l, dl16Pattern(s, l));
  std::vector<uint8_t> before = lx;
  executeCompute(interleaved, lx.data());
  EXPECT_EQ(lx, expectedXpose(before, 0x11, 0x10, 8, 8, 2, 2, false));
}

isa::Program assembleText(const std::string &text) {
  DiagnosticEngine diags;
  isa::Program p = isa::assemble(text, "test.s", hw::builtinConfig(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  return p;
}

TEST(XposeMachine, CostsMPlusKSticksOfSimpleTime) {
  const hw::HwConfig &cfg = hw::builtinConfig();
  const auto cost = [&](int m, int k) {
    isa::Program p = assembleText(
        ".core 0\n.engine sfu.0\n    xpose 0x100, 0x0, m=" + std::to_string(m) +
        ", k=" + std::to_string(k) + "\n    halt\n");
    SimOptions opts;
    opts.checks = false;
    Machine machine(cfg, p, opts);
    machine.run();
    EXPECT_TRUE(machine.findings().empty());
    return machine.totalCycles();
  };
  // m + k DL16 sticks of 64 lanes, spread over the corelet's arrays.
  const Cycle perPass = static_cast<Cycle>(cfg.sfu.simpleCyclesPerStick);
  const Cycle latency = static_cast<Cycle>(cfg.sfu.pipelineLatencyCycles);
  const Cycle lanes =
      static_cast<Cycle>(cfg.sfu.arraysPerCorelet * cfg.sfu.dl16Lanes);
  const auto passes = [&](Cycle sticks) {
    return (sticks * 64 + lanes - 1) / lanes;
  };
  EXPECT_EQ(cost(64, 64), latency + passes(128) * perPass);
  EXPECT_EQ(cost(7, 64), latency + passes(71) * perPass);
  EXPECT_EQ(cost(64, 1), latency + passes(65) * perPass);
  EXPECT_EQ(cost(7, 64), 8u + 36); // the built-in figures: 71 sticks, 2 a pass
}

TEST(XposeMachine, SharedStickIsAnInvalidOperandFinding) {
  isa::Program p = assembleText(".core 0\n.engine sfu.0\n"
                                "    xpose 0x2, 0x0, m=4, k=4\n    halt\n");
  SimOptions opts;
  opts.checks = false;
  Machine machine(hw::builtinConfig(), p, opts);
  machine.run();
  ASSERT_EQ(machine.findings().size(), 1u);
  EXPECT_EQ(machine.findings()[0].kind, FindingKind::InvalidOperand);
}

TEST(XposeAssembly, RoundTripsThroughCanonicalText) {
  isa::Program p = assembleText(
      ".core 0\n.engine sfu.1\n"
      "    xpose [r1+0x40], [r2], m=64, k=17, ss=-3, fmt=f32\n    halt\n");
  std::string text = isa::disassemble(p);
  EXPECT_NE(text.find("xpose   [r1+0x40], [r2], m=64, k=17, ss=-3, fmt=f32\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(isa::writeProgram(assembleText(text)), isa::writeProgram(p));
}

} // namespace
