// Encoding, decoding and printing of single instructions, all walking the
// instruction table's fields.
#include "isa/Instr.h"

#include "support/Diagnostic.h"
#include "support/Hash.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>

namespace spyre::isa {

namespace {

/// The 256-bit word as four little-endian 64-bit limbs.
using Bits = std::array<uint64_t, 4>;

void putBits(Bits &bits, int pos, int width, uint64_t value) {
  for (int i = 0; i < width; ++i, ++pos)
    if ((value >> i) & 1u)
      bits[pos / 64] |= uint64_t(1) << (pos % 64);
}

uint64_t getBits(const Bits &bits, int pos, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i, ++pos)
    if ((bits[pos / 64] >> (pos % 64)) & 1u)
      v |= uint64_t(1) << i;
  return v;
}

uint64_t mask(int width) {
  return width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
}

int64_t signExtend(uint64_t raw, int width) {
  uint64_t sign = uint64_t(1) << (width - 1);
  return static_cast<int64_t>((raw ^ sign) - sign);
}

std::string toHexMinimal(uint64_t v) {
  char buf[17];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, 16);
  SPYRE_ASSERT(ec == std::errc(), "hex formatting failed");
  return std::string(buf, end);
}

} // namespace

void Instr::missingField(Field field) const {
  SPYRE_UNREACHABLE("instruction " + std::string(opcodeName(opcode)) +
                    " has no field " + std::string(fieldName(field)));
}

Instr makeInstr(Opcode op,
                std::initializer_list<std::pair<Field, int64_t>> fields) {
  const InstrDesc &d = instrDesc(op);
  Instr in;
  in.opcode = op;
  std::array<bool, kMaxFields> given{};
  for (const auto &[field, value] : fields) {
    const size_t i = in.position(field);
    in.value[i] = value;
    given[i] = true;
  }
  for (size_t i = 0; i < d.fields.size(); ++i) {
    if (given[i])
      continue;
    SPYRE_ASSERT(d.fields[i].defaultRule != DefaultRule::None,
                 std::string(d.mnemonic) + " needs field " +
                     std::string(d.fields[i].name));
    in.value[i] = defaultValueOf(d, i, in.value.data());
  }
  return in;
}

std::string hexText(int64_t value) {
  if (value < 0)
    return "-0x" + toHexMinimal(0 - static_cast<uint64_t>(value));
  return "0x" + toHexMinimal(static_cast<uint64_t>(value));
}

std::string hexTextUnsigned(uint64_t value) {
  return "0x" + toHexMinimal(value);
}

float Instr::floatValue(size_t field) const {
  return std::bit_cast<float>(static_cast<uint32_t>(value[field]));
}

Word encode(const Instr &instr) {
  const InstrDesc &d = instr.desc();
  Bits bits{};
  putBits(bits, 0, kOpcodeBits, static_cast<uint8_t>(instr.opcode));
  int pos = kOpcodeBits;
  for (size_t i = 0; i < d.fields.size(); ++i) {
    const FieldDesc &f = d.fields[i];
    int64_t v = instr.value[i];
    SPYRE_ASSERT(checkFieldValue(f, v).empty(),
                 std::string(d.mnemonic) + " field " + std::string(f.name) +
                     ": " + checkFieldValue(f, v));
    if (f.isAddress()) {
      SPYRE_ASSERT(instr.base[i] < kNumRegs, "base register out of range");
      putBits(bits, pos, kRegBits, instr.base[i]);
      pos += kRegBits;
    }
    putBits(bits, pos, f.width, static_cast<uint64_t>(v) & mask(f.width));
    pos += f.width;
  }
  Word w{};
  for (int i = 0; i < kWordBytes; ++i)
    w[static_cast<size_t>(i)] =
        static_cast<uint8_t>(bits[i / 8] >> ((i % 8) * 8));
  return w;
}

std::optional<Instr> decode(const uint8_t *word, std::string *error) {
  auto fail = [&](std::string msg) -> std::optional<Instr> {
    if (error)
      *error = std::move(msg);
    return std::nullopt;
  };
  Bits bits{};
  for (int i = 0; i < kWordBytes; ++i)
    bits[i / 8] |= uint64_t(word[i]) << ((i % 8) * 8);
  unsigned number = static_cast<unsigned>(getBits(bits, 0, kOpcodeBits));
  const InstrDesc *d = findInstrByNumber(number);
  if (!d)
    return fail("unknown opcode 0x" + toHex(number, 2));
  Instr instr;
  instr.opcode = d->opcode;
  int pos = kOpcodeBits;
  for (size_t i = 0; i < d->fields.size(); ++i) {
    const FieldDesc &f = d->fields[i];
    if (f.isAddress()) {
      instr.base[i] = static_cast<uint8_t>(getBits(bits, pos, kRegBits));
      pos += kRegBits;
    }
    uint64_t raw = getBits(bits, pos, f.width);
    pos += f.width;
    int64_t v = f.isSigned ? signExtend(raw, f.width) : static_cast<int64_t>(raw);
    std::string bad = checkFieldValue(f, v);
    if (!bad.empty())
      return fail("'" + std::string(d->mnemonic) + "' operand '" +
                  std::string(f.name) + "' " + bad);
    instr.value[i] = v;
  }
  // The reserved bits from `pos` on, a 64-bit word at a time; the lowest
  // one set is named.
  for (int w = pos / 64; w < kWordBits / 64; ++w) {
    const int from = std::max(pos - w * 64, 0);
    const uint64_t set = bits[static_cast<size_t>(w)] & (~uint64_t{0} << from);
    if (set != 0)
      return fail("'" + std::string(d->mnemonic) + "' has reserved bit " +
                  std::to_string(w * 64 + std::countr_zero(set)) + " set");
  }
  return instr;
}

std::string formatFloat(float value) {
  if (std::isnan(value))
    return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  SPYRE_ASSERT(ec == std::errc(), "float formatting failed");
  return std::string(buf, end);
}

std::string formatOperand(const FieldDesc &field, int64_t value, uint8_t base,
                          const std::function<std::string(int64_t)> &loopLabel) {
  switch (field.kind) {
  case FieldKind::Reg:
  case FieldKind::RegDst:
    return "r" + std::to_string(value);
  case FieldKind::Int:
    return std::to_string(value);
  case FieldKind::Float:
    return formatFloat(std::bit_cast<float>(static_cast<uint32_t>(value)));
  case FieldKind::Enum:
    return std::string(field.enumValues[static_cast<size_t>(value)]);
  case FieldKind::Counter:
    return "c" + std::to_string(value);
  case FieldKind::Core:
    return value == kCoreSelf ? "self" : std::to_string(value);
  case FieldKind::LoopEnd:
    return loopLabel ? loopLabel(value) : "+" + std::to_string(value);
  case FieldKind::LxAddr:
  case FieldKind::MemAddr:
    if (base == 0)
      return hexText(value);
    if (value == 0)
      return "[r" + std::to_string(base) + "]";
    if (value < 0)
      return "[r" + std::to_string(base) + hexText(value) + "]";
    return "[r" + std::to_string(base) + "+" + hexText(value) + "]";
  }
  return "?";
}

std::string formatInstr(const Instr &instr,
                        const std::function<std::string(int64_t)> &loopLabel) {
  const InstrDesc &d = instr.desc();
  std::string out(d.mnemonic);
  bool first = true;
  for (size_t i = 0; i < d.fields.size(); ++i) {
    const FieldDesc &f = d.fields[i];
    if (f.form == FieldForm::Optional &&
        instr.value[i] == defaultValueOf(d, i, instr.value.data()))
      continue;
    out += first ? " " : ", ";
    first = false;
    if (f.form != FieldForm::Positional)
      out += std::string(f.name) + "=";
    out += formatOperand(f, instr.value[i], instr.base[i], loopLabel);
  }
  return out;
}

} // namespace spyre::isa
