// Many cores streaming through the shared memory channel reach the measured
// bandwidths (docs/hardware.md#measured-figures): about 150 GB/s one-way, about
// 105 GB/s mixed read/write.
#include "sim/timing/MemoryChannel.h"

#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <queue>
#include <tuple>
#include <vector>

using namespace spyre;
using namespace spyre::sim;

namespace {

constexpr uint64_t kBurst = 2048;

// A request ready to go to the channel. Same-time requests are ordered by
// (core, stream, sequence), as the simulator orders them.
struct Pending {
  Cycle time;
  int core;
  int stream; // 0 = loads, 1 = stores
  int seq;
  friend bool operator>(const Pending &a, const Pending &b) {
    return std::tie(a.time, a.core, a.stream, a.seq) >
           std::tie(b.time, b.core, b.stream, b.seq);
  }
};
using EventQueue =
    std::priority_queue<Pending, std::vector<Pending>, std::greater<>>;

struct StreamResult {
  uint64_t bytes = 0;
  Cycle end = 0; // last data done
};

// Every core reads `bursts` bursts back to back, keeping dma.maxOutstanding
// of them in flight; a slot frees when its data has arrived.
StreamResult readStream(const hw::HwConfig &config, int bursts) {
  MemoryChannel mem(config);
  EventQueue queue;
  for (int core = 0; core < config.chip.cores; ++core)
    for (int i = 0; i < config.dma.maxOutstanding && i < bursts; ++i)
      queue.push({0, core, 0, i});
  StreamResult out;
  while (!queue.empty()) {
    Pending p = queue.top();
    queue.pop();
    MemoryRequestResult r = mem.request(p.time, kBurst, Direction::Read);
    out.bytes += kBurst;
    out.end = std::max(out.end, r.dataDone);
    int next = p.seq + config.dma.maxOutstanding;
    if (next < bursts)
      queue.push({r.dataDone, p.core, 0, next});
  }
  return out;
}

// Every core copies `bursts` bursts: its load stream reads them as above;
// its store stream writes burst i once burst i has been read and the store
// slot of burst i - maxOutstanding has freed.
StreamResult copyStream(const hw::HwConfig &config, int bursts) {
  MemoryChannel mem(config);
  const int cores = config.chip.cores;
  const int slots = config.dma.maxOutstanding;
  constexpr Cycle kNotYet = ~Cycle{0};
  std::vector<std::vector<Cycle>> readDone(
      static_cast<size_t>(cores),
      std::vector<Cycle>(static_cast<size_t>(bursts), kNotYet));
  std::vector<std::vector<Cycle>> writeDone = readDone;
  auto at = [](std::vector<std::vector<Cycle>> &v, int core,
               int seq) -> Cycle & {
    return v[static_cast<size_t>(core)][static_cast<size_t>(seq)];
  };
  EventQueue queue;
  // Queues store `seq` of `core` when both of its conditions are known.
  auto tryStore = [&](int core, int seq) {
    if (seq >= bursts || at(readDone, core, seq) == kNotYet)
      return;
    Cycle slotFree = 0;
    if (seq >= slots) {
      slotFree = at(writeDone, core, seq - slots);
      if (slotFree == kNotYet)
        return;
    }
    queue.push({std::max(at(readDone, core, seq), slotFree), core, 1, seq});
  };
  for (int core = 0; core < cores; ++core)
    for (int i = 0; i < slots && i < bursts; ++i)
      queue.push({0, core, 0, i});
  StreamResult out;
  while (!queue.empty()) {
    Pending p = queue.top();
    queue.pop();
    bool load = p.stream == 0;
    MemoryRequestResult r =
        mem.request(p.time, kBurst, load ? Direction::Read : Direction::Write);
    out.bytes += kBurst;
    out.end = std::max(out.end, r.dataDone);
    if (load) {
      at(readDone, p.core, p.seq) = r.dataDone;
      tryStore(p.core, p.seq);
      if (p.seq + slots < bursts)
        queue.push({r.dataDone, p.core, 0, p.seq + slots});
      continue;
    }
    at(writeDone, p.core, p.seq) = r.dataDone;
    tryStore(p.core, p.seq + slots);
  }
  return out;
}

double gbps(const StreamResult &r, const hw::HwConfig &config) {
  return static_cast<double>(r.bytes) / static_cast<double>(r.end) *
         config.chip.clockGhz;
}

} // namespace

TEST(MemoryStreaming, ThirtyTwoCoresReadingReachOneWayBandwidth) {
  hw::HwConfig config = hw::builtinConfig();
  StreamResult r = readStream(config, 256);
  EXPECT_EQ(r.bytes, 32u * 256u * kBurst);
  double target = config.memory.sustainedReadGBps;
  EXPECT_NEAR(gbps(r, config), target, target * 0.01);
}

TEST(MemoryStreaming, MixedCopyReachesMixedBandwidth) {
  hw::HwConfig config = hw::builtinConfig();
  StreamResult r = copyStream(config, 256);
  EXPECT_EQ(r.bytes, 2u * 32u * 256u * kBurst);
  double target = config.memory.sustainedMixedGBps;
  // Loads and stores reach the channel in blocks of up to
  // dma.maxOutstanding bursts; the channel pairs their bytes whatever the
  // blocks, so the copy runs at the mixed figure.
  EXPECT_NEAR(gbps(r, config), target, target * 0.01);
}

TEST(MemoryStreaming, MixedCopyWithTurnaroundIsSlower) {
  // memory.turnaroundCycles adds to the pairing penalty: a controller that
  // turns the bus at every switch falls below the published mixed figure.
  hw::HwConfig config = hw::builtinConfig();
  const double base = gbps(copyStream(config, 64), config);
  config.memory.turnaroundCycles = 9;
  const double turned = gbps(copyStream(config, 64), config);
  EXPECT_LT(turned, 0.9 * base);
}
