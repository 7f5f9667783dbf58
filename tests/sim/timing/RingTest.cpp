#include "sim/timing/Ring.h"

#include "hw/HwConfig.h"

#include <gtest/gtest.h>

using namespace spyre;
using namespace spyre::sim;

namespace {

// The default data ring: 32 cores and the memory node, 33 positions, 128
// B/cycle per link and direction; hop latency 2 so hops show in `done`.
hw::HwConfig ringConfig() {
  hw::HwConfig c = hw::builtinConfig();
  c.chip.cores = 32;
  c.ring.bytesPerCycle = 128;
  c.ring.hopLatencyCycles = 2;
  c.ring.memoryNodePosition = 0;
  c.reduceRing.bytesPerCycle = 32;
  c.reduceRing.hopLatencyCycles = 3;
  return c;
}

RingNode core(int id) { return RingNode::core(id); }

} // namespace

TEST(Ring, MemoryNodePlacement) {
  hw::HwConfig c = ringConfig();
  Ring ring = Ring::dataRing(c);
  EXPECT_EQ(ring.positions(), 33);
  EXPECT_TRUE(ring.hasMemoryNode());
  EXPECT_EQ(ring.positionOf(RingNode::memory()), 0);
  EXPECT_EQ(ring.positionOf(core(0)), 1);
  EXPECT_EQ(ring.positionOf(core(31)), 32);

  c.ring.memoryNodePosition = 5;
  Ring mid = Ring::dataRing(c);
  EXPECT_EQ(mid.positionOf(core(4)), 4);
  EXPECT_EQ(mid.positionOf(RingNode::memory()), 5);
  EXPECT_EQ(mid.positionOf(core(5)), 6);
  EXPECT_EQ(mid.positionOf(core(31)), 32);

  c.ring.memoryNodePosition = 32;
  Ring last = Ring::dataRing(c);
  EXPECT_EQ(last.positionOf(core(31)), 31);
  EXPECT_EQ(last.positionOf(RingNode::memory()), 32);

  Ring reduce = Ring::reduceRing(c);
  EXPECT_EQ(reduce.positions(), 32);
  EXPECT_FALSE(reduce.hasMemoryNode());
  EXPECT_EQ(reduce.positionOf(core(0)), 0);
}

TEST(Ring, IncreasingDirectionTransfer) {
  Ring ring = Ring::dataRing(ringConfig());
  // core0 (pos 1) -> core3 (pos 4): 3 hops up. 1024 B = 8 cycles per link.
  RingTransferResult r = ring.transfer(10, core(0), core(3), 1024);
  EXPECT_EQ(r.direction, RingDirection::Increasing);
  EXPECT_EQ(r.hops, 3);
  EXPECT_EQ(r.start, 10u);
  EXPECT_EQ(r.waited, 0u);
  EXPECT_EQ(r.done, 10u + 3 * 2 + 8);
  for (int link : {1, 2, 3}) {
    EXPECT_EQ(ring.linkStats(link, RingDirection::Increasing).bytes, 1024u);
    EXPECT_EQ(ring.linkStats(link, RingDirection::Increasing).busyCycles, 8u);
    EXPECT_EQ(ring.linkFreeAt(link, RingDirection::Increasing), 18u);
    EXPECT_EQ(ring.linkStats(link, RingDirection::Decreasing).bytes, 0u);
  }
  EXPECT_EQ(ring.linkStats(0, RingDirection::Increasing).bytes, 0u);
  EXPECT_EQ(ring.linkStats(4, RingDirection::Increasing).bytes, 0u);
}

TEST(Ring, DecreasingDirectionTransfer) {
  Ring ring = Ring::dataRing(ringConfig());
  // core3 (pos 4) -> core0 (pos 1): 3 hops down over links 3, 2, 1.
  RingTransferResult r = ring.transfer(0, core(3), core(0), 1000);
  EXPECT_EQ(r.direction, RingDirection::Decreasing);
  EXPECT_EQ(r.hops, 3);
  EXPECT_EQ(r.done, 3u * 2 + 8); // ceil(1000 / 128) = 8
  for (int link : {1, 2, 3})
    EXPECT_EQ(ring.linkStats(link, RingDirection::Decreasing).bytes, 1000u);
  EXPECT_EQ(ring.linkStats(0, RingDirection::Decreasing).bytes, 0u);
}

TEST(Ring, TakesTheShorterWayRound) {
  Ring ring = Ring::dataRing(ringConfig());
  // Memory (pos 0) -> core31 (pos 32): 1 hop down over link 32, not 32 up.
  RingTransferResult r = ring.transfer(0, RingNode::memory(), core(31), 128);
  EXPECT_EQ(r.direction, RingDirection::Decreasing);
  EXPECT_EQ(r.hops, 1);
  EXPECT_EQ(r.done, 2u + 1);
  EXPECT_EQ(ring.linkStats(32, RingDirection::Decreasing).bytes, 128u);
  // core31 (pos 32) -> core0 (pos 1): 2 hops up through the memory node.
  RingTransferResult w = ring.transfer(0, core(31), core(0), 128);
  EXPECT_EQ(w.direction, RingDirection::Increasing);
  EXPECT_EQ(w.hops, 2);
  EXPECT_EQ(ring.linkStats(32, RingDirection::Increasing).bytes, 128u);
  EXPECT_EQ(ring.linkStats(0, RingDirection::Increasing).bytes, 128u);
  // core0 (pos 1) -> core16 (pos 17): 16 up vs 17 down.
  EXPECT_EQ(ring.transfer(0, core(0), core(16), 128).hops, 16);
  // core0 (pos 1) -> core17 (pos 18): 17 up vs 16 down.
  RingTransferResult d = ring.transfer(0, core(0), core(17), 128);
  EXPECT_EQ(d.direction, RingDirection::Decreasing);
  EXPECT_EQ(d.hops, 16);
}

TEST(Ring, TieGoesTheIncreasingWay) {
  // The reduce ring has 32 positions: core0 <-> core16 is 16 hops either way.
  Ring ring = Ring::reduceRing(ringConfig());
  RingTransferResult a = ring.transfer(0, core(0), core(16), 32);
  EXPECT_EQ(a.direction, RingDirection::Increasing);
  EXPECT_EQ(a.hops, 16);
  EXPECT_EQ(ring.linkStats(0, RingDirection::Increasing).bytes, 32u);
  EXPECT_EQ(ring.linkStats(15, RingDirection::Increasing).bytes, 32u);
  RingTransferResult b = ring.transfer(0, core(16), core(0), 32);
  EXPECT_EQ(b.direction, RingDirection::Increasing);
  EXPECT_EQ(ring.linkStats(16, RingDirection::Increasing).bytes, 32u);
  EXPECT_EQ(ring.linkStats(31, RingDirection::Increasing).bytes, 32u);
}

TEST(Ring, ReduceRingUsesItsOwnFigures) {
  Ring ring = Ring::reduceRing(ringConfig());
  // 100 B at 32 B/cycle = 4 cycles; one hop of 3 cycles.
  RingTransferResult r = ring.transfer(5, core(7), core(8), 100);
  EXPECT_EQ(r.hops, 1);
  EXPECT_EQ(r.done, 5u + 3 + 4);
  EXPECT_EQ(ring.durationCycles(100), 4u);
  EXPECT_EQ(ring.durationCycles(128), 4u);
  EXPECT_EQ(ring.durationCycles(129), 5u);
}

TEST(Ring, SharedLinkSerialisesTransfers) {
  Ring ring = Ring::dataRing(ringConfig());
  // core0 -> core2 uses links 1, 2 up; core1 -> core3 uses links 2, 3 up.
  RingTransferResult a = ring.transfer(0, core(0), core(2), 1280); // 10 cycles
  RingTransferResult b = ring.transfer(0, core(1), core(3), 256);  // 2 cycles
  EXPECT_EQ(a.start, 0u);
  EXPECT_EQ(a.done, 2u * 2 + 10);
  EXPECT_EQ(b.start, 10u);
  EXPECT_EQ(b.waited, 10u);
  EXPECT_EQ(b.done, 10u + 2 * 2 + 2);
  // The whole path is held for b's window, including link 3 b never shared.
  EXPECT_EQ(ring.linkFreeAt(3, RingDirection::Increasing), 12u);
  EXPECT_EQ(ring.linkStats(2, RingDirection::Increasing).busyCycles, 12u);
  EXPECT_EQ(ring.linkStats(2, RingDirection::Increasing).transfers, 2u);
}

TEST(Ring, OppositeDirectionsAndDisjointLinksDoNotContend) {
  Ring ring = Ring::dataRing(ringConfig());
  RingTransferResult up = ring.transfer(0, core(0), core(2), 1280);
  RingTransferResult down = ring.transfer(0, core(2), core(0), 1280);
  RingTransferResult apart = ring.transfer(0, core(5), core(6), 1280);
  EXPECT_EQ(up.start, 0u);
  EXPECT_EQ(down.start, 0u);
  EXPECT_EQ(down.direction, RingDirection::Decreasing);
  EXPECT_EQ(apart.start, 0u);
  EXPECT_EQ(apart.done, 2u + 10);
  // A later transfer over a link after it freed does not wait.
  RingTransferResult later = ring.transfer(20, core(0), core(2), 128);
  EXPECT_EQ(later.start, 20u);
  EXPECT_EQ(later.waited, 0u);
}

TEST(Ring, TransferToSelfIsFree) {
  Ring ring = Ring::dataRing(ringConfig());
  RingTransferResult r = ring.transfer(7, core(4), core(4), 4096);
  EXPECT_EQ(r.start, 7u);
  EXPECT_EQ(r.done, 7u);
  EXPECT_EQ(r.hops, 0);
  for (int link = 0; link < ring.positions(); ++link) {
    EXPECT_EQ(ring.linkStats(link, RingDirection::Increasing).bytes, 0u);
    EXPECT_EQ(ring.linkStats(link, RingDirection::Decreasing).bytes, 0u);
  }
}
