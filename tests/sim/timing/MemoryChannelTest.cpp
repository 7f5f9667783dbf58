#include "sim/timing/MemoryChannel.h"

#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace spyre;
using namespace spyre::sim;

namespace {

// 150 GB/s at 1.5 GHz is exactly 100 bytes per cycle and 105 GB/s is 70, which
// keeps the hand arithmetic below simple: a paired byte adds
// 2 (100 - 70) / 70 = 6/7 of a virtual byte at 100 B/cycle.
hw::HwConfig channelConfig() {
  hw::HwConfig c = hw::builtinConfig();
  c.chip.clockGhz = 1.5;
  c.memory.sustainedReadGBps = 150;
  c.memory.sustainedMixedGBps = 105;
  c.memory.peakGBps = 204.8;
  c.memory.latencyCycles = 150;
  c.memory.turnaroundCycles = 0;
  return c;
}

hw::HwConfig turnaroundConfig(int cycles) {
  hw::HwConfig c = channelConfig();
  c.memory.turnaroundCycles = cycles;
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
  // 2 (S - M) / M = 60 / 70.
  EXPECT_EQ(mem.penaltyNumerator(), 6u);
  EXPECT_EQ(mem.penaltyDenominator(), 7u);
}

TEST(MemoryChannel, PenaltyFractionIsExactForAnyRates) {
  // S = 204.8 / 1.5 = 2048/15, M = 70: S / M = 1024/525, so a paired byte
  // adds 2 (1024 - 525) / 525 = 998/525 virtual bytes.
  hw::HwConfig c = channelConfig();
  c.memory.sustainedReadGBps = 204.8;
  MemoryChannel fast(c);
  EXPECT_EQ(fast.penaltyNumerator(), 998u);
  EXPECT_EQ(fast.penaltyDenominator(), 525u);
  // Mixed as fast as one-way: no penalty.
  c = channelConfig();
  c.memory.sustainedMixedGBps = 150;
  MemoryChannel same(c);
  EXPECT_EQ(same.penaltyNumerator(), 0u);
  EXPECT_EQ(same.penaltyDenominator(), 1u);
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
  EXPECT_EQ(mem.stats().pairedBytes, 0u);
}

TEST(MemoryChannel, WritesAloneRunAtTheOneWayRate) {
  MemoryChannel mem(channelConfig());
  for (int i = 0; i < 10; ++i)
    mem.request(0, 1000, Direction::Write);
  EXPECT_EQ(mem.freeAt(), 100u);
  EXPECT_EQ(mem.stats().pairedBytes, 0u);
  EXPECT_EQ(mem.stats().mixedPenaltyCycles, 0.0);
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

TEST(MemoryChannel, WriteAfterReadPairsAndPaysThePenalty) {
  MemoryChannel mem(channelConfig());
  MemoryRequestResult r = mem.request(0, 2048, Direction::Read); // [0, 20.48)
  // The write pairs all 2048 bytes: 2048 * 6/7 = 1755 3/7 virtual bytes, so
  // it occupies (2048 + 1755) / 100 = 38.03 cycles: [20.48, 58.51). Both
  // together take 58.51 cycles, 2 * 2048 / 70 = 58.514 less the 3/7 of a
  // byte carried.
  MemoryRequestResult w = mem.request(0, 2048, Direction::Write);
  EXPECT_EQ(r.dataDone, 21u + 150u);
  EXPECT_EQ(w.start, 21u);
  EXPECT_EQ(w.waited, 21u);
  EXPECT_EQ(w.dataDone, 59u + 150u);
  EXPECT_EQ(mem.stats().pairedBytes, 2048u);
  EXPECT_DOUBLE_EQ(mem.stats().mixedPenaltyCycles, 17.55);
  EXPECT_DOUBLE_EQ(mem.busyCycles(), 40.96);
  EXPECT_EQ(mem.stats().turnarounds, 0u);
  // Nothing is left unpaired: a further read pays the one-way rate,
  // [58.51, 78.99).
  MemoryRequestResult r2 = mem.request(0, 2048, Direction::Read);
  EXPECT_EQ(r2.start, 59u);
  EXPECT_EQ(r2.dataDone, 79u + 150u);
  EXPECT_EQ(mem.stats().pairedBytes, 2048u);
}

TEST(MemoryChannel, PairsOnlyWhatTheOtherDirectionHasUnpaired) {
  MemoryChannel mem(channelConfig());
  // Read 1000: [0, 10); 1000 reads unpaired.
  mem.request(0, 1000, Direction::Read);
  // Write 3000 pairs 1000 (6000/7 = 857 r 1 virtual bytes), leaves 2000
  // writes unpaired: (3000 + 857) / 100 cycles, [10, 48.57).
  MemoryRequestResult w1 = mem.request(0, 3000, Direction::Write);
  EXPECT_EQ(w1.start, 10u);
  EXPECT_EQ(w1.dataDone, 49u + 150u);
  // Read 500 pairs 500 of them: (1 + 3000) / 7 = 428 r 5; [48.57, 57.85).
  MemoryRequestResult r1 = mem.request(0, 500, Direction::Read);
  EXPECT_EQ(r1.start, 49u);
  EXPECT_EQ(r1.dataDone, 58u + 150u);
  // Write 100 finds no unpaired reads: one-way rate, [57.85, 58.85); 1600
  // writes unpaired.
  MemoryRequestResult w2 = mem.request(0, 100, Direction::Write);
  EXPECT_EQ(w2.start, 58u);
  EXPECT_EQ(w2.dataDone, 59u + 150u);
  EXPECT_EQ(mem.stats().pairedBytes, 1500u);
  // Read 1600 pairs all of them: (5 + 9600) / 7 = 1372 r 1;
  // (1600 + 1372) / 100 = 29.72 cycles, [58.85, 88.57).
  MemoryRequestResult r2 = mem.request(0, 1600, Direction::Read);
  EXPECT_EQ(r2.start, 59u);
  EXPECT_EQ(r2.dataDone, 89u + 150u);
  EXPECT_EQ(mem.stats().pairedBytes, 3100u);
  // 857 + 428 + 1372 = 2657 = floor(3100 * 6/7) virtual bytes.
  EXPECT_DOUBLE_EQ(mem.stats().mixedPenaltyCycles, 26.57);
  EXPECT_EQ(mem.freeAt(), 89u);
}

TEST(MemoryChannel, IdleChannelForgetsUnpairedBytes) {
  MemoryChannel mem(channelConfig());
  mem.request(0, 1000, Direction::Read); // [0, 10)
  // Arrives exactly when the channel is free: idle, the reads are forgotten
  // and the write runs at the one-way rate, [10, 20).
  MemoryRequestResult w = mem.request(10, 1000, Direction::Write);
  EXPECT_EQ(w.start, 10u);
  EXPECT_EQ(w.dataDone, 20u + 150u);
  EXPECT_EQ(mem.stats().pairedBytes, 0u);
  // Arrives while the write is still moving: pairs 700 of its bytes,
  // 4200 / 7 = 600 virtual bytes, (700 + 600) / 100 = 13 cycles: [20, 33).
  MemoryRequestResult r = mem.request(19, 700, Direction::Read);
  EXPECT_EQ(r.start, 20u);
  EXPECT_EQ(r.waited, 1u);
  EXPECT_EQ(r.dataDone, 33u + 150u);
  EXPECT_EQ(mem.stats().pairedBytes, 700u);
  // 300 writes were left unpaired, but the channel idles from 33 to 40: the
  // read at 40 pairs nothing, [40, 43).
  MemoryRequestResult late = mem.request(40, 300, Direction::Read);
  EXPECT_EQ(late.start, 40u);
  EXPECT_EQ(late.dataDone, 43u + 150u);
  EXPECT_EQ(mem.stats().pairedBytes, 700u);
  EXPECT_DOUBLE_EQ(mem.stats().mixedPenaltyCycles, 6.0);
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

TEST(MemoryChannel, PairedTrafficEndsAtTheSameCycleHoweverSplit) {
  // S = 2048/15 B/cycle, a paired byte adds 998/525 virtual bytes. 20480
  // bytes each way, all paired: floor(20480 * 998 / 525) = 38931 virtual
  // bytes (525 * 38931 = 20438775, 265 left over), so the channel is busy
  // for (40960 + 38931) * 15 / 2048 = 585 + 285/2048 cycles: free at 586
  // (2 * 20480 / 70 = 585.14 exactly). A penalty rounded per request would
  // drift by up to a byte per request.
  hw::HwConfig c = channelConfig();
  c.memory.sustainedReadGBps = 204.8;
  constexpr uint64_t kEach = 20480;

  MemoryChannel whole(c);
  whole.request(0, kEach, Direction::Read);
  whole.request(0, kEach, Direction::Write);

  MemoryChannel bytewise(c);
  for (uint64_t i = 0; i < kEach; ++i) {
    bytewise.request(0, 1, Direction::Read);
    bytewise.request(0, 1, Direction::Write);
  }

  // Uneven pieces: 7-byte reads and 3-byte writes, the rest of the writes
  // at the end.
  MemoryChannel uneven(c);
  uint64_t read = 0, written = 0;
  while (written < kEach) {
    if (read < kEach) {
      const uint64_t n = std::min<uint64_t>(7, kEach - read);
      uneven.request(0, n, Direction::Read);
      read += n;
    }
    const uint64_t n = std::min<uint64_t>(3, kEach - written);
    uneven.request(0, n, Direction::Write);
    written += n;
  }

  for (const MemoryChannel *mem : {&whole, &bytewise, &uneven}) {
    EXPECT_EQ(mem->freeAt(), 586u);
    EXPECT_EQ(mem->stats().pairedBytes, kEach);
    EXPECT_DOUBLE_EQ(mem->stats().mixedPenaltyCycles, 38931.0 * 15 / 2048);
  }
}

TEST(MemoryChannel, MixedRateDoesNotDependOnTheArrivalPattern) {
  // 512 bursts of 2 KiB each way, in blocks of n reads then n writes: every
  // write pairs, floor(512 * 2048 * 6/7) = 898779 virtual bytes, and the
  // channel is busy (2097152 + 898779) / 100 = 29959.31 cycles whatever n:
  // 105.0 GB/s.
  for (int n : {1, 4, 16, 64}) {
    MemoryChannel mem(channelConfig());
    for (int block = 0; block < 512 / n; ++block) {
      for (int i = 0; i < n; ++i)
        mem.request(0, 2048, Direction::Read);
      for (int i = 0; i < n; ++i)
        mem.request(0, 2048, Direction::Write);
    }
    EXPECT_EQ(mem.freeAt(), 29960u) << n;
    EXPECT_EQ(mem.stats().pairedBytes, 512u * 2048) << n;
    const double gbps =
        2 * 512 * 2048 / static_cast<double>(mem.freeAt()) * 1.5;
    EXPECT_NEAR(gbps, 105.0, 0.01) << n;
  }
}

TEST(MemoryChannel, TurnaroundAddsToThePairingPenalty) {
  // Read, write, write, read, 2 KiB each, all asked for at 0.
  auto run = [](int turnaround, MemoryStats &stats) {
    MemoryChannel mem(turnaroundConfig(turnaround));
    std::vector<MemoryRequestResult> out;
    for (Direction d :
         {Direction::Read, Direction::Write, Direction::Write, Direction::Read})
      out.push_back(mem.request(0, 2048, d));
    stats = mem.stats();
    return out;
  };
  MemoryStats plain, turned;
  std::vector<MemoryRequestResult> a = run(0, plain);
  std::vector<MemoryRequestResult> b = run(9, turned);

  // Turnaround 0: read [0, 20.48); the first write pairs (1755 r 3 virtual
  // bytes) [20.48, 58.51); the second has nothing to pair [58.51, 78.99);
  // the read pairs it ((3 + 12288) / 7 = 1755 r 6) [78.99, 117.02).
  EXPECT_EQ(a[1].start, 21u);
  EXPECT_EQ(a[1].dataDone, 59u + 150u);
  EXPECT_EQ(a[2].start, 59u);
  EXPECT_EQ(a[2].dataDone, 79u + 150u);
  EXPECT_EQ(a[3].start, 79u);
  EXPECT_EQ(a[3].dataDone, 118u + 150u);
  EXPECT_EQ(plain.turnarounds, 0u);
  EXPECT_EQ(plain.pairedBytes, 4096u);

  // Turnaround 9 on top: the first write starts at 29.48, [29.48, 67.51);
  // the second follows, [67.51, 87.99); the read waits until 96.99,
  // [96.99, 135.02).
  EXPECT_EQ(b[0].start, 0u);
  EXPECT_EQ(b[1].start, 30u);
  EXPECT_EQ(b[1].waited, 30u);
  EXPECT_EQ(b[1].dataDone, 68u + 150u);
  EXPECT_EQ(b[2].start, 68u);
  EXPECT_EQ(b[2].dataDone, 88u + 150u);
  EXPECT_EQ(b[3].start, 97u);
  EXPECT_EQ(b[3].dataDone, 136u + 150u);
  EXPECT_EQ(turned.turnarounds, 2u);
  EXPECT_EQ(turned.turnaroundCycles, 18u);
  EXPECT_EQ(turned.pairedBytes, 4096u);
  EXPECT_DOUBLE_EQ(turned.mixedPenaltyCycles, plain.mixedPenaltyCycles);
  EXPECT_DOUBLE_EQ(turned.mixedPenaltyCycles, 35.10);
  EXPECT_EQ(turned.bytesRead, 4096u);
  EXPECT_EQ(turned.bytesWritten, 4096u);
}

TEST(MemoryChannel, TurnaroundOnlyWhileTheBusIsRecentlyBusy) {
  MemoryChannel mem(turnaroundConfig(9));
  mem.request(0, 2048, Direction::Read); // ends at 20.48
  // Arrives 5 cycles after the read ended: waits the rest of the turnaround,
  // until 29.48. The channel was idle, so nothing pairs.
  MemoryRequestResult late = mem.request(25, 100, Direction::Write);
  EXPECT_EQ(late.start, 30u);
  EXPECT_EQ(late.waited, 5u);
  EXPECT_EQ(late.dataDone, 31u + 150u);
  EXPECT_EQ(mem.stats().turnarounds, 1u);
  EXPECT_EQ(mem.stats().pairedBytes, 0u);
  // Channel free at 30.48; a read at 40 is past 30.48 + 9 = 39.48: free.
  MemoryRequestResult idle = mem.request(40, 100, Direction::Read);
  EXPECT_EQ(idle.start, 40u);
  EXPECT_EQ(idle.waited, 0u);
  EXPECT_EQ(mem.stats().turnarounds, 1u);
}

TEST(MemoryChannel, StrictlyAlternatingBurstsPayEachTurnaround) {
  // 1000 alternating 2 KiB bursts: 500 writes pair, floor(500 * 12288 / 7)
  // = 877714 virtual bytes, so the data and penalty take
  // (2048000 + 877714) / 100 = 29257.14 cycles (105.0 GB/s); turnaround 9
  // adds 999 * 9 = 8991 cycles (80.3 GB/s).
  for (int turnaround : {0, 9}) {
    MemoryChannel mem(turnaroundConfig(turnaround));
    for (int i = 0; i < 1000; ++i)
      mem.request(0, 2048, i % 2 == 0 ? Direction::Read : Direction::Write);
    EXPECT_EQ(mem.freeAt(), turnaround == 0 ? 29258u : 38249u);
    EXPECT_EQ(mem.stats().turnarounds, turnaround == 0 ? 0u : 999u);
    EXPECT_EQ(mem.stats().pairedBytes, 500u * 2048);
  }
}
