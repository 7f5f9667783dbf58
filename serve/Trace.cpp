#include "serve/Trace.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/ParseNumber.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace spyre::serve {

namespace {

constexpr FileLimit kRequestTraceLimit{kMaxTraceBytes, "a request trace"};

/// One cell of a row: its text and 1-based column.
struct Cell {
  std::string_view text;
  int col = 0;
};

std::vector<Cell> splitRow(std::string_view line) {
  std::vector<Cell> cells;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    std::string_view cell = line.substr(
        start, comma == std::string_view::npos ? std::string_view::npos
                                               : comma - start);
    size_t lead = 0;
    while (lead < cell.size() && (cell[lead] == ' ' || cell[lead] == '\t'))
      ++lead;
    cell.remove_prefix(lead);
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t'))
      cell.remove_suffix(1);
    cells.push_back({cell, static_cast<int>(start + lead) + 1});
    if (comma == std::string_view::npos)
      return cells;
    start = comma + 1;
  }
}

/// Which of the known columns a header names.
enum class Column { Arrival, Prompt, Output, PrefixId, PrefixTokens, Other };

Column columnOf(std::string_view name) {
  if (name == "arrival_s" || name == "TIMESTAMP")
    return Column::Arrival;
  if (name == "prompt_tokens" || name == "ContextTokens")
    return Column::Prompt;
  if (name == "output_tokens" || name == "GeneratedTokens")
    return Column::Output;
  if (name == "prefix_id")
    return Column::PrefixId;
  if (name == "prefix_tokens")
    return Column::PrefixTokens;
  return Column::Other;
}

bool isDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// days_from_civil).
int64_t daysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/// `YYYY-MM-DD HH:MM:SS[.fraction]` (the Azure traces' TIMESTAMP, also with
/// a `T` between date and time and an optional trailing `Z` or `+00:00`),
/// as seconds since 1970; nothing when malformed.
std::optional<double> parseDateTime(std::string_view s) {
  if (s.size() >= 6 && s.substr(s.size() - 6) == "+00:00")
    s.remove_suffix(6);
  else if (!s.empty() && s.back() == 'Z')
    s.remove_suffix(1);
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' ||
      (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto num = [&](size_t at, size_t len) -> std::optional<int64_t> {
    std::string_view part = s.substr(at, len);
    if (!isDigits(part))
      return std::nullopt;
    return parseInt64(part);
  };
  const auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2),
             mi = num(14, 2), sec = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !sec || *mo < 1 || *mo > 12 || *d < 1 ||
      *d > 31 || *h > 23 || *mi > 59 || *sec > 60)
    return std::nullopt;
  double fraction = 0;
  if (s.size() > 19) {
    std::string_view rest = s.substr(19);
    if (rest[0] != '.' || !isDigits(rest.substr(1)) || rest.size() > 16)
      return std::nullopt;
    double scale = 0.1;
    for (char c : rest.substr(1)) {
      fraction += (c - '0') * scale;
      scale /= 10;
    }
  }
  const int64_t days = daysFromCivil(*y, *mo, *d);
  return static_cast<double>(days * 86400 + *h * 3600 + *mi * 60 + *sec) +
         fraction;
}

[[noreturn]] void fail(const std::string &file, int line, int col,
                       const std::string &message) {
  throw UserError(SourceLoc{file, line, col}, message);
}

int64_t tokenCell(const Cell &cell, const std::string &file, int line,
                  std::string_view column) {
  int64_t v = 0;
  if (parseInt64(cell.text, v) != IntParse::Ok)
    fail(file, line, cell.col,
         fmt::format("{}: expected a whole number of tokens, got '{}'", column,
                     cell.text));
  if (v < 0 || v > kMaxRequestTokens)
    fail(file, line, cell.col,
         fmt::format("{}: must be in [0, {}], got {}", column,
                     kMaxRequestTokens, v));
  return v;
}

} // namespace

std::vector<Request> parseTrace(std::string_view text, const std::string &file) {
  std::vector<Request> requests;
  int lineNo = 0;
  size_t pos = 0;
  // Column indices of the header, once read.
  std::optional<size_t> arrivalAt, promptAt, outputAt, prefixIdAt,
      prefixTokensAt;
  size_t columns = 0;
  // Each prefix's tokens, as its first row gives them.
  std::map<int64_t, int64_t> prefixes;
  bool dates = false;
  std::optional<double> firstDate;
  double lastArrival = 0;
  int64_t totalOutput = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.find('\0') != std::string_view::npos)
      fail(file, lineNo, static_cast<int>(line.find('\0')) + 1,
           "a NUL byte: a trace is CSV text");
    std::string_view trimmed = line;
    while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\t'))
      trimmed.remove_prefix(1);
    if (trimmed.empty() || trimmed.front() == '#')
      continue;
    const std::vector<Cell> cells = splitRow(line);
    if (!arrivalAt) {
      columns = cells.size();
      for (size_t i = 0; i < cells.size(); ++i) {
        std::optional<size_t> *slot = nullptr;
        switch (columnOf(cells[i].text)) {
        case Column::Arrival: slot = &arrivalAt; break;
        case Column::Prompt: slot = &promptAt; break;
        case Column::Output: slot = &outputAt; break;
        case Column::PrefixId:
          slot = &prefixIdAt;
          break;
        case Column::PrefixTokens:
          slot = &prefixTokensAt;
          break;
        case Column::Other: continue;
        }
        if (*slot)
          fail(file, lineNo, cells[i].col,
               fmt::format("column '{}' given twice", cells[i].text));
        *slot = i;
      }
      if (!arrivalAt || !promptAt || !outputAt)
        fail(file, lineNo, 1,
             std::string("the header must name the columns "
                         "arrival_s,prompt_tokens,output_tokens (or the Azure "
                         "trace's TIMESTAMP,ContextTokens,GeneratedTokens); "
                         "missing ") +
                 (!arrivalAt ? "the arrival time"
                  : !promptAt ? "the prompt tokens"
                              : "the output tokens"));
      if (prefixIdAt.has_value() != prefixTokensAt.has_value())
        fail(file, lineNo, 1,
             "the columns prefix_id and prefix_tokens come together; only " +
                 std::string(prefixIdAt ? "prefix_id" : "prefix_tokens") +
                 " is named");
      dates = cells[*arrivalAt].text == "TIMESTAMP";
      continue;
    }
    if (cells.size() != columns)
      fail(file, lineNo, cells.back().col,
           fmt::format("expected {} cells as in the header, got {}", columns,
                       cells.size()));
    if (requests.size() == kMaxTraceRows)
      fail(file, lineNo, 1,
           fmt::format("more than {} requests", kMaxTraceRows));
    const Cell &at = cells[*arrivalAt];
    double arrival = 0;
    if (dates && !isDigits(at.text.substr(0, at.text.find('.')))) {
      std::optional<double> t = parseDateTime(at.text);
      if (!t)
        fail(file, lineNo, at.col,
             fmt::format("TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS[.frac]' "
                         "or seconds, got '{}'",
                         at.text));
      if (!firstDate)
        firstDate = *t;
      arrival = *t - *firstDate;
    } else {
      const std::string_view name = dates ? "TIMESTAMP" : "arrival_s";
      DoubleParse p = parseDouble(at.text, arrival);
      if (p != DoubleParse::Ok)
        fail(file, lineNo, at.col,
             fmt::format("{}: expected seconds, got '{}'", name, at.text));
      if (dates) {
        if (!firstDate)
          firstDate = arrival;
        arrival -= *firstDate;
      }
    }
    if (!(arrival >= 0) || arrival > kMaxArrivalS)
      fail(file, lineNo, at.col,
           fmt::format("arrival time must be in [0, {:g}] s from the trace's "
                       "start, got {:g}",
                       kMaxArrivalS, arrival));
    if (arrival < lastArrival)
      fail(file, lineNo, at.col,
           fmt::format("arrival time {:g} s is before the previous row's "
                       "{:g} s; a trace is in arrival order",
                       arrival, lastArrival));
    lastArrival = arrival;
    Request r;
    r.id = static_cast<int64_t>(requests.size());
    r.arrivalS = arrival;
    r.promptTokens = tokenCell(cells[*promptAt], file, lineNo,
                               dates ? "ContextTokens"
                                        : "prompt_tokens");
    r.outputTokens = tokenCell(cells[*outputAt], file, lineNo,
                               dates ? "GeneratedTokens" : "output_tokens");
    if (r.promptTokens == 0)
      fail(file, lineNo, cells[*promptAt].col,
           "a request has at least one prompt token");
    if (r.outputTokens == 0)
      fail(file, lineNo, cells[*outputAt].col,
           "a request generates at least one token");
    if (prefixIdAt) {
      const Cell &idCell = cells[*prefixIdAt];
      const Cell &tokCell = cells[*prefixTokensAt];
      if (parseInt64(idCell.text, r.prefixId) != IntParse::Ok ||
          r.prefixId < -1 || r.prefixId > kMaxPrefixId)
        fail(file, lineNo, idCell.col,
             fmt::format("prefix_id: expected -1 (no prefix) or a whole "
                         "number in [0, {}], got '{}'",
                         kMaxPrefixId, idCell.text));
      r.prefixTokens = tokenCell(tokCell, file, lineNo, "prefix_tokens");
      if (r.prefixId == -1 && r.prefixTokens != 0)
        fail(file, lineNo, tokCell.col,
             fmt::format("prefix_tokens: a row without a prefix (prefix_id "
                         "-1) has 0, got {}",
                         r.prefixTokens));
      if (r.prefixId >= 0) {
        if (r.prefixTokens < 1 || r.prefixTokens > r.promptTokens)
          fail(file, lineNo, tokCell.col,
               fmt::format("prefix_tokens: must be in [1, prompt_tokens = "
                           "{}], got {}",
                           r.promptTokens, r.prefixTokens));
        auto [it, added] = prefixes.emplace(r.prefixId, r.prefixTokens);
        if (!added && it->second != r.prefixTokens)
          fail(file, lineNo, tokCell.col,
               fmt::format("prefix_tokens: prefix {} has {} tokens on an "
                           "earlier row, {} here",
                           r.prefixId, it->second, r.prefixTokens));
      }
    }
    totalOutput += r.outputTokens;
    if (totalOutput > kMaxTraceOutputTokens)
      fail(file, lineNo, cells[*outputAt].col,
           fmt::format("the trace's output tokens pass {} in all; split it",
                       kMaxTraceOutputTokens));
    requests.push_back(r);
  }
  if (!arrivalAt)
    fail(file, std::max(lineNo, 1), 1,
         "empty trace: expected a header, then one row per request");
  if (requests.empty())
    fail(file, lineNo, 1, "the trace has a header but no request");
  return requests;
}

std::vector<Request> loadTrace(const std::string &path) {
  return parseTrace(readFile(path, kRequestTraceLimit), path);
}

LengthDist parseLengthDist(const std::string &text, const std::string &flag) {
  auto bad = [&](const std::string &why) -> UserError {
    return UserError(SourceLoc{flag},
                     fmt::format("{}; expected fixed:N, uniform:MIN:MAX or "
                                 "lognormal:MEDIAN:SIGMA, got '{}'",
                                 why, text),
                     ExitCode::Usage);
  };
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  while (true) {
    size_t colon = rest.find(':');
    parts.push_back(rest.substr(0, colon));
    if (colon == std::string_view::npos)
      break;
    rest.remove_prefix(colon + 1);
  }
  auto number = [&](std::string_view s) {
    double v = 0;
    if (parseDouble(s, v) != DoubleParse::Ok)
      throw bad(fmt::format("'{}' is not a number", s));
    return v;
  };
  LengthDist d;
  const double maxTokens = static_cast<double>(kMaxRequestTokens);
  if (parts[0] == "fixed" && parts.size() == 2) {
    d.kind = LengthDist::Kind::Fixed;
    d.a = number(parts[1]);
    if (d.a < 1 || d.a > maxTokens || d.a != std::floor(d.a))
      throw bad(fmt::format("the count must be a whole number in [1, {}]",
                            kMaxRequestTokens));
    return d;
  }
  if (parts[0] == "uniform" && parts.size() == 3) {
    d.kind = LengthDist::Kind::Uniform;
    d.a = number(parts[1]);
    d.b = number(parts[2]);
    if (d.a < 1 || d.b > maxTokens || d.a > d.b || d.a != std::floor(d.a) ||
        d.b != std::floor(d.b))
      throw bad(fmt::format("MIN <= MAX, whole numbers in [1, {}]",
                            kMaxRequestTokens));
    return d;
  }
  if (parts[0] == "lognormal" && parts.size() == 3) {
    d.kind = LengthDist::Kind::Lognormal;
    d.a = number(parts[1]);
    d.b = number(parts[2]);
    if (d.a < 1 || d.a > maxTokens)
      throw bad(fmt::format("the median must be in [1, {}]", kMaxRequestTokens));
    if (d.b < 0 || d.b > 4)
      throw bad("sigma must be in [0, 4]");
    return d;
  }
  throw bad("unknown distribution");
}

namespace {

/// splitmix64 (Steele, Lea and Flood), the whole generator: its output is
/// fixed by the seed on every platform.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1): never 0, so its log is finite.
  double open01() {
    return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
  }

private:
  uint64_t state_;
};

int64_t draw(const LengthDist &d, Rng &rng) {
  double v = d.a;
  switch (d.kind) {
  case LengthDist::Kind::Fixed:
    break;
  case LengthDist::Kind::Uniform:
    v = d.a + std::floor(rng.open01() * (d.b - d.a + 1));
    break;
  case LengthDist::Kind::Lognormal: {
    // Box-Muller, the cosine branch only.
    const double u1 = rng.open01();
    const double u2 = rng.open01();
    const double z = std::sqrt(-2.0 * std::log(u1)) *
                     std::cos(2.0 * 3.14159265358979323846 * u2);
    v = std::round(d.a * std::exp(d.b * z));
    break;
  }
  }
  return std::clamp<int64_t>(static_cast<int64_t>(v), 1, kMaxRequestTokens);
}

} // namespace

std::vector<Request> generateTrace(const GenOptions &o) {
  std::vector<Request> requests;
  Rng arrivals(o.seed);
  Rng prompts(o.seed ^ 0x70726f6d7074ULL);
  Rng outputs(o.seed ^ 0x6f7574707574ULL);
  Rng groups(o.seed ^ 0x707265666978ULL);
  double t = 0;
  for (int64_t i = 0; i < o.count; ++i) {
    if (i > 0)
      t += o.arrivals == Arrivals::Fixed ? 1.0 / o.rate
                                         : -std::log(arrivals.open01()) / o.rate;
    Request r;
    r.id = i;
    // To the microsecond, as the CSV writes it, so a written trace reads
    // back as the same requests.
    r.arrivalS = std::round(t * 1e6) / 1e6;
    r.promptTokens = draw(o.prompt, prompts);
    r.outputTokens = draw(o.output, outputs);
    if (o.prefixGroups > 0) {
      r.prefixId = static_cast<int64_t>(groups.next() %
                                        static_cast<uint64_t>(o.prefixGroups));
      r.prefixTokens = o.prefixTokens;
      r.promptTokens =
          std::min(r.promptTokens + o.prefixTokens, kMaxRequestTokens);
    }
    requests.push_back(r);
  }
  return requests;
}

std::string traceCsv(const std::vector<Request> &requests) {
  const bool prefixes =
      std::any_of(requests.begin(), requests.end(),
                  [](const Request &r) { return r.prefixId >= 0; });
  std::string out = prefixes ? "arrival_s,prompt_tokens,output_tokens,"
                               "prefix_id,prefix_tokens\n"
                             : "arrival_s,prompt_tokens,output_tokens\n";
  for (const Request &r : requests) {
    out +=
        fmt::format("{:.6f},{},{}", r.arrivalS, r.promptTokens, r.outputTokens);
    out += prefixes ? fmt::format(",{},{}\n", r.prefixId, r.prefixTokens)
                    : std::string("\n");
  }
  return out;
}

} // namespace spyre::serve
