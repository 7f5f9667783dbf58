// Element-by-element comparison of a computed tensor with a reference under
// a tolerance of the form atol + rtol * |expected|, as `spyre compare` and
// `spyre run --check` make it: the count of elements outside the tolerance
// and the worst of them.
//
// Values that are not numbers compare by identity, not by distance: an
// infinity matches only the same infinity and a NaN only a NaN, whatever the
// tolerance (an infinite tolerance would otherwise let 5 pass for +inf, and
// inf - inf is NaN, which compares false against any limit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace spyre {

struct Tolerance {
  double atol = 0;
  double rtol = 0;

  /// The largest |actual - expected| allowed for an element.
  double allowed(double expected) const;
};

/// Why `value` cannot be a tolerance (it must be finite and not negative),
/// or an empty string.
std::string toleranceProblem(double value);

struct TensorComparison {
  size_t elements = 0;
  /// Elements whose difference exceeds the tolerance, or that are not
  /// finite on either side without being the same infinity or both NaN.
  size_t outside = 0;
  /// The largest |actual - expected| over the elements where both values are
  /// finite.
  double maxAbsDiff = 0;
  /// Flat index of the element furthest past its tolerance (a mismatch of a
  /// NaN or an infinity first); of the element closest to its limit when
  /// every element is within it.
  size_t worst = 0;

  bool ok() const { return outside == 0; }
};

/// Compares `actual` with `expected` (the same number of elements,
/// row-major). The tolerance must be valid (toleranceProblem).
TensorComparison compareTensors(const std::vector<double> &actual,
                                const std::vector<double> &expected,
                                const Tolerance &tolerance);

/// `[1, 0]`: the index of flat element `flat` in a row-major tensor of
/// `shape` (`[]` for a scalar).
std::string flatIndexText(const std::vector<int64_t> &shape, size_t flat);

} // namespace spyre
