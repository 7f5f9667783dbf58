// Exact bandwidth arithmetic: rates as reduced integer fractions.
#include "sim/timing/Time.h"

#include "support/Diagnostic.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace spyre::sim {

namespace {

// Figures are read to one millionth of their unit: 204.8 GB/s becomes
// 204,800,000 and 1.5 GHz becomes 1,500,000, exact integers.
constexpr double kFigureScale = 1e6;

uint64_t scaledFigure(double value, const char *what) {
  SPYRE_ASSERT(std::isfinite(value) && value > 0 && value < 1e12,
               std::string("rate figure out of range: ") + what);
  return static_cast<uint64_t>(std::llround(value * kFigureScale));
}

} // namespace

ByteRate ByteRate::fromGBps(double gbps, double clockGhz) {
  // bytes/cycle = (gbps * 1e9 B/s) / (clockGhz * 1e9 cycles/s).
  return ByteRate(scaledFigure(gbps, "GB/s"), scaledFigure(clockGhz, "GHz"));
}

ByteRate::ByteRate(uint64_t bytes, uint64_t cycles) {
  SPYRE_ASSERT(bytes > 0 && cycles > 0,
               "a rate needs positive bytes and cycles");
  uint64_t g = std::gcd(bytes, cycles);
  bytes_ = bytes / g;
  cycles_ = cycles / g;
  const uint64_t tickLimit = std::numeric_limits<uint64_t>::max() / 2;
  SPYRE_ASSERT(cycles_ < tickLimit / bytes_,
               "rate fraction too fine for exact arithmetic");
}

double ByteRate::cyclesFor(uint64_t size) const {
  return static_cast<double>(size) * static_cast<double>(cycles_) /
         static_cast<double>(bytes_);
}

Cycle ByteRate::wholeCyclesFor(uint64_t size) const {
  return FracCycle{}.plusBytes(size, *this).ceil();
}

FracCycle FracCycle::plusBytes(uint64_t size, const ByteRate &rate) const {
  // One byte is rate.cycles() ticks; one cycle is rate.bytes() ticks. Split
  // the size so the tick count stays below bytes * (cycles + 1), which the
  // constructor checked to fit.
  FracCycle out = *this;
  // Whole multiples of rate.bytes() bytes take exactly rate.cycles() cycles.
  out.whole += (size / rate.bytes()) * rate.cycles();
  uint64_t sum = out.ticks + (size % rate.bytes()) * rate.cycles();
  out.whole += sum / rate.bytes();
  out.ticks = sum % rate.bytes();
  return out;
}

double FracCycle::toDouble(const ByteRate &rate) const {
  return static_cast<double>(whole) +
         static_cast<double>(ticks) / static_cast<double>(rate.bytes());
}

} // namespace spyre::sim
