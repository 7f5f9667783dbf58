// The matmul kernel's operand sharing (MatmulTiling): A tiles passed along
// chains of cores over the data ring (shareA) and B panels kept in LX over
// all of K (keepB), with the first two M tiles paired while a panel arrives
// (pairFill), on odd shapes, against a double-precision reference with zero
// simulator findings (the race and uninitialised-read checkers run on every
// transfer); the planner's choices and estimate on large products; and the
// named reasons a given plan cannot share or pair.
//
// Tolerance as in MatmulKernelTest.cpp: K * 2^-24 * sum_k |a_ik b_kj| for
// the FP32 sums (the PT adds the K products in order, across K tiles), plus
// 2^-10 |C| and DL16's smallest normal for a DL16 C, plus the FP32 bias
// rounding.
#include "KernelHarness.h"

#include "compiler/codegen/Kernels.h"
#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

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
  int cores = 32;
  int units = 0;
  bool padK = false;
  bool transA = false;
  bool overlap = true;
};

struct Built {
  isa::Program program;
  MatmulPlan plan;
};

MatmulArgs argsFor(ProgramBuilder &pb, const Case &c) {
  MatmulArgs args;
  args.transA = c.transA;
  args.a =
      TensorRef::of(pb.addTensor("a", TensorKind::Input, DType::Dl16,
                                 c.transA ? std::vector<int64_t>{c.k, c.m}
                                          : std::vector<int64_t>{c.m, c.k}));
  if (c.padK) {
    const int64_t kPad = (c.k + 63) / 64 * 64;
    args.b = TensorRef::of(
        pb.addTensor("b", TensorKind::Input, DType::Dl16, {kPad, c.n}));
    args.b.shape = {c.k, c.n};
    args.b.padded = {kPad};
  } else {
    args.b = TensorRef::of(
        pb.addTensor("b", TensorKind::Input, DType::Dl16, {c.k, c.n}));
  }
  args.c =
      TensorRef::of(pb.addTensor("c", TensorKind::Output, c.out, {c.m, c.n}));
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

std::string describe(const Case &c) {
  const MatmulTiling &t = c.tiling;
  return std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
         std::to_string(c.n) + " grid " + std::to_string(t.gridM) + "x" +
         std::to_string(t.gridN) + " tiles " + std::to_string(t.tileM) + "/" +
         std::to_string(t.tileK) + "/" + std::to_string(t.tileN) +
         (t.gridK > 1 ? " split " + std::to_string(t.gridK) : "") +
         (t.shareA ? " shareA" : "") + (t.keepB ? " keepB" : "") +
         (t.pairFill.value_or(false) ? " paired" : "") +
         (c.bias ? " +bias" : "") + (c.out == DType::Dl16 ? " dl16" : "") +
         (c.padK ? " padded K" : "") + (c.transA ? " A^T" : "") +
         (c.overlap ? "" : " no overlap");
}

void check(const Case &c) {
  SCOPED_TRACE(describe(c));
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  const MatmulArgs args = argsFor(pb, c);
  const KernelOptions opt = optionsFor(c);
  ASSERT_EQ(matmulPlanProblem(pb.config(), args, opt, c.tiling), "");
  const MatmulPlan given = planMatmulWith(pb.config(), args, opt, c.tiling);
  Built b;
  b.plan = emitMatmul(pb, args, opt, &given);
  // A forced pair is what the plan runs.
  if (c.tiling.pairFill) {
    EXPECT_EQ(b.plan.pairFill, *c.tiling.pairFill);
  }
  b.program = pb.finish();
  ASSERT_EQ(test::programFileProblem(b.program), "");

  std::vector<float> a =
      randomValues(static_cast<size_t>(c.m * c.k), 5, -2, 2, DType::Dl16);
  std::vector<float> bm =
      randomValues(static_cast<size_t>(c.k * c.n), 6, -2, 2, DType::Dl16);
  std::vector<float> bias =
      randomValues(static_cast<size_t>(c.n), 7, -4, 4, DType::Dl16);
  test::SimRequest req;
  req.inputs["a"] = a;
  std::vector<float> bHost = bm;
  if (c.padK)
    bHost.resize(static_cast<size_t>((c.k + 63) / 64 * 64 * c.n), 0.0f);
  req.inputs["b"] = bHost;
  if (c.bias)
    req.inputs["bias"] = bias;
  test::SimResult r = test::simulate(b.program, req);
  ASSERT_TRUE(r.findings.empty()) << r.findings[0] << "\n" << b.plan.str();
  // Sharing moves A between cores, not the work: every row of C is still
  // computed once.
  EXPECT_EQ(r.macs, static_cast<uint64_t>(c.m * ((c.k + 63) / 64 * 64) *
                                          ((c.n + 63) / 64 * 64)));

  const double u = std::ldexp(1.0, -24);
  std::vector<double> ref(static_cast<size_t>(c.m * c.n)), tol(ref.size());
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, mag = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        const size_t ai =
            static_cast<size_t>(c.transA ? k * c.m + i : i * c.k + k);
        double p =
            static_cast<double>(a[ai]) * bm[static_cast<size_t>(k * c.n + j)];
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

MatmulTiling tiling(int gridM, int gridN, int64_t tileM, int64_t tileK,
                    int64_t tileN, bool shareA, bool keepB,
                    bool nOuter = true) {
  MatmulTiling t;
  t.gridM = gridM;
  t.gridN = gridN;
  t.tileM = tileM;
  t.tileK = tileK;
  t.tileN = tileN;
  t.nOuter = nOuter;
  t.shareA = shareA;
  t.keepB = keepB;
  return t;
}

TEST(MatmulSharing, ChainsOfSharedATilesMatchTheReference) {
  // Several K tiles with a tail, M tiles with a tail, and chains on both
  // sides of the memory node (a row over all 32 cores is cut in two).
  check({77, 300, 200, tiling(1, 3, 32, 128, 128, true, false)});
  check({77, 300, 200, tiling(1, 3, 32, 128, 128, true, true)});
  check({100, 129, 2048, tiling(1, 32, 48, 64, 64, true, true)});
  check({100, 129, 2048, tiling(2, 16, 24, 64, 64, true, false)});
  // A loaded once (one M and one K tile): one buffer passed on once.
  check({7, 64, 256, tiling(1, 4, 8, 64, 64, true, false)});
}

TEST(MatmulSharing, KeptPanelsMatchTheReference) {
  check({129, 300, 100, tiling(2, 1, 64, 128, 128, false, true)});
  // Two N tiles per core: a panel per N tile, double-buffered.
  check({64, 200, 256, tiling(1, 2, 32, 64, 64, true, true)});
  check({64, 200, 256, tiling(1, 1, 32, 64, 128, false, true)});
}

TEST(MatmulSharing, BiasDl16OutputOneUnitAndPaddedK) {
  Case c{77, 300, 200, tiling(1, 3, 32, 128, 128, true, true)};
  c.bias = true;
  c.out = DType::Dl16;
  check(c);
  c.units = 1;
  c.bias = false;
  check(c);
  c.padK = true;
  c.out = DType::Fp32;
  check(c);
}

MatmulTiling paired(MatmulTiling t) {
  t.pairFill = true;
  return t;
}

Case dl16(Case c) {
  c.out = DType::Dl16;
  return c;
}

TEST(MatmulSharing, FillPairMatchesTheReference) {
  // Three M tiles (the last 13 rows) and three K tiles (the last 44): the
  // pair, then the tail tile; chains cut at the memory node.
  const Case base =
      dl16({77, 300, 200, paired(tiling(1, 3, 32, 128, 128, true, true))});
  check(base);
  Case c = base;
  c.bias = true;
  check(c);
  c.units = 1; // the post stage on the only SFU unit
  check(c);
  c = base;
  c.padK = true;
  check(c);
  // Two M tiles: the pair is all of M, its second tile the 18-row tail.
  check(dl16({50, 200, 256, paired(tiling(1, 2, 32, 64, 128, true, true))}));
  // Two N tiles per core: a panel and a pair per N tile.
  check(dl16({64, 200, 256, paired(tiling(1, 2, 16, 64, 64, true, true))}));
  // Two grid rows of 16-core chains; K = 129 is three K tiles, the last
  // one column wide.
  check(dl16({100, 129, 2048, paired(tiling(2, 16, 24, 64, 64, true, true))}));
  // A transposed: each A tile of the pair goes through xpose.
  c = dl16({130, 200, 128, paired(tiling(1, 2, 64, 64, 64, false, true))});
  c.transA = true;
  check(c);
  // A K split: both partners pair, the owner converts the sums.
  MatmulTiling split = paired(tiling(1, 1, 16, 128, 128, false, true));
  split.gridK = 2;
  c = dl16({40, 640, 128, split});
  c.bias = true;
  check(c);
}

TEST(MatmulSharing, KeptPanelsWithoutAPairMatchTheReference) {
  // The converting post stage one 64-column block at a time (its stage is
  // two tileM sticks), without overlap and with an FP32 C, where no pair
  // can run.
  Case c = dl16({77, 300, 200, tiling(1, 3, 32, 128, 128, true, true)});
  c.overlap = false;
  c.bias = true;
  check(c);
  c = {77, 300, 200, tiling(1, 3, 32, 128, 128, true, true)};
  c.bias = true;
  check(c);
  c.tiling.pairFill = false;
  c.out = DType::Dl16;
  check(c);
}

TEST(MatmulSharing, ImpossiblePairIsNamed) {
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  const std::string why =
      "pair_fill needs keep_b, n_outer, at least two M and two K tiles per "
      "core, a DL16 C and overlap";
  Case c{77, 300, 200, {}};
  const MatmulArgs f32 = argsFor(pb, c);
  // FP32 C leaves from the C buffers: the third tile would wait for the
  // first one's store.
  EXPECT_EQ(matmulPlanProblem(pb.config(), f32, optionsFor(c),
                              paired(tiling(1, 3, 32, 128, 128, true, true))),
            why);
  ProgramBuilder pb2(hw::builtinConfig(), "matmul");
  c.out = DType::Dl16;
  const MatmulArgs args = argsFor(pb2, c);
  EXPECT_EQ(matmulPlanProblem(pb2.config(), args, optionsFor(c),
                              paired(tiling(1, 3, 32, 128, 128, true, false))),
            why);
  // One M tile, one K tile.
  EXPECT_EQ(matmulPlanProblem(pb2.config(), args, optionsFor(c),
                              paired(tiling(1, 3, 80, 128, 128, true, true))),
            why);
  EXPECT_EQ(matmulPlanProblem(pb2.config(), args, optionsFor(c),
                              paired(tiling(1, 3, 32, 320, 128, true, true))),
            why);
  c.overlap = false;
  EXPECT_EQ(matmulPlanProblem(pb2.config(), args, optionsFor(c),
                              paired(tiling(1, 3, 32, 128, 128, true, true))),
            why);
}

TEST(MatmulSharing, ImpossibleSharingIsNamed) {
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  const Case c{77, 300, 200, {}};
  MatmulArgs args = argsFor(pb, c);
  const KernelOptions opt = optionsFor(c);
  EXPECT_EQ(matmulPlanProblem(pb.config(), args, opt,
                              tiling(1, 1, 32, 128, 256, true, false)),
            "share_a needs a grid row of at least 2 cores (grid 1x1)");
  // 200 columns over 3 cores: 128, 64 and 8; 64-column tiles give 2, 1, 1.
  EXPECT_EQ(matmulPlanProblem(pb.config(), args, opt,
                              tiling(1, 3, 32, 128, 64, true, false)),
            "share_a needs the same number of N tiles on every core of a "
            "grid row (tile N 64 does not give that with grid 1x3)");
  EXPECT_EQ(matmulPlanProblem(pb.config(), args, opt,
                              tiling(1, 2, 32, 128, 64, false, true, false)),
            "keep_b needs N tiles outside M tiles (n_outer) when a core has "
            "several");
  MatmulArgs transposed = args;
  transposed.transA = true;
  transposed.a.shape = {300, 77};
  EXPECT_EQ(matmulPlanProblem(pb.config(), transposed, opt,
                              tiling(1, 2, 64, 128, 128, true, false)),
            "share_a needs A sticked on K (this A is transposed)");
  transposed = args;
  transposed.transB = true;
  transposed.b.shape = {200, 300};
  EXPECT_EQ(matmulPlanProblem(pb.config(), transposed, opt,
                              tiling(1, 2, 32, 128, 128, false, true)),
            "keep_b needs B sticked on N (this B is transposed)");
  // A 4096 x 4096 B panel kept whole on one core: A 2 x 64 sticks, B 64
  // blocks x 4096 rows, one FP32 C tile of 2 x 64 blocks x 64 rows.
  ProgramBuilder big(hw::builtinConfig(), "matmul");
  const Case large{64, 4096, 4096, {}};
  EXPECT_EQ(matmulPlanProblem(big.config(), argsFor(big, large), opt,
                              tiling(1, 1, 64, 64, 4096, false, true)),
            "tiles 64x64x4096 with B kept need 270464 LX sticks per core, "
            "the op's LX region has 16384");
}

/// Timing-only run of the planner's plan for an M x K x N product on 32
/// cores: the plan and the simulated cycles.
struct Timed {
  MatmulPlan plan;
  uint64_t cycles = 0, readBytes = 0;
  size_t staticInstructions = 0;
};

/// The planner's plan for m x k x n on 32 cores, timed; `pairFill` set
/// replans the planner's tiling with the fill pair forced on or off.
Timed timed(int64_t m, int64_t k, int64_t n, const MatmulSearch &search,
            std::optional<bool> pairFill = std::nullopt) {
  ProgramBuilder pb(hw::builtinConfig(), "matmul");
  const Case c{m, k, n, {}};
  const MatmulArgs args = argsFor(pb, Case{m, k, n, {}, false, DType::Dl16});
  Timed t;
  MatmulPlan plan = planMatmul(pb.config(), args, optionsFor(c), 0, 0, search);
  if (pairFill) {
    MatmulTiling tiling = plan.tiling();
    tiling.pairFill = pairFill;
    plan = planMatmulWith(pb.config(), args, optionsFor(c), tiling);
  }
  t.plan = emitMatmul(pb, args, optionsFor(c), &plan);
  isa::Program program = pb.finish();
  for (const isa::Stream &s : program.streams)
    t.staticInstructions += s.code.size();
  test::SimRequest req;
  req.numerics = false;
  test::SimResult r = test::simulate(program, req);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front();
  t.cycles = r.cycles;
  t.readBytes = r.readBytes;
  return t;
}

TEST(MatmulSharing, LargeProductsShareAndTheEstimateHolds) {
  // 4096^3 on 32 cores: the plain plan re-reads A and B many times and is
  // memory bound; sharing reads A once per chain and B once, and with the
  // first two M tiles paired while the B panels arrive (32 MiB at 100
  // bytes per cycle, 335k cycles, against 2 x 512 x 4096 x 128 / 1024 =
  // 524k cycles of PT work) it reaches 96.5% of the PT bound 4096^3 / (32
  // x 1024 MAC/cycle) = 2,097,152 cycles: 2,172,170 simulated (unpaired
  // 344-row tiles, the plan before: 2,424,514). Asserted: 95%.
  const Timed shared = timed(4096, 4096, 4096, {});
  EXPECT_TRUE(shared.plan.shareA && shared.plan.keepB && shared.plan.pairFill)
      << shared.plan.str();
  EXPECT_EQ(shared.plan.tileM, 512) << shared.plan.str();
  EXPECT_LT(shared.cycles, 2097152u * 100 / 95) << shared.plan.str();
  // A read once per chain (two chains, one each side of the memory node)
  // and B once: 3 x 32 MiB.
  EXPECT_EQ(shared.readBytes, 3u * 32 * 1024 * 1024);
  // The planner's estimate is within 5% of the simulated time.
  EXPECT_NEAR(static_cast<double>(shared.plan.estimatedCycles),
              static_cast<double>(shared.cycles),
              0.05 * static_cast<double>(shared.cycles))
      << shared.plan.str();
  // A program of a few thousand instructions, not one per tile.
  EXPECT_LT(shared.staticInstructions, 20000u);
  const Timed plain = timed(4096, 4096, 4096, MatmulSearch::plain());
  EXPECT_FALSE(plain.plan.shareA || plain.plan.keepB);
  EXPECT_GT(plain.readBytes, 4 * shared.readBytes);
  EXPECT_GT(plain.cycles, 2 * shared.cycles);
}

TEST(MatmulSharing, TheFillIsPairedWhereThePtWaitsForIt) {
  // 2048 x 4096 x 4096: the same panels (335k cycles) before half as many
  // M tiles. Paired: 1,119,726 cycles, 93.6% of the PT bound of 1,048,576
  // (the plan before: 1,369,145).
  const Timed half = timed(2048, 4096, 4096, {});
  EXPECT_TRUE(half.plan.keepB && half.plan.pairFill) << half.plan.str();
  EXPECT_LT(half.cycles, 1048576u * 100 / 92) << half.plan.str();
  EXPECT_NEAR(static_cast<double>(half.plan.estimatedCycles),
              static_cast<double>(half.cycles),
              0.1 * static_cast<double>(half.cycles))
      << half.plan.str();
  // 1024^3 on 16 cores is memory bound, but the panels still arrive
  // before the PT units have much to do: the fill is weighed against the
  // bandwidth's slack only (not the DMA latency) and the planner pairs.
  // With the SFU of two vector arrays per corelet (docs/hardware.md#sfu)
  // the post stage drains C faster, the stores meet the panel loads
  // earlier and the pair no longer pays here: 92,538 cycles against
  // 88,488 unpaired (87,692 against 88,894 with the slower SFU). A
  // misestimate of the planner (docs/compiler-quality.md); the pair must
  // stay within 5% of the same tiles without it.
  const Timed small = timed(1024, 1024, 1024, {});
  EXPECT_TRUE(small.plan.keepB && small.plan.pairFill) << small.plan.str();
  const Timed unpaired = timed(1024, 1024, 1024, {}, false);
  EXPECT_FALSE(unpaired.plan.pairFill);
  EXPECT_LT(static_cast<double>(small.cycles),
            1.05 * static_cast<double>(unpaired.cycles));
}

} // namespace
} // namespace spyre::codegen
