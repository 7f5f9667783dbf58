// Activity over time for the trace's counter tracks: amounts (bytes moved,
// link-cycles reserved) spread evenly over the cycles they took and summed
// per fixed window of cycles. Recorded only when a run keeps a trace.
#pragma once

#include "sim/timing/Time.h"

#include <cstdint>
#include <vector>

namespace spyre::sim {

/// The window of the trace's rate counters, in cycles.
constexpr Cycle kCounterWindowCycles = 1000;

class WindowCounter {
public:
  explicit WindowCounter(Cycle window = kCounterWindowCycles) : window_(window) {}

  /// Adds `amount` spread evenly over the cycles [start, end) (one cycle
  /// when end <= start). Each window gets the integer share of the cycles
  /// it holds, the shares computed as differences of floor(amount * elapsed
  /// / duration), so they add up to `amount` exactly.
  void add(Cycle start, Cycle end, uint64_t amount);

  Cycle window() const { return window_; }
  /// Sums per window: window i covers [i * window, (i + 1) * window).
  const std::vector<uint64_t> &sums() const { return sums_; }
  bool empty() const { return sums_.empty(); }

private:
  Cycle window_;
  std::vector<uint64_t> sums_;
};

} // namespace spyre::sim
