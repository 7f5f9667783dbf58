// The one check every integer option of the command line goes through.
//
// CLI11 converts "-1" for an unsigned option by wrapping it to 2^64 - 1 and
// reads a number past 64 bits in ways that depend on the type, so the text
// is checked before any conversion: decimal digits only, no sign, within
// the option's range. A bad value is a usage error naming the option.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <cstdint>
#include <limits>
#include <string>

namespace spyre::cli {

/// Accepts the decimal numbers from `lo` to `hi`, nothing else.
inline CLI::Validator wholeNumberIn(uint64_t lo, uint64_t hi) {
  const std::string range =
      std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string &text) -> std::string {
        uint64_t v = 0;
        const char *end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, v);
        const bool digits =
            !text.empty() &&
            text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || ptr != end || (ec != std::errc() &&
                                      ec != std::errc::result_out_of_range))
          return "must be a whole number in " + range + ", got '" + text + "'";
        if (ec == std::errc::result_out_of_range || v < lo || v > hi)
          return "'" + text + "' is outside " + range;
        return {};
      },
      "UINT in " + range);
}

/// Accepts the finite numbers from `lo` to `hi` (a decimal or exponent
/// form), nothing else: CLI11's own range check lets `nan` through.
inline CLI::Validator numberIn(double lo, double hi, const std::string &what) {
  std::ostringstream range;
  range << lo << ".." << hi;
  const std::string text = what + " in " + range.str();
  return CLI::Validator(
      [lo, hi, text](std::string &value) -> std::string {
        char *end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() ||
            !std::isfinite(v) || v < lo || v > hi)
          return "must be a " + text + ", got '" + value + "'";
        return {};
      },
      text);
}

/// The largest count an option of cycles or instructions takes: any sum of
/// it with a simulated time stays within 64 bits.
inline constexpr uint64_t kMaxCountOption =
    std::numeric_limits<int64_t>::max();

} // namespace spyre::cli
