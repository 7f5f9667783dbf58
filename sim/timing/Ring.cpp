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
  for (size_t d = 0; d < 2; ++d) {
    freeAt_[d].assign(static_cast<size_t>(positions_), 0);
    statsDelta_[d].assign(static_cast<size_t>(positions_) + 1, RingLinkStats{});
  }
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

RingLinkStats Ring::linkStats(int link, RingDirection dir) const {
  SPYRE_ASSERT(link >= 0 && link < positions_, "ring link out of range");
  RingLinkStats out;
  for (int k = 0; k <= link; ++k) {
    const RingLinkStats &delta =
        statsDelta_[dirIndex(dir)][static_cast<size_t>(k)];
    out.busyCycles += delta.busyCycles;
    out.bytes += delta.bytes;
    out.transfers += delta.transfers;
  }
  return out;
}

Cycle Ring::linkFreeAt(int link, RingDirection dir) const {
  SPYRE_ASSERT(link >= 0 && link < positions_, "ring link out of range");
  return freeAt_[dirIndex(dir)][static_cast<size_t>(link)];
}

void Ring::reserve(size_t d, int first, int last, Cycle until, Cycle duration,
                   uint64_t bytes) {
  std::fill(freeAt_[d].begin() + first, freeAt_[d].begin() + last, until);
  RingLinkStats &from = statsDelta_[d][static_cast<size_t>(first)];
  RingLinkStats &to = statsDelta_[d][static_cast<size_t>(last)];
  from.busyCycles += duration;
  from.bytes += bytes;
  ++from.transfers;
  to.busyCycles -= duration;
  to.bytes -= bytes;
  --to.transfers;
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

  const int up = to > from ? to - from : to - from + positions_;
  const int down = positions_ - up;
  const bool increasing = up <= down;
  result.direction =
      increasing ? RingDirection::Increasing : RingDirection::Decreasing;
  result.hops = increasing ? up : down;

  // Going up from position p uses links p, p+1, ...; going down, links p-1,
  // p-2, ...: either way the links [first, first + hops) round the ring,
  // one range up to the end of the ring and one from link 0 when it wraps.
  int first = increasing ? from : from - result.hops;
  if (first < 0)
    first += positions_;
  const int end = std::min(first + result.hops, positions_);
  const int wrapped = first + result.hops - end;
  const size_t d = dirIndex(result.direction);
  const Cycle *freeAt = freeAt_[d].data();
  Cycle start = t;
  for (int k = first; k < end; ++k)
    start = std::max(start, freeAt[k]);
  for (int k = 0; k < wrapped; ++k)
    start = std::max(start, freeAt[k]);

  const Cycle duration = durationCycles(bytes);
  reserve(d, first, end, start + duration, duration, bytes);
  if (wrapped > 0)
    reserve(d, 0, wrapped, start + duration, duration, bytes);
  result.start = start;
  result.waited = start - t;
  result.done =
      start + static_cast<Cycle>(result.hops) * hopLatency_ + duration;
  return result;
}

} // namespace spyre::sim
