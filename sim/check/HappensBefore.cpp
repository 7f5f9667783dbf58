#include "sim/check/HappensBefore.h"

#include <algorithm>

namespace spyre::sim {

HappensBefore::HappensBefore(int numStreams)
    : clocks_(static_cast<size_t>(numStreams),
              VectorClock(static_cast<size_t>(numStreams), 0)) {
  // A stream's own entry starts at 1: an epoch c of stream t happens before
  // a clock V exactly when c <= V[t], and V[t] is 0 until something from t
  // was acquired.
  for (int s = 0; s < numStreams; ++s)
    clocks_[s][s] = 1;
}

VectorClock HappensBefore::release(int stream) {
  VectorClock snapshot = clocks_[stream];
  ++clocks_[stream][stream];
  return snapshot;
}

void HappensBefore::releaseInto(int stream, VectorClock &out) {
  out.assign(clocks_[stream].begin(), clocks_[stream].end());
  ++clocks_[stream][stream];
}

void HappensBefore::acquire(int stream, const VectorClock &vc) {
  joinInto(clocks_[stream], vc);
}

void joinInto(VectorClock &into, const VectorClock &from) {
  // A plain loop over raw pointers so the compiler vectorises the max.
  const size_t n = std::min(into.size(), from.size());
  uint32_t *a = into.data();
  const uint32_t *b = from.data();
  for (size_t i = 0; i < n; ++i)
    a[i] = a[i] > b[i] ? a[i] : b[i];
}

} // namespace spyre::sim
