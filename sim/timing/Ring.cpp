// Ring link timelines (see Ring.h).
#include "sim/timing/Ring.h"

#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::sim {

int RingNode::coreId() const {
  SPYRE_ASSERT(!isMemory(), "the memory node has no core id");
  return id_;
}

Ring Ring::dataRing(const hw::HwConfig &config) {
  SPYRE_ASSERT(config.ring.memoryNodePosition >= 0,
               "the data ring needs a memory node position");
  return Ring(config.chip.cores, config.ring.memoryNodePosition,
              config.ring.bytesPerCycle, config.ring.hopLatencyCycles);
}

Ring Ring::reduceRing(const hw::HwConfig &config) {
  return Ring(config.chip.cores, -1, config.reduceRing.bytesPerCycle,
              config.reduceRing.hopLatencyCycles);
}

Ring::Ring(int cores, int memoryPosition, int bytesPerCycle,
           int hopLatencyCycles)
    : cores_(cores), memoryPosition_(memoryPosition),
      positions_(cores + (memoryPosition >= 0 ? 1 : 0)),
      bytesPerCycle_(static_cast<Cycle>(bytesPerCycle)),
      hopLatency_(static_cast<Cycle>(hopLatencyCycles)) {
  SPYRE_ASSERT(cores > 0, "a ring needs at least one core");
  SPYRE_ASSERT(memoryPosition <= cores, "memory node position past the ring");
  SPYRE_ASSERT(bytesPerCycle > 0 && hopLatencyCycles >= 0,
               "ring link figures out of range");
  freeAt_.assign(2 * static_cast<size_t>(positions_), 0);
  stats_.assign(2 * static_cast<size_t>(positions_), RingLinkStats{});
}

int Ring::positionOf(RingNode node) const {
  if (node.isMemory()) {
    SPYRE_ASSERT(hasMemoryNode(), "this ring has no memory node");
    return memoryPosition_;
  }
  int id = node.coreId();
  SPYRE_ASSERT(id >= 0 && id < cores_, "core id outside the ring");
  // Cores fill the positions other than the memory node's, in id order.
  return hasMemoryNode() && id >= memoryPosition_ ? id + 1 : id;
}

Cycle Ring::durationCycles(uint64_t bytes) const {
  return (bytes + bytesPerCycle_ - 1) / bytesPerCycle_;
}

size_t Ring::slot(int link, RingDirection dir) const {
  SPYRE_ASSERT(link >= 0 && link < positions_, "ring link out of range");
  return 2 * static_cast<size_t>(link) +
         (dir == RingDirection::Increasing ? 0 : 1);
}

const RingLinkStats &Ring::linkStats(int link, RingDirection dir) const {
  return stats_[slot(link, dir)];
}

Cycle Ring::linkFreeAt(int link, RingDirection dir) const {
  return freeAt_[slot(link, dir)];
}

RingTransferResult Ring::transfer(Cycle t, RingNode src, RingNode dst,
                                  uint64_t bytes) {
  const int from = positionOf(src);
  const int to = positionOf(dst);
  RingTransferResult result;
  result.start = t;
  result.done = t;
  if (from == to)
    return result;

  const int up = (to - from + positions_) % positions_;
  const int down = positions_ - up;
  const bool increasing = up <= down;
  result.direction =
      increasing ? RingDirection::Increasing : RingDirection::Decreasing;
  result.hops = increasing ? up : down;

  // Going up from position p uses link p; going down from p uses link p-1.
  auto linkAt = [&](int hop) {
    if (increasing)
      return (from + hop) % positions_;
    return (from - hop - 1 + 2 * positions_) % positions_;
  };
  Cycle start = t;
  for (int hop = 0; hop < result.hops; ++hop)
    start = std::max(start, freeAt_[slot(linkAt(hop), result.direction)]);

  const Cycle duration = durationCycles(bytes);
  for (int hop = 0; hop < result.hops; ++hop) {
    size_t s = slot(linkAt(hop), result.direction);
    freeAt_[s] = start + duration;
    stats_[s].busyCycles += duration;
    stats_[s].bytes += bytes;
    ++stats_[s].transfers;
  }
  result.start = start;
  result.waited = start - t;
  result.done =
      start + static_cast<Cycle>(result.hops) * hopLatency_ + duration;
  return result;
}

} // namespace spyre::sim
