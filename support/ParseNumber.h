// Integer literals as users write them in configs, assembly and CLI values:
// an optional sign, then decimal or 0x-prefixed hex digits.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace spyre {

enum class IntParse { Ok, Malformed, OutOfRange };

/// Parses all of `s` into `out`; reports a malformed literal apart from one
/// that does not fit in 64 signed bits.
IntParse parseInt64(std::string_view s, int64_t &out);

/// The same, when the reason for a failure does not matter.
std::optional<int64_t> parseInt64(std::string_view s);

} // namespace spyre
