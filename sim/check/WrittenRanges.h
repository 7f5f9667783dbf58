// Which device-memory sticks hold defined data: inputs and constants from the
// start, everything else once a DMA store has written it. A load of sticks
// outside this set reads an output or scratch region nobody wrote.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace spyre::sim {

class WrittenRanges {
public:
  /// Marks [begin, end) as written (merging with neighbours).
  void add(int64_t begin, int64_t end);
  /// The first sub-range of [begin, end) that is not written, if any.
  std::optional<std::pair<int64_t, int64_t>> firstGap(int64_t begin,
                                                      int64_t end) const;
  size_t intervals() const { return ranges_.size(); }

private:
  std::map<int64_t, int64_t> ranges_; ///< begin -> end, disjoint, not touching
};

} // namespace spyre::sim
