#include "support/ParseNumber.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string>

namespace spyre {

IntParse parseInt64(std::string_view s, int64_t &out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty())
    return IntParse::Malformed;
  uint64_t magnitude = 0;
  auto [ptr, ec] =
      std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
  if (ptr != s.data() + s.size())
    return IntParse::Malformed;
  if (ec == std::errc::result_out_of_range)
    return IntParse::OutOfRange;
  if (ec != std::errc())
    return IntParse::Malformed;
  constexpr auto kMaxPositive =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (magnitude > kMaxPositive + (negative ? 1 : 0))
    return IntParse::OutOfRange;
  out = negative ? static_cast<int64_t>(0 - magnitude)
                 : static_cast<int64_t>(magnitude);
  return IntParse::Ok;
}

std::optional<int64_t> parseInt64(std::string_view s) {
  int64_t v = 0;
  if (parseInt64(s, v) != IntParse::Ok)
    return std::nullopt;
  return v;
}

DoubleParse parseDouble(std::string_view s, double &out) {
  std::string lower;
  for (char ch : s)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == ".inf" || lower == "+.inf" || lower == "-.inf" ||
      lower == ".nan")
    return DoubleParse::NotFinite;
  // Only YAML's decimal float syntax; from_chars alone would also take "inf",
  // "nan" and "infinity".
  bool digit = false;
  for (char ch : s) {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      digit = true;
      continue;
    }
    if (ch != '.' && ch != 'e' && ch != 'E' && ch != '+' && ch != '-')
      return DoubleParse::Malformed;
  }
  if (!digit)
    return DoubleParse::Malformed;
  if (!s.empty() && s[0] == '+')
    s.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ptr != s.data() + s.size())
    return DoubleParse::Malformed;
  if (ec == std::errc::result_out_of_range)
    return DoubleParse::OutOfRange;
  if (ec != std::errc())
    return DoubleParse::Malformed;
  return DoubleParse::Ok;
}

std::optional<double> parseDouble(std::string_view s) {
  double v = 0;
  if (parseDouble(s, v) != DoubleParse::Ok)
    return std::nullopt;
  return v;
}

} // namespace spyre
