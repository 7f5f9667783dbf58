// The device-memory channel timeline (see MemoryChannel.h).
#include "sim/timing/MemoryChannel.h"

#include "support/Diagnostic.h"

namespace spyre::sim {

MemoryChannel::MemoryChannel(const hw::HwConfig &config)
    : rate_(ByteRate::fromGBps(config.memory.sustainedReadGBps,
                               config.chip.clockGhz)),
      peakGBps_(config.memory.peakGBps), clockGhz_(config.chip.clockGhz),
      turnaround_(static_cast<Cycle>(config.memory.turnaroundCycles)),
      latency_(static_cast<Cycle>(config.memory.latencyCycles)) {
  SPYRE_ASSERT(config.memory.turnaroundCycles >= 0 &&
                   config.memory.latencyCycles >= 0,
               "memory cycle counts must not be negative");
}

MemoryRequestResult MemoryChannel::request(Cycle t, uint64_t bytes,
                                           Direction dir) {
  SPYRE_ASSERT(bytes > 0, "memory request of zero bytes");
  FracCycle begin = maxTime(FracCycle::at(t), freeAt_);
  // The bus needs `turnaround_` idle cycles between bursts of opposite
  // directions; a request arriving later than that pays nothing.
  if (anyRequest_ && dir != lastDir_ && turnaround_ > 0) {
    FracCycle turned = freeAt_.plusCycles(turnaround_);
    if (FracCycle::at(t) < turned) {
      begin = turned;
      ++stats_.turnarounds;
      stats_.turnaroundCycles += turnaround_;
    }
  }
  freeAt_ = begin.plusBytes(bytes, rate_);
  lastDir_ = dir;
  anyRequest_ = true;

  MemoryRequestResult result;
  result.start = begin.ceil();
  result.dataDone = freeAt_.ceil() + latency_;
  result.waited = result.start - t;

  ++stats_.requests;
  (dir == Direction::Read ? stats_.bytesRead : stats_.bytesWritten) += bytes;
  stats_.waitedCycles += result.waited;
  return result;
}

double MemoryChannel::busyCycles() const {
  return rate_.cyclesFor(stats_.bytesRead + stats_.bytesWritten);
}

double MemoryChannel::peakBytesPerCycle() const {
  return peakGBps_ / clockGhz_;
}

double MemoryChannel::mixedTurnaroundCycles(const hw::HwConfig &config,
                                            uint64_t burstBytes) {
  const double burst = static_cast<double>(burstBytes);
  const double oneWay = config.memory.sustainedReadGBps / config.chip.clockGhz;
  const double mixed = config.memory.sustainedMixedGBps / config.chip.clockGhz;
  if (mixed >= oneWay)
    return 0;
  return burst / mixed - burst / oneWay;
}

double MemoryChannel::alternatingGBps(const hw::HwConfig &config,
                                      uint64_t burstBytes) {
  const double burst = static_cast<double>(burstBytes);
  const double oneWay = config.memory.sustainedReadGBps / config.chip.clockGhz;
  const double cyclesPerBurst =
      burst / oneWay + static_cast<double>(config.memory.turnaroundCycles);
  return burst / cyclesPerBurst * config.chip.clockGhz;
}

} // namespace spyre::sim
