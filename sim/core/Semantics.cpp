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

constexpr int64_t kStickBytes = isa::kStickBytes;
constexpr int64_t kDl16Lanes = 64;
constexpr int64_t kF32Lanes = 32;
constexpr int64_t kI8Lanes = 128;

// Fields are read by isa::Field (in[Field::N]); the opcode's format column
// in the ISA table gives their positions.
using isa::Family;
using isa::Field;

// ---- Operand decoding ----

using Fmt = isa::StickFormat;

int64_t lanesOf(Fmt f) { return f == Fmt::Dl16 ? kDl16Lanes : kF32Lanes; }

/// The value of a format field (`fmt`, `out`, `to`).
Fmt fmtOf(int64_t index) {
  return index == static_cast<int64_t>(Fmt::F32) ? Fmt::F32 : Fmt::Dl16;
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
  o.n = in[Field::N];
  o.m = in[Field::M];
  if (family == Family::Cvt) {
    o.dstFmt = fmtOf(in[Field::To]);
    o.fmt = o.dstFmt == Fmt::F32 ? Fmt::Dl16 : Fmt::F32;
  } else {
    o.fmt = fmtOf(in[Field::Fmt]);
    o.dstFmt = o.fmt;
  }
  o.rowElems = o.n * lanesOf(o.fmt);
  int64_t count = family == Family::Bcast ? 0 : in[Field::Count];
  o.valid = count == 0 ? o.rowElems : std::min(count, o.rowElems);

  bool binary = family == Family::Binary;
  int64_t src = in[binary ? Field::Src1 : Field::Src];
  int64_t dst = in[Field::Dst];
  int64_t ss = in[Field::Ss];
  o.src = {src, o.n, o.m, ss};
  switch (family) {
  case Family::Unary:
  case Family::Scalar:
    o.dst = {dst, o.n, o.m, in[Field::Ds]};
    if (family == Family::Scalar)
      o.imm = std::bit_cast<float>(static_cast<uint32_t>(in[Field::Imm]));
    break;
  case Family::Binary:
    o.dst = {dst, o.n, o.m, in[Field::Ds]};
    o.src2Stick =
        in[Field::S2] == static_cast<int64_t>(isa::Src2Mode::Stick);
    o.src2 = {in[Field::Src2], o.src2Stick ? 1 : o.n, o.m,
              in[Field::S2s]};
    break;
  case Family::Bcast:
    o.lane = in[Field::Lane];
    o.src = {src, 1, o.m, ss};
    o.dst = {dst, o.n, o.m, in[Field::Ds]};
    break;
  case Family::Cvt: {
    int64_t dstLanes = lanesOf(o.dstFmt);
    int64_t dstSticks = (o.rowElems + dstLanes - 1) / dstLanes;
    o.dst = {dst, dstSticks, o.m, in[Field::Ds]};
    break;
  }
  case Family::RowReduce:
    o.dst = {dst, 1, o.m, in[Field::Ds]};
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
  o.m = in[Field::M];
  o.k = in[Field::K];
  o.n = in[Field::N];
  o.out = o.int8 ? Fmt::F32 : fmtOf(in[Field::Out]);
  o.acc = in[Field::Acc] != 0;
  o.inLanes = o.int8 ? kI8Lanes : kDl16Lanes;
  o.outLanes = o.out == Fmt::F32 ? kF32Lanes : kDl16Lanes;
  o.a = {in[Field::A], o.m, o.k / o.inLanes, in[Field::As]};
  o.b = {in[Field::B], o.k, o.n / o.inLanes, in[Field::Bs]};
  o.c = {in[Field::C], o.m, o.n / o.outLanes, in[Field::Cs]};
  return o;
}

struct DmaOperands {
  Region lx, mem;
};

DmaOperands decodeDma(const Instr &in) {
  int64_t run = in[Field::Run], n1 = in[Field::N1], n2 = in[Field::N2];
  return {
      {in[Field::Lx], run, n1, in[Field::Lxs1], n2, in[Field::Lxs2]},
      {in[Field::Mem], run, n1, in[Field::Ms1], n2, in[Field::Ms2]}};
}

Region decodeRing(const Instr &in) {
  return {in[Field::Lx], in[Field::N], in[Field::M], in[Field::S]};
}

// ---- LX access ----

/// Where a source operand is read from: LX itself, or a copy of its span
/// taken before any write (when a destination overlaps it).
struct Source {
  const uint8_t *data = nullptr;
  int64_t first = 0;
  const uint8_t *stick(int64_t s) const { return data + (s - first) * kStickBytes; }
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
  int64_t bytes = (src.highest() - lo + 1) * kStickBytes;
  std::memcpy(sized(buf, bytes), lx + lo * kStickBytes, static_cast<size_t>(bytes));
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
    std::memcpy(out, p, static_cast<size_t>(sticks * kStickBytes));
    return;
  }
  readDl16(p, out, sticks * kDl16Lanes);
}

/// Writes FP32 values as `sticks` contiguous sticks in `fmt`.
void writeSticks(uint8_t *p, int64_t sticks, Fmt fmt, const float *in) {
  if (fmt == Fmt::F32) {
    std::memcpy(p, in, static_cast<size_t>(sticks * kStickBytes));
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

/// The index of the first largest of x[0, n), NaN passed over; 0 when
/// every element is NaN.
int32_t argmaxRow(const float *x, int64_t n) {
  int64_t best = -1;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isnan(x[i]) && (best < 0 || x[i] > x[best]))
      best = i;
  return static_cast<int32_t>(std::max<int64_t>(best, 0));
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
      writeSticks(lx + (o.dst.base + r * o.dst.s1) * kStickBytes, dstSticks,
                  o.dstFmt, x);
    }
    return;
  case Family::Bcast:
    for (int64_t r = 0; r < o.m; ++r) {
      readSticks(src.stick(o.src.base + r * o.src.s1), 1, o.fmt, y);
      std::fill(x, x + o.rowElems, y[o.lane]);
      writeSticks(lx + (o.dst.base + r * o.dst.s1) * kStickBytes, o.n, o.fmt, x);
    }
    return;
  case Family::RowReduce:
    for (int64_t r = 0; r < o.m; ++r) {
      readSticks(src.stick(o.src.base + r * o.src.s1), o.n, o.fmt, x);
      if (o.op == Opcode::Rargmax) {
        std::array<int32_t, kF32Lanes> index{};
        index[0] = argmaxRow(x, o.valid);
        std::memcpy(lx + (o.dst.base + r * o.dst.s1) * kStickBytes,
                    index.data(), kStickBytes);
        continue;
      }
      std::fill(y, y + lanes, reduceRow(o.op, x, o.valid));
      writeSticks(lx + (o.dst.base + r * o.dst.s1) * kStickBytes, 1, o.fmt, y);
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
    writeSticks(lx + o.dst.base * kStickBytes, o.n, o.fmt, acc);
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
  o.m = in[Field::M];
  o.k = in[Field::K];
  o.fmt = fmtOf(in[Field::Fmt]);
  o.src = {in[Field::Src], 1, o.m, in[Field::Ss]};
  o.dst = {in[Field::Dst], 1, o.k, in[Field::Ds]};
  return o;
}

/// Lane j of source row i goes to lane i of destination stick j; lanes at or
/// beyond m are +0. Elements are moved as bit patterns (2 or 4 bytes), so
/// nothing is rounded. operandError has ruled out shared sticks, so the
/// destination can be written while the source is read.
void executeXpose(const XposeOperands &o, uint8_t *lx) {
  const int64_t elemBytes = o.fmt == Fmt::F32 ? 4 : 2;
  std::array<uint8_t, kStickBytes> out;
  for (int64_t j = 0; j < o.k; ++j) {
    out.fill(0);
    for (int64_t i = 0; i < o.m; ++i)
      std::memcpy(out.data() + i * elemBytes,
                  lx + (o.src.base + i * o.src.s1) * kStickBytes + j * elemBytes,
                  static_cast<size_t>(elemBytes));
    std::memcpy(lx + (o.dst.base + j * o.dst.s1) * kStickBytes, out.data(), kStickBytes);
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
                        (o.c.base + (jb * cParts + part) * o.c.s1 + i) * kStickBytes,
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
    std::memcpy(v.data(), p, kStickBytes);
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
                      kStickBytes);
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
                        (o.c.base + (jb * cParts + part) * o.c.s1 + i) * kStickBytes,
                    ct + i * kColsI8 + part * kF32Lanes, kStickBytes);
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
  Family family = isa::familyOf(resolved.opcode);
  switch (family) {
  case Family::None:
  case Family::Control:
  case Family::Host: // device memory only, moved by the machine (doHost)
    return;
  case Family::RegLoad: // lr: one stick of LX read
    out.push_back({Region{resolved[Field::Lx], 1, 1, 0}, false, false});
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
  int64_t lanes = lanesOf(fmtOf(resolved[Field::Fmt]));
  int64_t lane = resolved[Field::Lane];
  if (lane < lanes)
    return "";
  return "bcast lane " + std::to_string(lane) + " is beyond the " +
         std::to_string(lanes) + " lanes of a " +
         (lanes == kF32Lanes ? "f32" : "dl16") + " stick";
}

bool operandErrorDependsOnAddresses(isa::Opcode op) {
  return op == Opcode::Xpose;
}

void executeCompute(const isa::Instr &resolved, uint8_t *lx) {
  Family family = isa::familyOf(resolved.opcode);
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
  const auto bytes = static_cast<uint64_t>(d.lx.run * kStickBytes);
  for (int64_t i2 = 0; i2 < d.lx.n2; ++i2)
    for (int64_t i1 = 0; i1 < d.lx.n1; ++i1) {
      int64_t from = d.mem.base + i2 * d.mem.s2 + i1 * d.mem.s1;
      int64_t to = d.lx.base + i2 * d.lx.s2 + i1 * d.lx.s1;
      mem.read(static_cast<uint64_t>(from * kStickBytes), lx + to * kStickBytes, bytes);
    }
}

void executeStore(const isa::Instr &resolved, const uint8_t *lx,
                  DeviceMemory &mem) {
  SPYRE_ASSERT(resolved.opcode == Opcode::St, "executeStore needs st");
  DmaOperands d = decodeDma(resolved);
  const auto bytes = static_cast<uint64_t>(d.lx.run * kStickBytes);
  for (int64_t i2 = 0; i2 < d.lx.n2; ++i2)
    for (int64_t i1 = 0; i1 < d.lx.n1; ++i1) {
      int64_t from = d.lx.base + i2 * d.lx.s2 + i1 * d.lx.s1;
      int64_t to = d.mem.base + i2 * d.mem.s2 + i1 * d.mem.s1;
      mem.write(static_cast<uint64_t>(to * kStickBytes), lx + from * kStickBytes, bytes);
    }
}

std::string gather(const Region &r, const uint8_t *lx) {
  std::string out;
  out.reserve(static_cast<size_t>(r.sticks() * kStickBytes));
  r.forEachRun([&](int64_t start, int64_t run) {
    out.append(reinterpret_cast<const char *>(lx + start * kStickBytes),
               static_cast<size_t>(run * kStickBytes));
  });
  return out;
}

void scatter(const Region &r, std::string_view bytes, uint8_t *lx) {
  SPYRE_ASSERT(static_cast<int64_t>(bytes.size()) == r.sticks() * kStickBytes,
               "scatter payload of " + std::to_string(bytes.size()) +
                   " bytes for " + std::to_string(r.sticks()) + " sticks");
  size_t at = 0;
  r.forEachRun([&](int64_t start, int64_t run) {
    auto n = static_cast<size_t>(run * kStickBytes);
    std::memcpy(lx + start * kStickBytes, bytes.data() + at, n);
    at += n;
  });
}

void accumulateF32(const Region &r, std::string_view bytes, uint8_t *lx) {
  SPYRE_ASSERT(static_cast<int64_t>(bytes.size()) == r.sticks() * kStickBytes,
               "accumulate payload of " + std::to_string(bytes.size()) +
                   " bytes for " + std::to_string(r.sticks()) + " sticks");
  const char *in = bytes.data();
  r.forEachRun([&](int64_t start, int64_t run) {
    for (int64_t st = 0; st < run; ++st, in += kStickBytes) {
      std::array<float, kF32Lanes> acc, add;
      uint8_t *p = lx + (start + st) * kStickBytes;
      std::memcpy(acc.data(), p, kStickBytes);
      std::memcpy(add.data(), in, kStickBytes);
      for (int64_t j = 0; j < kF32Lanes; ++j)
        acc[j] += add[j];
      std::memcpy(p, acc.data(), kStickBytes);
    }
  });
}

} // namespace spyre::sim
