// The matmul kernel's K split (MatmulTiling::gridK): partners of a block on
// consecutive cores each reduce over a range of K, and their FP32 partials
// are summed over the reduce ring (rsend/racc) into the block's owner. On
// odd shapes, against a double-precision reference with zero simulator
// findings (the race, uninitialised-read and deadlock checks see every
// transfer); the planner's choice on small-M x N, large-K products and its
// estimate; and the named reasons a K split cannot run.
//
// Tolerance as in MatmulKernelTest.cpp: K * 2^-24 * sum_k |a_ik b_kj| for
// the FP32 sums (each partner adds its products in order; the owner adds
// the gridK partial sums, fewer than K more additions of the same bound),
// plus 2^-10 |C| and DL16's smallest normal for a DL16 C, plus the FP32 bias
// rounding.
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
  MatmulTiling tiling;
  bool bias = false;
  DType out = DType::Fp32;
  bool transA = false, transB = false;
  bool overlap = true;
  int cores = 32;
  int units = 0;
};

MatmulArgs argsFor(ProgramBuilder &pb, const Case &c) {
  MatmulArgs args;
  args.a =
      TensorRef::of(pb.addTensor("a", TensorKind::Input, DType::Dl16,
                                 c.transA ? std::vector<int64_t>{c.k, c.m}
                                          : std::vector<int64_t>{c.m, c.k}));
  args.b =
      TensorRef::of(pb.addTensor("b", TensorKind::Input, DType::Dl16,
                                 c.transB ? std::vector<int64_t>{c.n, c.k}
                                          : std::vector<int64_t>{c.k, c.n}));
  args.c =
      TensorRef::of(pb.addTensor("c", TensorKind::Output, c.out, {c.m, c.n}));
  args.transA = c.transA;
  args.transB = c.transB;
  if (c.bias)
    args.bias = TensorRef::of(
        pb.addTensor("bias", TensorKind::Input, DType::Dl16, {c.n}));
  return args;
}

KernelOptions optionsFor(const Case &c) {
  KernelOptions opt;
  opt.cores = c.cores;
  opt.units = c.units;
  opt.overlap = c.overlap;
  return opt;
}

MatmulTiling tiling(int gridM, int gridN, int gridK, int64_t tileM,
                    int64_t tileK, int64_t tileN, bool keepB = false,
                    bool nOuter = true) {
  MatmulTiling t;
  t.gridM = gridM;
  t.gridN = gridN;
  t.gridK = gridK;
  t.tileM = tileM;
  t.tileK = tileK;
  t.tileN = tileN;
  t.nOuter = nOuter;
  t.keepB = keepB;
  return t;
}

std::string describe(const Case &c) {
  const MatmulTiling &t = c.tiling;
  return std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
         std::to_string(c.n) + " grid " + std::to_string(t.gridM) + "x" +
         std::to_string(t.gridN) + "x" + std::to_string(t.gridK) + " tiles " +
         std::to_string(t.tileM) + "/" + std::to_string(t.tileK) + "/" +
         std::to_string(t.tileN) + (t.keepB ? " keepB" : "") +
         (c.bias ? " +bias" : "") + (c.out == DType::Dl16 ? " dl16" : "") +
         (c.transA ? " A^T" : "") + (c.transB ? " B^T" : "") +
         (c.overlap ? "" : " no overlap") +
         (c.units ? " " + std::to_string(c.units) + " unit" : "");
}

struct Run {
  MatmulPlan plan;
  test::SimResult sim;
};

/// Emits `plan` (a given tiling when plan is null), runs it with numerics
/// and checks C against the reference.
Run check(const Case &c) {
  SCOPED_TRACE(describe(c));
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  const MatmulArgs args = argsFor(pb, c);
  const KernelOptions opt = optionsFor(c);
  Run run;
  EXPECT_EQ(matmulPlanProblem(pb.config(), args, opt, c.tiling), "");
  const MatmulPlan given = planMatmulWith(pb.config(), args, opt, c.tiling);
  run.plan = emitMatmul(pb, args, opt, &given);
  const isa::Program program = pb.finish();
  EXPECT_EQ(test::programFileProblem(program), "");

  std::vector<float> a =
      randomValues(static_cast<size_t>(c.m * c.k), 5, -2, 2, DType::Dl16);
  std::vector<float> bm =
      randomValues(static_cast<size_t>(c.k * c.n), 6, -2, 2, DType::Dl16);
  std::vector<float> bias =
      randomValues(static_cast<size_t>(c.n), 7, -4, 4, DType::Dl16);
  std::vector<float> aHost(a.size()), bHost(bm.size());
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t k = 0; k < c.k; ++k)
      aHost[static_cast<size_t>(c.transA ? k * c.m + i : i * c.k + k)] =
          a[static_cast<size_t>(i * c.k + k)];
  for (int64_t k = 0; k < c.k; ++k)
    for (int64_t j = 0; j < c.n; ++j)
      bHost[static_cast<size_t>(c.transB ? j * c.k + k : k * c.n + j)] =
          bm[static_cast<size_t>(k * c.n + j)];
  test::SimRequest req;
  req.inputs["a"] = aHost;
  req.inputs["b"] = bHost;
  if (c.bias)
    req.inputs["bias"] = bias;
  run.sim = test::simulate(program, req);
  const test::SimResult &r = run.sim;
  EXPECT_TRUE(r.findings.empty())
      << (r.findings.empty() ? "" : r.findings[0]) << "\n"
      << run.plan.str();
  // The partners split K, not the work: every product over K padded to
  // whole sticks is computed once.
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
  auto out = r.outputs.find("c");
  EXPECT_TRUE(out != r.outputs.end() && test::allClose(out->second, ref, tol))
      << run.plan.str();
  return run;
}

TEST(MatmulKSplit, PartnersTakeWholeSticksOfKTheLastOneShorter) {
  // K = 4097 is 65 sticks: 4 partners take 17, 16, 16 and 16 sticks, the
  // last of them only 961 values (its final stick has one).
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  const Case c{1, 4097, 100, tiling(1, 1, 4, 8, 512, 128)};
  const MatmulArgs args = argsFor(pb, c);
  const MatmulPlan plan =
      planMatmulWith(pb.config(), args, optionsFor(c), c.tiling);
  ASSERT_EQ(plan.parts.size(), 4u);
  const int64_t want[4][3] = {
      {0, 0, 1088}, {1, 1088, 2112}, {2, 2112, 3136}, {3, 3136, 4097}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.parts[i].core, want[i][0]);
    EXPECT_EQ(plan.parts[i].k0, want[i][1]);
    EXPECT_EQ(plan.parts[i].k1, want[i][2]);
    EXPECT_EQ(plan.parts[i].m1 - plan.parts[i].m0, 1);
  }
  EXPECT_NE(plan.str().find("K split 4"), std::string::npos) << plan.str();
}

TEST(MatmulKSplit, PartialSumsMatchTheReference) {
  // Two partners, one C tile each, several K tiles with a tail.
  check({7, 1000, 100, tiling(1, 1, 2, 8, 256, 128)});
  // Three partners of K = 4097 with several C tiles per core (M and N
  // tails), so the reduction of one tile overlaps the next tile's K steps.
  check({77, 4097, 129, tiling(1, 1, 3, 32, 512, 64)});
  // Four partners, the last with a short range; M = 1.
  check({1, 4097, 100, tiling(1, 1, 4, 8, 512, 128)});
  // A 2 x 2 grid of blocks, each split three ways: 12 cores, four chains.
  check({77, 1000, 129, tiling(2, 2, 3, 16, 128, 64)});
  // Both loop orders, and B panels kept in LX over each partner's K.
  check({77, 1000, 129, tiling(1, 1, 2, 32, 128, 64, false, false)});
  check({77, 1000, 200, tiling(1, 2, 2, 32, 128, 64, true)});
}

TEST(MatmulKSplit, BiasAndDl16OutputOnTheOwnerOnly) {
  Case c{77, 4097, 129, tiling(1, 1, 3, 32, 512, 64)};
  c.bias = true;
  check(c);
  c.out = DType::Dl16;
  check(c);
  c.bias = false;
  // One K tile per partner and DL16 C: without a split the PT would write
  // DL16 itself; the partials stay FP32 and the owner converts.
  c.tiling = tiling(1, 1, 2, 32, 2048, 64);
  check(c);
  c.m = 7;
  c.k = 1000;
  c.n = 100;
  c.bias = true;
  c.tiling = tiling(1, 1, 4, 8, 64, 128);
  check(c);
}

TEST(MatmulKSplit, TransposedOperands) {
  Case c{77, 1000, 129, tiling(1, 1, 3, 64, 128, 64)};
  c.transA = true;
  check(c);
  c.transA = false;
  c.transB = true;
  c.bias = true;
  c.out = DType::Dl16;
  check(c);
  c.transA = true;
  c.tiling = tiling(2, 1, 2, 64, 256, 128);
  check(c);
  // One unit: the owner's xposes and post stage share one SFU stream.
  c.units = 1;
  check(c);
}

TEST(MatmulKSplit, WithoutOverlapOneBufferStillCorrect) {
  Case c{77, 4097, 129, tiling(1, 1, 3, 32, 512, 64)};
  c.overlap = false;
  c.bias = true;
  c.out = DType::Dl16;
  check(c);
  c.tiling = tiling(2, 2, 2, 16, 256, 64);
  c.bias = false;
  check(c);
}

TEST(MatmulKSplit, ImpossibleSplitsAreNamed) {
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  const Case c{77, 300, 200, {}};
  const MatmulArgs args = argsFor(pb, c);
  const KernelOptions opt = optionsFor(c);
  EXPECT_EQ(
      matmulPlanProblem(pb.config(), args, opt, tiling(1, 1, 0, 32, 128, 128)),
      "k_split 0 is not a number of K partners (1 or more; 1 does not "
      "split)");
  // K = 300 is 5 sticks of 64.
  EXPECT_EQ(
      matmulPlanProblem(pb.config(), args, opt, tiling(1, 1, 6, 32, 64, 128)),
      "k_split 6 gives more partners than K 300 has sticks of 64 (5; a "
      "partner takes at least one)");
  EXPECT_EQ(
      matmulPlanProblem(pb.config(), args, opt, tiling(4, 2, 5, 32, 64, 128)),
      "grid 4x2 with k_split 5 needs 40 cores, the op has 32");
  MatmulTiling shared = tiling(1, 2, 2, 32, 64, 128);
  shared.shareA = true;
  EXPECT_EQ(matmulPlanProblem(pb.config(), args, opt, shared),
            "share_a needs k_split 1 (K partners read different A tiles, and "
            "the cores of a grid row are not neighbours)");
  // The planner names a K split it cannot take as well.
  MatmulSearch search;
  search.kSplit = 6;
  EXPECT_EQ(planMatmul(pb.config(), args, opt, 0, 0, search).error,
            "k_split 6 gives more partners than K 300 has sticks of 64 (5; a "
            "partner takes at least one)");
  KernelOptions four = opt;
  four.cores = 4;
  search.kSplit = 5;
  EXPECT_EQ(planMatmul(pb.config(), args, four, 0, 0, search).error,
            "k_split 5 needs 5 cores, the op has 4");
  // The plain plan (-O0) never splits K.
  EXPECT_EQ(
      planMatmul(pb.config(), args, opt, 0, 0, MatmulSearch::plain()).gridK, 1);
}

/// Timing-only run of a plan for an M x K x N product with DL16 C on 32
/// cores: the plan and the simulated cycles.
struct Timed {
  MatmulPlan plan;
  uint64_t cycles = 0, readBytes = 0;
};

Timed timed(int64_t m, int64_t k, int64_t n, const MatmulSearch &search) {
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  Case c{m, k, n, {}};
  c.out = DType::Dl16;
  const MatmulArgs args = argsFor(pb, c);
  Timed t;
  const MatmulPlan plan =
      planMatmul(pb.config(), args, optionsFor(c), 0, 0, search);
  EXPECT_EQ(plan.error, "");
  t.plan = emitMatmul(pb, args, optionsFor(c), &plan);
  test::SimRequest req;
  req.numerics = false;
  test::SimResult r = test::simulate(pb.finish(), req);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front();
  t.cycles = r.cycles;
  t.readBytes = r.readBytes;
  return t;
}

MatmulSearch whole() {
  MatmulSearch s;
  s.kSplit = 1;
  return s;
}

/// |estimate - simulated| / simulated.
double estimateError(const Timed &t) {
  return std::fabs(static_cast<double>(t.plan.estimatedCycles) -
                   static_cast<double>(t.cycles)) /
         static_cast<double>(t.cycles);
}

TEST(MatmulKSplit, PlannerSplitsSmallOutputsOfLongK) {
  // [64, 16384] x [16384, 128]: 64 x 128 outputs give at most 16 (M, N)
  // blocks of 8 x 64, whose PT passes run at a third of the rate; with K
  // whole the best plan (1x2, 64x512x64) reads A twice and is PT bound on
  // two cores. Split four ways, A and B are read once (6 MiB, 62,915
  // cycles at 100 bytes per cycle): memory bound. Simulated, built-in
  // config: 70,006 cycles split (1x1, K split 4, estimate 78,776, 12.5%
  // high) against 96,643 with K whole.
  const Timed split = timed(64, 16384, 128, {});
  const Timed kept = timed(64, 16384, 128, whole());
  EXPECT_GT(split.plan.gridK, 1) << split.plan.str();
  EXPECT_EQ(kept.plan.gridK, 1);
  EXPECT_LT(split.cycles, kept.cycles) << split.plan.str() << kept.plan.str();
  // A and B once across the partners.
  EXPECT_EQ(split.readBytes, 2u * (64 * 16384 + 16384 * 128));
  EXPECT_LT(estimateError(split), 0.15) << split.plan.str() << split.cycles;
}

} // namespace
} // namespace spyre::codegen
