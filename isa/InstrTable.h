// The instruction table: every instruction of the Spyre ISA described once.
//
// A row gives the opcode, mnemonic, the engines that may run it, its timing
// class and its operand fields (name, kind, width, range, default, syntax
// form), plus a one-line summary and the semantics text. The encoder, decoder,
// assembler, disassembler and the generated reference (docs/isa.md) are all
// driven by this table; none of them has per-instruction code. Latency is not
// here: the hardware config maps timing classes to cycles.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::hw {
struct HwConfig;
}

namespace spyre::isa {

/// An instruction word is 32 bytes (256 bits), little-endian.
constexpr int kWordBytes = 32;
constexpr int kWordBits = kWordBytes * 8;
/// Bits [0, 8) hold the opcode; operand fields follow LSB-first.
constexpr int kOpcodeBits = 8;
/// Each stream has 16 integer registers; r0 always reads 0.
constexpr int kNumRegs = 16;
constexpr int kRegBits = 4;
/// The most operand fields any instruction has (sizes `Instr`).
constexpr int kMaxFields = 12;
/// The ISA's data unit (docs/hardware.md#sticks): addresses count 128-byte
/// sticks.
constexpr int kStickBytes = 128;
/// Value of a `core` field meaning "this core".
constexpr int64_t kCoreSelf = 0xFFFF;

enum class Opcode : uint8_t {
  Invalid = 0,
#define SPYRE_OPCODE(name, number, mnemonic, family, format) name = number,
#include "isa/Opcodes.def"
#undef SPYRE_OPCODE
};

/// What an instruction does (the Family column of Opcodes.def): the
/// simulator dispatches on it.
enum class Family : uint8_t {
  None, ///< Opcode::Invalid only
  Control,
  RegLoad,
  Dma,
  Host,
  Matmul,
  Unary,
  Binary,
  Scalar,
  Bcast,
  Cvt,
  RowReduce,
  ColReduce,
  Xpose,
  Ring,
};

/// An instruction's operand list (the Format column of Opcodes.def, the
/// lists in Formats.def).
enum class Format : uint8_t {
#define SPYRE_FORMAT(name, ...) name,
#include "isa/Formats.def"
#undef SPYRE_FORMAT
};
constexpr int kNumFormats = 0
#define SPYRE_FORMAT(name, ...) +1
#include "isa/Formats.def"
#undef SPYRE_FORMAT
    ;

/// An operand field by name (Fields.def). Code outside the ISA names fields
/// this way, never by string, so a misspelt field does not compile.
enum class Field : uint8_t {
#define SPYRE_FIELD(Name, name) Name,
#include "isa/Fields.def"
#undef SPYRE_FIELD
};
constexpr int kNumFieldNames = 0
#define SPYRE_FIELD(Name, name) +1
#include "isa/Fields.def"
#undef SPYRE_FIELD
    ;

/// Values of the `fmt`, `out` and `to` fields: the element format of a
/// stick (the value's index in the field's enum, so its encoding).
enum class StickFormat : uint8_t { Dl16 = 0, F32 = 1 };
/// Values of the `s2` field: src2 gives rows like src1, or one stick a row.
enum class Src2Mode : uint8_t { Row = 0, Stick = 1 };

constexpr Family familyOf(Opcode op) {
  switch (op) {
  case Opcode::Invalid:
    return Family::None;
#define SPYRE_OPCODE(name, number, mnemonic, family, format)                   \
  case Opcode::name:                                                           \
    return Family::family;
#include "isa/Opcodes.def"
#undef SPYRE_OPCODE
  }
  return Family::None;
}

constexpr Format formatOf(Opcode op) {
  switch (op) {
  case Opcode::Invalid:
    return Format::None;
#define SPYRE_OPCODE(name, number, mnemonic, family, format)                   \
  case Opcode::name:                                                           \
    return Format::format;
#include "isa/Opcodes.def"
#undef SPYRE_OPCODE
  }
  return Format::None;
}

/// The fields of a format in encoding order.
struct FormatFields {
  std::array<Field, kMaxFields> fields{};
  int count = 0;

  constexpr FormatFields(std::initializer_list<Field> list) {
    for (Field f : list)
      fields[static_cast<size_t>(count++)] = f;
  }
  constexpr std::span<const Field> list() const {
    return {fields.data(), static_cast<size_t>(count)};
  }
};

constexpr FormatFields formatFields(Format format) {
  using enum Field;
  switch (format) {
#define SPYRE_FORMAT(name, ...)                                                \
  case Format::name:                                                           \
    return FormatFields({__VA_ARGS__});
#include "isa/Formats.def"
#undef SPYRE_FORMAT
  }
  return FormatFields({});
}

namespace detail {
/// [format][field]: the field's position in the format, or -1.
inline constexpr auto kFieldIndex = [] {
  std::array<std::array<int8_t, kNumFieldNames>, kNumFormats> index{};
  for (size_t f = 0; f < index.size(); ++f) {
    index[f].fill(-1);
    const FormatFields ff = formatFields(static_cast<Format>(f));
    for (int i = 0; i < ff.count; ++i)
      index[f][static_cast<size_t>(ff.fields[static_cast<size_t>(i)])] =
          static_cast<int8_t>(i);
  }
  return index;
}();
} // namespace detail

/// Position of `field` among a format's (or an opcode's) operands; -1 when it
/// has no such field.
constexpr int fieldIndex(Format format, Field field) {
  return detail::kFieldIndex[static_cast<size_t>(format)]
                            [static_cast<size_t>(field)];
}
constexpr int fieldIndex(Opcode op, Field field) {
  return fieldIndex(formatOf(op), field);
}
constexpr bool hasField(Format format, Field field) {
  return fieldIndex(format, field) >= 0;
}

/// `dst`, `src1`, ...: how assembly writes the field.
std::string_view fieldName(Field field);
/// `SfuUnary`, ...: the enumerator's name.
std::string_view formatName(Format format);

/// The engines of a core; each engine instance runs one in-order stream.
/// Pt and Sfu have one instance per corelet (the stream's unit number).
enum class Engine : uint8_t { DmaLoad, DmaStore, Pt, Sfu, Ring };
constexpr int kNumEngines = 5;

/// A set of engines, bit (1 << Engine).
using EngineSet = uint8_t;
constexpr EngineSet engineBit(Engine e) {
  return static_cast<EngineSet>(1u << static_cast<unsigned>(e));
}
constexpr EngineSet kAllEngines = (1u << kNumEngines) - 1;

/// How the simulator times an instruction; the config maps each class to
/// cycles and bandwidths.
enum class TimingClass : uint8_t {
  Ctrl,
  Scalar,
  Sync,
  Dma,
  Pt,
  PtI8,
  SfuSimple,
  SfuTranscendental,
  SfuReduce,
  Ring,
  Reduce,
  Host,
};
constexpr int kNumTimingClasses = 12;

enum class FieldKind : uint8_t {
  Reg,     ///< rN, a source register
  RegDst,  ///< rN, a destination register (r0 is not allowed)
  Int,     ///< integer immediate
  Float,   ///< FP32 immediate, held as its bit pattern
  Enum,    ///< one of the field's named values, held as its index
  Counter, ///< sync counter cN
  Core,    ///< core id; the all-ones value means `self` where allowed
  LoopEnd, ///< label right after a loop body, held as the body length
  LxAddr,  ///< LX address [rN+imm] in sticks: base register + signed offset
  MemAddr, ///< device-memory address [rN+imm] in sticks
};

/// How a field is written in assembly.
enum class FieldForm : uint8_t {
  Positional, ///< required, in table order
  Keyword,    ///< required, written `name=value`
  Optional,   ///< `name=value`, may be omitted for its default
};

/// Where an omitted optional field gets its value.
enum class DefaultRule : uint8_t {
  None,         ///< required field
  Const,        ///< `defaultValue`
  SameAs,       ///< the value of field `defaultField`
  ConvertedRow, ///< cvt's destination row length: ceil(n * srcLanes / dstLanes)
};

/// A bound that comes from the hardware config rather than the field width;
/// the assembler checks it, the simulator checks it again at run time.
enum class Limit : uint8_t {
  None,
  LxSticks,     ///< |offset| < LX size in sticks
  MemSticks,    ///< |offset| < device memory size in sticks
  Cores,        ///< core id < chip.cores
  SyncCounters, ///< counter < limits.syncCountersPerCore
  Barriers,     ///< barrier id < limits.barriers
  LoopCount,    ///< count <= limits.maxLoopCount
};

struct FieldDesc {
  std::string_view name;
  FieldKind kind = FieldKind::Int;
  FieldForm form = FieldForm::Positional;
  /// Bits of the value; an address field's base register adds kRegBits.
  int width = 0;
  bool isSigned = false;
  /// Valid values (inclusive), checked by the assembler and the decoder.
  int64_t minValue = 0;
  int64_t maxValue = 0;
  /// Valid values are multiples of this.
  int64_t multipleOf = 1;
  DefaultRule defaultRule = DefaultRule::None;
  int64_t defaultValue = 0;
  std::string_view defaultField;
  /// Names of an Enum field's values, by index.
  std::vector<std::string_view> enumValues;
  Limit limit = Limit::None;
  std::string_view description;

  bool isAddress() const {
    return kind == FieldKind::LxAddr || kind == FieldKind::MemAddr;
  }
  /// Bits the field takes in the instruction word.
  int encodedBits() const { return width + (isAddress() ? kRegBits : 0); }
};

struct InstrDesc {
  Opcode opcode = Opcode::Invalid;
  std::string_view mnemonic;
  Family family = Family::None;
  Format format = Format::None;
  EngineSet engines = 0;
  TimingClass timing = TimingClass::Ctrl;
  std::vector<FieldDesc> fields;
  std::string summary;
  std::string semantics;

  bool runsOn(Engine e) const { return (engines & engineBit(e)) != 0; }
  /// Index of the field called `name`, or -1 (for the assembler and the
  /// table's own checks; code names fields by isa::Field).
  int fieldIndex(std::string_view name) const;
  /// Assembly syntax derived from the fields, e.g.
  /// `ld lx, mem [run=1, n1=1, ...]` or `mm c, a, b, m=, k=, n= [as=m, ...]`.
  std::string syntax() const;
  /// Bits used by the opcode and all fields.
  int encodedBits() const;
};

/// Every instruction, in opcode order.
std::span<const InstrDesc> instructionTable();
/// The row of `op`, or nullptr for an opcode that does not exist.
const InstrDesc *findInstr(Opcode op);
/// The row of the opcode numbered `number`, or nullptr.
const InstrDesc *findInstrByNumber(unsigned number);
/// The row whose mnemonic is `mnemonic`, or nullptr (for reading assembly;
/// code names instructions by Opcode).
const InstrDesc *findInstr(std::string_view mnemonic);
/// The row of a valid opcode (asserts that it exists).
const InstrDesc &instrDesc(Opcode op);

/// `Nop`, `Li`, ...: the enumerator's name.
std::string_view opcodeName(Opcode op);
/// `dma.load`, `dma.store`, `pt`, `sfu`, `ring`.
std::string_view engineName(Engine e);
/// Whether the engine has one instance per corelet (written `pt.0`).
bool engineHasUnits(Engine e);
/// `dma.load`, `pt.1`, ...: how a stream's engine is written in assembly.
std::string engineUnitName(Engine e, int unit);
/// `core 0 pt.1`: how messages name a stream.
std::string streamName(int core, Engine e, int unit);
/// Comma-separated engine names of a set, e.g. `dma.load, dma.store`.
std::string engineSetName(EngineSet set);
/// `ctrl`, `sfu.simple`, ...
std::string_view timingClassName(TimingClass t);
std::string_view fieldKindName(FieldKind k);

/// Exclusive upper bound a config limit puts on a field (LoopCount is
/// returned as max + 1 so all limits read the same way).
int64_t limitBound(Limit limit, const hw::HwConfig &config);
/// The config key and meaning of a limit, for messages and docs.
std::string_view limitDescription(Limit limit);

/// Checks a value against the field's static range and multiple. Returns an
/// empty string when valid, else what is wrong (without the field's name).
std::string checkFieldValue(const FieldDesc &field, int64_t value);
/// Text of the field's valid range, e.g. `1..65535` or `64..65472, multiple of 64`.
std::string fieldRangeText(const FieldDesc &field);
/// Text of the field's default for syntax and docs, e.g. `1`, `m`, `f32`.
std::string fieldDefaultText(const FieldDesc &field);

/// Value of an optional field when it is omitted, given the other values
/// (those a default may depend on must already be set).
int64_t defaultValueOf(const InstrDesc &desc, size_t field,
                       const int64_t *values);

} // namespace spyre::isa
