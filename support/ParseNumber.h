// Numbers as users write them in configs, sweep specs, assembly and CLI
// values: integers with an optional sign, decimal or 0x-prefixed hex; and
// decimal floats in YAML's syntax.
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

enum class DoubleParse { Ok, Malformed, OutOfRange, NotFinite };

/// Parses all of `s`, a decimal float (digits, '.', an exponent, signs; no
/// hex, no "inf" or "nan" words), into `out`. YAML's infinities and NaN
/// (.inf, +.inf, -.inf, .nan in any case) are NotFinite; a number past the
/// range of a double is OutOfRange.
DoubleParse parseDouble(std::string_view s, double &out);

/// The same, when the reason for a failure does not matter.
std::optional<double> parseDouble(std::string_view s);

} // namespace spyre
