// The functional effect of data instructions (rules in Semantics.h).
//
// Operands are decoded once per instruction into a plain struct, rows are
// converted to FP32 arrays, and each op is a tight loop over those arrays, so
// the per-element cost is the arithmetic alone. LX bytes are only ever
// touched through memcpy, never through a cast pointer (LX is a byte buffer).
#include "sim/core/Semantics.h"

#include "numerics/Dlf16.h"
#include "sim/numerics/SfuMath.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <span>

namespace spyre::sim {

static_assert(std::endian::native == std::endian::little,
              "LX and device memory hold little-endian values");

namespace {

using isa::Instr;
using isa::Opcode;

constexpr int64_t kStick = isa::kStickBytes;
constexpr int64_t kDl16Lanes = 64;
constexpr int64_t kF32Lanes = 32;
constexpr int64_t kI8Lanes = 128;

// ---- Field access by name, resolved once per opcode from the ISA table ----

// clang-format off
enum class Fld : uint8_t {
  Dst, Src, Src1, Src2, N, M, Ds, Ss, S2s, S2, Count, Fmt, Imm, Lane, To,
  C, A, B, K, As, Bs, Cs, Out, Acc,
  Lx, Mem, Run, N1, Lxs1, Ms1, N2, Lxs2, Ms2, S,
  NumFields
};
constexpr size_t kNumFld = static_cast<size_t>(Fld::NumFields);
constexpr std::array<std::string_view, kNumFld> kFldNames = {
    "dst", "src", "src1", "src2", "n", "m", "ds", "ss", "s2s", "s2", "count",
    "fmt", "imm", "lane", "to",
    "c", "a", "b", "k", "as", "bs", "cs", "out", "acc",
    "lx", "mem", "run", "n1", "lxs1", "ms1", "n2", "lxs2", "ms2", "s"};
// clang-format on

using FieldMap = std::array<std::array<int8_t, kNumFld>, 256>;

const FieldMap &fieldMap() {
  static const FieldMap map = [] {
    FieldMap m;
    for (auto &row : m)
      row.fill(-1);
    for (const isa::InstrDesc &d : isa::instructionTable()) {
      for (size_t f = 0; f < kNumFld; ++f)
        m[static_cast<uint8_t>(d.opcode)][f] =
            static_cast<int8_t>(d.fieldIndex(kFldNames[f]));
      // The code below reads enum fields by index: format 1 is f32, s2 1 is
      // stick.
      for (const isa::FieldDesc &fd : d.fields) {
        if (fd.name == "fmt" || fd.name == "out" || fd.name == "to")
          SPYRE_ASSERT(
              (fd.enumValues == std::vector<std::string_view>{"dl16", "f32"}),
              "unexpected format enum in the ISA table");
        if (fd.name == "s2")
          SPYRE_ASSERT(
              (fd.enumValues == std::vector<std::string_view>{"row", "stick"}),
              "unexpected s2 enum in the ISA table");
      }
    }
    return m;
  }();
  return map;
}

int64_t get(const Instr &in, Fld f) {
  int idx = fieldMap()[static_cast<uint8_t>(in.opcode)][static_cast<size_t>(f)];
  SPYRE_ASSERT(idx >= 0, "instruction " +
                             std::string(isa::opcodeName(in.opcode)) +
                             " has no field " +
                             std::string(kFldNames[static_cast<size_t>(f)]));
  return in.value[static_cast<size_t>(idx)];
}

// ---- Operand decoding ----

enum class Fmt : uint8_t { Dl16, F32 };

int64_t lanesOf(Fmt f) { return f == Fmt::Dl16 ? kDl16Lanes : kF32Lanes; }

/// Enum index 1 is f32 in every format field (`fmt`, `out`, `to`).
Fmt fmtOf(int64_t index) { return index == 1 ? Fmt::F32 : Fmt::Dl16; }

enum class Family : uint8_t {
  None,
  Control,
  Dma,
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

Family familyOf(Opcode op) {
  switch (op) {
  case Opcode::Invalid:
    return Family::None;
  case Opcode::Nop:
  case Opcode::Li:
  case Opcode::Addi:
  case Opcode::Loop:
  case Opcode::Signal:
  case Opcode::Wait:
  case Opcode::Barrier:
  case Opcode::Halt:
  case Opcode::Host: // device memory only, moved by the machine (doHost)
    return Family::Control;
  case Opcode::Ld:
  case Opcode::St:
    return Family::Dma;
  case Opcode::Mm:
  case Opcode::Mmi8:
    return Family::Matmul;
  case Opcode::Copy:
  case Opcode::Neg:
  case Opcode::Abs:
  case Opcode::Relu:
  case Opcode::Exp:
  case Opcode::Recip:
  case Opcode::Rsqrt:
  case Opcode::Sqrt:
  case Opcode::Tanh:
  case Opcode::Sigmoid:
  case Opcode::Gelu:
  case Opcode::Gelut:
  case Opcode::Silu:
  case Opcode::Erf:
    return Family::Unary;
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mul:
  case Opcode::Div:
  case Opcode::Max:
  case Opcode::Min:
    return Family::Binary;
  case Opcode::Adds:
  case Opcode::Muls:
  case Opcode::Maxs:
  case Opcode::Pows:
    return Family::Scalar;
  case Opcode::Bcast:
    return Family::Bcast;
  case Opcode::Cvt:
    return Family::Cvt;
  case Opcode::Rsum:
  case Opcode::Rmax:
    return Family::RowReduce;
  case Opcode::Csum:
  case Opcode::Cmax:
    return Family::ColReduce;
  case Opcode::Xpose:
    return Family::Xpose;
  case Opcode::Send:
  case Opcode::Recv:
  case Opcode::Rsend:
  case Opcode::Racc:
    return Family::Ring;
  }
  return Family::None;
}

/// An SFU instruction's operands. Regions are in sticks; `src2` is unused by
/// the families without a second source.
struct SfuOperands {
  Opcode op = Opcode::Invalid;
  Family family = Family::None;
  Region dst, src, src2;
  int64_t n = 1, m = 1;
  /// Elements per source row, and how many of them are valid (count).
  int64_t rowElems = 0, valid = 0;
  Fmt fmt = Fmt::Dl16;
  /// cvt: the destination format (fmt is the source's).
  Fmt dstFmt = Fmt::Dl16;
  bool src2Stick = false;
  float imm = 0;
  int64_t lane = 0;
};

SfuOperands decodeSfu(const Instr &in, Family family) {
  SfuOperands o;
  o.op = in.opcode;
  o.family = family;
  o.n = get(in, Fld::N);
  o.m = get(in, Fld::M);
  if (family == Family::Cvt) {
    o.dstFmt = fmtOf(get(in, Fld::To));
    o.fmt = o.dstFmt == Fmt::F32 ? Fmt::Dl16 : Fmt::F32;
  } else {
    o.fmt = fmtOf(get(in, Fld::Fmt));
    o.dstFmt = o.fmt;
  }
  o.rowElems = o.n * lanesOf(o.fmt);
  int64_t count = family == Family::Bcast ? 0 : get(in, Fld::Count);
  o.valid = count == 0 ? o.rowElems : std::min(count, o.rowElems);

  bool binary = family == Family::Binary;
  int64_t src = get(in, binary ? Fld::Src1 : Fld::Src);
  int64_t dst = get(in, Fld::Dst);
  int64_t ss = get(in, Fld::Ss);
  o.src = {src, o.n, o.m, ss};
  switch (family) {
  case Family::Unary:
  case Family::Scalar:
    o.dst = {dst, o.n, o.m, get(in, Fld::Ds)};
    if (family == Family::Scalar)
      o.imm = std::bit_cast<float>(static_cast<uint32_t>(get(in, Fld::Imm)));
    break;
  case Family::Binary:
    o.dst = {dst, o.n, o.m, get(in, Fld::Ds)};
    o.src2Stick = get(in, Fld::S2) == 1;
    o.src2 = {get(in, Fld::Src2), o.src2Stick ? 1 : o.n, o.m,
              get(in, Fld::S2s)};
    break;
  case Family::Bcast:
    o.lane = get(in, Fld::Lane);
    o.src = {src, 1, o.m, ss};
    o.dst = {dst, o.n, o.m, get(in, Fld::Ds)};
    break;
  case Family::Cvt: {
    int64_t dstLanes = lanesOf(o.dstFmt);
    int64_t dstSticks = (o.rowElems + dstLanes - 1) / dstLanes;
    o.dst = {dst, dstSticks, o.m, get(in, Fld::Ds)};
    break;
  }
  case Family::RowReduce:
    o.dst = {dst, 1, o.m, get(in, Fld::Ds)};
    break;
  case Family::ColReduce:
    o.dst = {dst, o.n, 1, 0};
    break;
  default:
    SPYRE_UNREACHABLE("not an SFU family");
  }
  return o;
}

struct MatmulOperands {
  bool int8 = false;
  int64_t m = 0, k = 0, n = 0;
  Fmt out = Fmt::F32;
  bool acc = false;
  Region a, b, c;
  /// Elements per stick of A/B and of C.
  int64_t inLanes = 0, outLanes = 0;
};

MatmulOperands decodeMatmul(const Instr &in) {
  MatmulOperands o;
  o.int8 = in.opcode == Opcode::Mmi8;
  o.m = get(in, Fld::M);
  o.k = get(in, Fld::K);
  o.n = get(in, Fld::N);
  o.out = o.int8 ? Fmt::F32 : fmtOf(get(in, Fld::Out));
  o.acc = get(in, Fld::Acc) != 0;
  o.inLanes = o.int8 ? kI8Lanes : kDl16Lanes;
  o.outLanes = o.out == Fmt::F32 ? kF32Lanes : kDl16Lanes;
  o.a = {get(in, Fld::A), o.m, o.k / o.inLanes, get(in, Fld::As)};
  o.b = {get(in, Fld::B), o.k, o.n / o.inLanes, get(in, Fld::Bs)};
  o.c = {get(in, Fld::C), o.m, o.n / o.outLanes, get(in, Fld::Cs)};
  return o;
}

struct DmaOperands {
  Region lx, mem;
};

DmaOperands decodeDma(const Instr &in) {
  int64_t run = get(in, Fld::Run), n1 = get(in, Fld::N1), n2 = get(in, Fld::N2);
  return {
      {get(in, Fld::Lx), run, n1, get(in, Fld::Lxs1), n2, get(in, Fld::Lxs2)},
      {get(in, Fld::Mem), run, n1, get(in, Fld::Ms1), n2, get(in, Fld::Ms2)}};
}

Region decodeRing(const Instr &in) {
  return {get(in, Fld::Lx), get(in, Fld::N), get(in, Fld::M), get(in, Fld::S)};
}

// ---- LX access ----

/// Where a source operand is read from: LX itself, or a copy of its span
/// taken before any write (when a destination overlaps it).
struct Source {
  const uint8_t *data = nullptr;
  int64_t first = 0;
  const uint8_t *stick(int64_t s) const { return data + (s - first) * kStick; }
};

/// Scratch memory reused across instructions, so steady-state execution does
/// not allocate.
struct Scratch {
  std::array<std::vector<uint8_t>, 3> snapshot;
  std::vector<float> x, y, acc;
  std::vector<float> at, bt, ct;
  std::vector<int32_t> ai, bi;
  std::vector<uint32_t> ci;
};

Scratch &scratch() {
  static thread_local Scratch s;
  return s;
}

template <typename T> T *sized(std::vector<T> &v, int64_t n) {
  if (v.size() < static_cast<size_t>(n))
    v.resize(static_cast<size_t>(n));
  return v.data();
}

/// A view of `src` that no write of the instruction can change before it is
/// read. A write region equal to the source and touching no stick twice is
/// harmless when `unitSafe`: the caller then reads each unit (row, C tile) of
/// the source before writing the same unit. Anything else overlapping the
/// source's span makes a copy.
Source sourceView(const Region &src, std::span<const Region> writes,
                  bool unitSafe, const uint8_t *lx, std::vector<uint8_t> &buf) {
  bool copy = false;
  for (const Region &w : writes) {
    if (!w.spanOverlaps(src))
      continue;
    if (unitSafe && w == src && w.injective())
      continue;
    copy = true;
  }
  if (!copy)
    return {lx, 0};
  int64_t lo = src.lowest();
  int64_t bytes = (src.highest() - lo + 1) * kStick;
  std::memcpy(sized(buf, bytes), lx + lo * kStick, static_cast<size_t>(bytes));
  return {buf.data(), lo};
}

/// Chunk of DL16 values converted at a time (keeps the staging buffer on the
/// stack).
constexpr int64_t kChunk = 1024;

void readDl16(const uint8_t *p, float *out, int64_t elems) {
  std::array<uint16_t, kChunk> codes;
  for (int64_t done = 0; done < elems; done += kChunk) {
    int64_t len = std::min(kChunk, elems - done);
    std::memcpy(codes.data(), p + done * 2, static_cast<size_t>(len * 2));
    dlf16::toFloatArray(codes.data(), out + done, static_cast<size_t>(len));
  }
}

void writeDl16(uint8_t *p, const float *in, int64_t elems) {
  std::array<uint16_t, kChunk> codes;
  for (int64_t done = 0; done < elems; done += kChunk) {
    int64_t len = std::min(kChunk, elems - done);
    dlf16::fromFloatArray(in + done, codes.data(), static_cast<size_t>(len));
    std::memcpy(p + done * 2, codes.data(), static_cast<size_t>(len * 2));
  }
}

/// Reads `sticks` contiguous sticks in `fmt` as FP32.
void readSticks(const uint8_t *p, int64_t sticks, Fmt fmt, float *out) {
  if (fmt == Fmt::F32) {
    std::memcpy(out, p, static_cast<size_t>(sticks * kStick));
    return;
  }
  readDl16(p, out, sticks * kDl16Lanes);
}

/// Writes FP32 values as `sticks` contiguous sticks in `fmt`.
void writeSticks(uint8_t *p, int64_t sticks, Fmt fmt, const float *in) {
  if (fmt == Fmt::F32) {
    std::memcpy(p, in, static_cast<size_t>(sticks * kStick));
    return;
  }
  writeDl16(p, in, sticks * kDl16Lanes);
}

// ---- Elementwise arithmetic ----

float maxNan(float a, float b) { return (a > b || std::isnan(a)) ? a : b; }
float minNan(float a, float b) { return (a < b || std::isnan(a)) ? a : b; }

template <typename F> void mapInPlace(float *x, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    x[i] = f(x[i]);
}

template <typename F>
void zipInPlace(float *x, const float *y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    x[i] = f(x[i], y[i]);
}

void applyUnary(Opcode op, float *x, int64_t n) {
  switch (op) {
  case Opcode::Copy:
    return;
  case Opcode::Neg:
    return mapInPlace(x, n, [](float v) { return -v; });
  case Opcode::Abs:
    return mapInPlace(x, n, [](float v) { return std::fabs(v); });
  case Opcode::Relu:
    return mapInPlace(x, n, [](float v) { return maxNan(v, 0.0f); });
  case Opcode::Exp:
    return mapInPlace(x, n, sfumath::exp);
  case Opcode::Recip:
    return mapInPlace(x, n, sfumath::recip);
  case Opcode::Rsqrt:
    return mapInPlace(x, n, sfumath::rsqrt);
  case Opcode::Sqrt:
    return mapInPlace(x, n, sfumath::sqrt);
  case Opcode::Tanh:
    return mapInPlace(x, n, sfumath::tanh);
  case Opcode::Sigmoid:
    return mapInPlace(x, n, sfumath::sigmoid);
  case Opcode::Gelu:
    return mapInPlace(x, n, sfumath::gelu);
  case Opcode::Gelut:
    return mapInPlace(x, n, sfumath::geluTanh);
  case Opcode::Silu:
    return mapInPlace(x, n, sfumath::silu);
  case Opcode::Erf:
    return mapInPlace(x, n, sfumath::erf);
  default:
    SPYRE_UNREACHABLE("not a unary SFU op");
  }
}

void applyBinary(Opcode op, float *a, const float *b, int64_t n) {
  switch (op) {
  case Opcode::Add:
    return zipInPlace(a, b, n, [](float x, float y) { return x + y; });
  case Opcode::Sub:
    return zipInPlace(a, b, n, [](float x, float y) { return x - y; });
  case Opcode::Mul:
    return zipInPlace(a, b, n, [](float x, float y) { return x * y; });
  case Opcode::Div:
    return zipInPlace(a, b, n, [](float x, float y) { return x / y; });
  case Opcode::Max:
    return zipInPlace(a, b, n, maxNan);
  case Opcode::Min:
    return zipInPlace(a, b, n, minNan);
  default:
    SPYRE_UNREACHABLE("not a binary SFU op");
  }
}

void applyScalar(Opcode op, float *x, int64_t n, float imm) {
  switch (op) {
  case Opcode::Adds:
    return mapInPlace(x, n, [imm](float v) { return v + imm; });
  case Opcode::Muls:
    return mapInPlace(x, n, [imm](float v) { return v * imm; });
  case Opcode::Maxs:
    return mapInPlace(x, n, [imm](float v) { return maxNan(v, imm); });
  case Opcode::Pows:
    return mapInPlace(x, n, [imm](float v) { return sfumath::pow(v, imm); });
  default:
    SPYRE_UNREACHABLE("not a scalar SFU op");
  }
}

float reduceRow(Opcode op, const float *x, int64_t n) {
  float acc = x[0];
  if (op == Opcode::Rsum) {
    for (int64_t i = 1; i < n; ++i)
      acc = acc + x[i];
    return acc;
  }
  for (int64_t i = 1; i < n; ++i)
    acc = maxNan(acc, x[i]);
  return acc;
}

// ---- SFU ----

void executeSfu(const SfuOperands &o, uint8_t *lx) {
  Scratch &s = scratch();
  const std::array<Region, 1> writes = {o.dst};
  // A column reduction reads every row before its single write.
  std::span<const Region> hazards =
      o.family == Family::ColReduce ? std::span<const Region>() : writes;
  Source src = sourceView(o.src, hazards, true, lx, s.snapshot[0]);
  Source src2;
  if (o.family == Family::Binary)
    src2 = sourceView(o.src2, hazards, true, lx, s.snapshot[1]);

  const int64_t lanes = lanesOf(o.fmt);
  const int64_t dstSticks = o.dst.run;
  const int64_t dstElems = dstSticks * lanesOf(o.dstFmt);
  // Row buffers hold whichever is longer, the source or the destination row.
  float *x = sized(s.x, std::max(o.rowElems, dstElems));
  float *y = sized(s.y, o.rowElems);

  switch (o.family) {
  case Family::Unary:
  case Family::Scalar:
  case Family::Binary:
  case Family::Cvt:
    for (int64_t r = 0; r < o.m; ++r) {
      readSticks(src.stick(o.src.base + r * o.src.s1), o.n, o.fmt, x);
      if (o.family == Family::Unary) {
        applyUnary(o.op, x, o.valid);
      } else if (o.family == Family::Scalar) {
        applyScalar(o.op, x, o.valid, o.imm);
      } else if (o.family == Family::Binary) {
        const uint8_t *p = src2.stick(o.src2.base + r * o.src2.s1);
        if (o.src2Stick) {
          readSticks(p, 1, o.fmt, y);
          for (int64_t i = 1; i < o.n; ++i)
            std::copy(y, y + lanes, y + i * lanes);
        } else {
          readSticks(p, o.n, o.fmt, y);
        }
        applyBinary(o.op, x, y, o.valid);
      }
      std::fill(x + o.valid, x + dstElems, 0.0f);
      writeSticks(lx + (o.dst.base + r * o.dst.s1) * kStick, dstSticks,
                  o.dstFmt, x);
    }
    return;
  case Family::Bcast:
    for (int64_t r = 0; r < o.m; ++r) {
      readSticks(src.stick(o.src.base + r * o.src.s1), 1, o.fmt, y);
      std::fill(x, x + o.rowElems, y[o.lane]);
      writeSticks(lx + (o.dst.base + r * o.dst.s1) * kStick, o.n, o.fmt, x);
    }
    return;
  case Family::RowReduce:
    for (int64_t r = 0; r < o.m; ++r) {
      readSticks(src.stick(o.src.base + r * o.src.s1), o.n, o.fmt, x);
      std::fill(y, y + lanes, reduceRow(o.op, x, o.valid));
      writeSticks(lx + (o.dst.base + r * o.dst.s1) * kStick, 1, o.fmt, y);
    }
    return;
  case Family::ColReduce: {
    float *acc = sized(s.acc, o.rowElems);
    readSticks(src.stick(o.src.base), o.n, o.fmt, acc);
    for (int64_t r = 1; r < o.m; ++r) {
      readSticks(src.stick(o.src.base + r * o.src.s1), o.n, o.fmt, x);
      if (o.op == Opcode::Csum)
        zipInPlace(acc, x, o.valid, [](float a, float b) { return a + b; });
      else
        zipInPlace(acc, x, o.valid, maxNan);
    }
    std::fill(acc + o.valid, acc + o.rowElems, 0.0f);
    writeSticks(lx + o.dst.base * kStick, o.n, o.fmt, acc);
    return;
  }
  default:
    SPYRE_UNREACHABLE("not an SFU family");
  }
}

// ---- Transposition ----

/// xpose's operands: m source rows (one stick each) by k lanes, k
/// destination sticks.
struct XposeOperands {
  int64_t m = 1, k = 1;
  Fmt fmt = Fmt::Dl16;
  Region src, dst;
};

XposeOperands decodeXpose(const Instr &in) {
  XposeOperands o;
  o.m = get(in, Fld::M);
  o.k = get(in, Fld::K);
  o.fmt = fmtOf(get(in, Fld::Fmt));
  o.src = {get(in, Fld::Src), 1, o.m, get(in, Fld::Ss)};
  o.dst = {get(in, Fld::Dst), 1, o.k, get(in, Fld::Ds)};
  return o;
}

/// Lane j of source row i goes to lane i of destination stick j; lanes at or
/// beyond m are +0. Elements are moved as bit patterns (2 or 4 bytes), so
/// nothing is rounded. operandError has ruled out shared sticks, so the
/// destination can be written while the source is read.
void executeXpose(const XposeOperands &o, uint8_t *lx) {
  const int64_t elemBytes = o.fmt == Fmt::F32 ? 4 : 2;
  std::array<uint8_t, kStick> out;
  for (int64_t j = 0; j < o.k; ++j) {
    out.fill(0);
    for (int64_t i = 0; i < o.m; ++i)
      std::memcpy(out.data() + i * elemBytes,
                  lx + (o.src.base + i * o.src.s1) * kStick + j * elemBytes,
                  static_cast<size_t>(elemBytes));
    std::memcpy(lx + (o.dst.base + j * o.dst.s1) * kStick, out.data(), kStick);
  }
}

// ---- PT ----

/// Rows of A converted at a time when A is too large to convert at once.
constexpr int64_t kRowTile = 64;
/// A of up to this many elements is converted to FP32 once per instruction
/// (16 MiB of floats); a larger one (possible only with overlapping blocks)
/// row tile by row tile for every C tile.
constexpr int64_t kWholeAElems = int64_t(1) << 22;
/// Columns of one B stick block (DL16) and of the C tile computed from it.
constexpr int64_t kCols = kDl16Lanes;

/// ct[i][j] = ct[i][j] + sum over kk (increasing) of at[i][kk] * bt[kk][j]
/// for `rows` rows of 64 columns, in register blocks of R rows by C
/// columns. Each ct element sees its products added one at a time in kk
/// order, so the result does not depend on the blocking or on how the
/// compiler vectorises the j loop.
template <int R, int C>
int64_t matmulBlocks(const float *at, const float *bt, float *ct, int64_t rows,
                     int64_t k) {
  int64_t i = 0;
  for (; i + R <= rows; i += R) {
    const float *a0 = at + i * k;
    for (int64_t j0 = 0; j0 < kCols; j0 += C) {
      float acc[R][C];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (int j = 0; j < C; ++j)
          acc[r][j] = ct[(i + r) * kCols + j0 + j];
      for (int64_t kk = 0; kk < k; ++kk) {
        const float *b = bt + kk * kCols + j0;
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
          const float av = a0[r * k + kk];
#pragma GCC unroll 16
          for (int j = 0; j < C; ++j)
            acc[r][j] += av * b[j];
        }
      }
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (int j = 0; j < C; ++j)
          ct[(i + r) * kCols + j0 + j] = acc[r][j];
    }
  }
  return i;
}

void matmulTile(const float *at, const float *bt, float *ct, int64_t rows,
                int64_t k) {
  // 4 x 8 accumulators fit the 16 SSE registers of baseline x86-64 with
  // room for the B vectors and the broadcast A value.
  int64_t done = matmulBlocks<4, 8>(at, bt, ct, rows, k);
  matmulBlocks<1, 8>(at + done * k, bt, ct + done * kCols, rows - done, k);
}

void executeMm(const MatmulOperands &o, uint8_t *lx) {
  Scratch &s = scratch();
  const std::array<Region, 1> writes = {o.c};
  // A and B are read again for every C tile, after earlier tiles are
  // written: any overlap with C needs a copy.
  Source a = sourceView(o.a, writes, false, lx, s.snapshot[0]);
  Source b = sourceView(o.b, writes, false, lx, s.snapshot[1]);
  Source c;
  if (o.acc)
    c = sourceView(o.c, writes, true, lx, s.snapshot[2]);

  const int64_t kBlocks = o.k / kDl16Lanes;
  const int64_t nBlocks = o.n / kDl16Lanes;
  // C sticks per 64-column tile: two FP32 sticks or one DL16 stick.
  const int64_t cParts = kCols / o.outLanes;
  const bool wholeA = o.m * o.k <= kWholeAElems;
  const int64_t rowTile = wholeA ? o.m : std::min(o.m, kRowTile);
  float *bt = sized(s.bt, o.k * kCols);
  float *at = sized(s.at, rowTile * o.k);
  float *ct = sized(s.ct, o.m * kCols);

  auto convertA = [&](int64_t i0, int64_t rows) {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < kBlocks; ++j)
        readDl16(a.stick(o.a.base + j * o.a.s1 + i0 + i),
                 at + i * o.k + j * kDl16Lanes, kDl16Lanes);
  };
  if (wholeA)
    convertA(0, o.m);
  for (int64_t jb = 0; jb < nBlocks; ++jb) {
    // Block jb of B is k consecutive sticks: row r is bt's row r.
    readDl16(b.stick(o.b.base + jb * o.b.s1), bt, o.k * kCols);
    if (o.acc) {
      for (int64_t part = 0; part < cParts; ++part)
        for (int64_t i = 0; i < o.m; ++i)
          readSticks(c.stick(o.c.base + (jb * cParts + part) * o.c.s1 + i), 1,
                     o.out, ct + i * kCols + part * o.outLanes);
    } else {
      std::fill(ct, ct + o.m * kCols, 0.0f);
    }
    for (int64_t i0 = 0; i0 < o.m; i0 += rowTile) {
      int64_t rows = std::min(rowTile, o.m - i0);
      if (!wholeA)
        convertA(i0, rows);
      matmulTile(wholeA ? at + i0 * o.k : at, bt, ct + i0 * kCols, rows, o.k);
    }
    for (int64_t part = 0; part < cParts; ++part)
      for (int64_t i = 0; i < o.m; ++i)
        writeSticks(lx +
                        (o.c.base + (jb * cParts + part) * o.c.s1 + i) * kStick,
                    1, o.out, ct + i * kCols + part * o.outLanes);
  }
}

/// Columns of one INT8 B stick block.
constexpr int64_t kColsI8 = kI8Lanes;

void executeMmi8(const MatmulOperands &o, uint8_t *lx) {
  Scratch &s = scratch();
  const std::array<Region, 1> writes = {o.c};
  Source a = sourceView(o.a, writes, false, lx, s.snapshot[0]);
  Source b = sourceView(o.b, writes, false, lx, s.snapshot[1]);
  Source c;
  if (o.acc)
    c = sourceView(o.c, writes, true, lx, s.snapshot[2]);

  const int64_t kBlocks = o.k / kI8Lanes;
  const int64_t nBlocks = o.n / kI8Lanes;
  const int64_t cParts = kColsI8 / kF32Lanes;
  int32_t *bt = sized(s.bi, o.k * kColsI8);
  int32_t *at = sized(s.ai, std::min(o.m, kRowTile) * o.k);
  uint32_t *ct = sized(s.ci, o.m * kColsI8);

  auto readI8 = [](const uint8_t *p, int32_t *out) {
    std::array<int8_t, kI8Lanes> v;
    std::memcpy(v.data(), p, kStick);
    std::copy(v.begin(), v.end(), out);
  };
  for (int64_t jb = 0; jb < nBlocks; ++jb) {
    for (int64_t r = 0; r < o.k; ++r)
      readI8(b.stick(o.b.base + jb * o.b.s1 + r), bt + r * kColsI8);
    if (o.acc) {
      for (int64_t part = 0; part < cParts; ++part)
        for (int64_t i = 0; i < o.m; ++i)
          std::memcpy(ct + i * kColsI8 + part * kF32Lanes,
                      c.stick(o.c.base + (jb * cParts + part) * o.c.s1 + i),
                      kStick);
    } else {
      std::fill(ct, ct + o.m * kColsI8, 0u);
    }
    for (int64_t i0 = 0; i0 < o.m; i0 += kRowTile) {
      int64_t rows = std::min(kRowTile, o.m - i0);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < kBlocks; ++j)
          readI8(a.stick(o.a.base + j * o.a.s1 + i0 + i),
                 at + i * o.k + j * kI8Lanes);
      for (int64_t i = 0; i < rows; ++i) {
        uint32_t *crow = ct + (i0 + i) * kColsI8;
        const int32_t *arow = at + i * o.k;
        for (int64_t kk = 0; kk < o.k; ++kk) {
          // |a * b| <= 2^14: the product is exact; the sum wraps mod 2^32.
          const int32_t av = arow[kk];
          const int32_t *brow = bt + kk * kColsI8;
          for (int64_t j = 0; j < kColsI8; ++j)
            crow[j] += static_cast<uint32_t>(av * brow[j]);
        }
      }
    }
    for (int64_t part = 0; part < cParts; ++part)
      for (int64_t i = 0; i < o.m; ++i)
        std::memcpy(lx +
                        (o.c.base + (jb * cParts + part) * o.c.s1 + i) * kStick,
                    ct + i * kColsI8 + part * kF32Lanes, kStick);
  }
}

std::string xposeError(const Instr &resolved) {
  XposeOperands o = decodeXpose(resolved);
  const int64_t lanes = lanesOf(o.fmt);
  const char *fmt = o.fmt == Fmt::F32 ? "f32" : "dl16";
  if (o.m > lanes)
    return "xpose m=" + std::to_string(o.m) + " is beyond the " +
           std::to_string(lanes) + " lanes of a " + fmt + " stick";
  if (o.k > lanes)
    return "xpose k=" + std::to_string(o.k) + " is beyond the " +
           std::to_string(lanes) + " lanes of a " + fmt + " stick";
  if (!o.src.spanOverlaps(o.dst))
    return "";
  // At most 64 sticks each: compare the sticks themselves, so interleaved
  // source and destination rows are allowed.
  for (int64_t i = 0; i < o.m; ++i)
    for (int64_t j = 0; j < o.k; ++j)
      if (o.src.base + i * o.src.s1 == o.dst.base + j * o.dst.s1)
        return "xpose source row " + std::to_string(i) +
               " is destination stick " + std::to_string(j) + " (lx " +
               isa::hexText(o.src.base + i * o.src.s1) +
               "): source and destination must not share a stick";
  return "";
}

} // namespace

void footprint(const isa::Instr &resolved, std::vector<Footprint> &out) {
  Family family = familyOf(resolved.opcode);
  switch (family) {
  case Family::None:
  case Family::Control:
    return;
  case Family::Dma: {
    DmaOperands d = decodeDma(resolved);
    if (resolved.opcode == Opcode::Ld) {
      out.push_back({d.mem, false, true});
      out.push_back({d.lx, true, false});
      return;
    }
    out.push_back({d.lx, false, false});
    out.push_back({d.mem, true, true});
    return;
  }
  case Family::Matmul: {
    MatmulOperands o = decodeMatmul(resolved);
    out.push_back({o.a, false, false});
    out.push_back({o.b, false, false});
    if (o.acc)
      out.push_back({o.c, false, false});
    out.push_back({o.c, true, false});
    return;
  }
  case Family::Xpose: {
    XposeOperands o = decodeXpose(resolved);
    out.push_back({o.src, false, false});
    out.push_back({o.dst, true, false});
    return;
  }
  case Family::Ring: {
    Region r = decodeRing(resolved);
    Opcode op = resolved.opcode;
    if (op != Opcode::Recv)
      out.push_back({r, false, false});
    if (op == Opcode::Recv || op == Opcode::Racc)
      out.push_back({r, true, false});
    return;
  }
  default: {
    SfuOperands o = decodeSfu(resolved, family);
    out.push_back({o.src, false, false});
    if (family == Family::Binary)
      out.push_back({o.src2, false, false});
    out.push_back({o.dst, true, false});
    return;
  }
  }
}

std::string operandError(const isa::Instr &resolved) {
  if (resolved.opcode == Opcode::Xpose)
    return xposeError(resolved);
  if (resolved.opcode != Opcode::Bcast)
    return "";
  int64_t lanes = lanesOf(fmtOf(get(resolved, Fld::Fmt)));
  int64_t lane = get(resolved, Fld::Lane);
  if (lane < lanes)
    return "";
  return "bcast lane " + std::to_string(lane) + " is beyond the " +
         std::to_string(lanes) + " lanes of a " +
         (lanes == kF32Lanes ? "f32" : "dl16") + " stick";
}

void executeCompute(const isa::Instr &resolved, uint8_t *lx) {
  Family family = familyOf(resolved.opcode);
  switch (family) {
  case Family::Matmul: {
    MatmulOperands o = decodeMatmul(resolved);
    if (o.int8)
      executeMmi8(o, lx);
    else
      executeMm(o, lx);
    return;
  }
  case Family::Unary:
  case Family::Binary:
  case Family::Scalar:
  case Family::Bcast:
  case Family::Cvt:
  case Family::RowReduce:
  case Family::ColReduce: {
    SPYRE_ASSERT(operandError(resolved).empty(), operandError(resolved));
    executeSfu(decodeSfu(resolved, family), lx);
    return;
  }
  case Family::Xpose:
    SPYRE_ASSERT(operandError(resolved).empty(), operandError(resolved));
    executeXpose(decodeXpose(resolved), lx);
    return;
  default:
    SPYRE_UNREACHABLE("executeCompute on a non-compute instruction: " +
                      std::string(isa::opcodeName(resolved.opcode)));
  }
}

void executeLoad(const isa::Instr &resolved, const DeviceMemory &mem,
                 uint8_t *lx) {
  SPYRE_ASSERT(resolved.opcode == Opcode::Ld, "executeLoad needs ld");
  DmaOperands d = decodeDma(resolved);
  const auto bytes = static_cast<uint64_t>(d.lx.run * kStick);
  for (int64_t i2 = 0; i2 < d.lx.n2; ++i2)
    for (int64_t i1 = 0; i1 < d.lx.n1; ++i1) {
      int64_t from = d.mem.base + i2 * d.mem.s2 + i1 * d.mem.s1;
      int64_t to = d.lx.base + i2 * d.lx.s2 + i1 * d.lx.s1;
      mem.read(static_cast<uint64_t>(from * kStick), lx + to * kStick, bytes);
    }
}

void executeStore(const isa::Instr &resolved, const uint8_t *lx,
                  DeviceMemory &mem) {
  SPYRE_ASSERT(resolved.opcode == Opcode::St, "executeStore needs st");
  DmaOperands d = decodeDma(resolved);
  const auto bytes = static_cast<uint64_t>(d.lx.run * kStick);
  for (int64_t i2 = 0; i2 < d.lx.n2; ++i2)
    for (int64_t i1 = 0; i1 < d.lx.n1; ++i1) {
      int64_t from = d.lx.base + i2 * d.lx.s2 + i1 * d.lx.s1;
      int64_t to = d.mem.base + i2 * d.mem.s2 + i1 * d.mem.s1;
      mem.write(static_cast<uint64_t>(to * kStick), lx + from * kStick, bytes);
    }
}

std::string gather(const Region &r, const uint8_t *lx) {
  std::string out;
  out.reserve(static_cast<size_t>(r.sticks() * kStick));
  r.forEachRun([&](int64_t start, int64_t run) {
    out.append(reinterpret_cast<const char *>(lx + start * kStick),
               static_cast<size_t>(run * kStick));
  });
  return out;
}

void scatter(const Region &r, std::string_view bytes, uint8_t *lx) {
  SPYRE_ASSERT(static_cast<int64_t>(bytes.size()) == r.sticks() * kStick,
               "scatter payload of " + std::to_string(bytes.size()) +
                   " bytes for " + std::to_string(r.sticks()) + " sticks");
  size_t at = 0;
  r.forEachRun([&](int64_t start, int64_t run) {
    auto n = static_cast<size_t>(run * kStick);
    std::memcpy(lx + start * kStick, bytes.data() + at, n);
    at += n;
  });
}

void accumulateF32(const Region &r, std::string_view bytes, uint8_t *lx) {
  SPYRE_ASSERT(static_cast<int64_t>(bytes.size()) == r.sticks() * kStick,
               "accumulate payload of " + std::to_string(bytes.size()) +
                   " bytes for " + std::to_string(r.sticks()) + " sticks");
  const char *in = bytes.data();
  r.forEachRun([&](int64_t start, int64_t run) {
    for (int64_t st = 0; st < run; ++st, in += kStick) {
      std::array<float, kF32Lanes> acc, add;
      uint8_t *p = lx + (start + st) * kStick;
      std::memcpy(acc.data(), p, kStick);
      std::memcpy(add.data(), in, kStick);
      for (int64_t j = 0; j < kF32Lanes; ++j)
        acc[j] += add[j];
      std::memcpy(p, acc.data(), kStick);
    }
  });
}

} // namespace spyre::sim
