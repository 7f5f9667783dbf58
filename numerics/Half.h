// IEEE 754 binary16 ("half", NumPy float16) <-> binary32 conversion in plain
// integer code, so results are the same on every machine and compiler.
//
// binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits, with subnormals,
// Inf and NaN. Widening is always exact. Narrowing rounds to nearest, ties to
// even (IEEE 754-2019 section 4.3.1, the default for conversions); values of
// magnitude >= 65520 become +-Inf.
#pragma once

#include <cstdint>

namespace spyre::half {

inline constexpr uint16_t kPosInf = 0x7C00;
inline constexpr uint16_t kNegInf = 0xFC00;
inline constexpr uint16_t kQuietNaN = 0x7E00;
inline constexpr uint16_t kMaxFinite = 0x7BFF; ///< 65504

/// Exact widening. A NaN keeps its sign and payload bits (shifted into the
/// top of the fp32 fraction), as NumPy does, so a float16 array survives a
/// round trip through float32 bit for bit.
float halfToFloat(uint16_t bits);

/// Round to nearest, ties to even. Overflow gives +-Inf, tiny values round to
/// subnormals or signed zero. A NaN keeps its sign and the top 10 fraction
/// bits (when those are all zero the quiet bit is set instead, so it stays a
/// NaN); hence floatToHalf(halfToFloat(h)) == h for all 65,536 codes.
uint16_t floatToHalf(float value);

constexpr bool isNaN(uint16_t bits) {
  return (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0;
}

} // namespace spyre::half
