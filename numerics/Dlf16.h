// IBM DLFloat16 ("DL16", NNP-data-type-1): the 16-bit number format of the
// Spyre and Telum AI units, and bit-exact conversions to and from IEEE fp32
// and fp16. The rules and their sources are in docs/dlf16.md.
//
// Format: 1 sign, 6 exponent (bias 31), 9 fraction bits, implicit leading 1,
// no subnormals. value = (-1)^s * 2^(e-31) * (1 + f/512), except:
//   0x0000 / 0x8000  +0 / -0
//   0x7FFF / 0xFFFF  the single special code ("NINF"): NaN and +-Inf alike.
// Sources: DLFloat (Agrawal et al., ARITH 2019); onnx-mlir
// `DLF16Conversion.hpp`; IBM zDNN; the Hercules emulator's `nnpa.c`.
//
// fp32 -> DL16 follows the onnx-mlir model: round the magnitude to nearest,
// ties away from zero; a result below 2^-31 (the exponent-0, fraction-0 slot
// included) becomes signed zero. Decoding is exact.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spyre::dlf16 {

/// What a finite fp32 beyond the DL16 range (magnitude >= 0x4FFFA000 as bits,
/// 8,577,351,680) becomes. Sources disagree (docs/dlf16.md): the onnx-mlir
/// model gives the special code; zDNN's saturating transform and one Hercules
/// revision give +-kMaxFinite. NaN and +-Inf give the special code either way.
enum class Overflow { ToSpecial, Saturate };

/// Sticky IEEE-style exception flags: a conversion only ever sets them, so
/// one Flags can collect a whole tensor's worth. Inexact is never reported;
/// ordinary rounding raises nothing on the hardware (zDNN `handle_fp_errors`).
struct Flags {
  bool invalid = false;   ///< NaN input, or the special code decoded
  bool overflow = false;  ///< +-Inf input, or a finite value out of range
  bool underflow = false; ///< a non-zero value became zero (or, for fp16
                          ///< output, a tiny value was rounded)
};

inline constexpr uint16_t kPosZero = 0x0000;
inline constexpr uint16_t kNegZero = 0x8000;
inline constexpr uint16_t kSignBit = 0x8000;
inline constexpr uint16_t kMaxFinite = 0x7FFE;   ///< 2^32 * (1 + 510/512)
inline constexpr uint16_t kMinPositive = 0x0001; ///< 2^-31 * (1 + 1/512)
inline constexpr uint16_t kSpecial = 0x7FFF;     ///< NaN / +-Inf
inline constexpr uint16_t kOne = 0x3E00;
/// Smallest fp32 magnitude (as bits) that rounds beyond kMaxFinite: the
/// midpoint between 0x7FFE and the value the special code would have.
inline constexpr uint32_t kOverflowThresholdF32 = 0x4FFFA000;

/// True for 0x7FFF and 0xFFFF.
constexpr bool isSpecial(uint16_t code) { return (code & 0x7FFF) == kSpecial; }
constexpr bool isZero(uint16_t code) { return (code & 0x7FFF) == 0; }

/// fp32 -> DL16: round to nearest, ties away from zero. NaN -> special code
/// with the NaN's sign (invalid); +-Inf -> +-special (overflow); finite
/// overflow -> per `mode` (overflow); non-zero results below the smallest
/// DL16 -> signed zero (underflow).
uint16_t fromFloat(float value, Overflow mode = Overflow::ToSpecial,
                   Flags *flags = nullptr);

/// DL16 -> fp32, exact. The special code becomes a quiet NaN with its sign
/// (0x7FFF -> 0x7FC00000, 0xFFFF -> 0xFFC00000) and sets invalid.
float toFloat(uint16_t code, Flags *flags = nullptr);

/// IEEE fp16 -> DL16. Every finite fp16, subnormals included, is in range;
/// a tenth fraction bit is an exact tie and rounds away from zero
/// (65504 -> 0x5E00). Inf -> special (overflow), NaN -> special (invalid).
uint16_t fromHalf(uint16_t fp16Bits, Flags *flags = nullptr);

/// DL16 -> IEEE fp16, round to nearest, ties to even. |value| >= 65536 ->
/// +-Inf (overflow); values below 2^-14 become subnormals or signed zero, with
/// underflow when that loses bits; special -> 0x7E00 / 0xFE00 (invalid).
uint16_t toHalf(uint16_t code, Flags *flags = nullptr);

/// Bulk fp32 -> DL16 for the simulator: the same codes as fromFloat, written
/// branch-free so the compiler can vectorise it. No flags.
void fromFloatArray(const float *in, uint16_t *out, size_t n,
                    Overflow mode = Overflow::ToSpecial);

/// Bulk DL16 -> fp32: the same values as toFloat, bit for bit. No flags.
void toFloatArray(const uint16_t *in, float *out, size_t n);

} // namespace spyre::dlf16
