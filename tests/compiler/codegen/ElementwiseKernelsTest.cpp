// Elementwise kernels (every SFU unary op, the scalar-immediate ops, binary
// ops with equal shapes, a broadcast row, a broadcast scalar and a broadcast
// column [R, 1] in either operand order, and DL16 <-> FP32 conversion) on the
// simulator against double-precision references of the DL16-rounded inputs,
// with zero findings required.
//
// Tolerance. Each element is one SFU operation computed in FP32 (the
// transcendentals of sim/numerics/SfuMath within about one FP32 ulp, +-*/
// correctly rounded) and rounded once to the output format. DL16 output:
// 2^-10 |ref| for the rounding plus 2^-16 |ref| for the FP32 step (far more
// than one ulp), plus 2^-31 where a result falls below DL16's smallest
// value. FP32 output: 2^-16 |ref|. Conversions are exact: DL16 -> FP32
// gives the same value, FP32 -> DL16 the codec's rounding of it. A chain of
// them (emitChain) runs every step on a tile in LX and stores only the end.
#include "KernelHarness.h"

#include "compiler/codegen/Kernels.h"
#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>

namespace spyre::codegen {
namespace {

using isa::DType;
using isa::Opcode;
using isa::TensorKind;
using test::allClose;
using test::randomValues;
using test::simulate;

constexpr double kDl16Rel = 1.0 / 1024;
constexpr double kFp32Rel = 1.0 / 65536;
const double kDl16Tiny = std::ldexp(1.0, -31);

struct Shape {
  int64_t rows, cols;
};

std::string name(Opcode op) { return std::string(isa::instrDesc(op).mnemonic); }

const std::vector<Shape> &shapes() {
  static const std::vector<Shape> s = {
      {1, 1}, {7, 7}, {77, 100}, {100, 77}, {129, 129}, {5, 64}, {1, 129}};
  return s;
}

std::vector<double> tolerances(const std::vector<double> &ref, DType out) {
  std::vector<double> tol;
  for (double v : ref) {
    double a = std::fabs(v);
    tol.push_back(out == DType::Dl16 ? kDl16Rel * a + kFp32Rel * a + kDl16Tiny
                                     : kFp32Rel * a + 1e-30);
  }
  return tol;
}

using Fn1 = std::function<double(double)>;

struct UnaryCase {
  Opcode op;
  Fn1 ref;
  float lo, hi;
};

const std::vector<UnaryCase> &unaryCases() {
  const double s2 = std::numbers::sqrt2;
  static const std::vector<UnaryCase> c = {
      {Opcode::Copy, [](double x) { return x; }, -4, 4},
      {Opcode::Neg, [](double x) { return -x; }, -4, 4},
      {Opcode::Abs, [](double x) { return std::fabs(x); }, -4, 4},
      {Opcode::Relu, [](double x) { return std::max(x, 0.0); }, -4, 4},
      {Opcode::Exp, [](double x) { return std::exp(x); }, -6, 6},
      {Opcode::Recip, [](double x) { return 1 / x; }, 0.125f, 8},
      {Opcode::Rsqrt, [](double x) { return 1 / std::sqrt(x); }, 0.125f, 8},
      {Opcode::Sqrt, [](double x) { return std::sqrt(x); }, 0, 8},
      {Opcode::Tanh, [](double x) { return std::tanh(x); }, -4, 4},
      {Opcode::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, -6, 6},
      {Opcode::Gelu, [s2](double x) { return 0.5 * x * (1 + std::erf(x / s2)); }, -4,
       4},
      {Opcode::Gelut,
       [](double x) {
         const double k = std::sqrt(2 / std::numbers::pi);
         return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
       },
       -4, 4},
      {Opcode::Silu, [](double x) { return x / (1 + std::exp(-x)); }, -6, 6},
      {Opcode::Erf, [](double x) { return std::erf(x); }, -3, 3},
  };
  return c;
}

/// Builds y = f(x) with `emit`, runs it, compares with `ref` elementwise.
void checkMap(
    const std::string &what, const Shape &s, DType dtype, int cores, float lo,
    float hi, const Fn1 &ref,
    const std::function<void(ProgramBuilder &, const TensorRef &,
                             const TensorRef &, const KernelOptions &)> &emit) {
  SCOPED_TRACE(what + " " + std::to_string(s.rows) + "x" +
               std::to_string(s.cols) + " " +
               std::string(isa::dtypeName(dtype)) + " on " +
               std::to_string(cores) + " cores");
  ProgramBuilder pb(hw::builtinConfig(), what);
  const auto &x = pb.addTensor("x", TensorKind::Input, dtype, {s.rows, s.cols});
  const auto &y =
      pb.addTensor("y", TensorKind::Output, dtype, {s.rows, s.cols});
  KernelOptions opt;
  opt.cores = cores;
  emit(pb, TensorRef::of(x), TensorRef::of(y), opt);
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  std::vector<float> xv =
      randomValues(static_cast<size_t>(s.rows * s.cols), 3, lo, hi, dtype);
  test::SimResult r = simulate(p, {{{"x", xv}}});
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> expect;
  for (float v : xv)
    expect.push_back(ref(v));
  EXPECT_TRUE(allClose(r.outputs["y"], expect, tolerances(expect, dtype)));
}

TEST(UnaryKernel, EveryOpOnEveryShape) {
  int i = 0;
  for (const UnaryCase &c : unaryCases())
    for (const Shape &s : shapes()) {
      ++i;
      DType t = i % 3 == 0 ? DType::Fp32 : DType::Dl16;
      checkMap(
          name(c.op), s, t, 1 + i % 4, c.lo, c.hi, c.ref,
          [&](ProgramBuilder &pb, const TensorRef &x, const TensorRef &y,
              const KernelOptions &opt) { emitUnary(pb, c.op, x, y, opt); });
    }
}

TEST(ScalarKernel, EveryOpWithItsImmediate) {
  struct Case {
    Opcode op;
    float imm;
    Fn1 ref;
    float lo, hi;
  };
  const std::vector<Case> cases = {
      {Opcode::Adds, 1.5f, [](double x) { return x + 1.5; }, -4, 4},
      {Opcode::Muls, -0.75f, [](double x) { return x * -0.75; }, -4, 4},
      {Opcode::Maxs, 0.25f, [](double x) { return std::max(x, 0.25); }, -4, 4},
      {Opcode::Pows, 2.0f, [](double x) { return x * x; }, -4, 4},
      {Opcode::Pows, 3.0f, [](double x) { return x * x * x; }, -3, 3},
      {Opcode::Pows, 0.5f, [](double x) { return std::sqrt(x); }, 0.01f, 9},
  };
  int i = 0;
  for (const Case &c : cases)
    for (const Shape &s : shapes()) {
      ++i;
      DType t = i % 2 == 0 ? DType::Fp32 : DType::Dl16;
      checkMap(name(c.op), s, t, 1 + i % 5, c.lo, c.hi, c.ref,
               [&](ProgramBuilder &pb, const TensorRef &x, const TensorRef &y,
                   const KernelOptions &opt) {
                 emitScalar(pb, c.op, c.imm, x, y, opt);
               });
    }
}

// ------------------------------------------------------------------ binary

enum class Bcast { Full, Row, Row2d, Scalar };

void checkBinary(Opcode op, const Shape &s, Bcast mode, DType dtype,
                 int cores) {
  SCOPED_TRACE(name(op) + " " + std::to_string(s.rows) + "x" +
               std::to_string(s.cols) + " mode " +
               std::to_string(static_cast<int>(mode)) + " " +
               std::string(isa::dtypeName(dtype)) + " on " +
               std::to_string(cores) + " cores");
  std::vector<int64_t> bShape;
  switch (mode) {
  case Bcast::Full:
    bShape = {s.rows, s.cols};
    break;
  case Bcast::Row:
    bShape = {s.cols};
    break;
  case Bcast::Row2d:
    bShape = {1, s.cols};
    break;
  case Bcast::Scalar:
    bShape = {1};
    break;
  }
  ProgramBuilder pb(hw::builtinConfig(), name(op));
  const auto &a = pb.addTensor("a", TensorKind::Input, dtype, {s.rows, s.cols});
  const auto &b = pb.addTensor("b", TensorKind::Input, dtype, bShape);
  const auto &y =
      pb.addTensor("y", TensorKind::Output, dtype, {s.rows, s.cols});
  KernelOptions opt;
  opt.cores = cores;
  emitBinary(pb, op, TensorRef::of(a), TensorRef::of(b), TensorRef::of(y), opt);
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  const bool div = op == Opcode::Div;
  std::vector<float> av =
      randomValues(static_cast<size_t>(s.rows * s.cols), 8, -4, 4, dtype);
  std::vector<float> bv =
      randomValues(isa::elementCount(bShape), 9, div ? 0.5f : -4, 4, dtype);
  test::SimResult r = simulate(p, {{{"a", av}, {"b", bv}}});
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> expect;
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t j = 0; j < s.cols; ++j) {
      double x = av[static_cast<size_t>(i * s.cols + j)];
      size_t bi = mode == Bcast::Full     ? static_cast<size_t>(i * s.cols + j)
                  : mode == Bcast::Scalar ? 0
                                          : static_cast<size_t>(j);
      double w = bv[bi];
      const Opcode o = op;
      expect.push_back(o == Opcode::Add   ? x + w
                       : o == Opcode::Sub ? x - w
                       : o == Opcode::Mul ? x * w
                       : o == Opcode::Div ? x / w
                       : o == Opcode::Max ? std::max(x, w)
                                    : std::min(x, w));
    }
  // Differences of close operands are exact in FP32 (Sterbenz), so every
  // result is within the rounding of its own magnitude.
  EXPECT_TRUE(allClose(r.outputs["y"], expect, tolerances(expect, dtype)));
}

TEST(BinaryKernel, EveryOpEqualShapes) {
  int i = 0;
  for (Opcode op : {Opcode::Add, Opcode::Sub, Opcode::Mul, Opcode::Div, Opcode::Max, Opcode::Min})
    for (const Shape &s : shapes()) {
      ++i;
      checkBinary(op, s, Bcast::Full, i % 2 ? DType::Dl16 : DType::Fp32,
                  1 + i % 6);
    }
}

TEST(BinaryKernel, BroadcastRowAndScalar) {
  int i = 0;
  for (Opcode op : {Opcode::Add, Opcode::Sub, Opcode::Mul, Opcode::Div, Opcode::Max, Opcode::Min})
    for (const Shape &s : shapes()) {
      ++i;
      DType t = i % 3 == 0 ? DType::Fp32 : DType::Dl16;
      checkBinary(op, s, i % 2 ? Bcast::Row : Bcast::Row2d, t, 1 + i % 4);
      checkBinary(op, s, Bcast::Scalar, t, 1 + i % 3);
    }
}

// ------------------------------------------------------- column operand

struct ColumnCase {
  Opcode op;
  Shape s;
  DType dtype;
  bool colFirst;
  bool overlap;
  int cores;
};

/// y = op(x, col) (op(col, x) with colFirst), col [R, 1] broadcast along
/// the row, against the double-precision reference of the rounded inputs.
/// Returns the run for the traffic checks.
test::SimResult checkColumn(const ColumnCase &c) {
  const Shape &s = c.s;
  SCOPED_TRACE(name(c.op) + (c.colFirst ? " col first " : " ") +
               std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " +
               std::string(isa::dtypeName(c.dtype)) + " on " +
               std::to_string(c.cores) + " cores, overlap " +
               (c.overlap ? "on" : "off"));
  ProgramBuilder pb(hw::builtinConfig(), name(c.op));
  const auto &x =
      pb.addTensor("x", TensorKind::Input, c.dtype, {s.rows, s.cols});
  const auto &col =
      pb.addTensor("col", TensorKind::Input, c.dtype, {s.rows, 1});
  const auto &y =
      pb.addTensor("y", TensorKind::Output, c.dtype, {s.rows, s.cols});
  KernelOptions opt;
  opt.cores = c.cores;
  opt.overlap = c.overlap;
  RowPlan plan =
      emitColumnBinary(pb, c.op, TensorRef::of(x), TensorRef::of(col),
                       TensorRef::of(y), c.colFirst, opt);
  EXPECT_EQ(plan.error, "");
  isa::Program p = pb.finish();
  EXPECT_EQ(test::programFileProblem(p), "");
  // Divisors stay away from zero: [0.5, 4].
  const Opcode o = c.op;
  const bool div = o == Opcode::Div;
  const size_t n = static_cast<size_t>(s.rows * s.cols);
  std::vector<float> xv =
      randomValues(n, 21, div && c.colFirst ? 0.5f : -4, 4, c.dtype);
  std::vector<float> cv =
      randomValues(static_cast<size_t>(s.rows), 22,
                   div && !c.colFirst ? 0.5f : -4, 4, c.dtype);
  test::SimResult r = simulate(p, {{{"x", xv}, {"col", cv}}});
  EXPECT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> expect;
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t j = 0; j < s.cols; ++j) {
      double a = xv[static_cast<size_t>(i * s.cols + j)];
      double b = cv[static_cast<size_t>(i)];
      if (c.colFirst)
        std::swap(a, b);
      expect.push_back(o == Opcode::Add   ? a + b
                       : o == Opcode::Sub ? a - b
                       : o == Opcode::Mul ? a * b
                       : o == Opcode::Div ? a / b
                       : o == Opcode::Max ? std::max(a, b)
                                    : std::min(a, b));
    }
  EXPECT_TRUE(allClose(r.outputs["y"], expect, tolerances(expect, c.dtype)));
  return r;
}

TEST(ColumnKernel, EveryOpBothOrdersOnOddShapes) {
  // Every op in both orders on every shape; dtype, overlap and cores
  // rotate so that each op and order meets both dtypes and both overlap
  // settings.
  int i = 0;
  for (int64_t rows : {1, 7, 77, 1000})
    for (int64_t cols : {1, 7, 100, 129, 3072})
      for (Opcode op : {Opcode::Add, Opcode::Sub, Opcode::Mul, Opcode::Div})
        for (bool colFirst : {false, true}) {
          ++i;
          // The large shape once per op and order, on all cores.
          const bool large = rows * cols > 100000;
          checkColumn({op,
                       {rows, cols},
                       i % 2 ? DType::Dl16 : DType::Fp32,
                       colFirst,
                       (i / 2) % 2 == 0,
                       large ? 32 : 1 + i % 5});
        }
}

TEST(ColumnKernel, MaxAndMin) {
  for (Opcode op : {Opcode::Max, Opcode::Min})
    for (bool colFirst : {false, true})
      checkColumn({op, {77, 129}, DType::Dl16, colFirst, true, 3});
}

TEST(ColumnKernel, ReadsTheColumnOnceAndWritesOnlyTheResult) {
  // x and y [64, 4096] DL16 are 64 sticks per row; the column is one stick
  // per row: 64 * 64 + 64 sticks read, 64 * 64 written, with and without
  // overlap. A broadcast copy would add two [64, 4096] tensors of traffic.
  for (bool overlap : {true, false}) {
    SCOPED_TRACE(overlap ? "overlap" : "no overlap");
    const test::SimResult r =
        checkColumn({Opcode::Sub, {64, 4096}, DType::Dl16, false, overlap, 8});
    EXPECT_EQ(r.readBytes, (64u * 64 + 64) * 128);
    EXPECT_EQ(r.writeBytes, 64u * 64 * 128);
  }
}

// --------------------------------------------------------------- convert

void checkConvert(const Shape &s, DType from, int cores) {
  SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.cols) +
               " from " + std::string(isa::dtypeName(from)));
  DType to = from == DType::Dl16 ? DType::Fp32 : DType::Dl16;
  ProgramBuilder pb(hw::builtinConfig(), "convert");
  const auto &x = pb.addTensor("x", TensorKind::Input, from, {s.rows, s.cols});
  const auto &y = pb.addTensor("y", TensorKind::Output, to, {s.rows, s.cols});
  KernelOptions opt;
  opt.cores = cores;
  emitConvert(pb, TensorRef::of(x), TensorRef::of(y), opt);
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  // FP32 inputs with bits below DL16's precision, so rounding shows.
  std::vector<float> xv =
      randomValues(static_cast<size_t>(s.rows * s.cols), 4, -100, 100, from);
  test::SimResult r = simulate(p, {{{"x", xv}}});
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> expect;
  for (float v : xv)
    expect.push_back(to == DType::Dl16 ? test::roundDl16(v) : v);
  EXPECT_TRUE(allClose(r.outputs["y"], expect,
                       std::vector<double>(expect.size(), 0.0)));
}

TEST(ConvertKernel, BothDirectionsExactly) {
  int i = 0;
  for (const Shape &s : shapes())
    for (DType from : {DType::Dl16, DType::Fp32})
      checkConvert(s, from, 1 + i++ % 4);
  checkConvert({3, 20}, DType::Fp32, 1); // one FP32 block: odd block count
  checkConvert({9, 96}, DType::Fp32, 2); // three FP32 blocks
}

} // namespace
} // namespace spyre::codegen

// ----------------------------------------------------------------- chain

namespace spyre::codegen {
namespace {

/// A chain of every step kind: v = x * 0.5; v = v + b (full); v = r - v
/// (a row, operand first); v = gelu(v); v = v / s (a scalar); v = max(f, v)
/// (full, operand first). Each intermediate is rounded to the tensors' dtype
/// in LX, so the result may differ from the double-precision reference by
/// one rounding per step: depth 6 in the tolerance of
/// tests/compiler/driver/CompileTest.cpp.
void checkChain(const Shape &s, DType dtype, int cores) {
  SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " +
               std::string(isa::dtypeName(dtype)) + " on " +
               std::to_string(cores) + " cores");
  ProgramBuilder pb(hw::builtinConfig(), "chain");
  const auto &x = pb.addTensor("x", TensorKind::Input, dtype, {s.rows, s.cols});
  const auto &b = pb.addTensor("b", TensorKind::Input, dtype, {s.rows, s.cols});
  const auto &r = pb.addTensor("r", TensorKind::Input, dtype, {s.cols});
  const auto &sc = pb.addTensor("s", TensorKind::Input, dtype, {1});
  const auto &f = pb.addTensor("f", TensorKind::Input, dtype, {s.rows, s.cols});
  const auto &y = pb.addTensor("y", TensorKind::Output, dtype, {s.rows, s.cols});
  std::vector<ChainStep> steps = {
      {Opcode::Muls, 0.5f, std::nullopt, false},
      {Opcode::Add, std::nullopt, TensorRef::of(b), false},
      {Opcode::Sub, std::nullopt, TensorRef::of(r), true},
      {Opcode::Gelu, std::nullopt, std::nullopt, false},
      {Opcode::Div, std::nullopt, TensorRef::of(sc), false},
      {Opcode::Max, std::nullopt, TensorRef::of(f), true},
  };
  KernelOptions opt;
  opt.cores = cores;
  RowPlan plan = emitChain(pb, TensorRef::of(x), steps, TensorRef::of(y), opt);
  ASSERT_EQ(plan.error, "");
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  const size_t n = static_cast<size_t>(s.rows * s.cols);
  std::vector<float> xv = randomValues(n, 11, -3, 3, dtype);
  std::vector<float> bv = randomValues(n, 12, -1, 1, dtype);
  std::vector<float> rv = randomValues(static_cast<size_t>(s.cols), 13, -1, 1, dtype);
  std::vector<float> sv = randomValues(1, 14, 0.5f, 2, dtype);
  std::vector<float> fv = randomValues(n, 15, -1, 1, dtype);
  test::SimResult res = simulate(
      p, {{{"x", xv}, {"b", bv}, {"r", rv}, {"s", sv}, {"f", fv}}});
  ASSERT_TRUE(res.findings.empty()) << res.findings[0];
  std::vector<double> expect;
  for (size_t i = 0; i < n; ++i) {
    double v = xv[i] * 0.5 + bv[i];
    v = rv[i % static_cast<size_t>(s.cols)] - v;
    v = 0.5 * v * (1 + std::erf(v / std::numbers::sqrt2));
    v = v / sv[0];
    expect.push_back(std::max<double>(fv[i], v));
  }
  double mean = 0;
  for (double e : expect)
    mean += std::fabs(e) / static_cast<double>(expect.size());
  std::vector<double> tol;
  for (double e : expect)
    tol.push_back(6 * std::ldexp(1.0, -8) * (std::fabs(e) + mean) + kDl16Tiny);
  EXPECT_TRUE(allClose(res.outputs["y"], expect, tol));
}

TEST(ChainKernel, EveryStepKindInOnePass) {
  int i = 0;
  for (const Shape &s : shapes()) {
    ++i;
    checkChain(s, i % 3 == 0 ? DType::Fp32 : DType::Dl16, 1 + i % 4);
  }
}

TEST(ChainKernel, LoadsEachInputOnceAndStoresOnce) {
  // The fused chain moves x, b and the result once: no intermediate goes
  // through device memory.
  ProgramBuilder pb(hw::builtinConfig(), "chain");
  const auto &x = pb.addTensor("x", TensorKind::Input, DType::Dl16, {64, 128});
  const auto &b = pb.addTensor("b", TensorKind::Input, DType::Dl16, {64, 128});
  const auto &y = pb.addTensor("y", TensorKind::Output, DType::Dl16, {64, 128});
  std::vector<ChainStep> steps = {{Opcode::Exp, std::nullopt, std::nullopt, false},
                                  {Opcode::Add, std::nullopt, TensorRef::of(b), false},
                                  {Opcode::Relu, std::nullopt, std::nullopt, false}};
  KernelOptions opt;
  opt.cores = 2;
  emitChain(pb, TensorRef::of(x), steps, TensorRef::of(y), opt);
  isa::Program p = pb.finish();
  test::SimResult res = simulate(p, {{{"x", std::vector<float>(64 * 128, 1)},
                                      {"b", std::vector<float>(64 * 128, 1)}}});
  ASSERT_TRUE(res.findings.empty()) << res.findings[0];
  const uint64_t tensorBytes = 64 * 2 * 128; // 64 rows of two sticks
  EXPECT_EQ(res.readBytes, 2 * tensorBytes);
  EXPECT_EQ(res.writeBytes, tensorBytes);
}

} // namespace
} // namespace spyre::codegen
