#include "support/SvgChart.h"

#include <fmt/format.h>

namespace spyre {

std::string htmlEscape(std::string_view s, HtmlQuotes quotes) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      if (quotes == HtmlQuotes::DoubleAndSingle)
        out += "&#39;";
      else
        out += c;
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string svgPx(double v) {
  return fmt::format("{:.2f}", v);
}

double niceStep(double span, int target) {
  const double raw = span / target;
  double mag = 1;
  while (mag * 10 <= raw)
    mag *= 10;
  while (mag > raw)
    mag /= 10;
  const double norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

int decimalsFor(double step) {
  int d = 0;
  for (double s = step; s < 0.999999 && d < 9; s *= 10)
    ++d;
  return d;
}

} // namespace spyre
