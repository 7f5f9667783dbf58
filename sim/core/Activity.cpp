// Windowed activity counters (Activity.h).
#include "sim/core/Activity.h"

#include <algorithm>

namespace spyre::sim {

namespace {

__extension__ using Wide = unsigned __int128;

/// floor(amount * elapsed / duration) without overflow.
uint64_t share(uint64_t amount, Cycle elapsed, Cycle duration) {
  return static_cast<uint64_t>(static_cast<Wide>(amount) * elapsed / duration);
}

} // namespace

void WindowCounter::add(Cycle start, Cycle end, uint64_t amount) {
  if (amount == 0)
    return;
  end = std::max(end, start + 1);
  const Cycle duration = end - start;
  const auto last = static_cast<size_t>((end - 1) / window_);
  if (sums_.size() <= last)
    sums_.resize(last + 1, 0);
  const auto first = static_cast<size_t>(start / window_);
  if (first == last) { // within one window: all of it, without dividing
    sums_[first] += amount;
    return;
  }
  for (auto w = static_cast<size_t>(start / window_); w <= last; ++w) {
    const Cycle lo = std::max<Cycle>(start, w * window_);
    const Cycle hi = std::min<Cycle>(end, (w + 1) * window_);
    sums_[w] += share(amount, hi - start, duration) - share(amount, lo - start, duration);
  }
}

} // namespace spyre::sim
