// DL16 conversions. All arithmetic is on integer bit patterns: no FPU rounding
// mode, no fast-math and no host fp16 support is involved, so every machine
// gives the same bits.
//
// The key identity: a DL16 code without its sign is (e << 9) | f, and the
// fp32 bits of the same number are ((e + 96) << 23) | (f << 14), since the
// biases differ by 127 - 31 = 96 and the fractions by 23 - 9 = 14 bits. So
// decoding is a shift and an add, and encoding is the reverse after adding
// half a DL16 ulp (1 << 13) to the fp32 magnitude, which rounds ties away
// from zero as the onnx-mlir model does (DLF16Conversion.hpp).
#include "numerics/Dlf16.h"

#include "numerics/Half.h"

#include <bit>
#include <cstring>

namespace spyre::dlf16 {

namespace {

constexpr uint32_t kF32AbsMask = 0x7FFFFFFF;
constexpr uint32_t kF32Inf = 0x7F800000;
constexpr uint32_t kF32QuietNaN = 0x7FC00000;
constexpr uint32_t kFracShift = 23 - 9;
constexpr uint32_t kHalfUlp = 1u << (kFracShift - 1);
/// (127 - 31) in the exponent position of a DL16 code, and of an fp32.
constexpr uint32_t kRebiasCode = 96u << 9;
constexpr uint32_t kRebiasF32 = 96u << 23;

inline void raise(bool Flags::*flag, Flags *flags) {
  if (flags)
    flags->*flag = true;
}

/// fp32 magnitude bits -> rounded DL16 magnitude, or 0 if below the range.
/// Only valid below kOverflowThresholdF32.
constexpr uint32_t roundMagnitude(uint32_t mag) {
  // (mag + half ulp) >> 14 is (fp32 biased exponent << 9) | 9 fraction bits,
  // rounded; a carry out of the fraction bumps the exponent as it should.
  auto code = static_cast<int32_t>((mag + kHalfUlp) >> kFracShift) -
              static_cast<int32_t>(kRebiasCode);
  // Exponent 0 with fraction 0 would be 2^-31 but is the zero code, so a
  // value rounding to it is zero too: the onnx-mlir and Hercules models agree.
  return code > 0 ? static_cast<uint32_t>(code) : 0;
}

constexpr uint32_t decodeBits(uint16_t code) {
  uint32_t sign = static_cast<uint32_t>(code & kSignBit) << 16;
  uint32_t mag = code & 0x7FFFu;
  uint32_t bits = (mag << kFracShift) + kRebiasF32;
  bits = mag == 0 ? 0 : bits;
  bits = mag == kSpecial ? kF32QuietNaN : bits;
  return sign | bits;
}

static_assert(decodeBits(kOne) == 0x3F800000);
static_assert(decodeBits(kMaxFinite) == 0x4FFF8000);
static_assert(decodeBits(kMinPositive) == 0x30004000);
static_assert(roundMagnitude(kOverflowThresholdF32 - 1) == kMaxFinite);
static_assert(roundMagnitude(kOverflowThresholdF32) == kSpecial);

} // namespace

uint16_t fromFloat(float value, Overflow mode, Flags *flags) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  auto sign = static_cast<uint16_t>((bits >> 16) & kSignBit);
  uint32_t mag = bits & kF32AbsMask;
  if (mag > kF32Inf) {
    raise(&Flags::invalid, flags);
    return sign | kSpecial;
  }
  if (mag == kF32Inf) {
    raise(&Flags::overflow, flags);
    return sign | kSpecial;
  }
  if (mag >= kOverflowThresholdF32) {
    raise(&Flags::overflow, flags);
    return sign | (mode == Overflow::Saturate ? kMaxFinite : kSpecial);
  }
  uint32_t code = roundMagnitude(mag);
  if (code == 0 && mag != 0)
    raise(&Flags::underflow, flags);
  return static_cast<uint16_t>(sign | code);
}

float toFloat(uint16_t code, Flags *flags) {
  if (isSpecial(code))
    raise(&Flags::invalid, flags);
  return std::bit_cast<float>(decodeBits(code));
}

uint16_t fromHalf(uint16_t fp16Bits, Flags *flags) {
  // Widening to fp32 is exact and every finite fp16 is inside the DL16 range,
  // so this is VCNF: one rounding, ties away (the tenth fraction bit, or
  // nothing for subnormals, which have at most 10 significant bits).
  return fromFloat(half::halfToFloat(fp16Bits), Overflow::ToSpecial, flags);
}

uint16_t toHalf(uint16_t code, Flags *flags) {
  auto sign = static_cast<uint16_t>(code & kSignBit);
  uint32_t mag = code & 0x7FFFu;
  if (mag == 0)
    return sign;
  if (mag == kSpecial) {
    raise(&Flags::invalid, flags);
    return sign | half::kQuietNaN;
  }
  int exp = static_cast<int>(mag >> 9) - 31;
  uint32_t significand = (mag & 0x1FFu) | 0x200u; // 10 bits, 1.f * 2^9
  if (exp > 15) {
    raise(&Flags::overflow, flags);
    return sign | half::kPosInf;
  }
  if (exp >= -14) // fp16 normal: 10 fraction bits hold all 9, exactly.
    return static_cast<uint16_t>(sign | ((exp + 15) << 10) |
                                 ((significand & 0x1FFu) << 1));
  // Below 2^-14: an fp16 subnormal counts units of 2^-24, and the value is
  // significand * 2^(exp - 9), so drop (-15 - exp) bits (1..16), ties to even.
  // The largest such DL16 (2^-15 * (2 - 2^-9)) is exactly 1023 units, so no
  // value rounds up to 2^-14 and tininess before or after rounding agree.
  auto shift = static_cast<unsigned>(-15 - exp);
  uint32_t kept = significand;
  if (shift > 0) {
    uint32_t rest = significand & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    kept = significand >> shift;
    if (rest > halfway || (rest == halfway && (kept & 1u)))
      ++kept;
    if (rest != 0)
      raise(&Flags::underflow, flags);
  }
  return static_cast<uint16_t>(sign | kept);
}

namespace {

// The array loops work on fixed blocks of 32-bit lanes so that GCC and Clang
// vectorise them even at -O2, where only loops with a known trip count are
// worth it to their cost model; memcpy moves the bits between float and
// integer lanes without aliasing games.
constexpr size_t kBlock = 16;

/// fromFloat without flags, in signed 32-bit lanes with no min/max and no
/// branches, because baseline x86-64 (SSE2) only has signed lane compares.
/// Every input magnitude fits in 31 bits, so the signed compares are exact.
inline uint16_t encodeLane(uint32_t bits, int32_t finiteOverflow) {
  auto mag = static_cast<int32_t>(bits & kF32AbsMask);
  auto code = static_cast<int32_t>((static_cast<uint32_t>(mag) + kHalfUlp) >>
                                   kFracShift) -
              static_cast<int32_t>(kRebiasCode);
  code &= ~(code >> 31); // below the range: zero
  code = mag >= static_cast<int32_t>(kOverflowThresholdF32) ? finiteOverflow
                                                            : code;
  code = mag >= static_cast<int32_t>(kF32Inf) ? int32_t{kSpecial} : code;
  return static_cast<uint16_t>(((bits >> 16) & kSignBit) |
                               static_cast<uint32_t>(code));
}

/// decodeBits in signed 32-bit lanes (SSE2 widens and compares those best).
/// Arithmetic rather than a 65,536-entry table: it is input-independent and
/// keeps 256 KB out of the cache, and measured faster than the table on
/// uniformly spread codes (bench/Dlf16Bench.cpp).
inline int32_t decodeLane(uint16_t code) {
  int32_t wide = code;
  int32_t mag = wide & 0x7FFF;
  int32_t bits = (mag << kFracShift) + static_cast<int32_t>(kRebiasF32);
  bits = mag == 0 ? 0 : bits;
  bits = mag == kSpecial ? static_cast<int32_t>(kF32QuietNaN) : bits;
  return bits |
         static_cast<int32_t>(static_cast<uint32_t>(wide & 0x8000) << 16);
}

} // namespace

void fromFloatArray(const float *in, uint16_t *out, size_t n, Overflow mode) {
  const int32_t finiteOverflow =
      mode == Overflow::Saturate ? kMaxFinite : kSpecial;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t bits[kBlock];
    std::memcpy(bits, in + i, sizeof bits);
    for (size_t j = 0; j < kBlock; ++j)
      out[i + j] = encodeLane(bits[j], finiteOverflow);
  }
  for (; i < n; ++i)
    out[i] = encodeLane(std::bit_cast<uint32_t>(in[i]), finiteOverflow);
}

void toFloatArray(const uint16_t *in, float *out, size_t n) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    int32_t bits[kBlock];
    for (size_t j = 0; j < kBlock; ++j)
      bits[j] = decodeLane(in[i + j]);
    std::memcpy(out + i, bits, sizeof bits);
  }
  for (; i < n; ++i)
    out[i] = std::bit_cast<float>(decodeBits(in[i]));
}

} // namespace spyre::dlf16
