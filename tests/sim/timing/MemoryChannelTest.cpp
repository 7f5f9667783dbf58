#include "sim/timing/MemoryChannel.h"

#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace spyre;
using namespace spyre::sim;

namespace {

// 150 GB/s at 1.5 GHz is exactly 100 bytes per cycle, which keeps the hand
// arithmetic below simple.
hw::HwConfig channelConfig() {
  hw::HwConfig c = hw::builtinConfig();
  c.chip.clockGhz = 1.5;
  c.memory.sustainedReadGBps = 150;
  c.memory.sustainedMixedGBps = 105;
  c.memory.peakGBps = 204.8;
  c.memory.latencyCycles = 150;
  c.memory.turnaroundCycles = 9;
  return c;
}

} // namespace

TEST(MemoryChannel, RatesComeFromTheConfig) {
  MemoryChannel mem(channelConfig());
  EXPECT_EQ(mem.sustainedRate().bytes(), 100u);
  EXPECT_EQ(mem.sustainedRate().cycles(), 1u);
  EXPECT_DOUBLE_EQ(mem.sustainedBytesPerCycle(), 100.0);
  // 204.8 GB/s / 1.5 GHz = 136.53 B/cycle.
  EXPECT_DOUBLE_EQ(mem.peakBytesPerCycle(), 204.8 / 1.5);
  EXPECT_DOUBLE_EQ(mem.peakGBps(), 204.8);
  EXPECT_EQ(mem.latencyCycles(), 150u);
}

TEST(MemoryChannel, SingleReadPaysTransferAndLatency) {
  MemoryChannel mem(channelConfig());
  // 2048 B at 100 B/cycle = 20.48 cycles: the data leaves at 30.48, i.e. in
  // cycle 31, plus 150 latency.
  MemoryRequestResult r = mem.request(10, 2048, Direction::Read);
  EXPECT_EQ(r.start, 10u);
  EXPECT_EQ(r.dataDone, 181u);
  EXPECT_EQ(r.waited, 0u);
  EXPECT_EQ(mem.stats().bytesRead, 2048u);
  EXPECT_EQ(mem.stats().bytesWritten, 0u);
  EXPECT_DOUBLE_EQ(mem.busyCycles(), 20.48);
  EXPECT_EQ(mem.freeAt(), 31u);
}

TEST(MemoryChannel, BackToBackReadsQueueExactly) {
  MemoryChannel mem(channelConfig());
  MemoryRequestResult a = mem.request(0, 2048, Direction::Read);
  MemoryRequestResult b = mem.request(0, 2048, Direction::Read);
  MemoryRequestResult c = mem.request(0, 1000, Direction::Read);
  // a: [0, 20.48); b: [20.48, 40.96); c: [40.96, 50.96).
  EXPECT_EQ(a.start, 0u);
  EXPECT_EQ(a.dataDone, 21u + 150u);
  EXPECT_EQ(b.start, 21u);
  EXPECT_EQ(b.dataDone, 41u + 150u);
  EXPECT_EQ(b.waited, 21u);
  EXPECT_EQ(c.start, 41u);
  EXPECT_EQ(c.dataDone, 51u + 150u);
  EXPECT_EQ(c.waited, 41u);
  EXPECT_EQ(mem.stats().waitedCycles, 62u);
  EXPECT_EQ(mem.stats().requests, 3u);
  EXPECT_EQ(mem.stats().turnarounds, 0u);
}

TEST(MemoryChannel, ServesInCallOrderAndIdlesBetweenBursts) {
  MemoryChannel mem(channelConfig());
  MemoryRequestResult a = mem.request(0, 5000, Direction::Read); // [0, 50)
  MemoryRequestResult b = mem.request(10, 100, Direction::Read); // [50, 51)
  // Asked for earlier than b but called later: still served after b.
  MemoryRequestResult c = mem.request(5, 100, Direction::Read);   // [51, 52)
  MemoryRequestResult d = mem.request(100, 100, Direction::Read); // idle
  EXPECT_EQ(a.dataDone, 200u);
  EXPECT_EQ(b.start, 50u);
  EXPECT_EQ(b.waited, 40u);
  EXPECT_EQ(c.start, 51u);
  EXPECT_EQ(c.waited, 46u);
  EXPECT_EQ(d.start, 100u);
  EXPECT_EQ(d.waited, 0u);
  EXPECT_EQ(d.dataDone, 251u);
  EXPECT_EQ(mem.stats().waitedCycles, 86u);
}

TEST(MemoryChannel, DirectionChangePaysTurnaround) {
  MemoryChannel mem(channelConfig());
  MemoryRequestResult r1 = mem.request(0, 2048, Direction::Read);  // [0, 20.48)
  MemoryRequestResult w1 = mem.request(0, 2048, Direction::Write); // 29.48..
  MemoryRequestResult w2 = mem.request(0, 2048, Direction::Write); // no turn
  MemoryRequestResult r2 = mem.request(0, 2048, Direction::Read);  // turn
  EXPECT_EQ(r1.start, 0u);
  // Write: turnaround 20.48 -> 29.48, data [29.48, 49.96).
  EXPECT_EQ(w1.start, 30u);
  EXPECT_EQ(w1.dataDone, 50u + 150u);
  EXPECT_EQ(w1.waited, 30u);
  // Same direction: [49.96, 70.44).
  EXPECT_EQ(w2.start, 50u);
  EXPECT_EQ(w2.dataDone, 71u + 150u);
  // Read again: 70.44 + 9 = 79.44, data [79.44, 99.92).
  EXPECT_EQ(r2.start, 80u);
  EXPECT_EQ(r2.dataDone, 100u + 150u);
  EXPECT_EQ(mem.stats().turnarounds, 2u);
  EXPECT_EQ(mem.stats().turnaroundCycles, 18u);
  EXPECT_EQ(mem.stats().bytesRead, 4096u);
  EXPECT_EQ(mem.stats().bytesWritten, 4096u);
}

TEST(MemoryChannel, TurnaroundOnlyWhileTheBusIsRecentlyBusy) {
  MemoryChannel mem(channelConfig());
  mem.request(0, 2048, Direction::Read); // ends at 20.48
  // Arrives 5 cycles after the read ended: waits the rest of the turnaround,
  // until 29.48.
  MemoryRequestResult late = mem.request(25, 100, Direction::Write);
  EXPECT_EQ(late.start, 30u);
  EXPECT_EQ(late.waited, 5u);
  EXPECT_EQ(mem.stats().turnarounds, 1u);
  // Channel free at 30.48; a read at 40 is past 30.48 + 9 = 39.48: free.
  MemoryRequestResult idle = mem.request(40, 100, Direction::Read);
  EXPECT_EQ(idle.start, 40u);
  EXPECT_EQ(idle.waited, 0u);
  EXPECT_EQ(mem.stats().turnarounds, 1u);
}

TEST(MemoryChannel, SmallRequestsAddUpExactlyToOneLargeOne) {
  // 204.8 GB/s at 1.5 GHz is 2048/15 bytes per cycle, not a finite binary
  // fraction: 1-byte requests summed in floating point would drift.
  hw::HwConfig c = channelConfig();
  c.memory.sustainedReadGBps = 204.8;
  MemoryChannel small(c);
  MemoryChannel large(c);
  MemoryRequestResult last;
  for (int i = 0; i < 2048 * 10; ++i)
    last = small.request(0, 1, Direction::Read);
  MemoryRequestResult one = large.request(0, 2048 * 10, Direction::Read);
  // 20480 bytes take exactly 150 cycles.
  EXPECT_EQ(one.dataDone, 150u + 150u);
  EXPECT_EQ(last.dataDone, one.dataDone);
  EXPECT_EQ(small.freeAt(), 150u);
  EXPECT_EQ(large.freeAt(), 150u);

  // At 100 B/cycle a thousand 1-byte requests end at exactly cycle 10.
  MemoryChannel hundred(channelConfig());
  for (int i = 0; i < 1000; ++i)
    last = hundred.request(0, 1, Direction::Read);
  EXPECT_EQ(hundred.freeAt(), 10u);
  EXPECT_EQ(last.start, 10u); // began at 9.99
  EXPECT_EQ(last.dataDone, 160u);
}

TEST(MemoryChannel, MixedTurnaroundFormula) {
  hw::HwConfig c = channelConfig();
  // S = 100 B/cycle, M = 70 B/cycle: T = B (1/70 - 1/100) = 3B/700.
  EXPECT_NEAR(MemoryChannel::mixedTurnaroundCycles(c, 2048), 6144.0 / 700,
              1e-12);
  EXPECT_NEAR(MemoryChannel::mixedTurnaroundCycles(c, 128), 384.0 / 700, 1e-12);
  EXPECT_NEAR(MemoryChannel::mixedTurnaroundCycles(c, 4096), 12288.0 / 700,
              1e-12);
  // With that exact penalty, alternating bursts move 105 GB/s.
  for (uint64_t burst : {128u, 2048u, 4096u}) {
    double t = MemoryChannel::mixedTurnaroundCycles(c, burst);
    double b = static_cast<double>(burst);
    EXPECT_NEAR(b / (b / 100.0 + t) * 1.5, 105.0, 1e-9) << burst;
  }
  // No penalty is needed when the mixed figure is not below the one-way one.
  c.memory.sustainedMixedGBps = 150;
  EXPECT_EQ(MemoryChannel::mixedTurnaroundCycles(c, 2048), 0.0);
}

TEST(MemoryChannel, RoundedTurnaroundReachesTheMixedFigure) {
  hw::HwConfig c = channelConfig();
  const uint64_t burst = 2048;
  c.memory.turnaroundCycles = static_cast<int>(
      std::lround(MemoryChannel::mixedTurnaroundCycles(c, burst)));
  EXPECT_EQ(c.memory.turnaroundCycles, 9);
  // 2048 / (20.48 + 9) * 1.5 = 104.21 GB/s.
  EXPECT_NEAR(MemoryChannel::alternatingGBps(c, burst), 3072.0 / 29.48, 1e-9);

  MemoryChannel mem(c);
  const int bursts = 1000;
  Cycle end = 0;
  for (int i = 0; i < bursts; ++i) {
    Direction dir = i % 2 == 0 ? Direction::Read : Direction::Write;
    end = mem.request(0, burst, dir).dataDone - mem.latencyCycles();
  }
  double gbps = static_cast<double>(burst * bursts) / static_cast<double>(end) *
                c.chip.clockGhz;
  EXPECT_NEAR(gbps, 105.0, 105.0 * 0.01);
  // One turnaround fewer than bursts: slightly above the steady-state rate.
  EXPECT_NEAR(gbps, MemoryChannel::alternatingGBps(c, burst), 0.05);
  EXPECT_EQ(mem.stats().turnarounds, static_cast<uint64_t>(bursts - 1));
}
