// Simulated time and exact bandwidth arithmetic for the timing models.
//
// Time is counted in integer core cycles. A shared resource whose rate is not
// a whole number of bytes per cycle (device memory: 150 GB/s at 1.5 GHz is
// 100 B/cycle, but 204.8 GB/s is 2048/15 B/cycle) keeps its timeline in exact
// fractions of a cycle, so that a thousand small transfers end exactly where
// one large transfer of the same size would. Only whole cycles leave a model.
#pragma once

#include <cstdint>

namespace spyre::sim {

using Cycle = uint64_t;

/// A bandwidth of `bytes()` bytes every `cycles()` cycles, an exact reduced
/// fraction. Used as the unit of a FracCycle timeline: one cycle is `bytes()`
/// ticks and one byte takes `cycles()` ticks.
class ByteRate {
public:
  /// `gbps` GB/s (1e9 bytes per second) at a `clockGhz` GHz clock. Both
  /// figures are taken to 1e-6 of their unit, far finer than any published
  /// figure, which turns them into integers whose ratio is kept exactly.
  static ByteRate fromGBps(double gbps, double clockGhz);
  /// `bytes` bytes every `cycles` cycles; both positive.
  ByteRate(uint64_t bytes, uint64_t cycles);

  uint64_t bytes() const { return bytes_; }
  uint64_t cycles() const { return cycles_; }
  double bytesPerCycle() const {
    return static_cast<double>(bytes_) / static_cast<double>(cycles_);
  }
  /// Cycles to move `size` bytes, as a real number.
  double cyclesFor(uint64_t size) const;
  /// Whole cycles to move `size` bytes (rounded up).
  Cycle wholeCyclesFor(uint64_t size) const;

private:
  uint64_t bytes_;
  uint64_t cycles_;
};

/// A point in time with an exact fractional part: whole + ticks / rate.bytes(),
/// with 0 <= ticks < rate.bytes(). Only meaningful together with the ByteRate
/// it was built with.
struct FracCycle {
  Cycle whole = 0;
  uint64_t ticks = 0;

  static FracCycle at(Cycle c) { return {c, 0}; }
  /// The first whole cycle at or after this point.
  Cycle ceil() const { return whole + (ticks != 0 ? 1 : 0); }
  /// This point moved forward by the time `rate` needs for `size` bytes.
  FracCycle plusBytes(uint64_t size, const ByteRate &rate) const;
  FracCycle plusCycles(Cycle c) const { return {whole + c, ticks}; }
  double toDouble(const ByteRate &rate) const;

  friend bool operator==(const FracCycle &, const FracCycle &) = default;
  friend bool operator<(const FracCycle &a, const FracCycle &b) {
    return a.whole != b.whole ? a.whole < b.whole : a.ticks < b.ticks;
  }
};

inline FracCycle maxTime(const FracCycle &a, const FracCycle &b) {
  return a < b ? b : a;
}

} // namespace spyre::sim
