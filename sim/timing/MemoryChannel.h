// The device-memory channel: one FCFS timeline shared by every core.
//
// A request of N bytes occupies the channel for N / rate cycles, where the
// rate is the measured one-way streaming figure (memory.sustainedReadGBps, the
// ~150 GB/s IBM measured for pointwise streaming; DESIGN.md section 6), not the
// 204.8 GB/s interface peak, which is kept for roofline statistics only. A
// burst in the other direction than the previous one pays the read/write bus
// turnaround (memory.turnaroundCycles) before it starts, unless the channel
// has been idle that long already. Access latency (memory.latencyCycles) is
// pipelined: it delays the data but does not occupy the channel.
#pragma once

#include "hw/HwConfig.h"
#include "sim/timing/Time.h"

#include <cstdint>

namespace spyre::sim {

enum class Direction { Read, Write };

struct MemoryRequestResult {
  Cycle start = 0;    ///< first cycle the channel moves this request's data
  Cycle dataDone = 0; ///< start + transfer + latency (rounded up)
  Cycle waited = 0;   ///< start - request time: queueing and turnaround
};

struct MemoryStats {
  uint64_t requests = 0;
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
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

  const MemoryStats &stats() const { return stats_; }
  /// Cycles the channel spent moving data (exact fraction as a double).
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

  /// The turnaround penalty (cycles, unrounded) that makes strictly
  /// alternating read/write bursts of `burstBytes` each, back to back, move
  /// data at memory.sustainedMixedGBps:
  ///   B / (B / S + T) = M   =>   T = B / M - B / S
  /// with B the burst size, S = sustainedReadGBps / clockGhz and
  /// M = sustainedMixedGBps / clockGhz in bytes per cycle. Zero when M >= S.
  static double mixedTurnaroundCycles(const hw::HwConfig &config,
                                      uint64_t burstBytes);
  /// The GB/s that strictly alternating bursts of `burstBytes` reach with the
  /// config's integer memory.turnaroundCycles: B / (B / S + T) * clockGhz.
  static double alternatingGBps(const hw::HwConfig &config,
                                uint64_t burstBytes);

private:
  const ByteRate rate_;
  const double peakGBps_;
  const double clockGhz_;
  const Cycle turnaround_;
  const Cycle latency_;

  FracCycle freeAt_;
  Direction lastDir_ = Direction::Read;
  bool anyRequest_ = false;
  MemoryStats stats_;
};

} // namespace spyre::sim
