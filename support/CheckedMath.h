// Shape arithmetic that cannot wrap. Dimensions come from model files, so a
// product or sum of them is untrusted: these return nothing instead of a
// wrapped value, and the caller reports a located error.
#pragma once

#include <cstdint>
#include <optional>

namespace spyre {

inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    return std::nullopt;
  return out;
}

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    return std::nullopt;
  return out;
}

} // namespace spyre
