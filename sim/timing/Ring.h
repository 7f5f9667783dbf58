// A bidirectional ring of links between adjacent nodes: the data ring (the
// cores plus the device-memory interface) and the reduce ring (the cores only).
//
// Positions 0..N-1 go round the ring; link i joins position i and position
// i+1 (mod N) and carries ring.bytesPerCycle in each direction independently.
// On the data ring the memory interface sits at ring.memoryNodePosition and
// the cores fill the other positions in core-id order
// (docs/hardware.md#data-ring: the memory interface is one more stop on the
// ring, so memory streams and core-to-core transfers share its links).
//
// Transfers are circuit-style: a transfer of B bytes reserves every link of
// its path, in its direction, for the same window [start, start + B / width),
// where start is the first cycle all of them are free. Real ring traffic is
// pipelined hop by hop (link k is busy from start + k * hopLatency), so this
// slightly overstates contention between transfers that share only some
// links; it keeps a transfer's cost one max over its links and never lets
// later traffic overtake earlier traffic on a link.
//
// A path is a contiguous range of links (going down from position p uses
// links p-1, p-2, ...), so a transfer walks one or two plain ranges of the
// free-at timeline, and the links' counters, which only the tests read, are
// kept as differences at the ends of those ranges: a transfer costs a max and
// a store per hop and a few additions, not a division per hop.
#pragma once

#include "hw/HwConfig.h"
#include "sim/timing/Time.h"

#include <array>
#include <cstdint>
#include <vector>

namespace spyre::sim {

/// A ring endpoint: a core by id, or the memory interface (data ring only).
class RingNode {
public:
  static RingNode core(int id) { return RingNode(id); }
  static RingNode memory() { return RingNode(kMemory); }
  bool isMemory() const { return id_ == kMemory; }
  /// The core id; only for core nodes.
  int coreId() const;

  friend bool operator==(const RingNode &, const RingNode &) = default;

private:
  static constexpr int kMemory = -1;
  explicit RingNode(int id) : id_(id) {}
  int id_;
};

/// Increasing: from position i to i+1; Decreasing: from i+1 to i.
enum class RingDirection { Increasing, Decreasing };

struct RingTransferResult {
  Cycle start = 0;  ///< first cycle every link of the path is reserved
  Cycle done = 0;   ///< start + hops * hopLatency + duration
  Cycle waited = 0; ///< start - request time
  int hops = 0;
  RingDirection direction = RingDirection::Increasing;
};

struct RingLinkStats {
  Cycle busyCycles = 0;
  uint64_t bytes = 0;
  uint64_t transfers = 0;
};

class Ring {
public:
  /// The data ring: chip.cores cores and the memory node, ring.* figures.
  static Ring dataRing(const hw::HwConfig &config);
  /// The reduce ring: chip.cores cores only, reduceRing.* figures.
  static Ring reduceRing(const hw::HwConfig &config);

  /// Moves `bytes` from `src` to `dst`, asked for at cycle `t`, along the
  /// shorter way round (the increasing direction on a tie). A transfer from
  /// a node to itself costs nothing and touches no link.
  RingTransferResult transfer(Cycle t, RingNode src, RingNode dst,
                              uint64_t bytes);

  int positions() const { return positions_; }
  int cores() const { return cores_; }
  bool hasMemoryNode() const { return memoryPosition_ >= 0; }
  Cycle hopLatencyCycles() const { return hopLatency_; }
  int positionOf(RingNode node) const;
  /// Cycles a transfer holds each link: ceil(bytes / bytesPerCycle).
  Cycle durationCycles(uint64_t bytes) const;

  /// Link `link` joins positions `link` and `link + 1` (mod positions()).
  RingLinkStats linkStats(int link, RingDirection dir) const;
  Cycle linkFreeAt(int link, RingDirection dir) const;

private:
  Ring(int cores, int memoryPosition, int bytesPerCycle, int hopLatencyCycles);
  static size_t dirIndex(RingDirection dir) {
    return dir == RingDirection::Increasing ? 0 : 1;
  }
  /// Reserves links [first, last) of direction `d` from `start` for
  /// `duration` cycles (counters: `bytes` more on each).
  void reserve(size_t d, int first, int last, Cycle until, Cycle duration,
               uint64_t bytes);

  const int cores_;
  const int memoryPosition_; ///< -1 without a memory node
  const int positions_;
  const Cycle bytesPerCycle_;
  const Cycle hopLatency_;
  /// Per direction, per link: the first cycle it is free.
  std::array<std::vector<Cycle>, 2> freeAt_;
  /// Per direction, per link boundary: the counters' differences between
  /// link k-1 and link k (positions() + 1 entries, wrapping arithmetic);
  /// link k's counters are the sum of entries 0..k.
  std::array<std::vector<RingLinkStats>, 2> statsDelta_;
};

} // namespace spyre::sim
