// Row kernels (softmax, layer norm, RMS norm, reductions) run on the
// simulator against double-precision references computed here from the
// DL16-rounded inputs, with zero findings required (the race, uninitialised
// read and bounds checks of the schedule).
//
// Tolerances. A DL16 result is the FP32 result rounded to 10 significant
// bits: at most 2^-10 relative error from that rounding. The FP32 work
// before it (exp, reciprocal, rsqrt in sim/numerics/SfuMath within a few
// FP32 ulps; sums of at most a few hundred terms, each addition rounding by
// 2^-24 relative to the running sum) adds well under 2^-16 relative to the
// magnitudes involved. So DL16 outputs are checked to
// 2^-10 |ref| + 2^-16 * scale and FP32 outputs to 2^-16 * scale, where scale
// is the size of the terms that make up the value (|ref| for softmax and
// reductions of positive terms, the normalised magnitude plus bias for the
// norms, the sum of |x| for sums). DL16 has no subnormals, so DL16 results
// below 2^-31 may become zero: 2^-31 absolute on top.
#include "KernelHarness.h"

#include "compiler/codegen/Kernels.h"
#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

namespace spyre::codegen {
namespace {

using isa::DType;
using isa::TensorKind;
using test::allClose;
using test::randomValues;
using test::simulate;

constexpr double kDl16Rel = 1.0 / 1024;  // 2^-10
constexpr double kFp32Rel = 1.0 / 65536; // 2^-16
/// DL16 has no subnormals: a result below 2^-31 becomes zero.
const double kDl16Tiny = std::ldexp(1.0, -31);

struct Shape {
  int64_t rows, cols;
};

std::string name(const Shape &s, DType t, int cores) {
  return std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " +
         std::string(isa::dtypeName(t)) + " on " + std::to_string(cores) +
         " cores";
}

/// The shapes every row kernel is checked on: rows and last dims of 1, 7,
/// 77, 100 and 129 (none but 1 a multiple of the lanes, 129 one lane past
/// two sticks) plus whole sticks.
const std::vector<Shape> &shapes() {
  static const std::vector<Shape> s = {{1, 1},    {7, 7},     {77, 100},
                                       {100, 77}, {129, 129}, {3, 64},
                                       {64, 128}, {129, 1},   {1, 129}};
  return s;
}

// ---------------------------------------------------------------- softmax

std::vector<double> softmaxRef(const std::vector<float> &x, const Shape &s) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < s.rows; ++r) {
    const float *row = x.data() + r * s.cols;
    double mx = *std::max_element(row, row + s.cols);
    double sum = 0;
    for (int64_t c = 0; c < s.cols; ++c)
      sum += std::exp(row[c] - mx);
    for (int64_t c = 0; c < s.cols; ++c)
      y[static_cast<size_t>(r * s.cols + c)] = std::exp(row[c] - mx) / sum;
  }
  return y;
}

void checkSoftmax(const Shape &s, DType dtype, const KernelOptions &opt) {
  SCOPED_TRACE(name(s, dtype, opt.cores) + " from core " +
               std::to_string(opt.firstCore) + ", " +
               std::to_string(opt.units) + " units, tile " +
               std::to_string(opt.tileRows) + ", LX base " +
               std::to_string(opt.lxBase));
  ProgramBuilder pb(hw::builtinConfig(), "softmax");
  const auto &x = pb.addTensor("x", TensorKind::Input, dtype, {s.rows, s.cols});
  const auto &y =
      pb.addTensor("y", TensorKind::Output, dtype, {s.rows, s.cols});
  emitSoftmax(pb, TensorRef::of(x), TensorRef::of(y), opt);
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  // Logits up to +-30: exp of the raw values would overflow DL16's
  // exponent range were the max not subtracted first.
  std::vector<float> xv = randomValues(static_cast<size_t>(s.rows * s.cols), 11,
                                       -30.0f, 30.0f, dtype);
  test::SimResult r = simulate(p, {{{"x", xv}}});
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> ref = softmaxRef(xv, s);
  std::vector<double> tol;
  for (double v : ref)
    tol.push_back(dtype == DType::Dl16 ? kDl16Rel * v + kFp32Rel * v + kDl16Tiny
                                       : kFp32Rel * v + 1e-30);
  EXPECT_TRUE(allClose(r.outputs["y"], ref, tol));
}

void checkSoftmax(const Shape &s, DType dtype, int cores) {
  KernelOptions opt;
  opt.cores = cores;
  checkSoftmax(s, dtype, opt);
}

TEST(SoftmaxKernel, MatchesReferenceOnEveryShapeDl16) {
  for (const Shape &s : shapes())
    checkSoftmax(s, DType::Dl16, 4);
}

TEST(SoftmaxKernel, MatchesReferenceOnEveryShapeFp32) {
  for (const Shape &s : shapes())
    checkSoftmax(s, DType::Fp32, 3);
}

TEST(SoftmaxKernel, RandomShapesCoresUnitsTilesAndLxRegions) {
  uint32_t state = 777;
  auto next = [&](uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  for (int i = 0; i < 12; ++i) {
    Shape s{1 + next(200), 1 + next(400)};
    DType t = next(2) ? DType::Dl16 : DType::Fp32;
    KernelOptions opt;
    opt.cores = 1 + static_cast<int>(next(32));
    opt.units = 1 + static_cast<int>(next(2));
    opt.firstCore =
        static_cast<int>(next(static_cast<uint32_t>(33 - opt.cores)));
    if (next(2))
      opt.tileRows = 1 + next(20);
    opt.lxBase = 64 * next(100);
    checkSoftmax(s, t, opt);
  }
}

TEST(SoftmaxKernel, OneCoreAndAllCores) {
  checkSoftmax({100, 129}, DType::Dl16, 1);
  checkSoftmax({100, 129}, DType::Dl16, 32);
}

// --------------------------------------------------------- causal softmax

/// softmax(scale * x) over the keys j <= i + K - Q of each query i of the
/// [P, Q, K] scores, the hidden keys 0: from the definition, not the table.
std::vector<double> causalSoftmaxRef(const std::vector<float> &x, int64_t p,
                                     int64_t q, int64_t k, double scale) {
  std::vector<double> y(x.size(), 0.0);
  for (int64_t s = 0; s < p; ++s)
    for (int64_t i = 0; i < q; ++i) {
      const int64_t row = (s * q + i) * k, seen = i + (k - q) + 1;
      double mx = -INFINITY;
      for (int64_t j = 0; j < seen; ++j)
        mx = std::max(mx, scale * x[static_cast<size_t>(row + j)]);
      double sum = 0;
      for (int64_t j = 0; j < seen; ++j)
        sum += std::exp(scale * x[static_cast<size_t>(row + j)] - mx);
      for (int64_t j = 0; j < seen; ++j)
        y[static_cast<size_t>(row + j)] =
            std::exp(scale * x[static_cast<size_t>(row + j)] - mx) / sum;
    }
  return y;
}

struct CausalCase {
  int64_t p, q, k;
  DType dtype = DType::Dl16;
  float scale = 1.0f;
  KernelOptions opt;
};

RowPlan checkCausalSoftmax(const CausalCase &c) {
  SCOPED_TRACE(std::to_string(c.p) + "x" + std::to_string(c.q) + "x" +
               std::to_string(c.k) + " " +
               std::string(isa::dtypeName(c.dtype)) + " scale " +
               std::to_string(c.scale) + " on " + std::to_string(c.opt.cores) +
               " cores, " + std::to_string(c.opt.units) + " units, tile " +
               std::to_string(c.opt.tileRows));
  ProgramBuilder pb(hw::builtinConfig(), "causal_softmax");
  const auto &x =
      pb.addTensor("x", TensorKind::Input, c.dtype, {c.p, c.q, c.k});
  const MaskTable table =
      causalMaskTable(c.q, c.k, c.dtype == DType::Dl16 ? 64 : 32);
  const auto &mask = pb.addConst("mask", c.dtype, table.shape, table.values);
  const auto &y =
      pb.addTensor("y", TensorKind::Output, c.dtype, {c.p, c.q, c.k});
  RowPlan plan = emitCausalSoftmax(pb, TensorRef::of(x), TensorRef::of(mask),
                                   TensorRef::of(y), c.scale, c.opt);
  EXPECT_EQ(plan.error, "");
  if (!plan.error.empty())
    return plan;
  isa::Program prog = pb.finish();
  EXPECT_EQ(test::programFileProblem(prog), "");
  std::vector<float> xv = randomValues(static_cast<size_t>(c.p * c.q * c.k),
                                       31, -30.0f, 30.0f, c.dtype);
  test::SimResult r = simulate(prog, {{{"x", xv}}});
  EXPECT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> ref = causalSoftmaxRef(xv, c.p, c.q, c.k, c.scale);
  std::vector<double> tol;
  for (double v : ref)
    tol.push_back(c.dtype == DType::Dl16
                      ? kDl16Rel * v + kFp32Rel * v + kDl16Tiny
                      : kFp32Rel * v + 1e-30);
  EXPECT_TRUE(allClose(r.outputs["y"], ref, tol));
  return plan;
}

TEST(CausalSoftmaxKernel, MatchesTheDefinitionOnSquareAndWideScores) {
  for (DType t : {DType::Dl16, DType::Fp32})
    for (auto [p, q, k] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {3, 7, 7}, {2, 77, 100}, {2, 64, 64}, {1, 129, 129},
             {4, 5, 200}, {2, 96, 160}, {3, 1, 300}, {2, 3, 130}}) {
      CausalCase c{p, q, k, t, 0.125f, {}};
      c.opt.cores = 4;
      checkCausalSoftmax(c);
    }
}

TEST(CausalSoftmaxKernel, TilesDivideTheQueriesAndCoresTakeWholeTiles) {
  // 3 slices of 12 queries over 5 cores: no tile straddles two slices.
  CausalCase c{3, 12, 70, DType::Dl16, 1.0f, {}};
  c.opt.cores = 5;
  RowPlan plan = checkCausalSoftmax(c);
  ASSERT_GT(plan.tileRows, 0);
  EXPECT_EQ(12 % plan.tileRows, 0) << plan.str();
  for (const RowPlan::Part &part : plan.parts) {
    EXPECT_EQ(part.begin % plan.tileRows, 0) << plan.str();
    EXPECT_EQ(part.end % plan.tileRows, 0) << plan.str();
  }
  // A tile size that does not divide the queries is refused.
  ProgramBuilder pb(hw::builtinConfig(), "causal_softmax");
  const auto &x = pb.addTensor("x", TensorKind::Input, DType::Dl16, {3, 12, 70});
  const MaskTable table = causalMaskTable(12, 70, 64);
  const auto &mask =
      pb.addConst("mask", DType::Dl16, table.shape, table.values);
  const auto &y = pb.addTensor("y", TensorKind::Output, DType::Dl16, {3, 12, 70});
  KernelOptions opt;
  opt.cores = 1;
  opt.tileRows = 5;
  EXPECT_EQ(emitCausalSoftmax(pb, TensorRef::of(x), TensorRef::of(mask),
                              TensorRef::of(y), 1.0f, opt)
                .error,
            "5 rows per tile do not divide the 12 rows of a period");
}

TEST(CausalSoftmaxKernel, RandomShapesCoresUnitsAndTiles) {
  uint32_t state = 4242;
  auto next = [&](uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  for (int i = 0; i < 10; ++i) {
    const int64_t q = 1 + next(40);
    CausalCase c{1 + next(4), q, q + next(150),
                 next(2) ? DType::Dl16 : DType::Fp32,
                 0.05f + static_cast<float>(next(100)) / 50.0f, {}};
    c.opt.cores = 1 + static_cast<int>(next(32));
    c.opt.units = 1 + static_cast<int>(next(2));
    c.opt.firstCore =
        static_cast<int>(next(static_cast<uint32_t>(33 - c.opt.cores)));
    if (next(2)) {
      c.opt.tileRows = 1 + next(static_cast<uint32_t>(q));
      while (q % c.opt.tileRows != 0)
        --c.opt.tileRows;
    }
    checkCausalSoftmax(c);
  }
}

TEST(CausalMaskTable, HidesLanesPastTheDiagonalOfEachStick) {
  // Q = 2, K = 3, one block: stick i is query i; it sees keys 0 .. i + 1.
  const MaskTable t = causalMaskTable(2, 3, 64);
  ASSERT_EQ(t.shape, (std::vector<int64_t>{2, 64}));
  EXPECT_EQ(t.values[1], 0.0f);
  EXPECT_EQ(t.values[2], kMaskValue);
  EXPECT_EQ(t.values[64 + 2], 0.0f);
  EXPECT_EQ(t.values[64 + 3], kMaskValue);
  // Q = K = 40 in blocks of 32 FP32 lanes, both masked: 32 sticks of
  // look-back, so stick i - 32 b + 32 is query i in block b.
  EXPECT_EQ(causalMaskFirstBlock(40, 40, 32), 0);
  const MaskTable w = causalMaskTable(40, 40, 32);
  ASSERT_EQ(w.shape, (std::vector<int64_t>{72, 32}));
  auto lane = [&](int64_t stick, int64_t l) {
    return w.values[static_cast<size_t>(stick * 32 + l)];
  };
  EXPECT_EQ(lane(0, 0), kMaskValue); // query 0, keys 32..: all hidden
  EXPECT_EQ(lane(32, 0), 0.0f);      // query 0, key 0
  EXPECT_EQ(lane(32, 1), kMaskValue);
  EXPECT_EQ(lane(39, 7), 0.0f); // query 39, key 39
  EXPECT_EQ(lane(39, 8), kMaskValue);
  EXPECT_EQ(lane(71, 31), 0.0f); // query 39, key 31
}

TEST(CausalMaskTable, BlocksEveryQuerySeesWholeNeedNoTable) {
  // Q = 5, K = 200 in blocks of 64: every query sees keys 0 .. 195, so
  // blocks 0 to 2 are whole and only block 3 (keys 192 .. 199) is masked;
  // stick i is query i there, seeing lanes up to i + 3.
  EXPECT_EQ(causalMaskFirstBlock(5, 200, 64), 3);
  const MaskTable t = causalMaskTable(5, 200, 64);
  ASSERT_EQ(t.shape, (std::vector<int64_t>{5, 64}));
  EXPECT_EQ(t.values[3], 0.0f);
  EXPECT_EQ(t.values[4], kMaskValue);
  EXPECT_EQ(t.values[4 * 64 + 7], 0.0f);
  EXPECT_EQ(t.values[4 * 64 + 8], kMaskValue);
  // A decode step's scores (Q = 1) hide nothing: one stick, the last block.
  EXPECT_EQ(causalMaskFirstBlock(1, 4096, 64), 63);
  const MaskTable d = causalMaskTable(1, 4096, 64);
  ASSERT_EQ(d.shape, (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(std::count(d.values.begin(), d.values.end(), kMaskValue), 0);
}

// ------------------------------------------------------------------ norms

struct NormCase {
  Shape shape;
  DType dtype = DType::Dl16;
  bool weight = false, bias = false;
  DType vecType = DType::Dl16;
  int cores = 1;
  bool rms = false;
};

void checkNorm(const NormCase &c) {
  const Shape &s = c.shape;
  SCOPED_TRACE(std::string(c.rms ? "rmsnorm " : "layernorm ") +
               name(s, c.dtype, c.cores) + (c.weight ? " +weight" : "") +
               (c.bias ? " +bias" : "") + " vectors " +
               std::string(isa::dtypeName(c.vecType)));
  const float eps = 1e-5f;
  ProgramBuilder pb(hw::builtinConfig(), "norm");
  const auto &x =
      pb.addTensor("x", TensorKind::Input, c.dtype, {s.rows, s.cols});
  std::optional<TensorRef> w, b;
  if (c.weight)
    w = TensorRef::of(
        pb.addTensor("w", TensorKind::Input, c.vecType, {s.cols}));
  if (c.bias)
    b = TensorRef::of(
        pb.addTensor("b", TensorKind::Input, c.vecType, {s.cols}));
  const auto &y =
      pb.addTensor("y", TensorKind::Output, c.dtype, {s.rows, s.cols});
  KernelOptions opt;
  opt.cores = c.cores;
  if (c.rms)
    emitRmsNorm(pb, TensorRef::of(x), w, TensorRef::of(y), eps, opt);
  else
    emitLayerNorm(pb, TensorRef::of(x), w, b, TensorRef::of(y), eps, opt);
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  std::vector<float> xv =
      randomValues(static_cast<size_t>(s.rows * s.cols), 21, -3, 5, c.dtype);
  std::vector<float> wv =
      randomValues(static_cast<size_t>(s.cols), 22, -2, 2, c.vecType);
  std::vector<float> bv =
      randomValues(static_cast<size_t>(s.cols), 23, -1, 1, c.vecType);
  test::SimRequest req;
  req.inputs["x"] = xv;
  if (c.weight)
    req.inputs["w"] = wv;
  if (c.bias)
    req.inputs["b"] = bv;
  test::SimResult r = simulate(p, req);
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> ref, tol;
  for (int64_t i = 0; i < s.rows; ++i) {
    const float *row = xv.data() + i * s.cols;
    double mean = 0, sq = 0;
    for (int64_t j = 0; j < s.cols; ++j)
      mean += row[j];
    mean /= static_cast<double>(s.cols);
    for (int64_t j = 0; j < s.cols; ++j) {
      double d = c.rms ? row[j] : row[j] - mean;
      sq += d * d;
    }
    double rstd = 1 / std::sqrt(sq / static_cast<double>(s.cols) + eps);
    for (int64_t j = 0; j < s.cols; ++j) {
      double xhat = ((c.rms ? row[j] : row[j] - mean)) * rstd;
      double wj = c.weight ? wv[static_cast<size_t>(j)] : 1.0;
      double bj = c.bias ? bv[static_cast<size_t>(j)] : 0.0;
      double v = xhat * wj + bj;
      ref.push_back(v);
      // FP32 statistics over the row and the rsqrt perturb xhat by far
      // less than 2^-16 of the normalised magnitude; scale is that
      // magnitude plus the bias added after it.
      double scale = std::fabs(xhat * wj) + std::fabs(bj) + 1e-3;
      tol.push_back(
          kFp32Rel * scale +
          (c.dtype == DType::Dl16 ? kDl16Rel * std::fabs(v) + kDl16Tiny : 0.0));
    }
  }
  EXPECT_TRUE(allClose(r.outputs["y"], ref, tol));
}

TEST(LayerNormKernel, EveryShapeWithAndWithoutAffine) {
  int i = 0;
  for (const Shape &s : shapes()) {
    ++i;
    checkNorm({s, DType::Dl16, false, false, DType::Dl16, 1 + i % 4});
    checkNorm({s, i % 2 ? DType::Dl16 : DType::Fp32, true, true,
               i % 3 ? DType::Dl16 : DType::Fp32, 1 + i % 3});
  }
}

TEST(LayerNormKernel, WeightOnlyAndFp32VectorsOnDl16Input) {
  checkNorm({{77, 100}, DType::Dl16, true, false, DType::Fp32, 2});
  checkNorm({{33, 161}, DType::Dl16, true, true, DType::Fp32, 3});
  checkNorm({{20, 33}, DType::Fp32, false, true, DType::Dl16, 2});
}

TEST(RmsNormKernel, EveryShape) {
  int i = 0;
  for (const Shape &s : shapes()) {
    ++i;
    NormCase c{s,     i % 2 ? DType::Dl16 : DType::Fp32, i % 3 != 0,
               false, i % 4 ? DType::Dl16 : DType::Fp32, 1 + i % 5};
    c.rms = true;
    checkNorm(c);
  }
}

// ------------------------------------------------------------- reductions

void checkReduce(ReduceKind kind, const Shape &s, DType in, DType out,
                 int cores) {
  SCOPED_TRACE(std::to_string(static_cast<int>(kind)) + " " +
               name(s, in, cores) + " -> " + std::string(isa::dtypeName(out)));
  ProgramBuilder pb(hw::builtinConfig(), "reduce");
  const auto &x = pb.addTensor("x", TensorKind::Input, in, {s.rows, s.cols});
  const auto &y = pb.addTensor("y", TensorKind::Output, out, {s.rows, 1});
  KernelOptions opt;
  opt.cores = cores;
  emitReduce(pb, kind, TensorRef::of(x), TensorRef::of(y), opt);
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  // All negative for max, so padding zeros taken as data would show.
  std::vector<float> xv =
      randomValues(static_cast<size_t>(s.rows * s.cols), 31,
                   kind == ReduceKind::Max ? -9.0f : -4.0f,
                   kind == ReduceKind::Max ? -1.0f : 6.0f, in);
  test::SimResult r = simulate(p, {{{"x", xv}}});
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> ref, tol;
  for (int64_t i = 0; i < s.rows; ++i) {
    const float *row = xv.data() + i * s.cols;
    double sum = 0, mag = 0, mx = row[0];
    for (int64_t j = 0; j < s.cols; ++j) {
      sum += row[j];
      mag += std::fabs(row[j]);
      mx = std::max(mx, static_cast<double>(row[j]));
    }
    double v = kind == ReduceKind::Max    ? mx
               : kind == ReduceKind::Mean ? sum / static_cast<double>(s.cols)
                                          : sum;
    // FP32 sums: each addition rounds by 2^-24 of a partial sum bounded by
    // the sum of magnitudes; the max is exact.
    double t =
        kind == ReduceKind::Max
            ? 0
            : static_cast<double>(s.cols + 1) * std::ldexp(1.0, -24) *
                  (kind == ReduceKind::Mean ? mag / static_cast<double>(s.cols)
                                            : mag);
    if (out == DType::Dl16)
      t += kDl16Rel * std::fabs(v) + kDl16Tiny;
    ref.push_back(v);
    tol.push_back(t);
  }
  EXPECT_TRUE(allClose(r.outputs["y"], ref, tol));
}

TEST(ReduceKernel, SumMeanMaxOnEveryShape) {
  int i = 0;
  for (ReduceKind k : {ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Max})
    for (const Shape &s : shapes()) {
      ++i;
      checkReduce(k, s, i % 2 ? DType::Dl16 : DType::Fp32,
                  i % 3 ? DType::Dl16 : DType::Fp32, 1 + i % 4);
    }
}

TEST(ReduceKernel, DroppingTheDimThroughATranspose) {
  // x [4, 70, 33] summed over its last dim to [4, 70, 1], transposed to
  // [4, 1, 70]: the device layout of [4, 70], the reduction without the dim.
  ProgramBuilder pb(hw::builtinConfig(), "reduce_drop");
  const auto &x =
      pb.addTensor("x", TensorKind::Input, DType::Dl16, {4, 70, 33});
  const auto &keep =
      pb.addTensor("keep", TensorKind::Scratch, DType::Fp32, {4, 70, 1});
  const auto &y = pb.addTensor("y", TensorKind::Output, DType::Fp32, {4, 70});
  KernelOptions opt;
  opt.cores = 3;
  emitReduce(pb, ReduceKind::Sum, TensorRef::of(x), TensorRef::of(keep), opt);
  pb.barrierAll();
  TensorRef view = TensorRef::of(y);
  view.shape = {4, 1, 70};
  emitTranspose(pb, TensorRef::of(keep), view, opt);
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  std::vector<float> xv = randomValues(4 * 70 * 33, 5, -2, 2, DType::Dl16);
  test::SimResult r = simulate(p, {{{"x", xv}}});
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> ref, tol;
  for (int64_t row = 0; row < 4 * 70; ++row) {
    double sum = 0, mag = 0;
    for (int64_t j = 0; j < 33; ++j) {
      sum += xv[static_cast<size_t>(row * 33 + j)];
      mag += std::fabs(xv[static_cast<size_t>(row * 33 + j)]);
    }
    ref.push_back(sum);
    tol.push_back(34 * std::ldexp(1.0, -24) * mag);
  }
  EXPECT_TRUE(allClose(r.outputs["y"], ref, tol));
}

} // namespace
} // namespace spyre::codegen
