// `spyre sim` on the clean examples of examples/asm/, run as a user runs
// them: real inputs from tests/data/sim/ (written by make_fixtures.py), the
// outputs checked against references computed here in double precision, and
// the statistics and trace of every run checked for consistency.
#include "SimRun.h"

#include "support/Npy.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>

namespace spyre::test {
namespace {

/// Relative error of rounding to DL16 (ten significant bits, round to
/// nearest): half a unit in the last place, 2^-10 of the value at most.
constexpr double kDl16Rel = 1.0 / 1024.0;

/// Runs a clean example with inputs, outputs, stats and trace and checks
/// what every clean run must show: exit 0, no findings, a valid trace that
/// agrees with the stats.
SimRun runClean(const std::string &example, const std::string &inputs) {
  std::string dir = makeTempDir();
  std::string program = assembleExample(example, dir);
  SimRun run = simulate(program, {.inputs = simData(inputs), .outputs = true});
  EXPECT_EQ(run.tool.exitCode, 0) << run.tool.out << run.tool.err;
  EXPECT_NE(run.tool.out.find("findings     0\n"), std::string::npos)
      << run.tool.out;
  EXPECT_TRUE(run.stats.at("findings").empty())
      << run.stats.at("findings").dump(2);
  EXPECT_EQ(run.stats.at("program"), example);
  expectTraceMatchesStats(run.traceText, run.stats);
  return run;
}

TEST(SimExamples, DmaCopyReturnsItsInput) {
  SimRun run = runClean("dma_copy", "dma_copy");
  // The fixture's values are k/64 with |k| <= 256, exact in DL16, so the
  // copy through DL16 device memory must return every one unchanged.
  std::vector<float> x = readF32(simData("dma_copy/x.npy"), {3, 100});
  std::vector<float> y = readF32(run.outputs() + "/y.npy", {3, 100});
  ASSERT_EQ(x.size(), 300u);
  EXPECT_EQ(y, x);
}

TEST(SimExamples, DmaCopyAcceptsFloat16Input) {
  NpyArray host = readNpy(simData("dma_copy_f16/x.npy"));
  ASSERT_EQ(host.dtype, NpyDtype::F16) << "the fixture must be float16";
  SimRun run = runClean("dma_copy", "dma_copy_f16");
  // make_fixtures.py writes the same values to the float32 fixture; they are
  // exact in float16 and DL16 alike.
  std::vector<float> x = readF32(simData("dma_copy/x.npy"), {3, 100});
  EXPECT_EQ(readF32(run.outputs() + "/y.npy", {3, 100}), x);
}

TEST(SimExamples, PtMatmulMatchesDoubleReference) {
  SimRun run = runClean("pt_matmul", "pt_matmul");
  constexpr int kM = 16, kK = 128, kN = 64;
  std::vector<float> a = readF32(simData("pt_matmul/A.npy"), {kM, kK});
  std::vector<float> b = readF32(simData("pt_matmul/B.npy"), {kK, kN});
  std::vector<float> c = readF32(run.outputs() + "/C.npy", {kM, kN});
  ASSERT_EQ(c.size(), static_cast<size_t>(kM * kN));
  // Error bound: A and B are rounded to DL16 (2^-10 each, 2^-9 per
  // product); the FP32 sum of 128 exact products adds at most 127 * 2^-24 <
  // 2^-17 of sum |a b|. 2^-16 covers that and the cross terms.
  const double rel = 2 * kDl16Rel + std::ldexp(1.0, -16);
  int bad = 0;
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j) {
      double ref = 0, mag = 0;
      for (int k = 0; k < kK; ++k) {
        double p = static_cast<double>(a[i * kK + k]) * b[k * kN + j];
        ref += p;
        mag += std::fabs(p);
      }
      double got = c[i * kN + j];
      if (std::fabs(got - ref) > rel * mag && ++bad <= 5)
        ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got
                      << ", reference " << ref << ", allowed error "
                      << rel * mag;
    }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(run.stats.at("mac_ops"), kM * kK * kN);
}

TEST(SimExamples, SfuSoftmaxMatchesDoubleReference) {
  SimRun run = runClean("sfu_softmax", "sfu_softmax");
  std::vector<float> x = readF32(simData("sfu_softmax/x.npy"), {1, 100});
  std::vector<float> y = readF32(run.outputs() + "/y.npy", {1, 100});
  ASSERT_EQ(y.size(), 100u);
  double max = x[0];
  for (float v : x)
    max = std::max(max, static_cast<double>(v));
  std::vector<double> e(x.size());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i)
    sum += e[i] = std::exp(x[i] - max);
  // The inputs are exact in DL16 (k/32, |k| <= 128), the device computes in
  // FP32 (about 2^-17 relative over this chain) and rounds each result to
  // DL16 once (2^-10 relative).
  const double rel = kDl16Rel + std::ldexp(1.0, -16);
  double total = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    double ref = e[i] / sum;
    EXPECT_NEAR(y[i], ref, rel * ref) << "y[" << i << "], x = " << x[i];
    total += y[i];
  }
  // The 28 padding lanes of the second stick must not take part: with them
  // the sum of exp would grow by 28 * exp(-max) and every value would shrink.
  EXPECT_NEAR(total, 1.0, rel);
}

TEST(SimExamples, RingExchangeSwapsTheTiles) {
  SimRun run = runClean("ring_exchange", "ring_exchange");
  std::vector<float> a0 = readF32(simData("ring_exchange/a0.npy"), {4, 64});
  std::vector<float> a1 = readF32(simData("ring_exchange/a1.npy"), {4, 64});
  ASSERT_NE(a0, a1) << "the two tiles must differ for the swap to show";
  // Core 0 stores what it received from core 1 and vice versa.
  EXPECT_EQ(readF32(run.outputs() + "/b0.npy", {4, 64}), a1);
  EXPECT_EQ(readF32(run.outputs() + "/b1.npy", {4, 64}), a0);
  // Both cores ran: each has its three engine streams in the stats.
  ASSERT_EQ(run.stats.at("cores").size(), 2u);
  for (const auto &core : run.stats.at("cores"))
    EXPECT_EQ(core.at("engines").size(), 3u);
}

} // namespace
} // namespace spyre::test
