#include "sim/timing/Time.h"

#include <gtest/gtest.h>

using namespace spyre::sim;

TEST(ByteRate, ReducesGBpsOverGHzToAnExactFraction) {
  ByteRate peak = ByteRate::fromGBps(204.8, 1.5); // 2048 B every 15 cycles
  EXPECT_EQ(peak.bytes(), 2048u);
  EXPECT_EQ(peak.cycles(), 15u);
  ByteRate sustained = ByteRate::fromGBps(150, 1.5); // 100 B per cycle
  EXPECT_EQ(sustained.bytes(), 100u);
  EXPECT_EQ(sustained.cycles(), 1u);
  ByteRate pcie = ByteRate::fromGBps(63.0, 1.5); // 42 B per cycle
  EXPECT_EQ(pcie.bytes(), 42u);
  EXPECT_EQ(pcie.cycles(), 1u);
}

TEST(ByteRate, WholeCyclesRoundUp) {
  ByteRate peak(2048, 15);
  EXPECT_EQ(peak.wholeCyclesFor(0), 0u);
  EXPECT_EQ(peak.wholeCyclesFor(1), 1u);
  EXPECT_EQ(peak.wholeCyclesFor(2048), 15u);
  EXPECT_EQ(peak.wholeCyclesFor(2049), 16u); // 15.007 cycles
  EXPECT_DOUBLE_EQ(peak.cyclesFor(4096), 30.0);
}

TEST(FracCycle, AccumulatesWithoutDrift) {
  ByteRate rate(2048, 15);
  FracCycle t = FracCycle::at(7);
  for (int i = 0; i < 3 * 2048; ++i)
    t = t.plusBytes(1, rate);
  EXPECT_EQ(t, FracCycle::at(7 + 45));
  t = t.plusBytes(1, rate); // 15/2048 of a cycle
  EXPECT_EQ(t.whole, 52u);
  EXPECT_EQ(t.ticks, 15u);
  EXPECT_EQ(t.ceil(), 53u);
  EXPECT_TRUE(FracCycle::at(52) < t);
  EXPECT_TRUE(t < FracCycle::at(53));
  EXPECT_DOUBLE_EQ(t.toDouble(rate), 52.0 + 15.0 / 2048.0);
  EXPECT_EQ(t.plusCycles(3).ceil(), 56u);
}
