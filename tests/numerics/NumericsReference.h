// Reference models for the numerics tests, written from the format
// definitions in exact double arithmetic (frexp, ldexp, std::round,
// std::nearbyint) rather than the bit manipulation the library uses, so the
// two can only agree by both being right.
#pragma once

#include "numerics/Dlf16.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace spyre::test {

inline std::string flagNames(const dlf16::Flags &flags) {
  std::string out;
  if (flags.invalid)
    out += "invalid ";
  if (flags.overflow)
    out += "overflow ";
  if (flags.underflow)
    out += "underflow ";
  return out;
}

/// What a DL16 code stands for, from the format definition alone:
/// (-1)^s * 2^(e-31) * (1 + f/512) = (-1)^s * (512 + f) * 2^(e-40).
inline double refDl16Value(uint16_t code) {
  double sign = (code & 0x8000) ? -1.0 : 1.0;
  int e = (code >> 9) & 0x3F;
  int f = code & 0x1FF;
  if (e == 0 && f == 0)
    return sign * 0.0;
  if (e == 63 && f == 511)
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  return sign * std::ldexp(512.0 + f, e - 40);
}

/// What an IEEE binary16 pattern stands for: (-1)^s * 2^(e-15) * (1 + f/1024)
/// for normals, (-1)^s * f * 2^-24 for subnormals.
inline double refHalfValue(uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int e = (bits >> 10) & 0x1F;
  int f = bits & 0x3FF;
  if (e == 0x1F)
    return f == 0
               ? sign * std::numeric_limits<double>::infinity()
               : std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  if (e == 0)
    return sign * std::ldexp(f, -24);
  return sign * std::ldexp(1024.0 + f, e - 25);
}

struct Encoded {
  uint16_t code = 0;
  dlf16::Flags flags;
};

/// The DL16 rounding rule: scale |x| so it has 10 significant bits before the
/// point, round half away from zero with std::round (or to even with
/// std::nearbyint, for contrast), then place the result in the format. The
/// exponent-0, fraction-0 slot is the zero code, so anything rounding to it
/// is zero (the onnx-mlir and Hercules models agree).
inline Encoded refDl16Encode(double x, dlf16::Overflow mode,
                             bool tiesToEven = false) {
  Encoded r;
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) {
    r.flags.invalid = true;
    r.code = sign | 0x7FFF;
    return r;
  }
  if (std::isinf(x)) {
    r.flags.overflow = true;
    r.code = sign | 0x7FFF;
    return r;
  }
  double ax = std::fabs(x);
  r.code = sign;
  if (ax == 0)
    return r;
  int exp2 = 0;
  std::frexp(ax, &exp2);
  int e = exp2 - 1;                            // ax in [2^e, 2^(e+1))
  double scaled = ax / std::ldexp(1.0, e - 9); // in [512, 1024)
  double q = tiesToEven ? std::nearbyint(scaled) : std::round(scaled);
  if (q == 1024) {
    q = 512;
    ++e;
  }
  int biased = e + 31;
  int frac = static_cast<int>(q) - 512;
  if (biased < 0 || (biased == 0 && frac == 0)) {
    r.flags.underflow = true;
    return r;
  }
  if (biased > 63 || (biased == 63 && frac == 511)) {
    r.flags.overflow = true;
    r.code = sign | (mode == dlf16::Overflow::Saturate ? 0x7FFE : 0x7FFF);
    return r;
  }
  r.code = static_cast<uint16_t>(sign | (biased << 9) | frac);
  return r;
}

/// x rounded to the nearest binary16 value, ties to even, as a double
/// (+-Inf beyond the range). x must not be NaN.
inline double refHalfNearestEven(double x) {
  double ax = std::fabs(x);
  if (ax >= 65520.0)
    return std::copysign(std::numeric_limits<double>::infinity(), x);
  int exp2 = 0;
  std::frexp(ax, &exp2);
  // Subnormals share the fixed unit 2^-24; normals keep 11 significant bits.
  double unit = ax < std::ldexp(1.0, -14) ? std::ldexp(1.0, -24)
                                          : std::ldexp(1.0, exp2 - 11);
  return std::copysign(std::nearbyint(ax / unit) * unit, x);
}

} // namespace spyre::test
