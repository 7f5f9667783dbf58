// The device-memory channel: one FCFS timeline shared by every core.
//
// A request of N bytes occupies the channel for N / S cycles, S the measured
// one-way streaming rate (memory.sustainedReadGBps, the ~150 GB/s IBM
// measured for pointwise streaming; docs/hardware.md#measured-figures), not the
// 204.8 GB/s interface peak, which is kept for roofline statistics only.
//
// Mixed traffic is slower (~105 GB/s with reads and writes balanced), and the
// cost follows the amount of mixed traffic, not the number of direction
// switches, the form of IBM's own cost model (torch-spyre cost_model.py:
// (R + W) / S + alpha * min(R, W)). The channel keeps the bytes of each
// direction not yet paired with traffic in the other direction; a request
// pairs as many of its bytes as the other direction has unpaired, and each
// paired byte occupies the channel for alpha = 2 / M - 2 / S extra cycles
// (M = memory.sustainedMixedGBps in bytes per cycle), so that B bytes read
// and B written take 2B / M cycles however they arrive. Both counts clear
// when a request finds the channel idle. The extra time is kept as "virtual
// bytes" at the rate S, an exact fraction, so the timeline stays exact.
//
// On top of that, memory.turnaroundCycles is a bus turnaround per direction
// switch: a request in the other direction than the previous one waits that
// long after the previous one, unless the channel has been idle that long
// already. The published mixed figure already includes the switching cost,
// so the built-in value is 0; the key serves design studies of a controller
// that switches more often. Access latency (memory.latencyCycles) is
// pipelined: it delays the data but does not occupy the channel.
#pragma once

#include "hw/HwConfig.h"
#include "sim/timing/Time.h"

#include <array>
#include <cstdint>

namespace spyre::sim {

enum class Direction { Read, Write };

struct MemoryRequestResult {
  Cycle start = 0;    ///< first cycle the channel moves this request's data
  Cycle dataDone = 0; ///< start + occupancy + latency (rounded up)
  Cycle waited = 0;   ///< start - request time: queueing and turnaround
};

struct MemoryStats {
  uint64_t requests = 0;
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
  /// Bytes that paired with unpaired traffic of the other direction; each
  /// costs alpha = 2 / M - 2 / S extra channel cycles.
  uint64_t pairedBytes = 0;
  /// Channel cycles the pairing added (exact fraction as a double, like
  /// MemoryChannel::busyCycles, which does not include them).
  double mixedPenaltyCycles = 0;
  uint64_t turnarounds = 0;   ///< direction changes that cost time
  Cycle turnaroundCycles = 0; ///< turnarounds * memory.turnaroundCycles
  Cycle waitedCycles = 0;     ///< sum of every request's `waited`
};

class MemoryChannel {
public:
  explicit MemoryChannel(const hw::HwConfig &config);

  /// Serves `bytes` (> 0) in direction `dir`, asked for at cycle `t`, after
  /// every earlier request (first come, first served in call order).
  MemoryRequestResult request(Cycle t, uint64_t bytes, Direction dir);

  /// The statistics so far (the mixed penalty in cycles worked out here,
  /// not on every request).
  MemoryStats stats() const {
    MemoryStats s = stats_;
    s.mixedPenaltyCycles = rate_.cyclesFor(penaltyTotal_);
    return s;
  }
  /// Cycles the channel spent moving data at the sustained rate (exact
  /// fraction as a double); the mixed penalty and turnarounds are apart.
  double busyCycles() const;
  /// First whole cycle at which the channel is free of all queued traffic.
  Cycle freeAt() const { return freeAt_.ceil(); }

  /// Request to first data (memory.latencyCycles).
  Cycle latencyCycles() const { return latency_; }
  const ByteRate &sustainedRate() const { return rate_; }
  double sustainedBytesPerCycle() const { return rate_.bytesPerCycle(); }
  /// The interface peak (memory.peakGBps): the roofline bound in statistics.
  double peakBytesPerCycle() const;
  double peakGBps() const { return peakGBps_; }
  /// Virtual bytes at the sustained rate that one paired byte adds,
  /// 2 (S - M) / M, as the exact reduced fraction
  /// penaltyNumerator() / penaltyDenominator(); 0 / 1 when M >= S.
  uint64_t penaltyNumerator() const { return penaltyNum_; }
  uint64_t penaltyDenominator() const { return penaltyDen_; }

private:
  /// The virtual bytes `paired` bytes add, carrying the fraction of a byte
  /// left over to the next call.
  uint64_t penaltyBytes(uint64_t paired);

  const ByteRate rate_;
  const double peakGBps_;
  const double clockGhz_;
  const Cycle turnaround_;
  const Cycle latency_;
  uint64_t penaltyNum_ = 0;
  uint64_t penaltyDen_ = 1;

  FracCycle freeAt_;
  Direction lastDir_ = Direction::Read;
  bool anyRequest_ = false;
  /// Bytes of each direction (indexed by Direction) not yet paired.
  std::array<uint64_t, 2> unpaired_{};
  uint64_t penaltyCarry_ = 0; ///< numerator over penaltyDen_ of a byte owed
  uint64_t penaltyTotal_ = 0; ///< virtual bytes added so far
  MemoryStats stats_;
};

} // namespace spyre::sim
