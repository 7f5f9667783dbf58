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

TensorComparison compareTensors(const std::vector<double> &actual,
                                const std::vector<double> &expected,
                                const Tolerance &tolerance) {
  SPYRE_ASSERT(actual.size() == expected.size(),
               "compared tensors differ in element count");
  TensorComparison c;
  c.elements = actual.size();
  double worstExcess = -1;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double diff = std::fabs(actual[i] - expected[i]);
    const bool nanMismatch = std::isnan(actual[i]) != std::isnan(expected[i]);
    const double excess =
        nanMismatch ? INFINITY : diff - tolerance.allowed(expected[i]);
    if (!std::isnan(diff))
      c.maxAbsDiff = std::max(c.maxAbsDiff, diff);
    if (excess > 0 || nanMismatch)
      ++c.outside;
    if (excess > worstExcess || (nanMismatch && worstExcess != INFINITY)) {
      worstExcess = excess;
      c.worst = i;
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
