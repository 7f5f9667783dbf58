// A set of sticks an instruction touches: n2 groups of n1 runs of `run`
// contiguous sticks, run (i2, i1) starting at base + i2*s2 + i1*s1. Strides
// are signed and may be smaller than the run (runs may overlap). Every
// operand of the ISA, LX or device memory, is one such region, so bounds
// checks, race checks and the data movers all walk the same description. A
// Footprint is one operand's region and whether it is read or written.
#pragma once

#include <algorithm>
#include <cstdint>

namespace spyre::sim {

struct Region {
  int64_t base = 0;
  int64_t run = 0;
  int64_t n1 = 1;
  int64_t s1 = 0;
  int64_t n2 = 1;
  int64_t s2 = 0;

  /// Sticks transferred (overlapping runs count once per run).
  int64_t sticks() const { return run * n1 * n2; }

  /// Lowest stick touched.
  int64_t lowest() const {
    return base + std::min<int64_t>(0, (n1 - 1) * s1) +
           std::min<int64_t>(0, (n2 - 1) * s2);
  }

  /// Highest stick touched (inclusive).
  int64_t highest() const {
    return base + std::max<int64_t>(0, (n1 - 1) * s1) +
           std::max<int64_t>(0, (n2 - 1) * s2) + run - 1;
  }

  /// Whether the sticks [lowest, highest] of the two regions intersect (a
  /// conservative overlap test: gaps between runs are not looked at).
  bool spanOverlaps(const Region &other) const {
    return lowest() <= other.highest() && other.lowest() <= highest();
  }

  /// Whether no stick is touched twice. Only one-dimensional regions are
  /// analysed; a two-dimensional one with n2 > 1 is reported as not injective.
  bool injective() const {
    if (n2 != 1)
      return false;
    return n1 == 1 || s1 >= run || -s1 >= run;
  }

  /// Calls f(startStick, runLength) for every run, i2 outer, i1 inner.
  template <typename F> void forEachRun(F &&f) const {
    for (int64_t i2 = 0; i2 < n2; ++i2)
      for (int64_t i1 = 0; i1 < n1; ++i1)
        f(base + i2 * s2 + i1 * s1, run);
  }

  friend bool operator==(const Region &, const Region &) = default;
};

/// One operand region of an instruction (see `footprint` in Semantics.h).
struct Footprint {
  Region region;
  bool write = false;
  /// The region is in device memory (ld's source, st's destination), not LX.
  bool deviceMemory = false;

  friend bool operator==(const Footprint &, const Footprint &) = default;
};

/// The lowest and highest stick of a region (Region::lowest, ::highest),
/// worked out once per access for its checks and records.
struct StickSpan {
  int64_t lowest = 0;
  int64_t highest = 0;
};

} // namespace spyre::sim
