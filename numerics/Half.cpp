// IEEE binary16 <-> binary32 by integer manipulation of the bit patterns.
#include "numerics/Half.h"

#include <bit>

namespace spyre::half {

namespace {

constexpr uint32_t kF32ExpMask = 0x7F800000;
constexpr uint32_t kF32AbsMask = 0x7FFFFFFF;
// 65520 = 65504 + half an ulp: the midpoint to the next power of two, which
// ties to the even neighbour 65536 and so overflows.
constexpr uint32_t kF32HalfOverflow = 0x477FF000;
// 2^-14, the smallest normal binary16.
constexpr uint32_t kF32HalfMinNormal = 0x38800000;
// Half the smallest subnormal, 2^-25: this and anything smaller rounds to 0.
constexpr uint32_t kF32HalfTinyTie = 0x33000000;

/// Shifts `value` right by `shift` (1..31) rounding to nearest, ties to even.
uint32_t shiftRightNearestEven(uint32_t value, unsigned shift) {
  uint32_t kept = value >> shift;
  uint32_t rest = value & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1u)))
    ++kept;
  return kept;
}

} // namespace

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1F;
  uint32_t frac = bits & 0x03FF;
  if (exp == 0x1F)
    return std::bit_cast<float>(sign | kF32ExpMask | (frac << 13));
  if (exp != 0)
    return std::bit_cast<float>(sign | ((exp + 112) << 23) | (frac << 13));
  if (frac == 0)
    return std::bit_cast<float>(sign);
  // Subnormal: value = frac * 2^-24. Normalise so the leading 1 lands on bit
  // 10, lowering the exponent by one per shift.
  int shifts = std::countl_zero(frac) - 21;
  frac = (frac << shifts) & 0x03FF;
  uint32_t f32Exp = static_cast<uint32_t>(113 - shifts);
  return std::bit_cast<float>(sign | (f32Exp << 23) | (frac << 13));
}

uint16_t floatToHalf(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t mag = bits & kF32AbsMask;
  if (mag > kF32ExpMask) {
    auto payload = static_cast<uint16_t>((mag >> 13) & 0x03FF);
    return static_cast<uint16_t>(sign | kPosInf |
                                 (payload != 0 ? payload : 0x0200));
  }
  if (mag >= kF32HalfOverflow)
    return static_cast<uint16_t>(sign | kPosInf);
  if (mag <= kF32HalfTinyTie)
    return sign;
  if (mag < kF32HalfMinNormal) {
    // value = significand * 2^(exp - 150); in units of 2^-24 that is
    // significand >> (126 - exp), with exp in [102, 112] here.
    uint32_t exp = mag >> 23;
    uint32_t significand = (mag & 0x007FFFFF) | 0x00800000;
    return static_cast<uint16_t>(sign |
                                 shiftRightNearestEven(significand, 126 - exp));
  }
  // Normal: rebias the exponent (127 -> 15) and drop 13 fraction bits; a
  // carry out of the fraction correctly bumps the exponent.
  return static_cast<uint16_t>(sign |
                               shiftRightNearestEven(mag - (112u << 23), 13));
}

} // namespace spyre::half
