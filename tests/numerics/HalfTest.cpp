// IEEE binary16 <-> binary32 against values computed from the format
// definition in double arithmetic, exhaustively where the domain allows.
#include "numerics/Half.h"

#include "NumericsReference.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

using namespace spyre;

namespace {
float f32(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t bitsOf(float value) { return std::bit_cast<uint32_t>(value); }
} // namespace

TEST(Half, EveryHalfWidensExactly) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    auto bits = static_cast<uint16_t>(h);
    float v = half::halfToFloat(bits);
    double want = test::refHalfValue(bits);
    ASSERT_EQ(std::signbit(v), std::signbit(want)) << std::hex << h;
    if (std::isnan(want)) {
      // Payload moved to the top of the fp32 fraction, as NumPy does.
      uint32_t sign = (h & 0x8000u) << 16;
      ASSERT_EQ(bitsOf(v), sign | 0x7F800000u | ((h & 0x3FFu) << 13));
      continue;
    }
    ASSERT_EQ(static_cast<double>(v), want) << std::hex << h;
  }
}

TEST(Half, EveryHalfSurvivesARoundTripThroughFloat) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    auto bits = static_cast<uint16_t>(h);
    ASSERT_EQ(half::floatToHalf(half::halfToFloat(bits)), bits)
        << std::hex << h;
  }
}

TEST(Half, NarrowingKnownValues) {
  EXPECT_EQ(half::floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(half::floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(half::floatToHalf(65504.0f), half::kMaxFinite);
  EXPECT_EQ(half::floatToHalf(65519.99f), half::kMaxFinite);
  EXPECT_EQ(half::floatToHalf(65520.0f), half::kPosInf); // tie to even 2^16
  EXPECT_EQ(half::floatToHalf(-1e9f), half::kNegInf);
  EXPECT_EQ(half::floatToHalf(0x1p-24f), 0x0001);
  EXPECT_EQ(half::floatToHalf(0x1p-25f), 0x0000);     // tie to even 0
  EXPECT_EQ(half::floatToHalf(0x1.8p-24f), 0x0002);   // tie: 1.5 -> 2
  EXPECT_EQ(half::floatToHalf(0x1.002p0f), 0x3C00);   // 1 + 2^-11: tie
  EXPECT_EQ(half::floatToHalf(0x1.006p0f), 0x3C02);   // 1 + 3*2^-11: tie
  EXPECT_EQ(half::floatToHalf(0x1.ff8p-15f), 0x03FF); // largest subnormal
  EXPECT_EQ(half::floatToHalf(0x1.ffcp-15f), 0x0400); // tie: up to 2^-14
  EXPECT_EQ(half::floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(half::floatToHalf(std::numeric_limits<float>::infinity()),
            half::kPosInf);
  EXPECT_EQ(half::floatToHalf(f32(0x7FC00000)), half::kQuietNaN);
  EXPECT_EQ(half::floatToHalf(f32(0xFFC00000)), 0xFE00);
  // A NaN whose payload lies below the kept bits stays a NaN.
  EXPECT_EQ(half::floatToHalf(f32(0x7F800001)), 0x7E00);
  EXPECT_TRUE(half::isNaN(half::floatToHalf(f32(0x7F800001))));
}

TEST(Half, NarrowingMatchesTheReferenceAroundEveryMidpoint) {
  for (uint16_t sign : {0x0000, 0x8000}) {
    for (uint32_t h = 0; h < half::kMaxFinite; ++h) {
      auto lo = static_cast<uint16_t>(sign | h);
      auto hi = static_cast<uint16_t>(sign | (h + 1));
      double mid = (test::refHalfValue(lo) + test::refHalfValue(hi)) / 2;
      auto m = static_cast<float>(mid);
      ASSERT_EQ(static_cast<double>(m), mid);
      ASSERT_EQ(half::floatToHalf(m), (h & 1) ? hi : lo) << std::hex << h;
      ASSERT_EQ(half::floatToHalf(std::nextafter(m, 0.0f)), lo);
      ASSERT_EQ(half::floatToHalf(std::nextafter(m, 2 * m)), hi);
    }
  }
}

TEST(Half, NarrowingMatchesTheReferenceOnRandomFloats) {
  std::mt19937 gen(12345);
  std::uniform_int_distribution<uint32_t> nearExp(127 - 30, 127 + 17);
  for (int i = 0; i < 2'000'000; ++i) {
    uint32_t bits = gen();
    if (i % 2 == 1)
      bits = (bits & 0x807FFFFFu) | (nearExp(gen) << 23);
    float x = f32(bits);
    if (std::isnan(x))
      continue;
    uint16_t h = half::floatToHalf(x);
    double got = test::refHalfValue(h);
    double want = test::refHalfNearestEven(x);
    ASSERT_EQ(got, want) << std::hex << bits;
    ASSERT_EQ(std::signbit(got), std::signbit(x)) << std::hex << bits;
  }
}
