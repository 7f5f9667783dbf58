// The assembler's tokens and diagnostics (AssemblerParser.h).
#include "isa/AssemblerParser.h"

#include "numerics/Dlf16.h"
#include "support/ParseNumber.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
namespace spyre::isa::asm_detail {

bool identStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool identChar(char c) {
  return identStart(c) || (c >= '0' && c <= '9') || c == '.';
}
bool digit(char c) { return c >= '0' && c <= '9'; }

std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Newline:
    return "end of line";
  case Tok::End:
    return "end of file";
  case Tok::String:
    return "\"" + t.text + "\"";
  default:
    return "'" + t.text + "'";
  }
}

/// Parses an integer literal: optional sign, decimal or 0x hex.
std::optional<int64_t> parseInt(std::string_view s) { return parseInt64(s); }

/// Parses an FP32 literal: decimal (with exponent), inf, nan, with a sign.
/// A decimal beyond the FP32 range sets `outOfRange`.
std::optional<float> parseFloat(std::string_view s, bool *outOfRange) {
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  float v = 0;
  if (s == "inf") {
    v = std::numeric_limits<float>::infinity();
  } else if (s == "nan") {
    v = std::numeric_limits<float>::quiet_NaN();
  } else {
    if (s.empty() || !(digit(s[0]) || s[0] == '.'))
      return std::nullopt;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (end != s.data() + s.size())
      return std::nullopt;
    if (ec == std::errc::result_out_of_range) {
      if (outOfRange)
        *outOfRange = true;
      return std::nullopt;
    }
    if (ec != std::errc())
      return std::nullopt;
  }
  return neg ? -v : v;
}

/// `rN` / `cN` with N a small decimal number, else nullopt.
std::optional<int64_t> prefixedNumber(const std::string &s, char prefix) {
  if (s.size() < 2 || s[0] != prefix)
    return std::nullopt;
  for (size_t i = 1; i < s.size(); ++i)
    if (!digit(s[i]))
      return std::nullopt;
  if (s.size() > 6)
    return INT64_MAX;
  return std::stoll(s.substr(1));
}

/// FP32 bits of a parsed value; every NaN becomes the quiet NaN of its sign.
uint32_t canonicalBits(float v) {
  if (std::isnan(v))
    return std::signbit(v) ? 0xFFC00000u : 0x7FC00000u;
  return std::bit_cast<uint32_t>(v);
}

void Assembler::error(int line, int col, const std::string &msg) {
  // Collection stops well past what is shown, so a file of garbage cannot
  // grow memory without bound.
  if (errors_.size() > 4 * kMaxErrors)
    return;
  Diagnostic d;
  d.severity = Severity::Error;
  d.loc = SourceLoc{file_, line, col, {}};
  d.message = msg;
  if (line >= 1 && static_cast<size_t>(line) <= lines_.size())
    d.sourceLine = lines_[static_cast<size_t>(line) - 1];
  errors_.push_back(std::move(d));
}

void Assembler::flushErrors() {
  // Lexing sees the whole file before parsing starts: order by line so the
  // report reads top to bottom (within a line, in the order found).
  std::stable_sort(errors_.begin(), errors_.end(),
                   [](const Diagnostic &a, const Diagnostic &b) {
                     return a.loc.line < b.loc.line;
                   });
  for (size_t i = 0; i < errors_.size(); ++i) {
    if (i == kMaxErrors) {
      diags_.note(SourceLoc{file_}, "too many errors, stopping");
      break;
    }
    diags_.report(errors_[i]);
  }
}

void Assembler::lex() {
  // Keep the source lines for diagnostics (tabs widen the caret column the
  // same way as the text, since columns count bytes).
  size_t start = 0;
  while (start <= text_.size()) {
    size_t nl = text_.find('\n', start);
    std::string_view l = text_.substr(start, nl == std::string_view::npos
                                                 ? std::string_view::npos
                                                 : nl - start);
    if (!l.empty() && l.back() == '\r')
      l.remove_suffix(1);
    lines_.emplace_back(l);
    if (nl == std::string_view::npos)
      break;
    start = nl + 1;
  }

  for (size_t ln = 0; ln < lines_.size(); ++ln) {
    const std::string &l = lines_[ln];
    int line = static_cast<int>(ln) + 1;
    size_t i = 0;
    while (i < l.size()) {
      char c = l[i];
      int col = static_cast<int>(i) + 1;
      if (c == ' ' || c == '\t') {
        ++i;
        continue;
      }
      if (c == ';')
        break;
      Token t;
      t.line = line;
      t.col = col;
      if (identStart(c) ||
          (c == '.' && i + 1 < l.size() && identStart(l[i + 1]))) {
        t.kind = c == '.' ? Tok::Directive : Tok::Ident;
        size_t j = i + 1;
        while (j < l.size() && identChar(l[j]))
          ++j;
        t.text = l.substr(i, j - i);
        i = j;
      } else if (digit(c)) {
        t.kind = Tok::Number;
        bool hex = c == '0' && i + 1 < l.size() &&
                   (l[i + 1] == 'x' || l[i + 1] == 'X');
        size_t j = i + 1;
        while (j < l.size()) {
          char d = l[j];
          if (identChar(d) || digit(d)) {
            ++j;
            continue;
          }
          // An exponent sign belongs to the number: 1e-3, 2.5E+8.
          if (!hex && (d == '+' || d == '-') &&
              (l[j - 1] == 'e' || l[j - 1] == 'E')) {
            ++j;
            continue;
          }
          break;
        }
        t.text = l.substr(i, j - i);
        i = j;
      } else if (c == '"') {
        t.kind = Tok::String;
        size_t j = i + 1;
        bool closed = false;
        while (j < l.size()) {
          if (l[j] == '\\' && j + 1 < l.size()) {
            char e = l[j + 1];
            t.text += e == 'n' ? '\n' : e == 't' ? '\t' : e;
            j += 2;
            continue;
          }
          if (l[j] == '"') {
            closed = true;
            ++j;
            break;
          }
          t.text += l[j++];
        }
        if (!closed)
          error(line, col, "unterminated string");
        i = j;
      } else if (std::strchr(",[]=:@+-", c)) {
        t.kind = Tok::Punct;
        t.text = std::string(1, c);
        ++i;
      } else {
        error(line, col, std::string("unexpected character '") + c + "'");
        ++i;
        continue;
      }
      toks_.push_back(std::move(t));
    }
    Token nl;
    nl.kind = Tok::Newline;
    nl.line = line;
    nl.col = static_cast<int>(l.size()) + 1;
    toks_.push_back(nl);
  }
  Token end;
  end.kind = Tok::End;
  end.line = static_cast<int>(lines_.size());
  end.col = 1;
  toks_.push_back(end);
}

bool Assembler::expectLineEnd(std::string_view after) {
  if (atLineEnd())
    return true;
  error(peek(),
        "unexpected " + describe(peek()) + " after " + std::string(after));
  skipLine();
  return false;
}

} // namespace spyre::isa::asm_detail
