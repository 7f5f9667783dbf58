// Tensor comparison under a tolerance (TensorCompare.h).
#include "support/TensorCompare.h"

#include "support/Diagnostic.h"
#include "support/Npy.h"

#include <algorithm>
#include <cmath>

namespace spyre {

double Tolerance::allowed(double expected) const {
  return atol + rtol * std::fabs(expected);
}

std::string toleranceProblem(double value) {
  if (std::isnan(value) || std::isinf(value))
    return "a tolerance must be a finite number";
  if (value < 0)
    return "a tolerance must not be negative";
  return {};
}

namespace {

/// How far `actual` lies past its tolerance: > 0 outside, <= 0 within, and
/// +infinity for a value that is not finite on one side without matching
/// the other exactly.
double excessOf(double actual, double expected, const Tolerance &tolerance) {
  if (!std::isfinite(actual) || !std::isfinite(expected)) {
    const bool same = (std::isnan(actual) && std::isnan(expected)) ||
                      actual == expected;
    return same ? -INFINITY : INFINITY;
  }
  const double diff = std::fabs(actual - expected);
  const double allowed = tolerance.allowed(expected);
  // Both may overflow to infinity; within a limit that large is within.
  if (diff <= allowed)
    return std::isinf(allowed) ? -INFINITY : diff - allowed;
  return diff - allowed;
}

} // namespace

TensorComparison compareTensors(const std::vector<double> &actual,
                                const std::vector<double> &expected,
                                const Tolerance &tolerance) {
  SPYRE_ASSERT(actual.size() == expected.size(),
               "compared tensors differ in element count");
  SPYRE_ASSERT(toleranceProblem(tolerance.atol).empty() &&
                   toleranceProblem(tolerance.rtol).empty(),
               "comparison with a tolerance that is negative or not finite");
  TensorComparison c;
  c.elements = actual.size();
  double worstExcess = -INFINITY;
  bool first = true;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double diff = std::fabs(actual[i] - expected[i]);
    const double excess = excessOf(actual[i], expected[i], tolerance);
    if (std::isfinite(actual[i]) && std::isfinite(expected[i]))
      c.maxAbsDiff = std::max(c.maxAbsDiff, diff);
    if (excess > 0)
      ++c.outside;
    if (first || excess > worstExcess) {
      worstExcess = excess;
      c.worst = i;
      first = false;
    }
  }
  return c;
}

std::string flatIndexText(const std::vector<int64_t> &shape, size_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = static_cast<int64_t>(flat) % shape[d];
    flat /= static_cast<size_t>(shape[d]);
  }
  return shapeText(idx);
}

} // namespace spyre
