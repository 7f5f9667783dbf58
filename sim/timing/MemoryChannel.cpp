// The device-memory channel timeline (see MemoryChannel.h).
#include "sim/timing/MemoryChannel.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <numeric>

namespace spyre::sim {

namespace {

constexpr size_t dirIndex(Direction dir) {
  return dir == Direction::Read ? 0 : 1;
}

uint64_t checkedProduct(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  SPYRE_ASSERT(!__builtin_mul_overflow(a, b, &out),
               "memory rate fractions too fine for exact arithmetic");
  return out;
}

} // namespace

MemoryChannel::MemoryChannel(const hw::HwConfig &config)
    : rate_(ByteRate::fromGBps(config.memory.sustainedReadGBps,
                               config.chip.clockGhz)),
      peakGBps_(config.memory.peakGBps), clockGhz_(config.chip.clockGhz),
      turnaround_(static_cast<Cycle>(config.memory.turnaroundCycles)),
      latency_(static_cast<Cycle>(config.memory.latencyCycles)) {
  SPYRE_ASSERT(config.memory.turnaroundCycles >= 0 &&
                   config.memory.latencyCycles >= 0,
               "memory cycle counts must not be negative");
  // With S = sb / sc and M = mb / mc bytes per cycle, a paired byte adds
  // 2 (S - M) / M = 2 (S / M - 1) virtual bytes at the rate S, and
  // S / M = (sb mc) / (sc mb), cross-reduced so it is already in lowest terms.
  const ByteRate mixed = ByteRate::fromGBps(config.memory.sustainedMixedGBps,
                                            config.chip.clockGhz);
  const uint64_t g1 = std::gcd(rate_.bytes(), mixed.bytes());
  const uint64_t g2 = std::gcd(rate_.cycles(), mixed.cycles());
  const uint64_t a =
      checkedProduct(rate_.bytes() / g1, mixed.cycles() / g2); // S / M = a / b
  const uint64_t b = checkedProduct(rate_.cycles() / g2, mixed.bytes() / g1);
  if (a <= b)
    return; // mixed traffic no slower than one-way: no penalty
  const uint64_t num = checkedProduct(2, a - b);
  const uint64_t g = std::gcd(num, b);
  penaltyNum_ = num / g;
  penaltyDen_ = b / g;
  // penaltyBytes adds a carry below the denominator to a remainder below it
  // times the numerator: (den - 1) (num + 1) must fit.
  checkedProduct(penaltyDen_, penaltyNum_ + 1);
}

uint64_t MemoryChannel::penaltyBytes(uint64_t paired) {
  // Whole multiples of the denominator give whole virtual bytes; the rest is
  // added to the carried fraction, so the total over any split of the same
  // paired bytes is the same.
  uint64_t whole = (paired / penaltyDen_) * penaltyNum_;
  const uint64_t sum = penaltyCarry_ + (paired % penaltyDen_) * penaltyNum_;
  whole += sum / penaltyDen_;
  penaltyCarry_ = sum % penaltyDen_;
  return whole;
}

MemoryRequestResult MemoryChannel::request(Cycle t, uint64_t bytes,
                                           Direction dir) {
  SPYRE_ASSERT(bytes > 0, "memory request of zero bytes");
  const FracCycle asked = FracCycle::at(t);
  // A request that finds the channel idle starts a new stretch of traffic:
  // nothing earlier is left to pair with. (The carried fraction of a virtual
  // byte stays: it is time already owed, below one byte.)
  if (!(asked < freeAt_))
    unpaired_ = {};
  uint64_t &other = unpaired_[dirIndex(dir) ^ 1];
  const uint64_t paired = std::min(bytes, other);
  other -= paired;
  unpaired_[dirIndex(dir)] += bytes - paired;
  const uint64_t penalty = penaltyBytes(paired);

  FracCycle begin = maxTime(asked, freeAt_);
  // The bus needs `turnaround_` idle cycles between bursts of opposite
  // directions; a request arriving later than that pays nothing.
  if (anyRequest_ && dir != lastDir_ && turnaround_ > 0) {
    FracCycle turned = freeAt_.plusCycles(turnaround_);
    if (asked < turned) {
      begin = turned;
      ++stats_.turnarounds;
      stats_.turnaroundCycles += turnaround_;
    }
  }
  freeAt_ = begin.plusBytes(bytes + penalty, rate_);
  lastDir_ = dir;
  anyRequest_ = true;

  MemoryRequestResult result;
  result.start = begin.ceil();
  result.dataDone = freeAt_.ceil() + latency_;
  result.waited = result.start - t;

  ++stats_.requests;
  (dir == Direction::Read ? stats_.bytesRead : stats_.bytesWritten) += bytes;
  stats_.pairedBytes += paired;
  penaltyTotal_ += penalty;
  stats_.waitedCycles += result.waited;
  return result;
}

double MemoryChannel::busyCycles() const {
  return rate_.cyclesFor(stats_.bytesRead + stats_.bytesWritten);
}

double MemoryChannel::peakBytesPerCycle() const {
  return peakGBps_ / clockGhz_;
}

} // namespace spyre::sim
