// The instruction table itself, its lookups and the names of its enums.
//
// Rows are built with a small field builder so that the operand lists shared
// by a family (the SFU ops, the ring transfers) are written once; the result
// is plain data (`InstrDesc`) that every other part of the ISA reads.
#include "isa/InstrTable.h"

#include "hw/HwConfig.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <array>

namespace spyre::isa {

namespace {

/// Builder for one FieldDesc; the range starts as everything the width holds.
class F {
public:
  F(std::string_view name, FieldKind kind, int width, bool isSigned,
    std::string_view description) {
    d_.name = name;
    d_.kind = kind;
    d_.width = width;
    d_.isSigned = isSigned;
    d_.description = description;
    if (isSigned) {
      d_.minValue = -(int64_t(1) << (width - 1));
      d_.maxValue = (int64_t(1) << (width - 1)) - 1;
    } else {
      d_.minValue = 0;
      d_.maxValue = (int64_t(1) << width) - 1;
    }
  }
  F &range(int64_t lo, int64_t hi) {
    d_.minValue = lo;
    d_.maxValue = hi;
    return *this;
  }
  F &multiple(int64_t m) {
    d_.multipleOf = m;
    return *this;
  }
  F &keyword() {
    d_.form = FieldForm::Keyword;
    return *this;
  }
  F &opt(int64_t value) {
    d_.form = FieldForm::Optional;
    d_.defaultRule = DefaultRule::Const;
    d_.defaultValue = value;
    return *this;
  }
  F &optSameAs(std::string_view field) {
    d_.form = FieldForm::Optional;
    d_.defaultRule = DefaultRule::SameAs;
    d_.defaultField = field;
    return *this;
  }
  F &optConvertedRow() {
    d_.form = FieldForm::Optional;
    d_.defaultRule = DefaultRule::ConvertedRow;
    return *this;
  }
  F &values(std::vector<std::string_view> names) {
    d_.enumValues = std::move(names);
    d_.minValue = 0;
    d_.maxValue = static_cast<int64_t>(d_.enumValues.size()) - 1;
    return *this;
  }
  F &limit(Limit l) {
    d_.limit = l;
    return *this;
  }
  operator FieldDesc() const { return d_; }

private:
  FieldDesc d_;
};

constexpr EngineSet kDmaLoad = engineBit(Engine::DmaLoad);
constexpr EngineSet kDmaStore = engineBit(Engine::DmaStore);
constexpr EngineSet kPt = engineBit(Engine::Pt);
constexpr EngineSet kSfu = engineBit(Engine::Sfu);
constexpr EngineSet kRing = engineBit(Engine::Ring);

// Enum value lists. The index is the encoding (StickFormat, Src2Mode).
const std::vector<std::string_view> kFormats = {"dl16", "f32"};
constexpr int64_t kFmtF32 = static_cast<int64_t>(StickFormat::F32);
static_assert(static_cast<int>(StickFormat::Dl16) == 0 &&
              static_cast<int>(StickFormat::F32) == 1);
static_assert(static_cast<int>(Src2Mode::Row) == 0 &&
              static_cast<int>(Src2Mode::Stick) == 1);

std::string_view mnemonicOf(Opcode op) {
  switch (op) {
  case Opcode::Invalid:
    break;
#define SPYRE_OPCODE(name, number, mnemonic, family, format)                   \
  case Opcode::name:                                                           \
    return #mnemonic;
#include "isa/Opcodes.def"
#undef SPYRE_OPCODE
  }
  SPYRE_UNREACHABLE("the invalid opcode has no mnemonic");
}

F lxAddr(std::string_view name, std::string_view description) {
  return F(name, FieldKind::LxAddr, 20, true, description)
      .limit(Limit::LxSticks);
}

F memAddr(std::string_view name, std::string_view description) {
  return F(name, FieldKind::MemAddr, 32, true, description)
      .limit(Limit::MemSticks);
}

F fmtField() {
  F f("fmt", FieldKind::Enum, 1, false,
      "element format of every operand: dl16 (64 lanes per stick) or f32 "
      "(32 lanes)");
  f.values(kFormats).opt(0);
  return f;
}

F sticksPerRow() {
  F f("n", FieldKind::Int, 16, false, "sticks per row");
  f.range(1, 65535).opt(1);
  return f;
}

F rowCount() {
  F f("m", FieldKind::Int, 16, false, "rows");
  f.range(1, 65535).opt(1);
  return f;
}

F rowStride(std::string_view name, std::string_view description) {
  F f(name, FieldKind::Int, 20, true, description);
  f.optSameAs("n");
  return f;
}

F validCount() {
  F f("count", FieldKind::Int, 16, false,
      "valid elements per row; 0 means every lane of the row");
  f.opt(0);
  return f;
}

// Text shared by every SFU row.
const char *const kSfuCommon =
    "Rows: operand X's row r starts at X + r*stride (ds for dst, ss for src, "
    "s2s for src2); a row is n sticks of 64 (fmt=dl16) or 32 (fmt=f32) lanes. "
    "Computation is in FP32; results are rounded to fmt (DL16: to nearest, "
    "ties away from zero). When count > 0, lanes at or beyond count in a row "
    "are written as zero in dst, so padding stays zero.";

std::vector<FieldDesc> sfuUnaryFields() {
  return {lxAddr("dst", "destination rows in LX"),
          lxAddr("src", "source rows in LX"),
          sticksPerRow(),
          rowCount(),
          rowStride("ds", "dst row stride in sticks"),
          rowStride("ss", "src row stride in sticks"),
          validCount(),
          fmtField()};
}

std::vector<FieldDesc> sfuBinaryFields() {
  F s2("s2", FieldKind::Enum, 1, false,
       "row: src2 rows are like src1 rows; stick: src2 supplies one stick per "
       "row, reused for every stick of the row");
  s2.values({"row", "stick"}).opt(0);
  return {lxAddr("dst", "destination rows in LX"),
          lxAddr("src1", "first source rows in LX"),
          lxAddr("src2", "second source rows (or sticks) in LX"),
          sticksPerRow(),
          rowCount(),
          rowStride("ds", "dst row stride in sticks"),
          rowStride("ss", "src1 row stride in sticks"),
          rowStride("s2s", "src2 row stride in sticks; 0 reuses one src2 row"),
          s2,
          validCount(),
          fmtField()};
}

std::vector<FieldDesc> sfuScalarFields() {
  return {lxAddr("dst", "destination rows in LX"),
          lxAddr("src", "source rows in LX"),
          F("imm", FieldKind::Float, 32, false, "FP32 scalar operand"),
          sticksPerRow(),
          rowCount(),
          rowStride("ds", "dst row stride in sticks"),
          rowStride("ss", "src row stride in sticks"),
          validCount(),
          fmtField()};
}

std::vector<FieldDesc> ringFields(std::string_view lxWhat) {
  return {F("core", FieldKind::Core, 16, false, "the other core of the transfer")
              .range(0, kCoreSelf - 1)
              .limit(Limit::Cores),
          lxAddr("lx", lxWhat), sticksPerRow(), rowCount(),
          rowStride("s", "row stride in sticks")};
}

std::vector<FieldDesc> dmaFields(bool load) {
  FieldDesc lx = lxAddr("lx", load ? "destination in LX" : "source in LX");
  FieldDesc mem = memAddr("mem", load ? "source in device memory"
                                      : "destination in device memory");
  std::vector<FieldDesc> fields;
  if (load) {
    fields = {lx, mem};
  } else {
    fields = {mem, lx};
  }
  fields.push_back(F("run", FieldKind::Int, 16, false,
                     "contiguous sticks per run")
                       .range(1, 65535)
                       .opt(1));
  fields.push_back(F("n1", FieldKind::Int, 16, false, "runs in dimension 1")
                       .range(1, 65535)
                       .opt(1));
  fields.push_back(F("lxs1", FieldKind::Int, 20, true,
                     "LX stride of dimension 1 in sticks")
                       .opt(0));
  fields.push_back(F("ms1", FieldKind::Int, 28, true,
                     "memory stride of dimension 1 in sticks")
                       .opt(0));
  fields.push_back(F("n2", FieldKind::Int, 16, false, "runs in dimension 2")
                       .range(1, 65535)
                       .opt(1));
  fields.push_back(F("lxs2", FieldKind::Int, 20, true,
                     "LX stride of dimension 2 in sticks")
                       .opt(0));
  fields.push_back(F("ms2", FieldKind::Int, 28, true,
                     "memory stride of dimension 2 in sticks")
                       .opt(0));
  return fields;
}

std::vector<FieldDesc> matmulFields(bool int8) {
  int64_t kStep = int8 ? 128 : 64;
  int64_t nStep = int8 ? 128 : 64;
  int64_t kMax = 65535 / kStep * kStep;
  int64_t nMax = 65535 / nStep * nStep;
  std::vector<FieldDesc> fields = {
      lxAddr("c", "result C in LX"),
      lxAddr("a", "left operand A in LX (sticked on K)"),
      lxAddr("b", "right operand B in LX (sticked on N)"),
      F("m", FieldKind::Int, 16, false, "rows of A and C").range(1, 65535).keyword(),
      F("k", FieldKind::Int, 16, false, "columns of A, rows of B (elements)")
          .range(kStep, kMax)
          .multiple(kStep)
          .keyword(),
      F("n", FieldKind::Int, 16, false, "columns of B and C (elements)")
          .range(nStep, nMax)
          .multiple(nStep)
          .keyword(),
      F("as", FieldKind::Int, 20, false, "stride of A's stick blocks in sticks")
          .optSameAs("m"),
      F("bs", FieldKind::Int, 20, false, "stride of B's stick blocks in sticks")
          .optSameAs("k"),
      F("cs", FieldKind::Int, 20, false, "stride of C's stick blocks in sticks")
          .optSameAs("m"),
  };
  if (!int8)
    fields.push_back(F("out", FieldKind::Enum, 1, false,
                       "format of C: dl16 (64 lanes) or f32 (32 lanes)")
                         .values(kFormats)
                         .opt(kFmtF32));
  fields.push_back(F("acc", FieldKind::Int, 1, false,
                     "1: add into C (read in C's format); 0: overwrite C")
                       .opt(0));
  return fields;
}

struct UnaryOp {
  Opcode op;
  TimingClass timing;
  const char *formula;
};

std::vector<InstrDesc> buildTable() {
  std::vector<InstrDesc> t;
  auto add = [&](Opcode op, EngineSet engines, TimingClass timing,
                 std::vector<FieldDesc> fields, std::string summary,
                 std::string semantics) {
    InstrDesc d;
    d.opcode = op;
    d.mnemonic = mnemonicOf(op);
    d.family = familyOf(op);
    d.format = formatOf(op);
    // The row's fields are the format's (Formats.def), in its order.
    const FormatFields names = formatFields(d.format);
    SPYRE_ASSERT(fields.size() == static_cast<size_t>(names.count),
                 "row " + std::string(d.mnemonic) + " has " +
                     std::to_string(fields.size()) + " fields, format " +
                     std::string(formatName(d.format)) + " " +
                     std::to_string(names.count));
    for (size_t i = 0; i < fields.size(); ++i)
      SPYRE_ASSERT(fields[i].name == fieldName(names.fields[i]),
                   "row " + std::string(d.mnemonic) + " field " +
                       std::to_string(i) + " is " +
                       std::string(fields[i].name) + ", format " +
                       std::string(formatName(d.format)) + " says " +
                       std::string(fieldName(names.fields[i])));
    d.engines = engines;
    d.timing = timing;
    d.fields = std::move(fields);
    d.summary = std::move(summary);
    d.semantics = std::move(semantics);
    t.push_back(std::move(d));
  };

  // ---- Control, valid on every engine ----
  add(Opcode::Nop, kAllEngines, TimingClass::Ctrl, {}, "Do nothing.",
      "Occupies one issue slot of the stream and changes no state.");
  add(Opcode::Li, kAllEngines, TimingClass::Scalar,
      {F("rd", FieldKind::RegDst, kRegBits, false, "destination register")
           .range(1, kNumRegs - 1),
       F("imm", FieldKind::Int, 32, true, "value")},
      "Load an immediate into a register.",
      "rd = imm. Registers are 32 bits wide, so one li sets any value.");
  add(Opcode::Addi, kAllEngines, TimingClass::Scalar,
      {F("rd", FieldKind::RegDst, kRegBits, false, "destination register")
           .range(1, kNumRegs - 1),
       F("rs", FieldKind::Reg, kRegBits, false, "source register"),
       F("imm", FieldKind::Int, 24, true, "addend")},
      "Add an immediate to a register.",
      "rd = rs + imm, wrapping modulo 2^32.");
  add(Opcode::Loop, kAllEngines, TimingClass::Ctrl,
      {F("count", FieldKind::Int, 16, false, "iterations")
           .range(1, 65535)
           .limit(Limit::LoopCount),
       F("body", FieldKind::LoopEnd, 16, false,
         "label right after the body; encoded as the body length in "
         "instructions")
           .range(1, 65535)},
      "Hardware loop over the following instructions.",
      "Runs the instructions after `loop` up to (not including) the label "
      "`count` times, then continues at the label. Loops nest up to "
      "limits.max_loop_depth deep and must nest properly: an inner body ends at "
      "or before the end of its outer body. Registers keep their values "
      "across iterations, so `addi` in the body steps addresses.");
  add(Opcode::Signal, kAllEngines, TimingClass::Sync,
      {F("counter", FieldKind::Counter, 8, false, "sync counter")
           .limit(Limit::SyncCounters),
       F("value", FieldKind::Int, 16, false, "amount to add").range(1, 65535),
       F("core", FieldKind::Core, 16, false,
         "core owning the counter; self is this core")
           .range(0, kCoreSelf)
           .limit(Limit::Cores)
           .opt(kCoreSelf)},
      "Add to a sync counter of this or another core.",
      "Once every earlier instruction of this stream has completed (its "
      "results are written), adds `value` to counter `counter` of core "
      "`core`. A remote core's counter is reached over the ring.");
  add(Opcode::Wait, kAllEngines, TimingClass::Sync,
      {F("counter", FieldKind::Counter, 8, false, "sync counter of this core")
           .limit(Limit::SyncCounters),
       F("value", FieldKind::Int, 16, false, "amount to take").range(1, 65535)},
      "Wait for a sync counter of this core, then take from it.",
      "Blocks the stream until counter `counter` of this core is at least "
      "`value`, then subtracts `value` (semaphore semantics, so a loop can "
      "wait once per iteration). Later instructions of the stream start only "
      "after the wait.");
  add(Opcode::Barrier, kAllEngines, TimingClass::Sync,
      {F("id", FieldKind::Int, 8, false, "barrier number")
           .limit(Limit::Barriers),
       F("count", FieldKind::Int, 16, false, "streams that meet at the barrier")
           .range(1, 65535)},
      "Chip-wide barrier.",
      "Blocks until `count` streams of the chip have arrived at barrier `id` "
      "(every participant gives the same count), then releases them all; the "
      "barrier is then ready for its next use.");
  add(Opcode::Lr, kAllEngines, TimingClass::Scalar,
      {F("rd", FieldKind::RegDst, kRegBits, false, "destination register")
           .range(1, kNumRegs - 1),
       lxAddr("lx", "the INT32 stick in LX"),
       F("lane", FieldKind::Int, 8, false, "lane of the stick (< 32)")
           .range(0, 31),
       F("limit", FieldKind::Int, 32, false,
         "bound: the value must be in [0, limit)")
           .range(1, (int64_t(1) << 31) - 1)
           .keyword()},
      "Load a register from an INT32 lane in LX, bounds-checked.",
      "rd = the INT32 value in lane `lane` of the stick at lx, for an "
      "address taken at run time: a gather's row (an embedding row of a "
      "token id) or a page of a block table. A value outside [0, limit) is "
      "an error of the run (the simulator's finding index-out-of-range), so "
      "an index never reads outside the table it selects from. The stream "
      "sees the LX contents its earlier instructions left, as any "
      "instruction does.");
  add(Opcode::Halt, kAllEngines, TimingClass::Ctrl, {},
      "End the stream.",
      "The stream ends once every earlier instruction has completed. Every "
      "stream's last instruction is `halt`.");

  // ---- DMA ----
  const char *const dmaPattern =
      "for i2 < n2, i1 < n1: the `run` contiguous sticks at %FROM% + i2*%FS2% "
      "+ i1*%FS1% go to %TO% + i2*%TS2% + i1*%TS1%. Addresses are base "
      "register + offset, in sticks; strides are signed.";
  auto pattern = [&](bool load) {
    std::string s = dmaPattern;
    auto rep = [&](std::string_view key, std::string_view value) {
      size_t pos;
      while ((pos = s.find(key)) != std::string::npos)
        s.replace(pos, key.size(), value);
    };
    rep("%FROM%", load ? "mem" : "lx");
    rep("%TO%", load ? "lx" : "mem");
    rep("%FS1%", load ? "ms1" : "lxs1");
    rep("%FS2%", load ? "ms2" : "lxs2");
    rep("%TS1%", load ? "lxs1" : "ms1");
    rep("%TS2%", load ? "lxs2" : "ms2");
    return s;
  };
  add(Opcode::Ld, kDmaLoad, TimingClass::Dma, dmaFields(true),
      "Copy sticks from device memory to LX.",
      "Copies n2 x n1 runs of `run` sticks from device memory to LX: " +
          pattern(true));
  add(Opcode::St, kDmaStore, TimingClass::Dma, dmaFields(false),
      "Copy sticks from LX to device memory.",
      "Copies n2 x n1 runs of `run` sticks from LX to device memory: " +
          pattern(false));

  add(Opcode::Host, kDmaLoad, TimingClass::Host,
      {F("op", FieldKind::Int, 16, false,
         "index of the op in the program's HOST section")},
      "Run an op of the program's HOST section on the host.",
      "Runs host op `op` (docs/program-file.md, section HOST): its input "
      "tensors go from device memory to the host over PCIe, the host "
      "computes the op, and its output tensors come back to device memory. "
      "Takes host.pcie_latency_cycles + input bytes / host.pcie_gb_per_s, then "
      "flops / host.host_gflops (at least 1 cycle), then "
      "host.pcie_latency_cycles + output bytes / host.pcie_gb_per_s, in "
      "chip cycles at chip.clock_ghz; the device engines are idle meanwhile "
      "unless they have work of their own. Device data is converted to "
      "double on the way out and rounded to each output's dtype on the way "
      "back. The compiler puts a chip-wide barrier before and after it.");

  // ---- PT ----
  add(Opcode::Mm, kPt, TimingClass::Pt, matmulFields(false),
      "DL16 matrix multiply with FP32 accumulation.",
      "C[m x n] = A[m x k] * B[k x n] (acc=1: C += A * B), all in LX, inputs "
      "DL16, accumulation FP32. k and n count elements and are multiples of "
      "64; operands are padded to whole sticks with zeros. A is sticked on K: "
      "k/64 blocks, block j's row i at a + j*as + i. B is sticked on N: n/64 "
      "blocks, block j's row r (r < k) at b + j*bs + r. C is sticked on N: "
      "with out=f32 n/32 blocks of 32 FP32 lanes, with out=dl16 n/64 blocks "
      "of 64 DL16 lanes; block j's row i at c + j*cs + i. acc=1 reads C in "
      "its own format before adding.");
  add(Opcode::Mmi8, kPt, TimingClass::PtI8, matmulFields(true),
      "INT8 matrix multiply with INT32 accumulation.",
      "C[m x n] = A[m x k] * B[k x n] (acc=1: C += A * B) with INT8 A and B "
      "(128 per stick) and INT32 accumulation and C (32 per stick), wrapping "
      "modulo 2^32. k and n are multiples of 128. A: k/128 blocks, block j's "
      "row i at a + j*as + i. B: n/128 blocks, block j's row r at b + j*bs + "
      "r. C: n/32 blocks, block j's row i at c + j*cs + i.");

  // ---- SFU ----
  const std::array<UnaryOp, 14> unary = {{
      {Opcode::Copy, TimingClass::SfuSimple, "y = x"},
      {Opcode::Neg, TimingClass::SfuSimple, "y = -x"},
      {Opcode::Abs, TimingClass::SfuSimple, "y = |x|"},
      {Opcode::Relu, TimingClass::SfuSimple, "y = max(x, 0)"},
      {Opcode::Exp, TimingClass::SfuTranscendental, "y = e^x"},
      {Opcode::Recip, TimingClass::SfuTranscendental, "y = 1 / x"},
      {Opcode::Rsqrt, TimingClass::SfuTranscendental,
       "y = 1 / sqrt(x)"},
      {Opcode::Sqrt, TimingClass::SfuTranscendental, "y = sqrt(x)"},
      {Opcode::Tanh, TimingClass::SfuTranscendental, "y = tanh(x)"},
      {Opcode::Sigmoid, TimingClass::SfuTranscendental,
       "y = 1 / (1 + e^-x)"},
      {Opcode::Gelu, TimingClass::SfuTranscendental,
       "y = x/2 * (1 + erf(x / sqrt(2))) (erf form)"},
      {Opcode::Gelut, TimingClass::SfuTranscendental,
       "y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) (tanh form)"},
      {Opcode::Silu, TimingClass::SfuTranscendental,
       "y = x / (1 + e^-x)"},
      {Opcode::Erf, TimingClass::SfuTranscendental, "y = erf(x)"},
  }};
  for (const UnaryOp &u : unary)
    add(u.op, kSfu, u.timing, sfuUnaryFields(),
        "Elementwise " + std::string(u.formula) + ".",
        "For every element x of src's m rows of n sticks, the same element "
        "of dst gets " +
            std::string(u.formula) + ". " + kSfuCommon);

  const std::array<UnaryOp, 6> binary = {{
      {Opcode::Add, TimingClass::SfuSimple, "y = a + b"},
      {Opcode::Sub, TimingClass::SfuSimple, "y = a - b"},
      {Opcode::Mul, TimingClass::SfuSimple, "y = a * b"},
      {Opcode::Div, TimingClass::SfuTranscendental, "y = a / b"},
      {Opcode::Max, TimingClass::SfuSimple, "y = max(a, b)"},
      {Opcode::Min, TimingClass::SfuSimple, "y = min(a, b)"},
  }};
  for (const UnaryOp &b : binary)
    add(b.op, kSfu, b.timing, sfuBinaryFields(),
        "Elementwise " + std::string(b.formula) + " of two operands.",
        "For every element a of src1's m rows of n sticks and the matching "
        "element b of src2, the same element of dst gets " +
            std::string(b.formula) +
            ". With s2=stick, src2 has one stick per row (at src2 + r*s2s) "
            "that pairs with every stick of the row: a per-row value "
            "broadcast over its lanes, or a bias stick. s2s=0 reuses the "
            "same src2 row for every row. " +
            kSfuCommon);

  const std::array<UnaryOp, 4> scalar = {{
      {Opcode::Adds, TimingClass::SfuSimple, "y = x + imm"},
      {Opcode::Muls, TimingClass::SfuSimple, "y = x * imm"},
      {Opcode::Maxs, TimingClass::SfuSimple, "y = max(x, imm)"},
      {Opcode::Pows, TimingClass::SfuTranscendental, "y = x^imm"},
  }};
  for (const UnaryOp &s : scalar)
    add(s.op, kSfu, s.timing, sfuScalarFields(),
        "Elementwise " + std::string(s.formula) + " with an FP32 immediate.",
        "For every element x of src's m rows of n sticks, the same element "
        "of dst gets " +
            std::string(s.formula) +
            ". imm is an FP32 literal, printed as the shortest decimal that "
            "reads back to the same float. " +
            kSfuCommon);

  add(Opcode::Bcast, kSfu, TimingClass::SfuSimple,
      {lxAddr("dst", "destination rows in LX"),
       lxAddr("src", "source sticks in LX, one per row"),
       F("lane", FieldKind::Int, 8, false,
         "lane of the source stick (< 64 for dl16, < 32 for f32)")
           .range(0, 63),
       sticksPerRow(), rowCount(),
       rowStride("ds", "dst row stride in sticks"),
       rowStride("ss", "src row stride in sticks"), fmtField()},
      "Broadcast one lane of a stick over a row.",
      "For each row r < m, element `lane` of the stick at src + r*ss fills "
      "every lane of the row's n sticks at dst + r*ds. Lanes per stick follow "
      "fmt (64 for dl16, 32 for f32).");

  F cvtTo("to", FieldKind::Enum, 1, false,
          "destination format; the source is the other one");
  cvtTo.values(kFormats).keyword();
  add(Opcode::Cvt, kSfu, TimingClass::SfuSimple,
      {lxAddr("dst", "destination rows in LX"),
       lxAddr("src", "source rows in LX"), cvtTo,
       F("n", FieldKind::Int, 16, false, "source sticks per row")
           .range(1, 65535)
           .opt(1),
       rowCount(),
       F("ds", FieldKind::Int, 20, true,
         "dst row stride in sticks; defaults to the destination row length")
           .optConvertedRow(),
       rowStride("ss", "src row stride in sticks"), validCount()},
      "Convert between DL16 and FP32.",
      "Converts each of the m rows of n source sticks to format `to` (from "
      "the other format), keeping element order. A destination row is "
      "ceil(n * srcLanes / dstLanes) sticks. DL16 -> FP32 is exact; FP32 -> "
      "DL16 rounds to nearest, ties away from zero. When count > 0, "
      "elements at or beyond count are written as zero.");

  const std::array<UnaryOp, 2> rowReduce = {{
      {Opcode::Rsum, TimingClass::SfuReduce, "sum"},
      {Opcode::Rmax, TimingClass::SfuReduce, "maximum"},
  }};
  for (const UnaryOp &r : rowReduce) {
    F ds("ds", FieldKind::Int, 20, true, "dst row stride in sticks");
    ds.opt(1);
    add(r.op, kSfu, r.timing,
        {lxAddr("dst", "one result stick per row in LX"),
         lxAddr("src", "source rows in LX"), sticksPerRow(), rowCount(), ds,
         rowStride("ss", "src row stride in sticks"), validCount(), fmtField()},
        "Row " + std::string(r.formula) + ", written to every lane of a stick.",
        "For each row r < m, the " + std::string(r.formula) +
            " of the first `count` elements of the row at src + r*ss (every "
            "lane when count = 0) is written to every lane of the stick at "
            "dst + r*ds, so it can serve directly as an s2=stick operand. "
            "Accumulation is FP32 in fixed lane order; the result is rounded "
            "to fmt.");
  }

  {
    F ds("ds", FieldKind::Int, 20, true, "dst row stride in sticks");
    ds.opt(1);
    add(Opcode::Rargmax, kSfu, TimingClass::SfuReduce,
        {lxAddr("dst", "one INT32 result stick per row in LX"),
         lxAddr("src", "source rows in LX"), sticksPerRow(), rowCount(), ds,
         rowStride("ss", "src row stride in sticks"), validCount(),
         fmtField()},
        "Row arg-max, an INT32 index in lane 0 of a stick.",
        "For each row r < m, the index of the largest of the first `count` "
        "elements of the row at src + r*ss (every lane when count = 0), the "
        "lowest index among equal largest values, is written as INT32 to "
        "lane 0 of the stick at dst + r*ds and zero to its other 31 lanes: "
        "the stick of a [.., 1] INT32 tensor, its padding zero. NaN "
        "elements are passed over (a row of NaN only gives 0). fmt is the "
        "source's format; the comparison is exact in FP32.");
  }

  const std::array<UnaryOp, 2> colReduce = {{
      {Opcode::Csum, TimingClass::SfuReduce, "sum"},
      {Opcode::Cmax, TimingClass::SfuReduce, "maximum"},
  }};
  for (const UnaryOp &c : colReduce)
    add(c.op, kSfu, c.timing,
        {lxAddr("dst", "one result row in LX"),
         lxAddr("src", "source rows in LX"), sticksPerRow(), rowCount(),
         rowStride("ss", "src row stride in sticks"), validCount(), fmtField()},
        "Column " + std::string(c.formula) + " over rows.",
        "dst (one row of n sticks) gets, element by element, the " +
            std::string(c.formula) +
            " over the m source rows at src + r*ss. Accumulation is FP32 in "
            "row order; the result is rounded to fmt. When count > 0, lanes "
            "at or beyond count are written as zero.");

  // Sticks are the unit of DMA and of every other SFU op, so this is the one
  // instruction that moves elements across sticks: the A operand of mm must
  // be sticked on K, and transposed operands or a transposed tensor need
  // their sticks rebuilt.
  add(Opcode::Xpose, kSfu, TimingClass::SfuSimple,
      {lxAddr("dst", "first destination stick in LX"),
       lxAddr("src", "first source row (one stick) in LX"),
       F("m", FieldKind::Int, 7, false,
         "source rows, at most the lanes of fmt")
           .range(1, 64)
           .opt(1),
       F("k", FieldKind::Int, 7, false,
         "source lanes = destination sticks, at most the lanes of fmt")
           .range(1, 64)
           .opt(1),
       F("ss", FieldKind::Int, 20, true, "source row stride in sticks").opt(1),
       F("ds", FieldKind::Int, 20, true, "destination stick stride in sticks")
           .opt(1),
       fmtField()},
      "Transpose a tile of up to one stick by one stick.",
      "The tile of m source rows (row i is the stick at src + i*ss) by k "
      "lanes becomes k destination sticks: lane i of the stick at dst + j*ds "
      "gets lane j of source row i, for i < m and j < k; lanes at or beyond "
      "m of every destination stick are written as zero. m and k are at most "
      "the lanes of fmt (64 for dl16, 32 for f32). Elements are moved "
      "unchanged, bit for bit. No source stick may also be a destination "
      "stick. Costs m + k sticks of sfu.simple time (m sticks read, k "
      "written).");

  // ---- Ring ----
  add(Opcode::Send, kRing, TimingClass::Ring,
      ringFields("source rows in local LX"),
      "Send sticks to another core over the data ring.",
      "Sends m rows of n sticks (row r at lx + r*s) to core `core`, whose "
      "matching `recv` names the destination. Sends and receives between a "
      "pair of cores match in program order; the transfer starts when both "
      "sides have issued and each side completes when the data has arrived. "
      "Sizes must match (checked at run time).");
  add(Opcode::Recv, kRing, TimingClass::Ring,
      ringFields("destination rows in local LX"),
      "Receive sticks from another core over the data ring.",
      "Receives m rows of n sticks (row r at lx + r*s) from core `core`'s "
      "matching `send` (matched in program order).");
  add(Opcode::Rsend, kRing, TimingClass::Reduce,
      ringFields("source rows of FP32 sticks in local LX"),
      "Send FP32 partial sums over the reduce ring.",
      "Sends m rows of n FP32 sticks (row r at lx + r*s) to core `core`'s "
      "matching `racc` over the reduce ring (matched in program order).");
  add(Opcode::Racc, kRing, TimingClass::Reduce,
      ringFields("rows of FP32 sticks in local LX to accumulate into"),
      "Accumulate FP32 sticks received over the reduce ring.",
      "Receives m rows of n FP32 sticks from core `core`'s matching `rsend` "
      "and adds them elementwise into the rows at lx + r*s (FP32, in "
      "arrival order of the rows).");

  std::sort(t.begin(), t.end(), [](const InstrDesc &a, const InstrDesc &b) {
    return a.opcode < b.opcode;
  });
  return t;
}

const std::vector<InstrDesc> &table() {
  static const std::vector<InstrDesc> t = buildTable();
  return t;
}

/// Row index by opcode number; -1 where there is none.
const std::array<int, 256> &opcodeIndex() {
  static const std::array<int, 256> index = [] {
    std::array<int, 256> idx;
    idx.fill(-1);
    const std::vector<InstrDesc> &t = table();
    for (size_t i = 0; i < t.size(); ++i)
      idx[static_cast<uint8_t>(t[i].opcode)] = static_cast<int>(i);
    return idx;
  }();
  return index;
}

} // namespace

int InstrDesc::fieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name)
      return static_cast<int>(i);
  return -1;
}

std::string InstrDesc::syntax() const {
  std::string out(mnemonic);
  std::string optional;
  bool first = true;
  for (const FieldDesc &f : fields) {
    if (f.form == FieldForm::Optional) {
      optional += (optional.empty() ? "" : ", ") + std::string(f.name) + "=" +
                  fieldDefaultText(f);
      continue;
    }
    out += first ? " " : ", ";
    first = false;
    out += f.name;
    if (f.form == FieldForm::Keyword)
      out += "=";
  }
  if (!optional.empty())
    out += " [" + optional + "]";
  return out;
}

int InstrDesc::encodedBits() const {
  int bits = kOpcodeBits;
  for (const FieldDesc &f : fields)
    bits += f.encodedBits();
  return bits;
}

std::span<const InstrDesc> instructionTable() { return table(); }

const InstrDesc *findInstrByNumber(unsigned number) {
  if (number > 255)
    return nullptr;
  int i = opcodeIndex()[number];
  return i < 0 ? nullptr : &table()[static_cast<size_t>(i)];
}

const InstrDesc *findInstr(Opcode op) {
  return findInstrByNumber(static_cast<uint8_t>(op));
}

const InstrDesc *findInstr(std::string_view mnemonic) {
  for (const InstrDesc &d : table())
    if (d.mnemonic == mnemonic)
      return &d;
  return nullptr;
}

const InstrDesc &instrDesc(Opcode op) {
  const InstrDesc *d = findInstr(op);
  SPYRE_ASSERT(d != nullptr, "opcode without a table row: " +
                                 std::to_string(static_cast<int>(op)));
  return *d;
}

std::string_view opcodeName(Opcode op) {
  switch (op) {
  case Opcode::Invalid:
    return "Invalid";
#define SPYRE_OPCODE(name, number, mnemonic, family, format)                   \
  case Opcode::name:                                                           \
    return #name;
#include "isa/Opcodes.def"
#undef SPYRE_OPCODE
  }
  return "Invalid";
}

std::string_view fieldName(Field field) {
  switch (field) {
#define SPYRE_FIELD(Name, name)                                                \
  case Field::Name:                                                            \
    return #name;
#include "isa/Fields.def"
#undef SPYRE_FIELD
  }
  return "?";
}

std::string_view formatName(Format format) {
  switch (format) {
#define SPYRE_FORMAT(name, ...)                                                \
  case Format::name:                                                           \
    return #name;
#include "isa/Formats.def"
#undef SPYRE_FORMAT
  }
  return "?";
}

std::string_view engineName(Engine e) {
  switch (e) {
  case Engine::DmaLoad:
    return "dma.load";
  case Engine::DmaStore:
    return "dma.store";
  case Engine::Pt:
    return "pt";
  case Engine::Sfu:
    return "sfu";
  case Engine::Ring:
    return "ring";
  }
  return "?";
}

bool engineHasUnits(Engine e) { return e == Engine::Pt || e == Engine::Sfu; }

std::string engineUnitName(Engine e, int unit) {
  std::string s(engineName(e));
  if (engineHasUnits(e))
    s += "." + std::to_string(unit);
  return s;
}

std::string streamName(int core, Engine e, int unit) {
  return "core " + std::to_string(core) + " " + engineUnitName(e, unit);
}

std::string engineSetName(EngineSet set) {
  if (set == kAllEngines)
    return "all engines";
  std::string out;
  for (int e = 0; e < kNumEngines; ++e) {
    if (!(set & (1u << e)))
      continue;
    if (!out.empty())
      out += ", ";
    out += engineName(static_cast<Engine>(e));
  }
  return out;
}

std::string_view timingClassName(TimingClass t) {
  switch (t) {
  case TimingClass::Ctrl:
    return "ctrl";
  case TimingClass::Scalar:
    return "scalar";
  case TimingClass::Sync:
    return "sync";
  case TimingClass::Dma:
    return "dma";
  case TimingClass::Pt:
    return "pt";
  case TimingClass::PtI8:
    return "pt.i8";
  case TimingClass::SfuSimple:
    return "sfu.simple";
  case TimingClass::SfuTranscendental:
    return "sfu.transcendental";
  case TimingClass::SfuReduce:
    return "sfu.reduce";
  case TimingClass::Ring:
    return "ring";
  case TimingClass::Reduce:
    return "reduce";
  case TimingClass::Host:
    return "host";
  }
  return "?";
}

std::string_view fieldKindName(FieldKind k) {
  switch (k) {
  case FieldKind::Reg:
    return "register";
  case FieldKind::RegDst:
    return "destination register";
  case FieldKind::Int:
    return "integer";
  case FieldKind::Float:
    return "FP32";
  case FieldKind::Enum:
    return "enum";
  case FieldKind::Counter:
    return "sync counter";
  case FieldKind::Core:
    return "core";
  case FieldKind::LoopEnd:
    return "label";
  case FieldKind::LxAddr:
    return "LX address";
  case FieldKind::MemAddr:
    return "memory address";
  }
  return "?";
}

int64_t limitBound(Limit limit, const hw::HwConfig &config) {
  switch (limit) {
  case Limit::None:
    return INT64_MAX;
  case Limit::LxSticks:
    return config.lx.sizeBytes / kStickBytes;
  case Limit::MemSticks:
    return config.memory.sizeBytes / kStickBytes;
  case Limit::Cores:
    return config.chip.cores;
  case Limit::SyncCounters:
    return config.limits.syncCountersPerCore;
  case Limit::Barriers:
    return config.limits.barriers;
  case Limit::LoopCount:
    return int64_t(config.limits.maxLoopCount) + 1;
  }
  return INT64_MAX;
}

std::string_view limitDescription(Limit limit) {
  switch (limit) {
  case Limit::None:
    return "";
  case Limit::LxSticks:
    return "|offset| below the LX size in sticks (lx.size_bytes / 128)";
  case Limit::MemSticks:
    return "|offset| below the device memory size in sticks "
           "(memory.size_bytes / 128)";
  case Limit::Cores:
    return "core id below chip.cores";
  case Limit::SyncCounters:
    return "counter below limits.sync_counters_per_core";
  case Limit::Barriers:
    return "barrier id below limits.barriers";
  case Limit::LoopCount:
    return "count at most limits.max_loop_count";
  }
  return "";
}

std::string checkFieldValue(const FieldDesc &field, int64_t value) {
  if (value < field.minValue || value > field.maxValue ||
      value % field.multipleOf != 0)
    return std::to_string(value) + " is out of range (valid: " +
           fieldRangeText(field) + ")";
  return "";
}

std::string fieldRangeText(const FieldDesc &field) {
  if (field.kind == FieldKind::Enum) {
    std::string s;
    for (std::string_view v : field.enumValues)
      s += (s.empty() ? "" : "|") + std::string(v);
    return s;
  }
  if (field.kind == FieldKind::Float)
    return "any FP32";
  if (field.kind == FieldKind::Reg || field.kind == FieldKind::RegDst)
    return "r" + std::to_string(field.minValue) + "..r" +
           std::to_string(field.maxValue);
  if (field.kind == FieldKind::Counter)
    return "c" + std::to_string(field.minValue) + "..c" +
           std::to_string(field.maxValue);
  std::string s = std::to_string(field.minValue) + ".." +
                  std::to_string(field.maxValue);
  if (field.kind == FieldKind::Core && field.maxValue == kCoreSelf)
    s = std::to_string(field.minValue) + ".." +
        std::to_string(kCoreSelf - 1) + " or self";
  if (field.multipleOf > 1)
    s += ", multiple of " + std::to_string(field.multipleOf);
  return s;
}

std::string fieldDefaultText(const FieldDesc &field) {
  switch (field.defaultRule) {
  case DefaultRule::None:
    return "";
  case DefaultRule::Const:
    if (field.kind == FieldKind::Enum)
      return std::string(
          field.enumValues[static_cast<size_t>(field.defaultValue)]);
    if (field.kind == FieldKind::Core && field.defaultValue == kCoreSelf)
      return "self";
    return std::to_string(field.defaultValue);
  case DefaultRule::SameAs:
    return std::string(field.defaultField);
  case DefaultRule::ConvertedRow:
    return "row";
  }
  return "";
}

int64_t defaultValueOf(const InstrDesc &desc, size_t field,
                       const int64_t *values) {
  const FieldDesc &f = desc.fields[field];
  switch (f.defaultRule) {
  case DefaultRule::None:
    SPYRE_UNREACHABLE("default of a required field");
  case DefaultRule::Const:
    return f.defaultValue;
  case DefaultRule::SameAs: {
    int other = desc.fieldIndex(f.defaultField);
    SPYRE_ASSERT(other >= 0, "default refers to a missing field");
    return values[other];
  }
  case DefaultRule::ConvertedRow: {
    int n = desc.fieldIndex("n");
    int to = desc.fieldIndex("to");
    SPYRE_ASSERT(n >= 0 && to >= 0, "converted-row default needs n and to");
    // DL16 has 64 lanes per stick, FP32 32: to=f32 doubles the sticks.
    if (values[to] == kFmtF32)
      return values[n] * 2;
    return (values[n] + 1) / 2;
  }
  }
  return 0;
}

} // namespace spyre::isa
