// The matmul kernel on the simulator against a double-precision reference
// from the DL16 operands, with zero findings required.
//
// Tolerance. The PT multiplies DL16 values exactly in FP32 and adds the K
// products in increasing k order in FP32 (acc=1 continues the same sum
// across K tiles), so |C_fp32 - C| <= K * 2^-24 * sum_k |a_ik b_kj| (the
// standard bound for recursive summation, K * u with u = 2^-24); the FP32
// bias adds 2^-24 (|C| + |bias|). A DL16 C is that value rounded once:
// 2^-10 |C| more, and results below 2^-31 may flush to zero.
#include "KernelHarness.h"

#include "compiler/codegen/Kernels.h"
#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace spyre::codegen {
namespace {

using isa::DType;
using isa::TensorKind;
using test::randomValues;

struct Case {
  int64_t m, k, n;
  bool transA = false, transB = false;
  bool bias = false;
  DType out = DType::Fp32;
  DType biasType = DType::Dl16;
  int cores = 1;
  /// Tiles to force (0: the planner's choice); forcing small tiles makes
  /// several K tiles, tails and both loop orders appear on small problems.
  int64_t tileM = 0, tileK = 0, tileN = 0;
  int nOuter = -1;   ///< -1: planner's choice
  int units = 0;     ///< PT/SFU units per core; 0: all
  bool padK = false; ///< B's K dim padded to a multiple of 64 in memory
};

std::string describe(const Case &c) {
  return std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
         std::to_string(c.n) + (c.transA ? " A^T" : "") +
         (c.transB ? " B^T" : "") + (c.bias ? " +bias" : "") + " -> " +
         std::string(isa::dtypeName(c.out)) + " on " + std::to_string(c.cores) +
         " cores" +
         (c.tileK ? " tiles " + std::to_string(c.tileM) + "/" +
                        std::to_string(c.tileK) + "/" + std::to_string(c.tileN)
                  : "") +
         (c.padK ? " padded K" : "");
}

struct Built {
  isa::Program program;
  MatmulPlan plan;
};

Built build(const Case &c) {
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  std::vector<int64_t> aShape = c.transA ? std::vector<int64_t>{c.k, c.m}
                                         : std::vector<int64_t>{c.m, c.k};
  std::vector<int64_t> bShape = c.transB ? std::vector<int64_t>{c.n, c.k}
                                         : std::vector<int64_t>{c.k, c.n};
  MatmulArgs args;
  args.a =
      TensorRef::of(pb.addTensor("a", TensorKind::Input, DType::Dl16, aShape));
  if (c.padK) {
    // A [K_pad, N] tensor holds B with zero rows past K; the kernel sees
    // the [K, N] view with its K dim padded.
    int64_t kPad = (c.k + 63) / 64 * 64;
    args.b = TensorRef::of(
        pb.addTensor("b", TensorKind::Input, DType::Dl16, {kPad, c.n}));
    args.b.shape = {c.k, c.n};
    args.b.padded = {kPad};
  } else {
    args.b = TensorRef::of(
        pb.addTensor("b", TensorKind::Input, DType::Dl16, bShape));
  }
  args.c =
      TensorRef::of(pb.addTensor("c", TensorKind::Output, c.out, {c.m, c.n}));
  args.transA = c.transA;
  args.transB = c.transB;
  if (c.bias)
    args.bias = TensorRef::of(
        pb.addTensor("bias", TensorKind::Input, c.biasType, {c.n}));
  KernelOptions opt;
  opt.cores = c.cores;
  opt.units = c.units;
  MatmulPlan plan = planMatmul(pb.config(), args, opt);
  if (c.tileK) {
    plan.tileM = c.tileM;
    plan.tileK = c.tileK;
    plan.tileN = c.tileN;
  }
  if (c.nOuter >= 0)
    plan.nOuter = c.nOuter == 1;
  Built b;
  b.plan = emitMatmul(pb, args, opt, &plan);
  b.program = pb.finish();
  return b;
}

void check(const Case &c) {
  SCOPED_TRACE(describe(c));
  Built b = build(c);
  ASSERT_EQ(test::programFileProblem(b.program), "");
  // A [m][k] and B [k][n] in host order of the math; stored transposed
  // when asked.
  std::vector<float> a =
      randomValues(static_cast<size_t>(c.m * c.k), 5, -2, 2, DType::Dl16);
  std::vector<float> bm =
      randomValues(static_cast<size_t>(c.k * c.n), 6, -2, 2, DType::Dl16);
  std::vector<float> bias =
      randomValues(static_cast<size_t>(c.n), 7, -4, 4, c.biasType);
  test::SimRequest req;
  std::vector<float> aHost(a.size()), bHost(bm.size());
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t k = 0; k < c.k; ++k)
      aHost[static_cast<size_t>(c.transA ? k * c.m + i : i * c.k + k)] =
          a[static_cast<size_t>(i * c.k + k)];
  for (int64_t k = 0; k < c.k; ++k)
    for (int64_t j = 0; j < c.n; ++j)
      bHost[static_cast<size_t>(c.transB ? j * c.k + k : k * c.n + j)] =
          bm[static_cast<size_t>(k * c.n + j)];
  if (c.padK)
    bHost.resize(static_cast<size_t>((c.k + 63) / 64 * 64 * c.n), 0.0f);
  req.inputs["a"] = aHost;
  req.inputs["b"] = bHost;
  if (c.bias)
    req.inputs["bias"] = bias;
  test::SimResult r = test::simulate(b.program, req);
  ASSERT_TRUE(r.findings.empty()) << r.findings[0] << "\n" << b.plan.str();
  // Every row of C is computed once, over K and N padded to whole sticks.
  EXPECT_EQ(r.macs, static_cast<uint64_t>(c.m * ((c.k + 63) / 64 * 64) *
                                          ((c.n + 63) / 64 * 64)));

  const double u = std::ldexp(1.0, -24);
  std::vector<double> ref(static_cast<size_t>(c.m * c.n)), tol(ref.size());
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, mag = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        double p = static_cast<double>(a[static_cast<size_t>(i * c.k + k)]) *
                   bm[static_cast<size_t>(k * c.n + j)];
        sum += p;
        mag += std::fabs(p);
      }
      double t = static_cast<double>(c.k) * u * mag;
      if (c.bias) {
        double bj = bias[static_cast<size_t>(j)];
        sum += bj;
        t += u * (std::fabs(sum) + std::fabs(bj));
      }
      if (c.out == DType::Dl16)
        t += std::fabs(sum) / 1024 + std::ldexp(1.0, -31);
      ref[static_cast<size_t>(i * c.n + j)] = sum;
      tol[static_cast<size_t>(i * c.n + j)] = t + 1e-30;
    }
  EXPECT_TRUE(test::allClose(r.outputs["c"], ref, tol)) << b.plan.str();
}

const int64_t kSizes[] = {1, 7, 64, 100, 129};

TEST(MatmulKernel, EverySizeCombinationFp32Out) {
  for (int64_t m : kSizes)
    for (int64_t k : kSizes)
      for (int64_t n : kSizes) {
        Case c{m, k, n};
        c.cores = 2;
        check(c);
      }
}

TEST(MatmulKernel, SizesWithDl16OutputAndBias) {
  int i = 0;
  for (int64_t m : kSizes)
    for (int64_t k : kSizes)
      for (int64_t n : kSizes) {
        if (++i % 3 != 0)
          continue;
        Case c{m, k, n};
        c.out = DType::Dl16;
        c.bias = i % 2 == 0;
        c.biasType = i % 4 == 0 ? DType::Fp32 : DType::Dl16;
        c.cores = 1 + i % 5;
        check(c);
      }
}

TEST(MatmulKernel, TransposedOperands) {
  int i = 0;
  for (int64_t m : kSizes)
    for (int64_t k : kSizes)
      for (int64_t n : kSizes) {
        if (++i % 4 != 1)
          continue;
        Case c{m, k, n};
        c.transA = i % 3 != 0;
        c.transB = i % 3 != 1;
        c.out = i % 2 ? DType::Dl16 : DType::Fp32;
        c.bias = i % 5 == 0;
        c.cores = 1 + i % 3;
        check(c);
      }
}

TEST(MatmulKernel, SeveralKTilesTailsAndBothLoopOrders) {
  for (int nOuter : {0, 1})
    for (DType out : {DType::Fp32, DType::Dl16}) {
      Case c{129, 200, 150};
      c.out = out;
      c.tileM = 64;
      c.tileK = 64;
      c.tileN = 64;
      c.nOuter = nOuter;
      check(c);
      c.bias = true;
      c.transA = true;
      c.transB = true;
      check(c);
    }
  // K in one tile with several m and n tiles: B stays resident over m.
  Case c{200, 100, 300};
  c.tileM = 48;
  c.tileK = 128;
  c.tileN = 128;
  c.out = DType::Dl16;
  check(c);
  c.nOuter = 0;
  c.padK = true;
  check(c);
}

TEST(MatmulKernel, GridsOverManyCores) {
  Case c{300, 129, 500};
  for (int cores : {4, 7, 32}) {
    c.cores = cores;
    c.out = cores == 7 ? DType::Dl16 : DType::Fp32;
    c.bias = cores != 4;
    check(c);
  }
}

TEST(MatmulKernel, OneUnitPerCoreDoesTransposesAndPostStageInOneStream) {
  Case c{130, 150, 100};
  c.transA = true;
  c.transB = true;
  c.bias = true;
  c.out = DType::Dl16;
  c.units = 1;
  c.tileM = 64;
  c.tileK = 64;
  c.tileN = 64;
  check(c);
  c.cores = 3;
  c.tileK = 0;
  check(c);
}

TEST(MatmulKernel, RandomProblemsAndPlans) {
  // Shapes, operand forms, core counts, units and tiles drawn at random
  // (fixed seed): every combination must be race free and correct.
  uint32_t state = 12345;
  auto next = [&](uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  for (int i = 0; i < 24; ++i) {
    Case c{1 + next(300), 1 + next(300), 1 + next(300)};
    c.transA = next(2);
    c.transB = next(2);
    c.bias = next(2);
    c.out = next(2) ? DType::Dl16 : DType::Fp32;
    c.biasType = next(2) ? DType::Dl16 : DType::Fp32;
    c.cores = 1 + static_cast<int>(next(32));
    c.units = 1 + static_cast<int>(next(2));
    if (next(2)) {
      c.tileM = (c.transA ? 64 : 8) * (1 + next(4));
      c.tileK = 64 * (1 + next(3));
      c.tileN = 64 * (1 + next(3));
      c.nOuter = static_cast<int>(next(2));
    }
    c.padK = !c.transB && next(3) == 0;
    check(c);
  }
}

TEST(MatmulKernel, PaddedKNeedsNoZeroFill) {
  Case c{33, 100, 77};
  c.padK = true;
  check(c);
  c.tileM = 16;
  c.tileK = 64;
  c.tileN = 64;
  check(c);
}

} // namespace
} // namespace spyre::codegen
