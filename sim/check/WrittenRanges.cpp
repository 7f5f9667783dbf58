#include "sim/check/WrittenRanges.h"

#include <algorithm>

namespace spyre::sim {

void WrittenRanges::add(int64_t begin, int64_t end) {
  if (begin >= end)
    return;
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= begin) {
      begin = prev->first;
      end = std::max(end, prev->second);
      it = ranges_.erase(prev);
    }
  }
  while (it != ranges_.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(begin, end);
}

std::optional<std::pair<int64_t, int64_t>>
WrittenRanges::firstGap(int64_t begin, int64_t end) const {
  int64_t pos = begin;
  auto it = ranges_.upper_bound(pos);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > pos)
      pos = prev->second;
  }
  if (pos >= end)
    return std::nullopt;
  int64_t gapEnd = it == ranges_.end() ? end : std::min(end, it->first);
  return std::make_pair(pos, gapEnd);
}

} // namespace spyre::sim
