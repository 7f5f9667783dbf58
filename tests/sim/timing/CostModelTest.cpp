#include "sim/timing/CostModel.h"

#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace spyre;
using namespace spyre::sim;

namespace {

// 8x8 PEs x 8 SIMD = 512 MAC/cycle, passes of 8 rows, full rate from 8
// passes, INT8 twice and INT4 four times as fast, 8 setup cycles.
hw::HwConfig ptConfig() {
  hw::HwConfig c = hw::builtinConfig();
  c.pt.peRows = 8;
  c.pt.peCols = 8;
  c.pt.simdWidth = 8;
  c.pt.passRows = 8;
  c.pt.fullRatePasses = 8;
  c.pt.int8Speedup = 2;
  c.pt.int4Speedup = 4;
  c.pt.setupCycles = 8;
  c.sfu.simpleCyclesPerStick = 1;
  c.sfu.transcendentalCyclesPerStick = 4;
  c.sfu.reduceCyclesPerStick = 2;
  c.sfu.pipelineLatencyCycles = 6;
  c.sfu.transcendentalLatencyCycles = 20;
  c.sfu.arraysPerCorelet = 1;
  c.sfu.dl16Lanes = 64;
  c.sfu.fp32Lanes = 32;
  c.dma.maxOutstanding = 16;
  c.dma.issueLatencyCycles = 4;
  c.dma.runSetupCycles = 8;
  return c;
}

} // namespace

TEST(CostModel, PtMacsPerCycle) {
  CostModel costs(ptConfig());
  EXPECT_EQ(costs.ptMacsPerCycle(PtPrecision::Dl16), 512u);
  EXPECT_EQ(costs.ptMacsPerCycle(PtPrecision::Int8), 1024u);
  EXPECT_EQ(costs.ptMacsPerCycle(PtPrecision::Int4), 2048u);
}

TEST(CostModel, PtEfficiencyFollowsSquareRootLaw) {
  CostModel costs(ptConfig());
  // m = 8, 16, 32, 64, 128 rows are 1, 2, 4, 8, 16 passes.
  EXPECT_EQ(costs.ptPasses(8), 1u);
  EXPECT_EQ(costs.ptPasses(9), 2u);
  EXPECT_EQ(costs.ptPasses(128), 16u);
  EXPECT_NEAR(costs.ptEfficiency(8), 0.35355339059327373, 1e-15);
  EXPECT_DOUBLE_EQ(costs.ptEfficiency(16), 0.5);
  EXPECT_NEAR(costs.ptEfficiency(32), 0.70710678118654757, 1e-15);
  EXPECT_DOUBLE_EQ(costs.ptEfficiency(64), 1.0);
  EXPECT_DOUBLE_EQ(costs.ptEfficiency(128), 1.0);
  // A partial pass counts as a whole one.
  EXPECT_DOUBLE_EQ(costs.ptEfficiency(9), 0.5);
  EXPECT_DOUBLE_EQ(costs.ptEfficiency(1), costs.ptEfficiency(8));
}

TEST(CostModel, PtCycles) {
  CostModel costs(ptConfig());
  // Full rate: 64*64*64 = 262144 MACs / 512 = 512 cycles, + 8 setup.
  EXPECT_EQ(costs.ptCycles(64, 64, 64, PtPrecision::Dl16), 520u);
  // 2 passes at half rate: 65536 / 256 = 256, + 8.
  EXPECT_EQ(costs.ptCycles(16, 64, 64, PtPrecision::Dl16), 264u);
  // 1 pass: 32768 / (512 / sqrt 8) = 64 sqrt 8 = 181.02 -> 182, + 8.
  EXPECT_EQ(costs.ptCycles(8, 64, 64, PtPrecision::Dl16), 190u);
  // 4 passes: 131072 / (512 sqrt 0.5) = 256 sqrt 2 = 362.04 -> 363, + 8.
  EXPECT_EQ(costs.ptCycles(32, 64, 64, PtPrecision::Dl16), 371u);
  // Rounding up a fraction of a cycle: 64*1*1 / 512 -> 1.
  EXPECT_EQ(costs.ptCycles(64, 1, 1, PtPrecision::Dl16), 9u);
}

TEST(CostModel, PtInt8DoublesTheRate) {
  CostModel costs(ptConfig());
  EXPECT_EQ(costs.ptCycles(64, 64, 64, PtPrecision::Int8), 256u + 8);
  EXPECT_EQ(costs.ptCycles(256, 128, 64, PtPrecision::Int8), 2048u + 8);
  EXPECT_EQ(costs.ptCycles(256, 128, 64, PtPrecision::Dl16), 4096u + 8);
  // Below full rate the efficiency law is the same: 2 passes, half rate.
  EXPECT_EQ(costs.ptCycles(16, 64, 64, PtPrecision::Int8), 128u + 8);
  EXPECT_EQ(costs.ptCycles(64, 64, 64, PtPrecision::Int4), 128u + 8);
}

TEST(CostModel, PtSetupComesFromTheConfig) {
  hw::HwConfig c = ptConfig();
  c.pt.setupCycles = 0;
  EXPECT_EQ(CostModel(c).ptCycles(64, 64, 64, PtPrecision::Dl16), 512u);
  c.pt.fullRatePasses = 2;
  EXPECT_EQ(CostModel(c).ptCycles(16, 64, 64, PtPrecision::Dl16), 128u);
}

TEST(CostModel, SfuClassCosts) {
  CostModel costs(ptConfig());
  EXPECT_EQ(costs.sfuCyclesPerStick(SfuClass::Simple), 1u);
  EXPECT_EQ(costs.sfuCyclesPerStick(SfuClass::Transcendental), 4u);
  EXPECT_EQ(costs.sfuCyclesPerStick(SfuClass::Reduce), 2u);
  // One array, a stick a pass in either format: the latency of the class
  // plus its interval per stick.
  EXPECT_EQ(costs.sfuCycles(SfuClass::Simple, 10), 6u + 10);
  EXPECT_EQ(costs.sfuCycles(SfuClass::Transcendental, 10), 20u + 40);
  EXPECT_EQ(costs.sfuCycles(SfuClass::Reduce, 10), 6u + 20);
  EXPECT_EQ(costs.sfuCycles(SfuClass::Simple, 0), 6u);
  EXPECT_EQ(costs.sfuCycles(SfuClass::Simple, 10, SfuFormat::Fp32), 6u + 10);
}

TEST(CostModel, SfuArraysShareEachInstruction) {
  hw::HwConfig c = ptConfig();
  c.sfu.arraysPerCorelet = 2;
  CostModel two(c);
  EXPECT_EQ(two.sfuElementsPerPass(SfuFormat::Dl16), 128u);
  // 10 DL16 sticks are 640 elements: 5 passes of both arrays.
  EXPECT_EQ(two.sfuCycles(SfuClass::Simple, 10), 6u + 5);
  EXPECT_EQ(two.sfuCycles(SfuClass::Transcendental, 10), 20u + 20);
  // An odd stick count rounds up to a whole pass.
  EXPECT_EQ(two.sfuCycles(SfuClass::Simple, 11), 6u + 6);
}

TEST(CostModel, Fp32WorkGoesAtItsOwnWidth) {
  hw::HwConfig c = ptConfig();
  c.sfu.fp32Lanes = 64; // an FP32 datapath as wide as the DL16 one
  CostModel wide(c);
  // 10 FP32 sticks are 320 elements: 5 passes of 64; 10 DL16 sticks are 10.
  EXPECT_EQ(wide.sfuCycles(SfuClass::Simple, 10, SfuFormat::Fp32), 6u + 5);
  EXPECT_EQ(wide.sfuCycles(SfuClass::Simple, 10, SfuFormat::Dl16), 6u + 10);
}

TEST(CostModel, DmaFiguresExposed) {
  CostModel costs(ptConfig());
  EXPECT_EQ(costs.dmaIssueLatencyCycles(), 4u);
  EXPECT_EQ(costs.dmaRunSetupCycles(), 8u);
  EXPECT_EQ(costs.dmaMaxOutstanding(), 16);
}

