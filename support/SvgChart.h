// Helpers of the self-contained HTML reports' inline SVG charts (`spyre
// report`, `spyre sweep report`): escaping text for HTML, coordinates as
// text, and axis steps. Everything here is exact and the same on every
// machine, so the same data give the same page bytes.
#pragma once

#include <string>
#include <string_view>

namespace spyre {

enum class HtmlQuotes {
  Double,        ///< escapes & < > and "
  DoubleAndSingle ///< also ' (as &#39;)
};

/// `s` with the HTML special characters escaped, for text and quoted
/// attribute values.
std::string htmlEscape(std::string_view s,
                       HtmlQuotes quotes = HtmlQuotes::Double);

/// A coordinate: two decimals are finer than any screen needs.
std::string svgPx(double v);

/// The axis step near `span / target` that is 1, 2 or 5 times a power of
/// ten. Powers of ten by repeated multiplication, not log/pow, so the ticks
/// are the same with any math library.
double niceStep(double span, int target);

/// Decimals that show every tick of `step` (at most 9).
int decimalsFor(double step);

} // namespace spyre
