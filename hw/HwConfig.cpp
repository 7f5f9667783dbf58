// Reading, checking and printing the hardware config.
//
// Everything here is driven by the schema in ConfigSchema.cpp: the reader
// walks the YAML tree looking keys up in it, the checker applies its rules,
// and the printer lists its keys in order. Problems are collected (not thrown)
// so that one run reports every mistake in a file, in document order.
#include "hw/HwConfig.h"

#include "hw/ConfigSchema.h"
#include "support/FileIO.h"
#include "support/Hash.h"
#include "support/Nesting.h"
#include "support/ParseNumber.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

namespace spyre::hw {

namespace {

constexpr const char *kBuiltinFileName = "<built-in config>";

/// 1-based line and column; 0 when unknown.
struct Pos {
  int line = 0;
  int col = 0;
};

Pos posOf(const YAML::Node &node) {
  YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0)
    return {};
  return {m.line + 1, m.column + 1};
}

std::string joinPath(std::string_view section, std::string_view key) {
  return section.empty() ? std::string(key)
                         : std::string(section) + "." + std::string(key);
}

/// Keys and values quoted from the file may hold tabs, newlines or other
/// control bytes; escape them so that every diagnostic stays on one line.
std::string printable(std::string_view text) {
  std::string out;
  for (char ch : text) {
    auto byte = static_cast<unsigned char>(ch);
    if (ch == '\n')
      out += "\\n";
    else if (ch == '\t')
      out += "\\t";
    else if (byte < 0x20 || byte == 0x7f)
      out += "\\x" + toHex(byte, 2);
    else
      out += ch;
  }
  return out;
}

/// A value quoted in a message, cut short when it is long (a quoted string
/// can swallow half the file).
std::string quotedText(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax)
    return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMax)) + "...'";
}

/// Where a value was written: a file, or one `--set` setting, and the spot in
/// it. `layer` counts the layers of the config from the bottom: the built-in
/// config or a file's base first, the settings last.
struct Where {
  std::string file;
  Pos pos;
  int layer = 0;
  int order = 0; ///< of the file among those of its layer (settings)
};

/// The diagnostics of one layer; sorted into document order when flushed so
/// that the first line a user sees is the first problem in the file (for
/// settings, in the first setting).
class Reporter {
public:
  explicit Reporter(std::string file) : file_(std::move(file)) {}

  /// Later errors without a file of their own are in `file`, after the
  /// errors so far.
  void setFile(std::string file) {
    file_ = std::move(file);
    ++fileIndex_;
  }
  const std::string &file() const { return file_; }
  /// Where `pos` of the current file is, in layer `layer`.
  Where at(Pos pos, int layer) const { return {file_, pos, layer, fileIndex_}; }

  void error(std::string_view path, Pos pos, const std::string &text) {
    add(path, file_, pos, fileIndex_, text);
  }

  /// An error at a value written elsewhere (a base file, a setting).
  void errorAt(std::string_view path, const Where &where,
               const std::string &text) {
    add(path, where.file, where.pos, where.order, text);
  }

  bool hasErrors() const { return !diags_.empty(); }

  void flushTo(DiagnosticEngine &diags) {
    std::vector<size_t> order(diags_.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    auto key = [&](size_t i) {
      const Diagnostic &d = diags_[i];
      return std::tuple(indexes_[i], d.loc.line == 0 ? INT_MAX : d.loc.line,
                        d.loc.col);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return key(a) < key(b); });
    for (size_t i : order)
      diags.report(std::move(diags_[i]));
    diags_.clear();
    indexes_.clear();
  }

private:
  void add(std::string_view path, const std::string &file, Pos pos, int index,
           const std::string &text) {
    // With a line the key path leads the message; without one
    // Diagnostic::str() prints it as "at 'path'".
    std::string message =
        pos.line > 0 && !path.empty() ? std::string(path) + ": " + text : text;
    diags_.push_back({Severity::Error,
                      SourceLoc{printable(file), pos.line, pos.col,
                                printable(path)},
                      printable(message),
                      {}});
    indexes_.push_back(index);
  }

  std::string file_;
  int fileIndex_ = 0;
  std::vector<Diagnostic> diags_;
  std::vector<int> indexes_;
};

/// What the value checks need to know besides the values: where each value
/// was written, and which keys are missing or already reported as wrong (so
/// one mistake gives one error, not a cascade).
struct CheckContext {
  Reporter &rep;
  std::map<std::string, Where, std::less<>> where;
  std::set<std::string, std::less<>> unusable;

  /// Where the value of `path` was written; the current file, without a
  /// line, when nobody wrote it.
  Where whereOf(std::string_view path) const {
    auto it = where.find(path);
    return it == where.end() ? rep.at({}, -1) : it->second;
  }
  bool usable(std::string_view path) const { return !unusable.count(path); }
};

// ---------------------------------------------------------------------------
// Scalars

std::string describeNode(const YAML::Node &node) {
  if (node.IsNull())
    return "no value";
  if (node.IsMap())
    return "a map";
  if (node.IsSequence())
    return "a list";
  return quotedText(node.Scalar());
}

/// Converts a YAML value to the parameter's type, or explains why not.
std::optional<ParamValue> convertValue(ParamType type, const YAML::Node &node,
                                       std::string &problem) {
  bool integer = type == ParamType::Int || type == ParamType::Int64;
  std::string expected = integer                     ? "an integer"
                         : type == ParamType::Double ? "a number"
                                                     : "a string";
  if (!node.IsScalar()) {
    problem = "expected " + expected + ", got " + describeNode(node);
    return std::nullopt;
  }
  const std::string &text = node.Scalar();
  if (type == ParamType::String)
    return ParamValue(text);
  // A quoted "32" is a string in YAML; accepting it would hide a typo.
  if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
    problem =
        "expected " + expected + ", got the quoted string " + quotedText(text);
    return std::nullopt;
  }
  if (integer) {
    int64_t v = 0;
    const IntParse r = parseInt64(text, v);
    if (r == IntParse::OutOfRange) {
      problem = text + " does not fit in a 64-bit integer";
      return std::nullopt;
    }
    if (r != IntParse::Ok) {
      const bool isFloat = parseDouble(text).has_value();
      problem =
          "expected " + expected + ", got " + (isFloat ? text : quotedText(text));
      return std::nullopt;
    }
    if (type == ParamType::Int && (v < INT32_MIN || v > INT32_MAX)) {
      problem = text + " does not fit in a 32-bit integer";
      return std::nullopt;
    }
    return ParamValue(v);
  }
  double d = 0;
  switch (parseDouble(text, d)) {
  case DoubleParse::Ok:
    return ParamValue(d);
  case DoubleParse::NotFinite:
    problem = "expected a finite number, got " + text;
    return std::nullopt;
  case DoubleParse::OutOfRange:
    problem = text + " is out of the range of a double";
    return std::nullopt;
  case DoubleParse::Malformed:
    break;
  }
  problem = "expected " + expected + ", got " + quotedText(text);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Suggestions for unknown keys

/// Optimal string alignment distance: edits, with a swap of neighbours
/// counted as one (the commonest typo).
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

/// Keys allowed directly inside `section` ("" is the top level).
std::vector<std::string_view> keysOf(std::string_view section) {
  std::vector<std::string_view> keys;
  for (const ParamInfo &p : configSchema()) {
    std::string_view s = sectionOf(p.path);
    std::string_view key = s == section ? leafOf(p.path) : s;
    if ((s == section || section.empty()) &&
        std::find(keys.begin(), keys.end(), key) == keys.end())
      keys.push_back(key);
  }
  return keys;
}

std::string quotedList(const std::vector<std::string> &items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0)
      out += i + 1 == items.size() ? " or " : ", ";
    out += "'" + items[i] + "'";
  }
  return out;
}

/// What to tell the author of an unknown key, and which known keys that
/// advice names (their "missing" errors would only repeat it).
struct Suggestion {
  std::string text;
  std::vector<std::string> paths;
};

Suggestion suggestionFor(std::string_view section, std::string_view name) {
  std::vector<std::string_view> keys = keysOf(section);
  auto didYouMean = [&](std::vector<std::string> paths) {
    std::vector<std::string> shown;
    for (const std::string &path : paths)
      shown.push_back(sectionOf(path) == section ? std::string(leafOf(path))
                                                 : path);
    return Suggestion{"; did you mean " + quotedList(shown) + "?",
                      std::move(paths)};
  };
  // A typo: the nearest key, when it is near enough to be meant.
  std::string_view best;
  size_t bestDistance = SIZE_MAX;
  for (std::string_view key : keys) {
    size_t d = editDistance(name, key);
    if (d < bestDistance) {
      best = key;
      bestDistance = d;
    }
  }
  if (bestDistance * 3 <= std::max(name.size(), best.size()))
    return didYouMean({joinPath(section, best)});
  // The unit left out of the name ("clock" for "clock_ghz") or the prefix
  // left out ("rows" for "pe_rows").
  std::vector<std::string> partial;
  for (std::string_view key : keys) {
    std::string k(key), n(name);
    if (k.starts_with(n + "_") || k.ends_with("_" + n))
      partial.push_back(joinPath(section, key));
  }
  if (partial.size() == 1)
    return didYouMean(partial);
  // The right key in the wrong section.
  std::vector<std::string> elsewhere;
  for (const ParamInfo &p : configSchema())
    if (leafOf(p.path) == name && sectionOf(p.path) != section)
      elsewhere.emplace_back(p.path);
  if (!elsewhere.empty())
    return didYouMean(elsewhere);
  if (!section.empty() && findSection(name))
    return {"; '" + std::string(name) + "' is a top-level section", {}};
  std::string known;
  for (std::string_view key : keys)
    known += (known.empty() ? "" : ", ") + std::string(key);
  if (section.empty())
    return {" (top-level keys: " + known + ")", {}};
  return {" (keys of '" + std::string(section) + "': " + known + ")", {}};
}

// ---------------------------------------------------------------------------
// Reading the YAML tree

/// Reads one layer of the config: a file, or one `--set` setting. The values
/// it gives replace those in `out`; the others keep theirs.
class YamlReader {
public:
  YamlReader(CheckContext &ctx, HwConfig &out, int layer)
      : ctx_(ctx), out_(out), layer_(layer) {}

  /// Reads the top level or one section. Sections are one level deep. At
  /// the top level `base` is skipped when `baseAllowed` (the loader reads it
  /// first) and an error otherwise.
  void readMap(const YAML::Node &map, std::string_view section,
               bool baseAllowed = true) {
    std::map<std::string, int> firstLine;
    for (const auto &entry : map) {
      const YAML::Node &key = entry.first;
      const YAML::Node &value = entry.second;
      Pos keyPos = posOf(key);
      if (!key.IsScalar()) {
        ctx_.rep.error(section, keyPos,
                       "keys must be plain names, got " + describeNode(key));
        continue;
      }
      const std::string &name = key.Scalar();
      std::string path = joinPath(section, name);
      if (auto [it, fresh] = firstLine.emplace(name, keyPos.line); !fresh) {
        ctx_.rep.error(path, keyPos,
                       "duplicate key (first given at line " +
                           std::to_string(it->second) + ")");
        continue;
      }
      if (section.empty() && name == kBaseKey) {
        if (!baseAllowed)
          ctx_.rep.error(path, keyPos,
                         "a base is named in a config file, not set on "
                         "its own");
        continue;
      }
      if (const ParamInfo *p = findParam(path)) {
        readParam(*p, value, keyPos);
        continue;
      }
      const SectionInfo *info = section.empty() ? findSection(name) : nullptr;
      if (info) {
        // The schema's own string: it outlives the YAML document.
        readSection(info->name, value, keyPos);
        continue;
      }
      Suggestion hint = suggestionFor(section, name);
      ctx_.rep.error(path, keyPos, "unknown key" + hint.text);
      suggested_.insert(hint.paths.begin(), hint.paths.end());
    }
  }

  /// The keys nobody wrote: over a base they keep its value (already in the
  /// output); without one, optional keys take the value in `fallback` (the
  /// built-in config) and required ones are reported missing.
  void fillMissing(const HwConfig *fallback, bool overBase, Pos rootPos) {
    std::set<std::string_view> reportedSections;
    for (const ParamInfo &p : configSchema()) {
      if (seen_.count(p.path))
        continue;
      std::string_view section = sectionOf(p.path);
      if (badSections_.count(section)) {
        ctx_.unusable.emplace(p.path);
        continue;
      }
      if (overBase)
        continue;
      if (!p.required && fallback) {
        p.field.set(out_, p.field.get(*fallback));
        continue;
      }
      ctx_.unusable.emplace(p.path);
      if (suggested_.count(std::string(p.path)) ||
          suggested_.count(std::string(section)))
        continue;
      auto sectionIt = sectionPos_.find(section);
      if (!section.empty() && sectionIt == sectionPos_.end()) {
        if (reportedSections.insert(section).second)
          ctx_.rep.error(section, rootPos, "required section is missing");
        continue;
      }
      Pos at = section.empty() ? rootPos : sectionIt->second;
      ctx_.rep.error(p.path, at, "required key is missing");
    }
  }

private:
  void readSection(std::string_view name, const YAML::Node &value, Pos keyPos) {
    sectionPos_[name] = keyPos;
    if (value.IsMap()) {
      readMap(value, name);
      return;
    }
    badSections_.insert(name);
    Pos at = value.IsNull() ? keyPos : posOf(value);
    ctx_.rep.error(name, at.line ? at : keyPos,
                   "expected a map of keys, got " + describeNode(value));
  }

  void readParam(const ParamInfo &p, const YAML::Node &value, Pos keyPos) {
    seen_.insert(p.path);
    // A null value has no position of its own (yaml-cpp puts it on the next
    // token), so point at its key.
    Pos at = value.IsNull() ? keyPos : posOf(value);
    if (at.line == 0)
      at = keyPos;
    ctx_.where[std::string(p.path)] = ctx_.rep.at(at, layer_);
    std::string problem;
    std::optional<ParamValue> v = convertValue(p.field.type, value, problem);
    if (!v) {
      ctx_.rep.error(p.path, at, problem);
      ctx_.unusable.emplace(p.path);
      return;
    }
    p.field.set(out_, *v);
  }

  CheckContext &ctx_;
  HwConfig &out_;
  int layer_;
  std::set<std::string_view> seen_;
  std::map<std::string_view, Pos> sectionPos_;
  std::set<std::string_view> badSections_;
  /// Keys an unknown-key error already pointed the author to.
  std::set<std::string> suggested_;
};

// ---------------------------------------------------------------------------
// Checking values

std::optional<std::string> checkParam(const ParamInfo &p, const HwConfig &c,
                                      const CheckContext &ctx) {
  ParamValue value = p.field.get(c);
  if (const auto *s = std::get_if<std::string>(&value)) {
    if ((p.rules & rule::kIdentifier) && !isConfigName(*s))
      return formatValue(value) +
             " is not a name (letters, digits, '.', '_' and '-', starting "
             "with a letter)";
    return std::nullopt;
  }
  if (const auto *d = std::get_if<double>(&value)) {
    if (!std::isfinite(*d))
      return "must be a finite number, got " + formatValue(value);
    if ((p.rules & rule::kPositive) && !(*d > 0))
      return "must be positive, got " + formatValue(value);
    if ((p.rules & rule::kNonNegative) && *d < 0)
      return "must not be negative, got " + formatValue(value);
    if (!p.maxReason.empty() && *d < p.minReal)
      return formatValue(value) + " is below " +
             formatValue(ParamValue(p.minReal)) + ", " +
             std::string(p.maxReason);
    if (!p.maxReason.empty() && *d > p.maxReal)
      return formatValue(value) + " is above " +
             formatValue(ParamValue(p.maxReal)) + ", " +
             std::string(p.maxReason);
    return std::nullopt;
  }
  int64_t x = std::get<int64_t>(value);
  std::string text = std::to_string(x);
  if ((p.rules & rule::kFixed) && x != p.maxValue)
    return text + " is not " + std::to_string(p.maxValue) + ": " +
           std::string(p.maxReason);
  if ((p.rules & rule::kPositive) && x <= 0)
    return "must be positive, got " + text;
  if ((p.rules & rule::kNonNegative) && x < 0)
    return "must not be negative, got " + text;
  if ((p.rules & rule::kMultipleOf4) && x % 4 != 0)
    return text + " is not a multiple of 4";
  if ((p.rules & rule::kPowerOfTwo) && (x & (x - 1)) != 0)
    return text + " is not a power of two";
  if (!p.maxReason.empty() && x > p.maxValue)
    return text + " is above " + std::to_string(p.maxValue) + ", " +
           std::string(p.maxReason);
  if ((p.rules & rule::kWholeSticks) && ctx.usable("chip.stick_bytes") &&
      c.chip.stickBytes > 0 && x % c.chip.stickBytes != 0)
    return text + " is not a whole number of " +
           std::to_string(c.chip.stickBytes) + "-byte sticks";
  return std::nullopt;
}

void checkValues(const HwConfig &c, CheckContext &ctx) {
  for (const ParamInfo &p : configSchema()) {
    if (!ctx.usable(p.path))
      continue;
    if (std::optional<std::string> problem = checkParam(p, c, ctx)) {
      // A size that stopped being whole sticks when the stick changed over
      // it: the stick is what to look at.
      Where at = ctx.whereOf(p.path);
      if ((p.rules & rule::kWholeSticks) &&
          ctx.whereOf("chip.stick_bytes").layer > at.layer)
        at = ctx.whereOf("chip.stick_bytes");
      ctx.rep.errorAt(p.path, at, *problem);
      ctx.unusable.emplace(p.path);
    }
  }
  for (const CrossRule &r : configCrossRules()) {
    bool ready =
        std::all_of(r.uses.begin(), r.uses.end(), [&](std::string_view use) {
          return use.empty() || ctx.usable(use);
        });
    if (!ready)
      continue;
    std::optional<std::string> problem = r.check(c);
    if (!problem)
      continue;
    // Point at the value written last: over a base or under a setting, the
    // one just changed is the one to look at.
    Where at = ctx.whereOf(r.reportAt);
    for (std::string_view use : r.uses)
      if (!use.empty() && ctx.whereOf(use).layer > at.layer)
        at = ctx.whereOf(use);
    ctx.rep.errorAt(r.reportAt, at, *problem);
  }
}

// ---------------------------------------------------------------------------
// Parsing

/// yaml-cpp's message for a tab is "illegal map value" or similar at some
/// later token; the tab itself is the useful place to point at.
std::optional<Pos> findIndentTab(std::string_view text, int lastLine) {
  int line = 1;
  size_t start = 0;
  while (start <= text.size() && (lastLine == 0 || line <= lastLine)) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view l = text.substr(start, end - start);
    size_t content = l.find_first_not_of(" \t");
    size_t tab = l.find('\t');
    if (content != std::string_view::npos && tab < content &&
        l[content] != '#' && l[content] != '\r')
      return Pos{line, static_cast<int>(tab) + 1};
    if (end == text.size())
      break;
    start = end + 1;
    ++line;
  }
  return std::nullopt;
}

/// Finds where the second document of a YAML stream starts (its root node),
/// reading no further. YAML::LoadAll of yaml-cpp 0.7 never returns on some
/// malformed streams: after a lone ',' it adds null documents forever
/// (jbeder/yaml-cpp#1040, fixed after 0.8).
class SecondDocument : public YAML::EventHandler {
public:
  int documents() const { return documents_; }
  std::optional<YAML::Mark> root() const { return root_; }

  void OnDocumentStart(const YAML::Mark &) override { ++documents_; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark &m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark &m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark &m, const std::string &, YAML::anchor_t,
                const std::string &) override {
    node(m);
  }
  void OnSequenceStart(const YAML::Mark &m, const std::string &, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark &m, const std::string &, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnMapEnd() override {}

private:
  void node(const YAML::Mark &m) {
    if (documents_ == 2 && !root_)
      root_ = m;
  }

  int documents_ = 0;
  std::optional<YAML::Mark> root_;
};

/// The root map of a config document, or nothing after reporting why not.
std::optional<YAML::Node> parseDocument(std::string_view text, Reporter &rep) {
  YAML::Node root;
  std::optional<YAML::Mark> secondRoot;
  try {
    // Before the tree is built: yaml-cpp recurses once per level.
    if (std::optional<TextPos> deep = findYamlTooDeep(text)) {
      rep.error("", Pos{deep->line, deep->col}, yamlTooDeepMessage());
      return std::nullopt;
    }
    root = YAML::Load(std::string(text));
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    SecondDocument second;
    while (second.documents() < 2 && parser.HandleNextDocument(second)) {
    }
    secondRoot = second.root();
  } catch (const YAML::Exception &e) {
    Pos at = e.mark.is_null() ? Pos{} : Pos{e.mark.line + 1, e.mark.column + 1};
    if (std::optional<Pos> tab = findIndentTab(text, at.line))
      rep.error("", *tab,
                "tab character in indentation; YAML indents with spaces");
    else
      rep.error("", at, "YAML syntax error: " + e.msg);
    return std::nullopt;
  }
  if (root.IsNull()) {
    std::string keys;
    for (std::string_view key : keysOf(""))
      keys += (keys.empty() ? "" : ", ") + std::string(key);
    rep.error("", {},
              "the config is empty; expected a map with the keys " + keys);
    return std::nullopt;
  }
  if (!root.IsMap()) {
    rep.error("", posOf(root),
              "expected a map of sections at the top level, got " +
                  describeNode(root));
    return std::nullopt;
  }
  if (secondRoot)
    rep.error("",
              secondRoot->is_null()
                  ? Pos{}
                  : Pos{secondRoot->line + 1, secondRoot->column + 1},
              "a config file holds one YAML document; another one starts "
              "here");
  return root;
}

/// A config with the place each of its values was written (none for the
/// values of the built-in config), so that a check failing later, over it,
/// can point at the value that matters.
struct LocatedConfig {
  HwConfig config;
  std::map<std::string, Where, std::less<>> where;
  int layer = 0; ///< of the last layer read
};

/// Configs a file's chain of bases may hold below it. A base is untrusted
/// input like the file naming it; eight is far more than layering needs.
constexpr size_t kMaxBaseDepth = 8;

/// The name that stands for the built-in config as a base.
constexpr std::string_view kDefaultBase = "default";

/// The files of a chain of bases being read, the first one first: each as
/// given (for messages) and as a canonical path (to see a loop however the
/// file is spelled).
struct BaseChain {
  std::vector<std::string> shown;
  std::vector<std::string> canonical;
  /// The canonical folder every base must lie in: the folder of the file
  /// named on the command line unless widened (`--config-root`).
  std::filesystem::path root;
  /// How messages name `root`.
  std::string rootShown;
};

/// Whether canonical path `p` is `folder` or lies below it.
bool isWithin(const std::filesystem::path &p,
              const std::filesystem::path &folder) {
  auto [f, q] = std::mismatch(folder.begin(), folder.end(), p.begin(), p.end());
  // A trailing separator leaves an empty last element in `folder`.
  return f == folder.end() || (std::next(f) == folder.end() && f->empty());
}

std::string canonicalPath(const std::string &path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  if (ec)
    return std::filesystem::absolute(path, ec).lexically_normal().string();
  return p.string();
}

bool loadLayer(std::string_view text, const std::string &fileName,
               const HwConfig *fallback, BaseChain &chain, LocatedConfig &out,
               DiagnosticEngine &diags);

/// Reads the base that `value` (the `base:` of `fileName`) names into `out`;
/// reports why not to `rep` (or, for a broken base, its own errors to
/// `diags`) and returns false.
bool loadBase(const YAML::Node &value, Pos keyPos, const std::string &fileName,
              BaseChain &chain, Reporter &rep, LocatedConfig &out,
              DiagnosticEngine &diags) {
  Pos at = value.IsNull() ? keyPos : posOf(value);
  if (!value.IsScalar() || value.Scalar().empty()) {
    rep.error(kBaseKey, at,
              "expected a config file (relative to this file's folder) or "
              "'default', got " +
                  describeNode(value));
    return false;
  }
  const std::string &name = value.Scalar();
  if (name == kDefaultBase) {
    out = LocatedConfig{builtinConfig(), {}, 0};
    return true;
  }
  namespace fs = std::filesystem;
  if (fs::path(name).has_root_path()) {
    rep.error(kBaseKey, at,
              "'" + name + "' is an absolute path; a base is named relative "
              "to this file's folder");
    return false;
  }
  const std::string path =
      (fs::path(fileName).parent_path() / name).lexically_normal().string();
  if (chain.shown.size() > kMaxBaseDepth) {
    rep.error(kBaseKey, at,
              "bases nest more than " + std::to_string(kMaxBaseDepth) +
                  " deep below " + chain.shown.front());
    return false;
  }
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    rep.error(kBaseKey, at,
              "'" + path + "' does not exist (a base is a config file, "
              "relative to this file's folder, or 'default')");
    return false;
  }
  if (!fs::is_regular_file(status)) {
    rep.error(kBaseKey, at, "'" + path + "' is not a regular file");
    return false;
  }
  const std::string canonical = canonicalPath(path);
  // A name in a file never leads out of the folder the user chose: a config
  // from elsewhere cannot make the tool read, and quote in its messages,
  // another file of the machine.
  if (!isWithin(canonical, chain.root)) {
    rep.error(kBaseKey, at,
              "'" + path + "' lies outside " + chain.rootShown +
                  "; a base must lie in that folder or below it (widen with "
                  "--config-root DIR)");
    return false;
  }
  auto loop = std::find(chain.canonical.begin(), chain.canonical.end(),
                        canonical);
  if (loop != chain.canonical.end()) {
    std::string cycle;
    for (size_t i = static_cast<size_t>(loop - chain.canonical.begin());
         i < chain.shown.size(); ++i)
      cycle += chain.shown[i] + " -> ";
    rep.error(kBaseKey, at,
              "the bases loop: " + cycle + path +
                  "; a config cannot be its own base");
    return false;
  }
  std::string text;
  try {
    text = readFile(path, kConfigFileLimit);
  } catch (const UserError &e) {
    rep.error(kBaseKey, at, "'" + path + "' " + e.diagnostic().message);
    return false;
  }
  chain.shown.push_back(path);
  chain.canonical.push_back(canonical);
  const bool ok =
      loadLayer(text, path, &builtinConfig(), chain, out, diags);
  chain.shown.pop_back();
  chain.canonical.pop_back();
  return ok;
}

/// Reads one config file over its base (`base:`) or, without one, over
/// nothing: then every required key must be written and optional ones take
/// their value from `fallback` (the built-in config; none while reading the
/// built-in config itself). Checks the result and reports every problem.
bool loadLayer(std::string_view text, const std::string &fileName,
               const HwConfig *fallback, BaseChain &chain, LocatedConfig &out,
               DiagnosticEngine &diags) {
  Reporter rep(fileName);
  std::optional<YAML::Node> root = parseDocument(text, rep);
  if (!root) {
    rep.flushTo(diags);
    return false;
  }
  LocatedConfig result;
  bool overBase = false;
  for (const auto &entry : *root) {
    if (!entry.first.IsScalar() || entry.first.Scalar() != kBaseKey)
      continue;
    // The built-in config is the bottom of every chain.
    if (!fallback) {
      rep.error(kBaseKey, posOf(entry.first),
                "the built-in config has no base");
      rep.flushTo(diags);
      return false;
    }
    if (!loadBase(entry.second, posOf(entry.first), fileName, chain, rep,
                  result, diags)) {
      rep.flushTo(diags);
      return false;
    }
    overBase = true;
    break;
  }
  CheckContext ctx{rep, std::move(result.where), {}};
  const int layer = result.layer + 1;
  YamlReader reader(ctx, result.config, layer);
  reader.readMap(*root, "");
  Pos rootPos = posOf(*root);
  reader.fillMissing(fallback, overBase, rootPos.line ? rootPos : Pos{1, 1});
  checkValues(result.config, ctx);
  bool ok = !rep.hasErrors();
  rep.flushTo(diags);
  if (ok)
    out = LocatedConfig{std::move(result.config), std::move(ctx.where), layer};
  return ok;
}

/// The file name a setting's diagnostics carry: the option as it was given.
std::string settingName(std::string_view setting) {
  return "--set " + std::string(setting);
}

/// Applies `KEY=VALUE` settings over `config` with the reader of config
/// files, as a layer of their own, and checks the result.
bool applySettings(LocatedConfig &config,
                   const std::vector<std::string> &settings,
                   DiagnosticEngine &diags) {
  if (settings.empty())
    return true;
  Reporter rep("--set");
  LocatedConfig result = config;
  CheckContext ctx{rep, std::move(result.where), {}};
  const int layer = result.layer + 1;
  for (const std::string &setting : settings) {
    rep.setFile(settingName(setting));
    const size_t eq = setting.find('=');
    const std::string key = setting.substr(0, eq);
    if (eq == std::string::npos || key.empty()) {
      rep.error("", {},
                "expected KEY=VALUE with a key as `spyre config show` "
                "prints it, e.g. memory.sustained_read_gb_per_s=300");
      continue;
    }
    const std::string value = setting.substr(eq + 1);
    // The value is one scalar, as it would be written in a config file;
    // the key's section and name become the map around it, so that the
    // reader checks, converts and suggests exactly as for a file.
    YAML::Node root(YAML::NodeType::Map);
    const size_t dot = key.find('.');
    if (dot == std::string::npos) {
      root[key] = value;
    } else {
      YAML::Node section(YAML::NodeType::Map);
      section[key.substr(dot + 1)] = value;
      root[key.substr(0, dot)] = section;
    }
    YamlReader reader(ctx, result.config, layer);
    reader.readMap(root, "", /*baseAllowed=*/false);
  }
  rep.setFile("--set");
  checkValues(result.config, ctx);
  bool ok = !rep.hasErrors();
  rep.flushTo(diags);
  if (ok)
    config = LocatedConfig{std::move(result.config), std::move(ctx.where),
                           layer};
  return ok;
}

/// `text` as `# ` comment lines of at most 80 columns after `indent`.
std::string commentLines(std::string_view text, std::string_view indent) {
  constexpr size_t kWidth = 80;
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view word = text.substr(start, end - start);
    if (!line.empty() &&
        indent.size() + 2 + line.size() + 1 + word.size() > kWidth) {
      out += std::string(indent) + "# " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    start = end + 1;
  }
  if (!line.empty())
    out += std::string(indent) + "# " + line + "\n";
  return out;
}

std::string commentFor(const ParamInfo &p, std::string_view indent) {
  std::string out = commentLines(p.description, indent);
  if (p.source.empty())
    return out;
  std::string meta = p.unit.empty() ? "" : std::string(p.unit) + "; ";
  meta += std::string(p.confidence) + ": " + std::string(p.source);
  if (!p.required)
    meta += "; optional";
  return out + commentLines("[" + meta + "]", indent);
}

} // namespace

uint64_t HwConfig::fingerprint() const { return fnv1a64(toYaml(*this, false)); }

namespace {

/// The chain of bases of a file read from `fileName`: the file itself.
/// `root` empty: the folder of `fileName`.
BaseChain chainOf(const std::string &fileName, const std::string &root = {}) {
  const std::string canonical = canonicalPath(fileName);
  if (root.empty())
    return BaseChain{{fileName},
                     {canonical},
                     std::filesystem::path(canonical).parent_path(),
                     "the folder of " + fileName};
  return BaseChain{
      {fileName}, {canonical}, canonicalPath(root), "--config-root " + root};
}

} // namespace

bool parseConfig(std::string_view yamlText, const std::string &fileName,
                 HwConfig &out, DiagnosticEngine &diags,
                 const std::string &baseRoot) {
  BaseChain chain = chainOf(fileName, baseRoot);
  LocatedConfig located;
  if (!loadLayer(yamlText, fileName, &builtinConfig(), chain, located, diags))
    return false;
  out = std::move(located.config);
  return true;
}

bool validateConfig(const HwConfig &config, const std::string &fileName,
                    DiagnosticEngine &diags) {
  Reporter rep(fileName);
  CheckContext ctx{rep, {}, {}};
  checkValues(config, ctx);
  bool ok = !rep.hasErrors();
  rep.flushTo(diags);
  return ok;
}

HwConfig loadConfigFile(const std::string &path) {
  return loadConfig(ConfigSource{path, {}});
}

const HwConfig &builtinConfig() {
  static const HwConfig config = [] {
    DiagnosticEngine diags;
    BaseChain chain = chainOf(kBuiltinFileName);
    LocatedConfig located;
    // No fallback: the built-in file is where optional keys fall back to, so
    // it must spell out every key.
    bool ok = loadLayer(builtinConfigText(), kBuiltinFileName, nullptr, chain,
                        located, diags);
    SPYRE_ASSERT(ok,
                 "configs/spyre.yaml compiled into the binary is invalid:\n" +
                     diags.str());
    return located.config;
  }();
  return config;
}

HwConfig loadConfigOrDefault(const std::string &path) {
  return loadConfig(ConfigSource{path, {}});
}

HwConfig loadConfig(const ConfigSource &source) {
  LocatedConfig located{builtinConfig(), {}, 0};
  DiagnosticEngine diags;
  if (!source.path.empty()) {
    const std::string text = readFile(source.path, kConfigFileLimit);
    BaseChain chain = chainOf(source.path, source.baseRoot);
    loadLayer(text, source.path, &builtinConfig(), chain, located, diags);
    diags.throwIfErrors();
  }
  applySettings(located, source.settings, diags);
  // The configs below were valid on their own: what is wrong now is a
  // setting, a misuse of the command line.
  diags.throwIfErrors(ExitCode::Usage);
  return std::move(located.config);
}

std::string toYaml(const HwConfig &config, bool withComments) {
  std::string out;
  if (withComments)
    out += "# Spyre hardware configuration, canonical form (`spyre config "
           "show`).\n"
           "# fingerprint: " +
           fingerprintString(config.fingerprint()) +
           "\n"
           "#\n"
           "# Units are in the key names; GB/s is 1e9 bytes per second and "
           "cycles are\n"
           "# chip.clock_ghz cycles. Each key says [unit; confidence: "
           "source].\n"
           "# Confidence: H = IBM documentation or torch-spyre code "
           "constants,\n"
           "# M = one source or consistent arithmetic, L = an estimate.\n"
           "# An optional key may be left out; it then takes the built-in "
           "value.\n";
  std::string_view current;
  for (const ParamInfo &p : configSchema()) {
    std::string_view section = sectionOf(p.path);
    if (section != current) {
      current = section;
      if (withComments)
        out += "\n" + commentLines(findSection(section)->description, "");
      out += std::string(section) + ":\n";
    }
    std::string_view indent = section.empty() ? "" : "  ";
    if (withComments) {
      if (section.empty())
        out += "\n";
      out += commentFor(p, indent);
    }
    out += std::string(indent) + std::string(leafOf(p.path)) + ": " +
           formatValue(p.field.get(config)) + "\n";
  }
  return out;
}

std::string fingerprintString(uint64_t fingerprint) {
  return "0x" + toHex(fingerprint, 16);
}

} // namespace spyre::hw
