// Checks of the instruction table itself: encodings do not overlap, every
// field fits its width and the word, every row is documented, and the rows
// agree with the ISA specification on engines and timing classes.
#include "isa/InstrTable.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace spyre::isa {
namespace {

/// Every opcode enumerator, from the same list that defines the enum.
const std::vector<Opcode> &allOpcodes() {
  static const std::vector<Opcode> ops = {
#define SPYRE_OPCODE(name, number, mnemonic, family, format) Opcode::name,
#include "isa/Opcodes.def"
#undef SPYRE_OPCODE
  };
  return ops;
}

TEST(InstrTable, EveryOpcodeHasExactlyOneRow) {
  std::set<unsigned> seen;
  for (const InstrDesc &d : instructionTable()) {
    unsigned number = static_cast<uint8_t>(d.opcode);
    EXPECT_NE(number, 0u) << d.mnemonic << " uses the invalid opcode 0";
    EXPECT_TRUE(seen.insert(number).second)
        << d.mnemonic << " shares opcode " << number;
  }
  EXPECT_EQ(seen.size(), allOpcodes().size());
  for (Opcode op : allOpcodes()) {
    const InstrDesc *d = findInstr(op);
    ASSERT_NE(d, nullptr) << opcodeName(op) << " has no row";
    EXPECT_EQ(d->opcode, op);
  }
  EXPECT_EQ(findInstrByNumber(0), nullptr);
  EXPECT_EQ(findInstrByNumber(0xff), nullptr);
}

// The Family and Format columns (Opcodes.def) and the field lists
// (Formats.def) are what code outside the ISA names instructions and fields
// by; the table's rows must agree with them.
static_assert(fieldIndex(Opcode::Ld, Field::Mem) == 1);
static_assert(fieldIndex(Opcode::St, Field::Mem) == 0);
static_assert(fieldIndex(Opcode::Ld, Field::Dst) == -1);
static_assert(formatOf(Opcode::Gelut) == Format::SfuUnary);
static_assert(familyOf(Opcode::Racc) == Family::Ring);

TEST(InstrTable, RowsFollowTheirFormatAndFamily) {
  for (const InstrDesc &d : instructionTable()) {
    EXPECT_EQ(d.format, formatOf(d.opcode)) << d.mnemonic;
    EXPECT_EQ(d.family, familyOf(d.opcode)) << d.mnemonic;
    const FormatFields ff = formatFields(d.format);
    ASSERT_EQ(d.fields.size(), static_cast<size_t>(ff.count)) << d.mnemonic;
    for (size_t i = 0; i < d.fields.size(); ++i)
      EXPECT_EQ(d.fields[i].name, fieldName(ff.fields[i]))
          << d.mnemonic << " field " << i;
    // What a family does fixes the engine that runs it.
    switch (d.family) {
    case Family::Unary:
    case Family::Binary:
    case Family::Scalar:
    case Family::Bcast:
    case Family::Cvt:
    case Family::RowReduce:
    case Family::ColReduce:
    case Family::Xpose:
      EXPECT_EQ(d.engines, engineBit(Engine::Sfu)) << d.mnemonic;
      break;
    case Family::Matmul:
      EXPECT_EQ(d.engines, engineBit(Engine::Pt)) << d.mnemonic;
      break;
    case Family::Ring:
      EXPECT_EQ(d.engines, engineBit(Engine::Ring)) << d.mnemonic;
      break;
    case Family::Control:
    case Family::RegLoad:
      EXPECT_EQ(d.engines, kAllEngines) << d.mnemonic;
      break;
    case Family::Dma:
    case Family::Host:
      EXPECT_TRUE(d.runsOn(Engine::DmaLoad) || d.runsOn(Engine::DmaStore))
          << d.mnemonic;
      break;
    case Family::None:
      ADD_FAILURE() << d.mnemonic << " has no family";
    }
  }
  // Every field name is some format's.
  std::set<Field> used;
  for (int f = 0; f < kNumFormats; ++f) {
    // Named: list() views the value, which must outlive the loop.
    const FormatFields fields = formatFields(static_cast<Format>(f));
    for (Field x : fields.list())
      used.insert(x);
  }
  EXPECT_EQ(used.size(), static_cast<size_t>(kNumFieldNames));
}

TEST(InstrTable, MnemonicsAreUniqueAndFound) {
  std::set<std::string_view> seen;
  for (const InstrDesc &d : instructionTable()) {
    EXPECT_FALSE(d.mnemonic.empty());
    EXPECT_TRUE(seen.insert(d.mnemonic).second) << d.mnemonic;
    EXPECT_EQ(findInstr(d.mnemonic), &d);
  }
  EXPECT_EQ(findInstr("mov"), nullptr);
}

TEST(InstrTable, FieldsFitInTheWord) {
  for (const InstrDesc &d : instructionTable()) {
    EXPECT_LE(d.fields.size(), static_cast<size_t>(kMaxFields)) << d.mnemonic;
    int bits = kOpcodeBits;
    std::set<std::string_view> names;
    for (const FieldDesc &f : d.fields) {
      EXPECT_TRUE(names.insert(f.name).second)
          << d.mnemonic << " repeats field " << f.name;
      EXPECT_GE(f.width, 1) << d.mnemonic << "." << f.name;
      EXPECT_LE(f.width, 32) << d.mnemonic << "." << f.name;
      bits += f.encodedBits();
    }
    EXPECT_EQ(bits, d.encodedBits());
    EXPECT_LE(bits, kWordBits) << d.mnemonic;
  }
}

TEST(InstrTable, RangesAndDefaultsFitTheirWidth) {
  for (const InstrDesc &d : instructionTable()) {
    for (const FieldDesc &f : d.fields) {
      std::string where = std::string(d.mnemonic) + "." + std::string(f.name);
      int64_t lo = f.isSigned ? -(int64_t(1) << (f.width - 1)) : 0;
      int64_t hi = f.isSigned ? (int64_t(1) << (f.width - 1)) - 1
                              : (int64_t(1) << f.width) - 1;
      EXPECT_LE(f.minValue, f.maxValue) << where;
      EXPECT_GE(f.minValue, lo) << where;
      EXPECT_LE(f.maxValue, hi) << where;
      EXPECT_GE(f.multipleOf, 1) << where;
      EXPECT_EQ(f.minValue % f.multipleOf, 0) << where;
      EXPECT_EQ(f.maxValue % f.multipleOf, 0) << where;
      EXPECT_FALSE(f.description.empty()) << where;
      if (f.kind == FieldKind::Enum) {
        EXPECT_GE(f.enumValues.size(), 2u) << where;
        EXPECT_LE(f.enumValues.size(), size_t(1) << f.width) << where;
        EXPECT_EQ(f.maxValue, static_cast<int64_t>(f.enumValues.size()) - 1)
            << where;
      }
      EXPECT_EQ(f.form == FieldForm::Optional,
                f.defaultRule != DefaultRule::None)
          << where;
      switch (f.defaultRule) {
      case DefaultRule::None:
        break;
      case DefaultRule::Const:
        EXPECT_EQ(checkFieldValue(f, f.defaultValue), "") << where;
        break;
      case DefaultRule::SameAs: {
        // The named field must be required or a constant default, and its
        // every value must be valid here.
        int other = d.fieldIndex(f.defaultField);
        ASSERT_GE(other, 0) << where;
        const FieldDesc &o = d.fields[static_cast<size_t>(other)];
        EXPECT_TRUE(o.defaultRule == DefaultRule::None ||
                    o.defaultRule == DefaultRule::Const)
            << where;
        EXPECT_GE(o.minValue, f.minValue) << where;
        EXPECT_LE(o.maxValue, f.maxValue) << where;
        break;
      }
      case DefaultRule::ConvertedRow: {
        int n = d.fieldIndex("n");
        int to = d.fieldIndex("to");
        ASSERT_GE(n, 0) << where;
        ASSERT_GE(to, 0) << where;
        EXPECT_LE(2 * d.fields[static_cast<size_t>(n)].maxValue, f.maxValue)
            << where;
        break;
      }
      }
    }
  }
}

TEST(InstrTable, EveryRowIsDocumented) {
  for (const InstrDesc &d : instructionTable()) {
    std::string syntax = d.syntax();
    EXPECT_EQ(syntax.rfind(std::string(d.mnemonic), 0), 0u) << syntax;
    for (const FieldDesc &f : d.fields)
      EXPECT_NE(syntax.find(std::string(f.name)), std::string::npos)
          << d.mnemonic << " syntax lacks " << f.name;
    EXPECT_FALSE(d.summary.empty()) << d.mnemonic;
    EXPECT_EQ(d.summary.back(), '.') << d.mnemonic;
    EXPECT_GT(d.semantics.size(), d.summary.size()) << d.mnemonic;
  }
}

TEST(InstrTable, EnginesAreValid) {
  for (const InstrDesc &d : instructionTable()) {
    EXPECT_NE(d.engines, 0) << d.mnemonic;
    EXPECT_EQ(d.engines & ~kAllEngines, 0) << d.mnemonic;
  }
}

TEST(InstrTable, SyntaxFollowsTheSpecification) {
  EXPECT_EQ(instrDesc(Opcode::Ld).syntax(),
            "ld lx, mem [run=1, n1=1, lxs1=0, ms1=0, n2=1, lxs2=0, ms2=0]");
  EXPECT_EQ(instrDesc(Opcode::Mm).syntax(),
            "mm c, a, b, m=, k=, n= [as=m, bs=k, cs=m, out=f32, acc=0]");
  EXPECT_EQ(instrDesc(Opcode::Signal).syntax(),
            "signal counter, value [core=self]");
  EXPECT_EQ(instrDesc(Opcode::Rsum).syntax(),
            "rsum dst, src [n=1, m=1, ds=1, ss=n, count=0, fmt=dl16]");
}

// Engines and timing classes as the ISA specification lists them.
TEST(InstrTable, EnginesAndTimingClassesFollowTheSpecification) {
  struct Expect {
    const char *mnemonic;
    EngineSet engines;
    TimingClass timing;
  };
  const Expect expected[] = {
      {"nop", kAllEngines, TimingClass::Ctrl},
      {"li", kAllEngines, TimingClass::Scalar},
      {"loop", kAllEngines, TimingClass::Ctrl},
      {"wait", kAllEngines, TimingClass::Sync},
      {"barrier", kAllEngines, TimingClass::Sync},
      {"ld", engineBit(Engine::DmaLoad), TimingClass::Dma},
      {"st", engineBit(Engine::DmaStore), TimingClass::Dma},
      {"host", engineBit(Engine::DmaLoad), TimingClass::Host},
      {"mm", engineBit(Engine::Pt), TimingClass::Pt},
      {"mmi8", engineBit(Engine::Pt), TimingClass::PtI8},
      {"relu", engineBit(Engine::Sfu), TimingClass::SfuSimple},
      {"gelu", engineBit(Engine::Sfu), TimingClass::SfuTranscendental},
      {"add", engineBit(Engine::Sfu), TimingClass::SfuSimple},
      {"div", engineBit(Engine::Sfu), TimingClass::SfuTranscendental},
      {"maxs", engineBit(Engine::Sfu), TimingClass::SfuSimple},
      {"pows", engineBit(Engine::Sfu), TimingClass::SfuTranscendental},
      {"cvt", engineBit(Engine::Sfu), TimingClass::SfuSimple},
      {"rmax", engineBit(Engine::Sfu), TimingClass::SfuReduce},
      {"rargmax", engineBit(Engine::Sfu), TimingClass::SfuReduce},
      {"lr", kAllEngines, TimingClass::Scalar},
      {"csum", engineBit(Engine::Sfu), TimingClass::SfuReduce},
      {"recv", engineBit(Engine::Ring), TimingClass::Ring},
      {"racc", engineBit(Engine::Ring), TimingClass::Reduce},
  };
  for (const Expect &e : expected) {
    const InstrDesc *d = findInstr(std::string_view(e.mnemonic));
    ASSERT_NE(d, nullptr) << e.mnemonic;
    EXPECT_EQ(d->engines, e.engines) << e.mnemonic;
    EXPECT_EQ(d->timing, e.timing) << e.mnemonic;
  }
  // 9 control (lr among them), 2 DMA, 2 PT, 31 SFU (rargmax among them),
  // 4 ring.
  EXPECT_EQ(instructionTable().size(), 50u);
}

TEST(InstrTable, DerivedDefaults) {
  const InstrDesc &cvt = instrDesc(Opcode::Cvt);
  std::array<int64_t, kMaxFields> v{};
  size_t n = static_cast<size_t>(cvt.fieldIndex("n"));
  size_t to = static_cast<size_t>(cvt.fieldIndex("to"));
  size_t ds = static_cast<size_t>(cvt.fieldIndex("ds"));
  v[n] = 3;
  v[to] = 1; // f32: 3 DL16 sticks hold 192 values = 6 FP32 sticks
  EXPECT_EQ(defaultValueOf(cvt, ds, v.data()), 6);
  v[to] = 0; // dl16: 3 FP32 sticks hold 96 values = 2 DL16 sticks
  EXPECT_EQ(defaultValueOf(cvt, ds, v.data()), 2);
  const InstrDesc &mm = instrDesc(Opcode::Mm);
  v = {};
  v[static_cast<size_t>(mm.fieldIndex("k"))] = 192;
  EXPECT_EQ(defaultValueOf(mm, static_cast<size_t>(mm.fieldIndex("bs")),
                           v.data()),
            192);
}

} // namespace
} // namespace spyre::isa
