// The functional semantics of every data instruction against naive
// references written here: plain loops over decoded elements in the order the
// ISA documents (FP32 sums in increasing index order, DL16 rounding once at
// the end through the DL16 codec), or sums in double where the values make
// them exact. Every execution test compares the whole LX image with an
// expected image built from a copy taken before the run, so writes outside
// the destination, padding lanes and aliasing are all checked at once.
#include "sim/core/Semantics.h"

#include "isa/InstrTable.h"
#include "numerics/Dlf16.h"
#include "sim/numerics/SfuMath.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <numbers>
#include <random>
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

int64_t floatField(float f) { return std::bit_cast<uint32_t>(f); }

enum class Fmt { Dl16, F32 };
int64_t lanes(Fmt f) { return f == Fmt::Dl16 ? 64 : 32; }
int64_t fmtIndex(Fmt f) { return f == Fmt::F32 ? 1 : 0; }
const char *fmtName(Fmt f) { return f == Fmt::F32 ? "f32" : "dl16"; }

/// Bytes of an LX (or of the LX a test expects).
class Image {
public:
  explicit Image(int64_t sticks, uint8_t fill = 0xA5)
      : bytes_(static_cast<size_t>(sticks * kStickBytes), fill) {}

  uint8_t *data() { return bytes_.data(); }
  const uint8_t *data() const { return bytes_.data(); }
  int64_t sticks() const {
    return static_cast<int64_t>(bytes_.size()) / kStickBytes;
  }

  uint16_t code(int64_t stick, int64_t lane) const {
    uint16_t c;
    std::memcpy(&c, at(stick, lane * 2), 2);
    return c;
  }
  void setCode(int64_t stick, int64_t lane, uint16_t c) {
    std::memcpy(at(stick, lane * 2), &c, 2);
  }
  float f32(int64_t stick, int64_t lane) const {
    float v;
    std::memcpy(&v, at(stick, lane * 4), 4);
    return v;
  }
  void setF32(int64_t stick, int64_t lane, float v) {
    std::memcpy(at(stick, lane * 4), &v, 4);
  }
  int8_t i8(int64_t stick, int64_t lane) const {
    return static_cast<int8_t>(*at(stick, lane));
  }
  void setI8(int64_t stick, int64_t lane, int8_t v) {
    *at(stick, lane) = static_cast<uint8_t>(v);
  }
  uint32_t u32(int64_t stick, int64_t lane) const {
    uint32_t v;
    std::memcpy(&v, at(stick, lane * 4), 4);
    return v;
  }
  void setU32(int64_t stick, int64_t lane, uint32_t v) {
    std::memcpy(at(stick, lane * 4), &v, 4);
  }

  /// An element in `fmt`, DL16 decoded exactly.
  float get(Fmt f, int64_t stick, int64_t lane) const {
    return f == Fmt::F32 ? f32(stick, lane) : dlf16::toFloat(code(stick, lane));
  }
  /// Stores v in `fmt`, DL16 rounded by the codec.
  void set(Fmt f, int64_t stick, int64_t lane, float v) {
    if (f == Fmt::F32)
      setF32(stick, lane, v);
    else
      setCode(stick, lane, dlf16::fromFloat(v));
  }

  /// Element e of the row of sticks starting at `first`.
  float elem(Fmt f, int64_t first, int64_t e) const {
    return get(f, first + e / lanes(f), e % lanes(f));
  }
  void setElem(Fmt f, int64_t first, int64_t e, float v) {
    set(f, first + e / lanes(f), e % lanes(f), v);
  }

  /// Fills `count` sticks from `first` with uniform values in [lo, hi) that
  /// `fmt` represents exactly.
  void fillRandom(Fmt f, int64_t first, int64_t count, uint32_t seed, float lo,
                  float hi) {
    std::mt19937 gen(seed);
    for (int64_t s = first; s < first + count; ++s)
      for (int64_t l = 0; l < lanes(f); ++l) {
        double u = static_cast<double>(gen()) / 4294967296.0;
        set(f, s, l, static_cast<float>(lo + (hi - lo) * u));
      }
  }

  const std::vector<uint8_t> &bytes() const { return bytes_; }

private:
  uint8_t *at(int64_t stick, int64_t byte) {
    return bytes_.data() + stick * kStickBytes + byte;
  }
  const uint8_t *at(int64_t stick, int64_t byte) const {
    return bytes_.data() + stick * kStickBytes + byte;
  }

  std::vector<uint8_t> bytes_;
};

::testing::AssertionResult sameImage(const Image &actual,
                                     const Image &expected) {
  const auto &a = actual.bytes();
  const auto &e = expected.bytes();
  if (a.size() != e.size())
    return ::testing::AssertionFailure() << "image sizes differ";
  int64_t mismatches = 0;
  size_t first = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != e[i] && mismatches++ == 0)
      first = i;
  if (mismatches == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mismatches << " bytes differ; first at stick " << first / kStickBytes
         << " byte " << first % kStickBytes << ": got " << int(a[first])
         << ", expected " << int(e[first]);
}

float maxNan(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) ? a : b;
  return a > b ? a : b;
}

float minNan(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) ? a : b;
  return a < b ? a : b;
}

/// Largest of |a - b| allowed for a result of value `ref` in `fmt` against a
/// double-precision reference: a few units in the last place of the format.
double tolerance(Fmt f, double ref) {
  double rel = f == Fmt::F32 ? std::ldexp(1.0, -21) : std::ldexp(1.0, -9);
  return rel * std::max(std::fabs(ref), 1e-6);
}

// ---------------------------------------------------------------------------
// Region

TEST(Region, CountsAndBoundsWithNegativeStrides) {
  Region r{100, 3, 4, -10, 2, 50};
  EXPECT_EQ(r.sticks(), 24);
  EXPECT_EQ(r.lowest(), 70);   // 100 + 3 * -10
  EXPECT_EQ(r.highest(), 152); // 100 + 50 + 3 - 1
  Region plain{5, 4};
  EXPECT_EQ(plain.sticks(), 4);
  EXPECT_EQ(plain.lowest(), 5);
  EXPECT_EQ(plain.highest(), 8);
}

TEST(Region, WalksRunsInnerDimensionFirst) {
  Region r{10, 2, 3, -4, 2, 100};
  std::vector<std::pair<int64_t, int64_t>> runs;
  r.forEachRun([&](int64_t s, int64_t n) { runs.emplace_back(s, n); });
  std::vector<std::pair<int64_t, int64_t>> expected = {
      {10, 2}, {6, 2}, {2, 2}, {110, 2}, {106, 2}, {102, 2}};
  EXPECT_EQ(runs, expected);
}

TEST(Region, OverlapAndInjectivity) {
  EXPECT_TRUE((Region{0, 4, 3, 4}).injective());
  EXPECT_TRUE((Region{20, 4, 3, -4}).injective());
  EXPECT_FALSE((Region{0, 4, 3, 3}).injective());
  EXPECT_FALSE((Region{0, 4, 3, 0}).injective());
  EXPECT_TRUE((Region{0, 4, 1, 0}).injective());
  EXPECT_TRUE((Region{0, 4}).spanOverlaps(Region{3, 1}));
  EXPECT_FALSE((Region{0, 4}).spanOverlaps(Region{4, 1}));
}

// ---------------------------------------------------------------------------
// Footprints

std::vector<Footprint> footprintOf(const Instr &in) {
  std::vector<Footprint> out;
  footprint(in, out);
  return out;
}

Footprint rd(Region r, bool mem = false) { return {r, false, mem}; }
Footprint wr(Region r, bool mem = false) { return {r, true, mem}; }

TEST(Footprint, ControlAndSyncTouchNothing) {
  for (Opcode m : {Opcode::Nop, Opcode::Halt})
    EXPECT_TRUE(footprintOf(makeInstr(m, {})).empty()) << isa::opcodeName(m);
  EXPECT_TRUE(footprintOf(makeInstr(Opcode::Li, {{Field::Rd, 1}, {Field::Imm, 5}})).empty());
  EXPECT_TRUE(footprintOf(makeInstr(Opcode::Addi, {{Field::Rd, 1}, {Field::Rs, 1}, {Field::Imm, 5}}))
                  .empty());
  EXPECT_TRUE(
      footprintOf(makeInstr(Opcode::Loop, {{Field::Count, 3}, {Field::Body, 1}})).empty());
  EXPECT_TRUE(
      footprintOf(makeInstr(Opcode::Signal, {{Field::Counter, 0}, {Field::Value, 1}})).empty());
  EXPECT_TRUE(
      footprintOf(makeInstr(Opcode::Wait, {{Field::Counter, 0}, {Field::Value, 1}})).empty());
  EXPECT_TRUE(
      footprintOf(makeInstr(Opcode::Barrier, {{Field::Id, 0}, {Field::Count, 2}})).empty());
}

TEST(Footprint, DmaReadsSourceThenWritesDestination) {
  auto ld = makeInstr(Opcode::Ld, {{Field::Lx, 10},
                             {Field::Mem, 1000},
                             {Field::Run, 3},
                             {Field::N1, 4},
                             {Field::Lxs1, 5},
                             {Field::Ms1, -7},
                             {Field::N2, 2},
                             {Field::Lxs2, 40},
                             {Field::Ms2, 100}});
  EXPECT_EQ(footprintOf(ld),
            (std::vector<Footprint>{rd({1000, 3, 4, -7, 2, 100}, true),
                                    wr({10, 3, 4, 5, 2, 40})}));
  auto st = makeInstr(Opcode::St, {{Field::Mem, 500}, {Field::Lx, 7}, {Field::Run, 2}});
  EXPECT_EQ(footprintOf(st),
            (std::vector<Footprint>{rd({7, 2, 1, 0, 1, 0}),
                                    wr({500, 2, 1, 0, 1, 0}, true)}));
}

TEST(Footprint, MatmulBlocksFollowTheStickRule) {
  // Defaults: as = m, bs = k, cs = m.
  auto mm = makeInstr(Opcode::Mm,
      {{Field::C, 1000}, {Field::A, 0}, {Field::B, 100}, {Field::M, 7}, {Field::K, 128}, {Field::N, 192}});
  EXPECT_EQ(footprintOf(mm),
            (std::vector<Footprint>{rd({0, 7, 2, 7}), rd({100, 128, 3, 128}),
                                    wr({1000, 7, 6, 7})}));
  auto acc = makeInstr(Opcode::Mm, {{Field::C, 1000},
                              {Field::A, 0},
                              {Field::B, 100},
                              {Field::M, 9},
                              {Field::K, 64},
                              {Field::N, 128},
                              {Field::As, 20},
                              {Field::Bs, 70},
                              {Field::Cs, 11},
                              {Field::Out, 0},
                              {Field::Acc, 1}});
  EXPECT_EQ(footprintOf(acc), (std::vector<Footprint>{
                                  rd({0, 9, 1, 20}), rd({100, 64, 2, 70}),
                                  rd({1000, 9, 2, 11}), wr({1000, 9, 2, 11})}));
  auto i8 = makeInstr(Opcode::Mmi8, {{Field::C, 900},
                               {Field::A, 0},
                               {Field::B, 100},
                               {Field::M, 5},
                               {Field::K, 256},
                               {Field::N, 384},
                               {Field::Acc, 1}});
  EXPECT_EQ(footprintOf(i8),
            (std::vector<Footprint>{rd({0, 5, 2, 5}), rd({100, 256, 3, 256}),
                                    rd({900, 5, 12, 5}), wr({900, 5, 12, 5})}));
}

TEST(Footprint, SfuRowsStridesAndSticks) {
  auto exp = makeInstr(Opcode::Exp, {{Field::Dst, 50}, {Field::Src, 10}, {Field::N, 3}, {Field::M, 4}, {Field::Ss, -5}});
  EXPECT_EQ(footprintOf(exp),
            (std::vector<Footprint>{rd({10, 3, 4, -5}), wr({50, 3, 4, 3})}));
  auto muls = makeInstr(Opcode::Muls, {{Field::Dst, 1},
                                 {Field::Src, 2},
                                 {Field::Imm, floatField(2)},
                                 {Field::N, 2},
                                 {Field::M, 3},
                                 {Field::Ds, 4},
                                 {Field::Ss, 5}});
  EXPECT_EQ(footprintOf(muls),
            (std::vector<Footprint>{rd({2, 2, 3, 5}), wr({1, 2, 3, 4})}));
  auto addRow = makeInstr(Opcode::Add,
      {{Field::Dst, 0}, {Field::Src1, 10}, {Field::Src2, 20}, {Field::N, 2}, {Field::M, 3}, {Field::S2s, 0}});
  EXPECT_EQ(footprintOf(addRow),
            (std::vector<Footprint>{rd({10, 2, 3, 2}), rd({20, 2, 3, 0}),
                                    wr({0, 2, 3, 2})}));
  auto mulStick = makeInstr(Opcode::Mul, {{Field::Dst, 0},
                                    {Field::Src1, 10},
                                    {Field::Src2, 20},
                                    {Field::N, 4},
                                    {Field::M, 3},
                                    {Field::S2s, 1},
                                    {Field::S2, 1}});
  EXPECT_EQ(footprintOf(mulStick),
            (std::vector<Footprint>{rd({10, 4, 3, 4}), rd({20, 1, 3, 1}),
                                    wr({0, 4, 3, 4})}));
  auto bcast = makeInstr(Opcode::Bcast,
      {{Field::Dst, 0}, {Field::Src, 30}, {Field::Lane, 3}, {Field::N, 2}, {Field::M, 5}, {Field::Ss, 1}});
  EXPECT_EQ(footprintOf(bcast),
            (std::vector<Footprint>{rd({30, 1, 5, 1}), wr({0, 2, 5, 2})}));
}

TEST(Footprint, ConversionAndReductionShapes) {
  // DL16 -> FP32 doubles the row; FP32 -> DL16 halves it, rounding up.
  auto widen = makeInstr(Opcode::Cvt, {{Field::Dst, 100}, {Field::Src, 0}, {Field::To, 1}, {Field::N, 3}, {Field::M, 2}});
  EXPECT_EQ(footprintOf(widen),
            (std::vector<Footprint>{rd({0, 3, 2, 3}), wr({100, 6, 2, 6})}));
  auto narrow = makeInstr(Opcode::Cvt, {{Field::Dst, 100}, {Field::Src, 0}, {Field::To, 0}, {Field::N, 3}, {Field::M, 2}});
  EXPECT_EQ(footprintOf(narrow),
            (std::vector<Footprint>{rd({0, 3, 2, 3}), wr({100, 2, 2, 2})}));
  auto rsum = makeInstr(Opcode::Rsum, {{Field::Dst, 100}, {Field::Src, 0}, {Field::N, 3}, {Field::M, 7}});
  EXPECT_EQ(footprintOf(rsum),
            (std::vector<Footprint>{rd({0, 3, 7, 3}), wr({100, 1, 7, 1})}));
  auto cmax = makeInstr(Opcode::Cmax, {{Field::Dst, 100}, {Field::Src, 0}, {Field::N, 3}, {Field::M, 7}, {Field::Ss, 4}});
  EXPECT_EQ(footprintOf(cmax),
            (std::vector<Footprint>{rd({0, 3, 7, 4}), wr({100, 3, 1, 0})}));
}

TEST(Footprint, RingInstructionsNameTheLocalRegion) {
  auto ring = [](Opcode mnemonic) {
    return footprintOf(makeInstr(
        mnemonic, {{Field::Core, 3}, {Field::Lx, 40}, {Field::N, 2}, {Field::M, 5}, {Field::S, 6}}));
  };
  Region r{40, 2, 5, 6};
  EXPECT_EQ(ring(Opcode::Send), (std::vector<Footprint>{rd(r)}));
  EXPECT_EQ(ring(Opcode::Rsend), (std::vector<Footprint>{rd(r)}));
  EXPECT_EQ(ring(Opcode::Recv), (std::vector<Footprint>{wr(r)}));
  EXPECT_EQ(ring(Opcode::Racc), (std::vector<Footprint>{rd(r), wr(r)}));
}

// ---------------------------------------------------------------------------
// mm

struct MmShape {
  int64_t m, k, n;
  int64_t as, bs, cs; // 0: default
  Fmt out;
  bool acc;
};

/// C as the ISA defines it, written into `expected` from the values in
/// `before`: for every C block in order, row in order, lane in order, an FP32
/// sum over k from 0 (or the old C) in increasing k.
void referenceMm(const Image &before, Image &expected, int64_t c, int64_t a,
                 int64_t b, const MmShape &s) {
  int64_t as = s.as ? s.as : s.m, bs = s.bs ? s.bs : s.k,
          cs = s.cs ? s.cs : s.m;
  int64_t outLanes = lanes(s.out);
  for (int64_t blk = 0; blk < s.n / outLanes; ++blk)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t lane = 0; lane < outLanes; ++lane) {
        int64_t j = blk * outLanes + lane;
        int64_t cStick = c + blk * cs + i;
        float sum = s.acc ? before.get(s.out, cStick, lane) : 0.0f;
        for (int64_t kk = 0; kk < s.k; ++kk) {
          float av = before.get(Fmt::Dl16, a + (kk / 64) * as + i, kk % 64);
          float bv = before.get(Fmt::Dl16, b + (j / 64) * bs + kk, j % 64);
          sum = sum + av * bv;
        }
        expected.set(s.out, cStick, lane, sum);
      }
}

Instr mmInstr(int64_t c, int64_t a, int64_t b, const MmShape &s) {
  return makeInstr(Opcode::Mm, {{Field::C, c},
                          {Field::A, a},
                          {Field::B, b},
                          {Field::M, s.m},
                          {Field::K, s.k},
                          {Field::N, s.n},
                          {Field::As, s.as ? s.as : s.m},
                          {Field::Bs, s.bs ? s.bs : s.k},
                          {Field::Cs, s.cs ? s.cs : s.m},
                          {Field::Out, fmtIndex(s.out)},
                          {Field::Acc, s.acc ? 1 : 0}});
}

TEST(Matmul, MatchesNaiveFp32SumsBitForBit) {
  uint32_t seed = 1;
  for (int64_t m : {1, 7, 9})
    for (int64_t k : {64, 128})
      for (int64_t n : {64, 192})
        for (Fmt out : {Fmt::F32, Fmt::Dl16})
          for (bool acc : {false, true}) {
            MmShape s{m, k, n, 0, 0, 0, out, acc};
            SCOPED_TRACE(testing::Message()
                         << "m=" << m << " k=" << k << " n=" << n
                         << " out=" << fmtName(out) << " acc=" << acc);
            Image lx(2048);
            const int64_t a = 0, b = 200, c = 600;
            lx.fillRandom(Fmt::Dl16, a, m * k / 64, ++seed, -2, 2);
            lx.fillRandom(Fmt::Dl16, b, k * n / 64, ++seed, -2, 2);
            lx.fillRandom(out, c, m * n / lanes(out), ++seed, -8, 8);
            Image before = lx, expected = lx;
            referenceMm(before, expected, c, a, b, s);
            executeCompute(mmInstr(c, a, b, s), lx.data());
            EXPECT_TRUE(sameImage(lx, expected));
          }
}

TEST(Matmul, SmallIntegersGiveTheExactProduct) {
  // Small integers make every partial sum exact, so a double-precision sum
  // is an independent reference for the layout alone.
  MmShape s{7, 128, 192, 9, 131, 8, Fmt::F32, false};
  Image lx(2048, 0);
  const int64_t a = 0, b = 100, c = 800;
  std::vector<double> A(7 * 128), B(128 * 192);
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t kk = 0; kk < 128; ++kk) {
      A[i * 128 + kk] = static_cast<double>((i * 3 + kk * 5) % 7) - 3;
      lx.set(Fmt::Dl16, a + (kk / 64) * 9 + i, kk % 64,
             static_cast<float>(A[i * 128 + kk]));
    }
  for (int64_t kk = 0; kk < 128; ++kk)
    for (int64_t j = 0; j < 192; ++j) {
      B[kk * 192 + j] = static_cast<double>((kk * 7 + j * 11) % 9) - 4;
      lx.set(Fmt::Dl16, b + (j / 64) * 131 + kk, j % 64,
             static_cast<float>(B[kk * 192 + j]));
    }
  executeCompute(mmInstr(c, a, b, s), lx.data());
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < 192; ++j) {
      double sum = 0;
      for (int64_t kk = 0; kk < 128; ++kk)
        sum += A[i * 128 + kk] * B[kk * 192 + j];
      ASSERT_EQ(lx.f32(c + (j / 32) * 8 + i, j % 32), sum)
          << "C[" << i << "][" << j << "]";
    }
}

TEST(Matmul, StridedOperandsAndDl16Accumulation) {
  MmShape s{9, 128, 192, 12, 140, 10, Fmt::Dl16, true};
  Image lx(2048);
  const int64_t a = 0, b = 40, c = 600;
  lx.fillRandom(Fmt::Dl16, a, 12 + 9, 7, -3, 3);
  lx.fillRandom(Fmt::Dl16, b, 140 * 2 + 128, 8, -3, 3);
  lx.fillRandom(Fmt::Dl16, c, 10 * 2 + 9, 9, -50, 50);
  Image before = lx, expected = lx;
  referenceMm(before, expected, c, a, b, s);
  executeCompute(mmInstr(c, a, b, s), lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

TEST(Matmul, SumOrderIsIncreasingK) {
  // 2^24 + 1 - 2^24 in that order loses the 1; any other order keeps it.
  MmShape s{1, 64, 64, 0, 0, 0, Fmt::F32, false};
  Image lx(512, 0);
  const int64_t a = 0, b = 10, c = 100;
  lx.set(Fmt::Dl16, a, 0, 4096);
  lx.set(Fmt::Dl16, a, 1, 1);
  lx.set(Fmt::Dl16, a, 2, -4096);
  lx.set(Fmt::Dl16, b + 0, 0, 4096);
  lx.set(Fmt::Dl16, b + 1, 0, 1);
  lx.set(Fmt::Dl16, b + 2, 0, 4096);
  executeCompute(mmInstr(c, a, b, s), lx.data());
  EXPECT_EQ(lx.f32(c, 0), 0.0f);
  EXPECT_EQ(lx.f32(c, 1), 0.0f);
}

TEST(Matmul, ResultMayOverwriteItsOperands) {
  // C's first block is A itself: every C element still uses the old A.
  MmShape s{7, 64, 128, 0, 0, 0, Fmt::F32, true};
  Image lx(1024);
  const int64_t a = 100, b = 300;
  lx.fillRandom(Fmt::Dl16, a, 7, 21, -2, 2);
  lx.fillRandom(Fmt::Dl16, b, 128, 22, -2, 2);
  lx.fillRandom(Fmt::F32, a + 7, 7 * 3, 23, -2, 2);
  Image before = lx, expected = lx;
  referenceMm(before, expected, a, a, b, s);
  executeCompute(mmInstr(a, a, b, s), lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

TEST(Matmul, OverlappingCBlocksKeepTheLastWrite) {
  // cs < m: blocks overlap; the later block's rows win.
  MmShape s{9, 64, 64, 0, 0, 4, Fmt::F32, true};
  Image lx(1024);
  const int64_t a = 0, b = 100, c = 300;
  lx.fillRandom(Fmt::Dl16, a, 9, 31, -2, 2);
  lx.fillRandom(Fmt::Dl16, b, 64, 32, -2, 2);
  lx.fillRandom(Fmt::F32, c, 13, 33, -2, 2);
  Image before = lx, expected = lx;
  referenceMm(before, expected, c, a, b, s);
  executeCompute(mmInstr(c, a, b, s), lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

TEST(Matmul, ManyRowsOfOneRepeatedABlock) {
  // as = 0 repeats one A block over k: 4097 x 1088 elements are more than
  // the simulator converts at once, so A is converted in row tiles.
  MmShape s{4097, 1088, 64, 0, 0, 0, Fmt::F32, false};
  const int64_t a = 0, b = 4097, c = b + 1088;
  Image lx(c + 2 * 4097);
  lx.fillRandom(Fmt::Dl16, a, b + 1088, 41, -2, 2);
  Image expected = lx;
  std::vector<float> A(s.m * 64), B(s.k * 64);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t l = 0; l < 64; ++l)
      A[i * 64 + l] = lx.get(Fmt::Dl16, a + i, l);
  for (int64_t kk = 0; kk < s.k; ++kk)
    for (int64_t j = 0; j < 64; ++j)
      B[kk * 64 + j] = lx.get(Fmt::Dl16, b + kk, j);
  for (int64_t blk = 0; blk < 2; ++blk)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t lane = 0; lane < 32; ++lane) {
        int64_t j = blk * 32 + lane;
        float sum = 0.0f;
        for (int64_t kk = 0; kk < s.k; ++kk)
          sum = sum + A[i * 64 + kk % 64] * B[kk * 64 + j];
        expected.setF32(c + blk * s.m + i, lane, sum);
      }
  Instr mm = mmInstr(c, a, b, s);
  mm.value[mm.position(Field::As)] = 0;
  executeCompute(mm, lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

TEST(Matmul, Int8SumsWrapModulo2To32) {
  for (bool acc : {false, true}) {
    const int64_t m = 7, k = 256, n = 256, as = 8, bs = 260, cs = 9;
    Image lx(2048);
    const int64_t a = 0, b = 20, c = 600;
    std::mt19937 gen(acc ? 5 : 6);
    for (int64_t s = a; s < a + as + m; ++s)
      for (int64_t l = 0; l < 128; ++l)
        lx.setI8(s, l, static_cast<int8_t>(gen() & 0xFF));
    for (int64_t s = b; s < b + bs + k; ++s)
      for (int64_t l = 0; l < 128; ++l)
        lx.setI8(s, l, static_cast<int8_t>(gen() & 0xFF));
    for (int64_t s = c; s < c + cs * 7 + m; ++s)
      for (int64_t l = 0; l < 32; ++l)
        lx.setU32(s, l, (l % 2) ? 0x7FFFFFF0u : gen());
    Image before = lx, expected = lx;
    for (int64_t blk = 0; blk < n / 32; ++blk)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t lane = 0; lane < 32; ++lane) {
          int64_t j = blk * 32 + lane;
          int64_t sum =
              acc ? static_cast<int32_t>(before.u32(c + blk * cs + i, lane))
                  : 0;
          for (int64_t kk = 0; kk < k; ++kk)
            sum += int64_t(before.i8(a + (kk / 128) * as + i, kk % 128)) *
                   before.i8(b + (j / 128) * bs + kk, j % 128);
          expected.setU32(c + blk * cs + i, lane,
                          static_cast<uint32_t>(sum & 0xFFFFFFFF));
        }
    executeCompute(makeInstr(Opcode::Mmi8, {{Field::C, c},
                                      {Field::A, a},
                                      {Field::B, b},
                                      {Field::M, m},
                                      {Field::K, k},
                                      {Field::N, n},
                                      {Field::As, as},
                                      {Field::Bs, bs},
                                      {Field::Cs, cs},
                                      {Field::Acc, acc ? 1 : 0}}),
                   lx.data());
    EXPECT_TRUE(sameImage(lx, expected)) << "acc=" << acc;
  }
}

// ---------------------------------------------------------------------------
// SFU elementwise

/// Where an SFU test puts its rows: each operand's first row and stride.
struct RowsAt {
  int64_t base, stride;
  int64_t row(int64_t r) const { return base + r * stride; }
};

struct UnaryCase {
  Opcode mnemonic;
  std::function<float(float)> fp32;   ///< the definition, in FP32
  std::function<double(double)> real; ///< the true function, for tolerance
  float lo, hi;
};

std::vector<UnaryCase> unaryCases() {
  return {
      {Opcode::Copy, [](float x) { return x; }, [](double x) { return x; }, -100,
       100},
      {Opcode::Neg, [](float x) { return -x; }, [](double x) { return -x; }, -100,
       100},
      {Opcode::Abs, [](float x) { return std::fabs(x); },
       [](double x) { return std::fabs(x); }, -100, 100},
      {Opcode::Relu, [](float x) { return x > 0 ? x : 0.0f; },
       [](double x) { return x > 0 ? x : 0.0; }, -100, 100},
      {Opcode::Exp, sfumath::exp, [](double x) { return std::exp(x); }, -20, 20},
      {Opcode::Recip, [](float x) { return 1.0f / x; },
       [](double x) { return 1 / x; }, 0.01f, 100},
      {Opcode::Rsqrt, sfumath::rsqrt, [](double x) { return 1 / std::sqrt(x); },
       0.01f, 100},
      {Opcode::Sqrt, [](float x) { return std::sqrt(x); },
       [](double x) { return std::sqrt(x); }, 0, 100},
      {Opcode::Tanh, sfumath::tanh, [](double x) { return std::tanh(x); }, -6, 6},
      {Opcode::Sigmoid, sfumath::sigmoid,
       [](double x) { return 1 / (1 + std::exp(-x)); }, -10, 10},
      {Opcode::Gelu, sfumath::gelu,
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); },
       -3, 3},
      {Opcode::Gelut, sfumath::geluTanh,
       [](double x) {
         return 0.5 * x *
                (1 + std::tanh(std::sqrt(2 / std::numbers::pi) *
                               (x + 0.044715 * x * x * x)));
       },
       -3, 3},
      {Opcode::Silu, sfumath::silu, [](double x) { return x / (1 + std::exp(-x)); },
       -10, 10},
      {Opcode::Erf, sfumath::erf, [](double x) { return std::erf(x); }, -3, 3},
  };
}

TEST(SfuUnary, EveryOpMatchesItsDefinitionWithPaddingZero) {
  for (const UnaryCase &uc : unaryCases())
    for (Fmt fmt : {Fmt::Dl16, Fmt::F32}) {
      SCOPED_TRACE(testing::Message() << isa::opcodeName(uc.mnemonic) << " " << fmtName(fmt));
      // 7 rows of 3 sticks, gaps between rows, count ends mid-stick.
      const int64_t n = 3, m = 7, L = lanes(fmt);
      const int64_t count = 2 * L + 5;
      RowsAt src{10, 5}, dst{100, 4};
      Image lx(256);
      lx.fillRandom(fmt, src.base, src.row(m), 11, uc.lo, uc.hi);
      Image before = lx, expected = lx;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t e = 0; e < n * L; ++e) {
          float x = before.elem(fmt, src.row(r), e);
          expected.setElem(fmt, dst.row(r), e, e < count ? uc.fp32(x) : 0.0f);
        }
      executeCompute(makeInstr(uc.mnemonic, {{Field::Dst, dst.base},
                                             {Field::Src, src.base},
                                             {Field::N, n},
                                             {Field::M, m},
                                             {Field::Ds, dst.stride},
                                             {Field::Ss, src.stride},
                                             {Field::Count, count},
                                             {Field::Fmt, fmtIndex(fmt)}}),
                     lx.data());
      EXPECT_TRUE(sameImage(lx, expected));
      // The definition is the intended function: close to it in double.
      for (int64_t r = 0; r < m; ++r)
        for (int64_t e = 0; e < count; ++e) {
          double truth = uc.real(before.elem(fmt, src.row(r), e));
          double got = lx.elem(fmt, dst.row(r), e);
          ASSERT_LE(std::fabs(got - truth), tolerance(fmt, truth))
              << "row " << r << " element " << e;
        }
    }
}

TEST(SfuUnary, WholeRowWhenCountIsZeroOrLarger) {
  for (int64_t count : {0, 64 * 2, 1000}) {
    Image lx(64);
    lx.fillRandom(Fmt::Dl16, 0, 4, 3, -5, 5);
    Image before = lx, expected = lx;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 128; ++e)
        expected.setElem(Fmt::Dl16, 10 + r * 2, e,
                         -before.elem(Fmt::Dl16, r * 2, e));
    executeCompute(
        makeInstr(Opcode::Neg,
            {{Field::Dst, 10}, {Field::Src, 0}, {Field::N, 2}, {Field::M, 2}, {Field::Count, count}}),
        lx.data());
    EXPECT_TRUE(sameImage(lx, expected)) << "count=" << count;
  }
}

TEST(SfuUnary, InPlaceAndNegativeStrides) {
  // In place: dst == src.
  {
    Image lx(64);
    lx.fillRandom(Fmt::F32, 0, 9 * 2, 4, -5, 5);
    Image before = lx, expected = lx;
    for (int64_t r = 0; r < 9; ++r)
      for (int64_t e = 0; e < 64; ++e)
        expected.setElem(Fmt::F32, r * 2, e,
                         sfumath::exp(before.elem(Fmt::F32, r * 2, e)));
    executeCompute(
        makeInstr(Opcode::Exp,
                  {{Field::Dst, 0}, {Field::Src, 0}, {Field::N, 2}, {Field::M, 9}, {Field::Fmt, 1}}),
        lx.data());
    EXPECT_TRUE(sameImage(lx, expected)) << "in place";
  }
  // Rows walked backwards on both sides, dst shifted one row into src: the
  // old source values are used throughout.
  {
    Image lx(64);
    lx.fillRandom(Fmt::Dl16, 0, 40, 5, -5, 5);
    Image before = lx, expected = lx;
    RowsAt src{20, -2}, dst{18, -2}; // dst row r is src row r + 1
    for (int64_t r = 0; r < 7; ++r)
      for (int64_t e = 0; e < 128; ++e)
        expected.setElem(Fmt::Dl16, dst.row(r), e,
                         std::fabs(before.elem(Fmt::Dl16, src.row(r), e)));
    executeCompute(makeInstr(Opcode::Abs, {{Field::Dst, dst.base},
                                     {Field::Src, src.base},
                                     {Field::N, 2},
                                     {Field::M, 7},
                                     {Field::Ds, dst.stride},
                                     {Field::Ss, src.stride}}),
                   lx.data());
    EXPECT_TRUE(sameImage(lx, expected)) << "shifted, negative strides";
  }
}

TEST(SfuUnary, OverlappingDestinationRowsKeepTheLastRow) {
  Image lx(64);
  lx.fillRandom(Fmt::Dl16, 0, 5, 6, -5, 5);
  Image before = lx, expected = lx;
  for (int64_t e = 0; e < 64; ++e)
    expected.setElem(Fmt::Dl16, 30, e, -before.elem(Fmt::Dl16, 4, e));
  executeCompute(
      makeInstr(Opcode::Neg, {{Field::Dst, 30}, {Field::Src, 0}, {Field::M, 5}, {Field::Ds, 0}}),
      lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

TEST(SfuUnary, Dl16SpecialCodeAndSignedZero) {
  Image lx(8, 0);
  lx.setCode(0, 0, dlf16::kSpecial);
  lx.setCode(0, 1, 0xFFFF);
  lx.setCode(0, 2, dlf16::kNegZero);
  lx.set(Fmt::Dl16, 0, 3, 30.0f); // e^30 is beyond the DL16 range
  lx.set(Fmt::Dl16, 0, 4, -3.0f);
  executeCompute(makeInstr(Opcode::Relu, {{Field::Dst, 1}, {Field::Src, 0}}), lx.data());
  EXPECT_TRUE(dlf16::isSpecial(lx.code(1, 0)));
  EXPECT_TRUE(dlf16::isSpecial(lx.code(1, 1)));
  EXPECT_EQ(lx.code(1, 2), dlf16::kPosZero);
  EXPECT_EQ(lx.code(1, 4), dlf16::kPosZero);
  executeCompute(makeInstr(Opcode::Copy, {{Field::Dst, 2}, {Field::Src, 0}}), lx.data());
  EXPECT_EQ(lx.code(2, 1), 0xFFFF);
  EXPECT_EQ(lx.code(2, 2), dlf16::kNegZero);
  executeCompute(makeInstr(Opcode::Exp, {{Field::Dst, 3}, {Field::Src, 0}}), lx.data());
  EXPECT_EQ(lx.code(3, 3), dlf16::kSpecial);
  EXPECT_TRUE(dlf16::isSpecial(lx.code(3, 0)));
}

struct BinaryCase {
  Opcode mnemonic;
  std::function<float(float, float)> fp32;
};

std::vector<BinaryCase> binaryCases() {
  return {{Opcode::Add, [](float a, float b) { return a + b; }},
          {Opcode::Sub, [](float a, float b) { return a - b; }},
          {Opcode::Mul, [](float a, float b) { return a * b; }},
          {Opcode::Div, [](float a, float b) { return a / b; }},
          {Opcode::Max, maxNan},
          {Opcode::Min, minNan}};
}

TEST(SfuBinary, EveryOpRowAndStickOperands) {
  for (const BinaryCase &bc : binaryCases())
    for (Fmt fmt : {Fmt::Dl16, Fmt::F32})
      for (bool stick : {false, true})
        for (int64_t s2s : {int64_t(-1), int64_t(0)}) {
          SCOPED_TRACE(testing::Message()
                       << isa::opcodeName(bc.mnemonic) << " " << fmtName(fmt)
                       << (stick ? " s2=stick" : " s2=row")
                       << " s2s=" << (s2s < 0 ? "default" : "0"));
          const int64_t n = 3, m = 9, L = lanes(fmt), count = 2 * L + 17;
          RowsAt a{0, 4}, d{200, 3};
          RowsAt b{100, s2s < 0 ? (stick ? 1 : n) : 0};
          Image lx(512);
          lx.fillRandom(fmt, 0, 40, 12, -10, 10);
          lx.fillRandom(fmt, 100, 30, 13, 0.5f, 10);
          Image before = lx, expected = lx;
          for (int64_t r = 0; r < m; ++r)
            for (int64_t e = 0; e < n * L; ++e) {
              float x = before.elem(fmt, a.row(r), e);
              float y = before.elem(fmt, b.row(r), stick ? e % L : e);
              expected.setElem(fmt, d.row(r), e,
                               e < count ? bc.fp32(x, y) : 0.0f);
            }
          executeCompute(makeInstr(bc.mnemonic, {{Field::Dst, d.base},
                                                 {Field::Src1, a.base},
                                                 {Field::Src2, b.base},
                                                 {Field::N, n},
                                                 {Field::M, m},
                                                 {Field::Ds, d.stride},
                                                 {Field::Ss, a.stride},
                                                 {Field::S2s, b.stride},
                                                 {Field::S2, stick ? 1 : 0},
                                                 {Field::Count, count},
                                                 {Field::Fmt, fmtIndex(fmt)}}),
                         lx.data());
          EXPECT_TRUE(sameImage(lx, expected));
        }
}

TEST(SfuBinary, InPlaceAccumulationAndSelfOperands) {
  Image lx(64);
  lx.fillRandom(Fmt::F32, 0, 24, 14, -10, 10);
  Image before = lx, expected = lx;
  // x = x * x, then dst=src1 with a separate src2.
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t e = 0; e < 64; ++e) {
      float x = before.elem(Fmt::F32, r * 2, e);
      float y = before.elem(Fmt::F32, 10 + r * 2, e);
      expected.setElem(Fmt::F32, r * 2, e, x * x + y);
    }
  executeCompute(makeInstr(Opcode::Mul, {{Field::Dst, 0},
                                   {Field::Src1, 0},
                                   {Field::Src2, 0},
                                   {Field::N, 2},
                                   {Field::M, 4},
                                   {Field::Fmt, 1}}),
                 lx.data());
  executeCompute(makeInstr(Opcode::Add, {{Field::Dst, 0},
                                   {Field::Src1, 0},
                                   {Field::Src2, 10},
                                   {Field::N, 2},
                                   {Field::M, 4},
                                   {Field::Fmt, 1}}),
                 lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

TEST(SfuBinary, MaxAndMinPropagateNaN) {
  Image lx(8, 0);
  lx.setCode(0, 0, dlf16::kSpecial);
  lx.set(Fmt::Dl16, 0, 1, 2.0f);
  lx.set(Fmt::Dl16, 1, 0, 1.0f);
  lx.setCode(1, 1, dlf16::kSpecial);
  for (Opcode op : {Opcode::Max, Opcode::Min}) {
    executeCompute(makeInstr(op, {{Field::Dst, 2}, {Field::Src1, 0}, {Field::Src2, 1}}),
                   lx.data());
    EXPECT_TRUE(dlf16::isSpecial(lx.code(2, 0))) << isa::opcodeName(op);
    EXPECT_TRUE(dlf16::isSpecial(lx.code(2, 1))) << isa::opcodeName(op);
  }
}

struct ScalarCase {
  Opcode mnemonic;
  float imm;
  std::function<float(float, float)> fp32;
  float lo, hi;
};

TEST(SfuScalar, EveryOpWithItsImmediate) {
  std::vector<ScalarCase> cases = {
      {Opcode::Adds, 0.3f, [](float x, float c) { return x + c; }, -10, 10},
      {Opcode::Muls, -1.7f, [](float x, float c) { return x * c; }, -10, 10},
      {Opcode::Maxs, 0.25f, maxNan, -1, 1},
      {Opcode::Pows, 2.0f, [](float x, float c) { return sfumath::pow(x, c); }, -4,
       4},
      {Opcode::Pows, 0.5f, [](float x, float c) { return sfumath::pow(x, c); }, 0, 9},
      {Opcode::Pows, -3.0f, [](float x, float c) { return sfumath::pow(x, c); }, 1,
       4},
  };
  for (const ScalarCase &sc : cases)
    for (Fmt fmt : {Fmt::Dl16, Fmt::F32}) {
      SCOPED_TRACE(testing::Message()
                   << isa::opcodeName(sc.mnemonic) << " " << sc.imm << " " << fmtName(fmt));
      const int64_t n = 2, m = 7, L = lanes(fmt), count = L + 3;
      Image lx(128);
      lx.fillRandom(fmt, 0, 14, 15, sc.lo, sc.hi);
      Image before = lx, expected = lx;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t e = 0; e < n * L; ++e)
          expected.setElem(
              fmt, 50 + r * n, e,
              e < count ? sc.fp32(before.elem(fmt, r * n, e), sc.imm) : 0.0f);
      executeCompute(makeInstr(sc.mnemonic, {{Field::Dst, 50},
                                             {Field::Src, 0},
                                             {Field::Imm, floatField(sc.imm)},
                                             {Field::N, n},
                                             {Field::M, m},
                                             {Field::Count, count},
                                             {Field::Fmt, fmtIndex(fmt)}}),
                     lx.data());
      EXPECT_TRUE(sameImage(lx, expected));
    }
  // Spot values of pows by hand: 3^2 = 9, 9^0.5 = 3, 2^-3 = 0.125.
  Image lx(4, 0);
  lx.set(Fmt::F32, 0, 0, 3.0f);
  executeCompute(
      makeInstr(Opcode::Pows,
                {{Field::Dst, 1}, {Field::Src, 0}, {Field::Imm, floatField(2)}, {Field::Fmt, 1}}),
      lx.data());
  EXPECT_EQ(lx.f32(1, 0), 9.0f);
  executeCompute(
      makeInstr(Opcode::Pows,
          {{Field::Dst, 2}, {Field::Src, 1}, {Field::Imm, floatField(0.5f)}, {Field::Fmt, 1}}),
      lx.data());
  EXPECT_EQ(lx.f32(2, 0), 3.0f);
}

// ---------------------------------------------------------------------------
// bcast, cvt

TEST(SfuBcast, OneLaneFillsTheRow) {
  for (Fmt fmt : {Fmt::Dl16, Fmt::F32}) {
    const int64_t lane = fmt == Fmt::F32 ? 31 : 45, n = 3, m = 7;
    Image lx(128);
    lx.fillRandom(fmt, 0, 14, 16, -10, 10);
    Image before = lx, expected = lx;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t e = 0; e < n * lanes(fmt); ++e)
        expected.setElem(fmt, 60 - r * 4, e, before.get(fmt, 1 + 2 * r, lane));
    executeCompute(makeInstr(Opcode::Bcast, {{Field::Dst, 60},
                                       {Field::Src, 1},
                                       {Field::Lane, lane},
                                       {Field::N, n},
                                       {Field::M, m},
                                       {Field::Ds, -4},
                                       {Field::Ss, 2},
                                       {Field::Fmt, fmtIndex(fmt)}}),
                   lx.data());
    EXPECT_TRUE(sameImage(lx, expected)) << fmtName(fmt);
  }
}

TEST(SfuBcast, LaneBeyondTheFormatIsAnOperandError) {
  auto bad =
      makeInstr(Opcode::Bcast, {{Field::Dst, 0}, {Field::Src, 1}, {Field::Lane, 40}, {Field::Fmt, 1}});
  EXPECT_EQ(operandError(bad),
            "bcast lane 40 is beyond the 32 lanes of a f32 stick");
  EXPECT_EQ(
      operandError(makeInstr(Opcode::Bcast, {{Field::Dst, 0}, {Field::Src, 1}, {Field::Lane, 40}})),
      "");
  EXPECT_EQ(operandError(makeInstr(Opcode::Exp, {{Field::Dst, 0}, {Field::Src, 1}})), "");
}

TEST(SfuCvt, Dl16ToFp32IsExactAndKeepsOrder) {
  const int64_t n = 3, m = 7, count = 150;
  Image lx(256);
  lx.fillRandom(Fmt::Dl16, 0, n * m, 17, -1000, 1000);
  Image before = lx, expected = lx;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t e = 0; e < n * 64; ++e)
      expected.setElem(Fmt::F32, 100 + r * 2 * n, e,
                       e < count ? before.elem(Fmt::Dl16, r * n, e) : 0.0f);
  executeCompute(makeInstr(Opcode::Cvt, {{Field::Dst, 100},
                                   {Field::Src, 0},
                                   {Field::To, 1},
                                   {Field::N, n},
                                   {Field::M, m},
                                   {Field::Count, count}}),
                 lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

TEST(SfuCvt, Fp32ToDl16RoundsAndPadsAnOddRow) {
  // 3 FP32 sticks (96 elements) become 2 DL16 sticks; lanes 96..127 are
  // written as zero.
  const int64_t n = 3, m = 9;
  Image lx(256);
  lx.fillRandom(Fmt::F32, 0, n * m, 18, -1000, 1000);
  lx.setF32(0, 0, 1.0f + 1.0f / 1024); // exact tie: rounds away from zero
  Image before = lx, expected = lx;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t e = 0; e < 128; ++e)
      expected.setElem(Fmt::Dl16, 100 + r * 5, e,
                       e < 96 ? before.elem(Fmt::F32, r * n, e) : 0.0f);
  executeCompute(
      makeInstr(Opcode::Cvt,
          {{Field::Dst, 100}, {Field::Src, 0}, {Field::To, 0}, {Field::N, n}, {Field::M, m}, {Field::Ds, 5}}),
      lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
  EXPECT_EQ(lx.code(100, 0), 0x3E01);
}

TEST(SfuCvt, WideningInPlaceUsesTheOldRows) {
  // dst row r (6 sticks) covers src rows 2r and 2r+1: only a conversion that
  // reads every source row first gets this right.
  const int64_t n = 3, m = 4;
  Image lx(64);
  lx.fillRandom(Fmt::Dl16, 0, n * m, 19, -10, 10);
  Image before = lx, expected = lx;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t e = 0; e < n * 64; ++e)
      expected.setElem(Fmt::F32, r * 2 * n, e,
                       before.elem(Fmt::Dl16, r * n, e));
  executeCompute(
      makeInstr(Opcode::Cvt, {{Field::Dst, 0}, {Field::Src, 0}, {Field::To, 1}, {Field::N, n}, {Field::M, m}}),
      lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

// ---------------------------------------------------------------------------
// Reductions

TEST(SfuReduce, RowSumAndMaxInElementOrder) {
  for (Opcode op : {Opcode::Rsum, Opcode::Rmax})
    for (Fmt fmt : {Fmt::Dl16, Fmt::F32})
      for (int64_t count :
           {int64_t(0), int64_t(45), int64_t(100), int64_t(1000)}) {
        SCOPED_TRACE(testing::Message()
                     << isa::opcodeName(op) << " " << fmtName(fmt) << " count=" << count);
        const int64_t n = 3, m = 7, L = lanes(fmt);
        const int64_t valid = count ? std::min(count, n * L) : n * L;
        Image lx(256);
        // Mixed magnitudes make the FP32 sum depend on its order.
        lx.fillRandom(fmt, 0, n * m, 20, -1000, 1000);
        for (int64_t r = 0; r < m; ++r)
          lx.set(fmt, r * n, 1, 3.0e6f);
        Image before = lx, expected = lx;
        bool sum = op == Opcode::Rsum;
        for (int64_t r = 0; r < m; ++r) {
          float acc = before.elem(fmt, r * n, 0);
          for (int64_t e = 1; e < valid; ++e) {
            float x = before.elem(fmt, r * n, e);
            acc = sum ? acc + x : maxNan(acc, x);
          }
          for (int64_t l = 0; l < L; ++l)
            expected.set(fmt, 100 + r * 2, l, acc);
        }
        executeCompute(makeInstr(op, {{Field::Dst, 100},
                                      {Field::Src, 0},
                                      {Field::N, n},
                                      {Field::M, m},
                                      {Field::Ds, 2},
                                      {Field::Count, count},
                                      {Field::Fmt, fmtIndex(fmt)}}),
                       lx.data());
        EXPECT_TRUE(sameImage(lx, expected));
      }
}

TEST(SfuReduce, RowSumByHandAndInPlace) {
  Image lx(8, 0);
  for (int64_t l = 0; l < 32; ++l)
    lx.setF32(0, l, static_cast<float>(l + 1)); // 1 + 2 + ... + 32 = 528
  executeCompute(makeInstr(Opcode::Rsum, {{Field::Dst, 0}, {Field::Src, 0}, {Field::Fmt, 1}}),
                 lx.data());
  for (int64_t l = 0; l < 32; ++l)
    EXPECT_EQ(lx.f32(0, l), 528.0f);
  executeCompute(
      makeInstr(Opcode::Rsum, {{Field::Dst, 0}, {Field::Src, 0}, {Field::Count, 3}, {Field::Fmt, 1}}),
      lx.data());
  EXPECT_EQ(lx.f32(0, 31), 3 * 528.0f);
}

TEST(SfuReduce, ColumnSumAndMaxOverRows) {
  for (Opcode op : {Opcode::Csum, Opcode::Cmax})
    for (Fmt fmt : {Fmt::Dl16, Fmt::F32}) {
      SCOPED_TRACE(testing::Message() << isa::opcodeName(op) << " " << fmtName(fmt));
      const int64_t n = 3, m = 9, L = lanes(fmt), count = 2 * L + 1;
      Image lx(256);
      lx.fillRandom(fmt, 0, 4 * m, 21, -1000, 1000);
      Image before = lx, expected = lx;
      bool sum = op == Opcode::Csum;
      for (int64_t e = 0; e < n * L; ++e) {
        float acc = before.elem(fmt, 0, e);
        for (int64_t r = 1; r < m; ++r) {
          float x = before.elem(fmt, r * 4, e);
          acc = sum ? acc + x : maxNan(acc, x);
        }
        expected.setElem(fmt, 100, e, e < count ? acc : 0.0f);
      }
      executeCompute(makeInstr(op, {{Field::Dst, 100},
                                    {Field::Src, 0},
                                    {Field::N, n},
                                    {Field::M, m},
                                    {Field::Ss, 4},
                                    {Field::Count, count},
                                    {Field::Fmt, fmtIndex(fmt)}}),
                     lx.data());
      EXPECT_TRUE(sameImage(lx, expected));
    }
}

TEST(SfuReduce, ColumnSumIntoItsFirstRow) {
  Image lx(16);
  lx.fillRandom(Fmt::F32, 0, 5, 22, -10, 10);
  Image before = lx, expected = lx;
  for (int64_t l = 0; l < 32; ++l) {
    float acc = before.f32(0, l);
    for (int64_t r = 1; r < 5; ++r)
      acc = acc + before.f32(r, l);
    expected.setF32(0, l, acc);
  }
  executeCompute(
      makeInstr(Opcode::Csum, {{Field::Dst, 0}, {Field::Src, 0}, {Field::M, 5}, {Field::Fmt, 1}}),
      lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

// ---------------------------------------------------------------------------
// DMA and ring payloads

void fillBytes(uint8_t *p, size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  for (size_t i = 0; i < n; ++i)
    p[i] = static_cast<uint8_t>(gen());
}

TEST(Dma, LoadAndStoreWithTwoStridedDimensions) {
  DeviceMemory mem(uint64_t(1) << 30);
  std::vector<uint8_t> src(4000 * kStickBytes);
  fillBytes(src.data(), src.size(), 23);
  const int64_t memBase = 1000; // in sticks
  mem.write(memBase * kStickBytes, src.data(), src.size());

  const int64_t lxAt = 300, memAt = memBase + 500, run = 3, n1 = 4, n2 = 2;
  const int64_t lxs1 = 5, ms1 = -7, lxs2 = -40, ms2 = 100;
  auto ld = makeInstr(Opcode::Ld, {{Field::Lx, lxAt},
                             {Field::Mem, memAt},
                             {Field::Run, run},
                             {Field::N1, n1},
                             {Field::Lxs1, lxs1},
                             {Field::Ms1, ms1},
                             {Field::N2, n2},
                             {Field::Lxs2, lxs2},
                             {Field::Ms2, ms2}});
  Image lx(512), expected(512);
  for (int64_t i2 = 0; i2 < n2; ++i2)
    for (int64_t i1 = 0; i1 < n1; ++i1)
      for (int64_t t = 0; t < run; ++t) {
        int64_t from = memAt - memBase + i2 * ms2 + i1 * ms1 + t;
        int64_t to = lxAt + i2 * lxs2 + i1 * lxs1 + t;
        std::memcpy(expected.data() + to * kStickBytes, src.data() + from * kStickBytes,
                    kStickBytes);
      }
  executeLoad(ld, mem, lx.data());
  EXPECT_TRUE(sameImage(lx, expected));

  // Store the same pattern back elsewhere; untouched memory stays zero.
  const int64_t outAt = 100000;
  auto st = makeInstr(Opcode::St, {{Field::Mem, outAt},
                             {Field::Lx, lxAt},
                             {Field::Run, run},
                             {Field::N1, n1},
                             {Field::Lxs1, lxs1},
                             {Field::Ms1, ms1},
                             {Field::N2, n2},
                             {Field::Lxs2, lxs2},
                             {Field::Ms2, ms2}});
  executeStore(st, lx.data(), mem);
  std::vector<uint8_t> got(300 * kStickBytes), want(300 * kStickBytes, 0);
  const int64_t window = outAt - 100;
  mem.read(window * kStickBytes, got.data(), got.size());
  for (int64_t i2 = 0; i2 < n2; ++i2)
    for (int64_t i1 = 0; i1 < n1; ++i1)
      for (int64_t t = 0; t < run; ++t) {
        int64_t from = lxAt + i2 * lxs2 + i1 * lxs1 + t;
        int64_t to = outAt + i2 * ms2 + i1 * ms1 + t - window;
        std::memcpy(want.data() + to * kStickBytes, lx.data() + from * kStickBytes,
                    kStickBytes);
      }
  EXPECT_EQ(got, want);
}

TEST(Dma, OverlappingLoadRunsKeepTheLastRun) {
  DeviceMemory mem(uint64_t(1) << 24);
  std::vector<uint8_t> src(64 * kStickBytes);
  fillBytes(src.data(), src.size(), 24);
  mem.write(0, src.data(), src.size());
  // Runs of 4 at LX stride 1: each run overwrites three sticks of the last.
  Image lx(16), expected(16);
  for (int64_t i1 = 0; i1 < 3; ++i1)
    std::memcpy(expected.data() + i1 * kStickBytes, src.data() + i1 * 10 * kStickBytes,
                4 * kStickBytes);
  executeLoad(makeInstr(Opcode::Ld, {{Field::Lx, 0},
                               {Field::Mem, 0},
                               {Field::Run, 4},
                               {Field::N1, 3},
                               {Field::Lxs1, 1},
                               {Field::Ms1, 10}}),
              mem, lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
  // Sticks 0..2 come from the first sticks of runs 0..2, 3..5 from run 2.
  EXPECT_EQ(
      std::memcmp(lx.data() + 3 * kStickBytes, src.data() + 21 * kStickBytes, 3 * kStickBytes),
      0);
}

TEST(RingPayload, GatherScatterRoundTrip) {
  Image lx(256);
  fillBytes(lx.data(), 256 * kStickBytes, 25);
  Region r{100, 2, 3, -10, 2, 50}; // negative inner stride
  std::string payload = gather(r, lx.data());
  ASSERT_EQ(payload.size(), static_cast<size_t>(12 * kStickBytes));
  // Naive concatenation in (i2, i1) order.
  std::string want;
  for (int64_t i2 = 0; i2 < 2; ++i2)
    for (int64_t i1 = 0; i1 < 3; ++i1)
      want.append(reinterpret_cast<const char *>(lx.data()) +
                      (100 + i2 * 50 + i1 * -10) * kStickBytes,
                  2 * kStickBytes);
  EXPECT_EQ(payload, want);

  Image other(256, 0);
  scatter(r, payload, other.data());
  EXPECT_EQ(gather(r, other.data()), payload);
  Image expected(256, 0);
  r.forEachRun([&](int64_t s, int64_t n) {
    std::memcpy(expected.data() + s * kStickBytes, lx.data() + s * kStickBytes,
                static_cast<size_t>(n * kStickBytes));
  });
  EXPECT_TRUE(sameImage(other, expected));
}

TEST(RingPayload, AccumulateAddsFp32Lanes) {
  Image lx(64);
  lx.fillRandom(Fmt::F32, 0, 64, 26, -100, 100);
  Image incoming(64);
  incoming.fillRandom(Fmt::F32, 0, 64, 27, -100, 100);
  Region r{10, 3, 4, 5}; // 4 rows of 3 sticks, row stride 5
  std::string payload = gather(Region{0, 12}, incoming.data());
  Image before = lx, expected = lx;
  int64_t p = 0;
  for (int64_t row = 0; row < 4; ++row)
    for (int64_t t = 0; t < 3; ++t, ++p)
      for (int64_t l = 0; l < 32; ++l) {
        int64_t s = 10 + row * 5 + t;
        expected.setF32(s, l, before.f32(s, l) + incoming.f32(p, l));
      }
  accumulateF32(r, payload, lx.data());
  EXPECT_TRUE(sameImage(lx, expected));
}

} // namespace
