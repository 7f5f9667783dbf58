// A decoded instruction and the codec between it and the 32-byte word.
//
// `Instr` is the fast form the simulator dispatches on: the opcode and one
// value per operand field, in the table's field order. Address fields also
// carry their base register. Encoding and decoding walk the table's fields,
// so they cannot disagree with the assembler or the docs.
#pragma once

#include "isa/InstrTable.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace spyre::isa {

struct Instr {
  Opcode opcode = Opcode::Invalid;
  /// Field values in table order. Signed fields are sign-extended; a Float
  /// field holds its FP32 bit pattern; an Enum field its value's index; a
  /// LoopEnd field the body length; an address field its offset.
  std::array<int64_t, kMaxFields> value{};
  /// Base register of address fields (0 for every other field).
  std::array<uint8_t, kMaxFields> base{};

  const InstrDesc &desc() const { return instrDesc(opcode); }
  int64_t operator[](size_t field) const { return value[field]; }
  /// The value of field `field`; asserts that the instruction has it.
  int64_t operator[](Field field) const { return value[position(field)]; }
  /// Position of `field` in value/base; asserts that the instruction has it.
  size_t position(Field field) const {
    const int i = fieldIndex(opcode, field);
    if (i < 0)
      missingField(field);
    return static_cast<size_t>(i);
  }
  /// The FP32 value of a Float field.
  float floatValue(size_t field) const;

  friend bool operator==(const Instr &, const Instr &) = default;

private:
  [[noreturn]] void missingField(Field field) const;
};

/// An instruction with the given field values and the table's defaults for
/// the fields not given (asserts that each field exists and every required
/// one is given; values are not range-checked, so a test can build an
/// instruction the decoder would refuse).
Instr makeInstr(Opcode op,
                std::initializer_list<std::pair<Field, int64_t>> fields);

using Word = std::array<uint8_t, kWordBytes>;

/// Packs an instruction; every value must be valid for its field (a bug
/// otherwise: the assembler and decoder only produce valid instructions).
Word encode(const Instr &instr);

/// Unpacks one 32-byte word. Returns nothing and sets `error` (when given) to
/// the reason for an unknown opcode, a nonzero reserved bit or a field value
/// outside its range.
std::optional<Instr> decode(const uint8_t *word, std::string *error = nullptr);

/// Shortest decimal text that reads back to the same float (`1`, `0.1`,
/// `-2.5e-08`, `inf`, `nan`, `-nan`). NaN payloads are not kept.
std::string formatFloat(float value);

/// `0x1f`, `-0x4`: how addresses are printed.
std::string hexText(int64_t value);
/// `0x8000000000000004`: an address or end that may lie past 2^63, where
/// hexText would print it wrapped negative.
std::string hexTextUnsigned(uint64_t value);

/// Text of one operand as assembly writes it. `loopLabel` names a loop's end
/// label from its body length; without it the body is shown as `+N`.
std::string formatOperand(const FieldDesc &field, int64_t value, uint8_t base,
                          const std::function<std::string(int64_t)> &loopLabel =
                              {});

/// One instruction as assembly text, e.g. `ld [r1+0x10], 0x0, run=4`:
/// positional operands, then keyword operands that are required or differ
/// from their default.
std::string formatInstr(const Instr &instr,
                        const std::function<std::string(int64_t)> &loopLabel =
                            {});

} // namespace spyre::isa
