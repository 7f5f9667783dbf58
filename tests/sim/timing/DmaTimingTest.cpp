#include "sim/timing/DmaTiming.h"

#include "hw/HwConfig.h"

#include <gtest/gtest.h>

using namespace spyre;
using namespace spyre::sim;

namespace {

// 100 B/cycle memory (70 B/cycle mixed) with 150 cycles latency and a
// 9-cycle bus turnaround; a 128 B/cycle ring with 1 cycle per hop and the
// memory node at position 0 (core 0 one hop away, core 2 three hops); 8 setup
// cycles per run.
hw::HwConfig dmaConfig() {
  hw::HwConfig c = hw::builtinConfig();
  c.chip.clockGhz = 1.5;
  c.memory.sustainedReadGBps = 150;
  c.memory.sustainedMixedGBps = 105;
  c.memory.latencyCycles = 150;
  c.memory.turnaroundCycles = 9;
  c.ring.bytesPerCycle = 128;
  c.ring.hopLatencyCycles = 1;
  c.ring.memoryNodePosition = 0;
  c.dma.runSetupCycles = 8;
  return c;
}

struct Models {
  explicit Models(const hw::HwConfig &c)
      : costs(c), memory(c), ring(Ring::dataRing(c)) {}
  CostModel costs;
  MemoryChannel memory;
  Ring ring;
};

} // namespace

TEST(DmaTiming, LoadRunIsMemoryThenRing) {
  Models m(dmaConfig());
  DmaRunTiming r =
      timeDmaRun(m.costs, m.memory, m.ring, 0, 2, 2048, Direction::Read);
  // Memory: request at 8, data [8, 28.48) -> 29 + 150 = 179.
  EXPECT_EQ(r.memory.start, 8u);
  EXPECT_EQ(r.memory.dataDone, 179u);
  // Ring from the first data at 158: 3 hops, 16 cycles -> 177, but the last
  // byte leaves memory at 179 and needs 3 hops: 182.
  EXPECT_EQ(r.ring.start, 158u);
  EXPECT_EQ(r.ring.hops, 3);
  EXPECT_EQ(r.ring.done, 158u + 3 + 16);
  EXPECT_EQ(r.done, 182u);
}

TEST(DmaTiming, LoadRunLimitedByTheRing) {
  hw::HwConfig c = dmaConfig();
  c.ring.bytesPerCycle = 32; // slower than memory: 64 cycles for 2048 B
  Models m(c);
  DmaRunTiming r =
      timeDmaRun(m.costs, m.memory, m.ring, 0, 0, 2048, Direction::Read);
  EXPECT_EQ(r.done, 158u + 1 + 64);
}

TEST(DmaTiming, StoreRunIsRingThenMemory) {
  Models m(dmaConfig());
  DmaRunTiming r =
      timeDmaRun(m.costs, m.memory, m.ring, 0, 0, 2048, Direction::Write);
  // Ring from 8: 1 hop, 16 cycles -> 25; memory writes from the first byte's
  // arrival at 9: data [9, 29.48) -> 30 + 150 = 180.
  EXPECT_EQ(r.ring.start, 8u);
  EXPECT_EQ(r.ring.done, 25u);
  EXPECT_EQ(r.memory.start, 9u);
  EXPECT_EQ(r.done, 180u);
  EXPECT_EQ(m.memory.stats().bytesWritten, 2048u);
}

TEST(DmaTiming, RunsShareTheChannelPairAndPayTurnaround) {
  Models m(dmaConfig());
  DmaRunTiming load =
      timeDmaRun(m.costs, m.memory, m.ring, 0, 0, 2048, Direction::Read);
  DmaRunTiming store =
      timeDmaRun(m.costs, m.memory, m.ring, 0, 1, 2048, Direction::Write);
  EXPECT_EQ(load.memory.start, 8u);
  // core1 is 2 hops from memory: first byte at 10; the channel is busy until
  // 28.48 and turns around until 37.48. The write pairs with the read, so it
  // occupies (2048 + 2048 * 6/7) / 100 = 38.03 cycles (105 GB/s mixed at
  // 100 B/cycle one-way): [37.48, 75.51).
  EXPECT_EQ(store.memory.start, 38u);
  EXPECT_EQ(store.memory.waited, 28u);
  EXPECT_EQ(store.memory.dataDone, 76u + 150u);
  EXPECT_EQ(store.done, 76u + 150u);
  EXPECT_EQ(m.memory.stats().turnarounds, 1u);
  EXPECT_EQ(m.memory.stats().pairedBytes, 2048u);
}

TEST(DmaTiming, AroundMemoryLoadIsTheMemoryThenTheRing) {
  Models m(dmaConfig());
  // Ready at 8, 40 cycles in the other memory: bytes at 48; core 2 is 3 hops
  // away and 2048 B take 16 cycles on the ring: 48 + 3 + 16 = 67.
  DmaRunTiming r =
      timeDmaRunAroundMemory(m.ring, 8, 2, 2048, Direction::Read, 40);
  EXPECT_EQ(r.memory.start, 8u);
  EXPECT_EQ(r.memory.dataDone, 48u);
  EXPECT_EQ(r.memory.waited, 0u);
  EXPECT_EQ(r.ring.start, 48u);
  EXPECT_EQ(r.done, 67u);
  EXPECT_EQ(m.memory.stats().requests, 0u); // this chip's channel is not asked
}

TEST(DmaTiming, AroundMemoryStoreIsTheRingThenTheMemory) {
  Models m(dmaConfig());
  // Ring from 8: 1 hop, 16 cycles -> 25; then 40 cycles in the memory.
  DmaRunTiming r =
      timeDmaRunAroundMemory(m.ring, 8, 0, 2048, Direction::Write, 40);
  EXPECT_EQ(r.ring.done, 25u);
  EXPECT_EQ(r.memory.start, 25u);
  EXPECT_EQ(r.done, 65u);
  // A second store on the same link queues behind the first on the ring.
  DmaRunTiming next =
      timeDmaRunAroundMemory(m.ring, 8, 0, 2048, Direction::Write, 40);
  EXPECT_EQ(next.ring.waited, 16u);
  EXPECT_EQ(next.done, 81u);
}
