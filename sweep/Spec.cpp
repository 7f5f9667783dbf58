// Reading a sweep spec and expanding it into the plan (planSweep in
// Sweep.h; the format is in docs/sweep.md). Every mistake in the spec is a
// UserError at its line and column; a value that only fails the config's own
// checks (an LX size that is not whole sticks) is not a spec error but a
// failed point, found when the point runs.
#include "sweep/Sweep.h"

#include "compiler/import/ModelLoader.h"
#include "llm/LlmConfig.h"
#include "serve/Trace.h"
#include "sweep/Expr.h"
#include "sweep/Results.h"
#include "support/FileIO.h"
#include "support/Hash.h"
#include "support/Nesting.h"
#include "support/ParseNumber.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace spyre::sweep {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxOptLevel = 2;
/// Hex digits of a point id: 48 bits, short enough for a folder name.
constexpr int kIdDigits = 12;

/// One value of an axis, or one listed point: the settings it makes.
struct AxisValue {
  std::vector<Setting> settings;
};

struct SpecAxis {
  Axis axis;
  std::vector<AxisValue> values;
};

struct SpecModel {
  std::string written;
  std::string path;
  std::string hash;
};

/// MurmurHash3's 64-bit finaliser: FNV-1a alone changes few high bits when
/// only the last bytes differ, so ids of neighbouring points would look
/// alike.
uint64_t mixBits(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

/// Levenshtein distance with adjacent swaps, for "did you mean".
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

/// "; did you mean 'x'?" when one of `candidates` is near enough to `name`.
std::string suggestion(std::string_view name,
                       const std::vector<std::string> &candidates) {
  std::string best;
  size_t bestDistance = SIZE_MAX;
  for (const std::string &c : candidates) {
    const size_t d = editDistance(name, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  if (!best.empty() && bestDistance * 3 <= std::max(name.size(), best.size()))
    return "; did you mean '" + best + "'?";
  // A name cut short (`lx.size` for `lx.size_bytes`): the one key it starts.
  std::vector<std::string> longer;
  for (const std::string &c : candidates)
    if (c.starts_with(name))
      longer.push_back(c);
  if (!name.empty() && longer.size() == 1)
    return "; did you mean '" + longer.front() + "'?";
  return "";
}

/// The first key of config section `section`, for examples in messages.
std::string firstLeafOf(std::string_view section) {
  for (const hw::ParamInfo &p : hw::configSchema())
    if (hw::sectionOf(p.path) == section)
      return std::string(hw::leafOf(p.path));
  return "";
}

std::vector<std::string> allKeys() {
  std::vector<std::string> keys = {kOptLevelKey, kMappingKey};
  for (const hw::ParamInfo &p : hw::configSchema())
    keys.emplace_back(p.path);
  for (const ServeKey &k : serveKeys())
    keys.push_back(std::string(kServePrefix) + std::string(k.name));
  return keys;
}

/// The keys of the `serve:` section, bare.
std::vector<std::string> serveSectionKeys() {
  std::vector<std::string> keys = {"requests"};
  for (const ServeKey &k : serveKeys())
    keys.emplace_back(k.name);
  return keys;
}

constexpr const char *kServeSection = "serve";

std::string describeNode(const YAML::Node &node) {
  if (!node.IsDefined() || node.IsNull())
    return "no value";
  if (node.IsMap())
    return "a map";
  if (node.IsSequence())
    return "a list";
  return "'" + node.Scalar() + "'";
}

bool quotedScalar(const YAML::Node &node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

class SpecReader {
public:
  SpecReader(std::string file, std::string text, uint64_t maxPoints,
             std::vector<std::string> settings)
      : file_(std::move(file)), text_(std::move(text)), maxPoints_(maxPoints),
        settings_(std::move(settings)) {
    fs::path dir = fs::path(file_).parent_path();
    specDir_ = fs::absolute(dir.empty() ? fs::path(".") : dir).lexically_normal();
  }

  SweepPlan read() {
    YAML::Node root;
    try {
      // Before the tree is built: yaml-cpp recurses once per level.
      if (std::optional<TextPos> deep = findYamlTooDeep(text_))
        throw UserError(SourceLoc{file_, deep->line, deep->col},
                        yamlTooDeepMessage());
      root = YAML::Load(text_);
    } catch (const YAML::Exception &e) {
      SourceLoc loc{file_};
      if (!e.mark.is_null()) {
        loc.line = e.mark.line + 1;
        loc.col = e.mark.column + 1;
      }
      throw UserError(loc, "YAML syntax error: " + e.msg);
    }
    if (!root.IsDefined() || root.IsNull())
      throw UserError(SourceLoc{file_},
                      "the sweep spec is empty; it needs at least 'models'");
    if (!root.IsMap())
      fail(root, "a sweep spec is a map (models, base_config, options, grid "
                 "or points, constraints), got " + describeNode(root));

    static const std::vector<std::string> kTopKeys = {
        "models", "base_config", "options", "serve",
        "grid",   "points",      "constraints"};
    for (const auto &kv : root) {
      const std::string key = keyText(kv.first);
      if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end())
        fail(kv.first, "unknown key '" + key + "' in the sweep spec" +
                           suggestion(key, kTopKeys) +
                           " (keys: models, base_config, options, serve, "
                           "grid, points, constraints)");
    }
    serve_ = static_cast<bool>(root[kServeSection]);

    if (!root["models"])
      fail(root, "the sweep spec names no models: add 'models:' with a list "
                 "of model files");
    readModels(root["models"]);
    readBaseConfig(root["base_config"]);
    readOptions(root["options"]);
    if (serve_)
      readServe(root[kServeSection]);
    if (root["grid"] && root["points"])
      fail(root["points"], "give either 'grid' or 'points', not both");
    if (root["grid"])
      readGrid(root["grid"]);
    if (root["points"])
      readPoints(root["points"]);
    if (root["constraints"])
      readConstraints(root["constraints"]);
    if (serve_)
      checkTraceSource();
    return expand();
  }

private:
  // -------------------------------------------------------------------------
  // Locations

  SourceLoc at(const YAML::Node &node) const {
    SourceLoc loc{file_};
    const YAML::Mark m = node.Mark();
    if (m.is_null() || m.line < 0)
      return loc;
    loc.line = m.line + 1;
    loc.col = m.column + 1;
    return loc;
  }

  [[noreturn]] void fail(const YAML::Node &node,
                         const std::string &message) const {
    throw UserError(at(node), message);
  }

  /// Where the text of a scalar starts (after its opening quote).
  SourceLoc textAt(const YAML::Node &node) const {
    SourceLoc loc = at(node);
    const YAML::Mark m = node.Mark();
    if (!m.is_null() && m.pos >= 0 &&
        static_cast<size_t>(m.pos) < text_.size() &&
        (text_[static_cast<size_t>(m.pos)] == '"' ||
         text_[static_cast<size_t>(m.pos)] == '\''))
      ++loc.col;
    return loc;
  }

  /// A map key as text; keys that are lists or maps are refused.
  std::string keyText(const YAML::Node &key) const {
    if (!key.IsScalar())
      fail(key, "a key must be a name, got " + describeNode(key));
    return key.Scalar();
  }

  std::string scalar(const YAML::Node &node, const std::string &what) const {
    if (!node.IsScalar())
      fail(node, what + " must be a string, got " + describeNode(node));
    return node.Scalar();
  }

  std::string resolve(const std::string &path) const {
    fs::path p(path);
    return (p.is_absolute() ? p : specDir_ / p).lexically_normal().string();
  }

  std::string existingFile(const YAML::Node &node, const std::string &what) {
    const std::string written = scalar(node, what);
    if (written.empty())
      fail(node, what + " is empty");
    const std::string path = resolve(written);
    std::error_code ec;
    if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
      fail(node, what + " '" + written + "' is not a file");
    if (!fs::is_regular_file(path, ec))
      fail(node, what + " '" + written + "' not found (looked for " + path +
                     "; paths are relative to the spec's folder)");
    return path;
  }

  // -------------------------------------------------------------------------
  // Sections

  void readModels(const YAML::Node &node) {
    if (!node.IsSequence())
      fail(node, "'models' is a list of model files, got " +
                     describeNode(node));
    if (node.size() == 0)
      fail(node, "'models' is empty; name at least one model file");
    for (const YAML::Node &m : node) {
      SpecModel model;
      model.written = scalar(m, "a model");
      model.path = existingFile(m, serve_ ? "LLM config" : "model file");
      if (serve_)
        // A serve sweep's models are LLM configs (docs/llm.md); a bad one
        // is an error in it, before anything runs.
        llm::loadLlmConfig(model.path);
      else if (!compiler::modelFormatOf(model.path))
        fail(m, "model file '" + model.written +
                    "' is neither graph JSON (.json) nor ONNX (.onnx)");
      for (const SpecModel &other : models_)
        if (other.written == model.written)
          fail(m, "model '" + model.written + "' is listed twice");
      model.hash = hw::fingerprintString(fnv1a64(readFile(model.path, kModelFileLimit)));
      models_.push_back(std::move(model));
    }
  }

  void readBaseConfig(const YAML::Node &node) {
    if (node)
      baseConfig_ = existingFile(node, "base_config");
    base_ = hw::loadConfig({baseConfig_, settings_});
  }

  bool readBool(const YAML::Node &node, const std::string &what) {
    if (node.IsScalar() && !quotedScalar(node)) {
      if (node.Scalar() == "true")
        return true;
      if (node.Scalar() == "false")
        return false;
    }
    fail(node, what + " is true or false, got " + describeNode(node));
  }

  void readOptions(const YAML::Node &node) {
    if (!node)
      return;
    if (!node.IsMap())
      fail(node, "'options' is a map (opt_level, mapping, numerics, seed, "
                 "keep_stats), got " + describeNode(node));
    static const std::vector<std::string> kKeys = {
        kOptLevelKey, kMappingKey, "numerics", "seed", "keep_stats"};
    for (const auto &kv : node) {
      const std::string key = keyText(kv.first);
      const YAML::Node &value = kv.second;
      if (serve_ && key != kOptLevelKey &&
          std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end())
        fail(kv.first, "option '" + key + "' does not apply to a serve "
                       "sweep (its points run `spyre serve`, timing only); "
                       "only opt_level does");
      if (key == kOptLevelKey) {
        optLevel_ = static_cast<int>(
            std::get<int64_t>(optionValue(key, value).value));
      } else if (key == kMappingKey) {
        mapping_ = std::get<std::string>(optionValue(key, value).value);
      } else if (key == "numerics") {
        numerics_ = readBool(value, "options.numerics");
      } else if (key == "keep_stats") {
        keepStats_ = readBool(value, "options.keep_stats");
      } else if (key == "seed") {
        int64_t seed = 0;
        if (!value.IsScalar() || quotedScalar(value) ||
            parseInt64(value.Scalar(), seed) != IntParse::Ok || seed < 0)
          fail(value, "options.seed is a non-negative integer, got " +
                          describeNode(value));
        seed_ = static_cast<uint64_t>(seed);
      } else {
        fail(kv.first, "unknown option '" + key + "'" +
                           suggestion(key, kKeys) +
                           " (options: opt_level, mapping, numerics, seed, "
                           "keep_stats)");
      }
    }
  }

  /// The value of a compiler option (`opt_level`, `mapping`).
  Setting optionValue(const std::string &key, const YAML::Node &value) {
    if (serve_ && key == kMappingKey)
      fail(value, "a serve sweep takes no mapping files (its step programs "
                  "are compiled by the llm library)");
    if (key == kOptLevelKey) {
      int64_t level = -1;
      if (!value.IsScalar() || quotedScalar(value) ||
          parseInt64(value.Scalar(), level) != IntParse::Ok || level < 0 ||
          level > kMaxOptLevel)
        fail(value, "opt_level is 0, 1 or 2, got " + describeNode(value));
      return {key, hw::ParamValue(level)};
    }
    const std::string written = scalar(value, "mapping");
    existingFile(value, "mapping file");
    return {key, hw::ParamValue(written)};
  }

  /// A value of the serving knob `key`, converted to its type and checked
  /// as `spyre serve` checks its option.
  Setting serveValue(const ServeKey &key, const YAML::Node &value) {
    const std::string full = std::string(kServePrefix) + std::string(key.name);
    if (!serve_)
      fail(value, "'" + full + "' is a serving knob: a sweep that sets it "
                  "needs a 'serve' section (docs/sweep.md, Serve sweeps)");
    if (!requests_.empty() && key.generator)
      fail(value, "'" + full + "' is a parameter of a generated trace; this "
                  "sweep reads its requests from '" + requests_ + "'");
    const std::string expected = key.type == hw::ParamType::Int64 ? "an integer"
                                 : key.type == hw::ParamType::Double
                                     ? "a number"
                                     : "a string";
    if (!value.IsScalar())
      fail(value, "'" + full + "' takes " + expected + ", got " +
                      describeNode(value));
    const std::string &text = value.Scalar();
    hw::ParamValue v;
    if (key.type == hw::ParamType::String) {
      v = text;
    } else if (quotedScalar(value)) {
      fail(value, "'" + full + "' takes " + expected +
                      ", got the quoted string '" + text + "'");
    } else if (key.type == hw::ParamType::Int64) {
      int64_t i = 0;
      const IntParse r = parseInt64(text, i);
      if (r == IntParse::OutOfRange)
        fail(value, "'" + full + "': " + text +
                        " does not fit in a 64-bit integer");
      if (r != IntParse::Ok)
        fail(value, "'" + full + "' takes " + expected + ", got " +
                        (parseDouble(text) ? text : "'" + text + "'"));
      v = i;
    } else {
      std::optional<double> d = parseDouble(text);
      if (!d)
        fail(value, "'" + full + "' takes a finite number, got '" + text + "'");
      v = *d;
    }
    const std::string problem = serveValueProblem(key, v);
    if (!problem.empty())
      fail(value, "'" + full + "' " + problem);
    return {full, v};
  }

  /// The `serve:` section: the trace and the knobs every point starts from.
  void readServe(const YAML::Node &node) {
    if (!node.IsMap())
      fail(node, "'serve' is a map of the serving knobs (requests, batching, "
                 "max_num_seqs, ...), got " + describeNode(node));
    serveLoc_ = at(node);
    // The trace first: whether it is a file decides which keys apply.
    for (const auto &kv : node)
      if (keyText(kv.first) == "requests") {
        requests_ = scalar(kv.second, "requests");
        requestsPath_ = existingFile(kv.second, "request trace");
        // A bad trace is an error in it, before anything runs, named as
        // the spec's folder and the written path give it.
        const std::string text = readFile(
            requestsPath_, FileLimit{serve::kMaxTraceBytes, "a request trace"});
        const fs::path written(requests_);
        serve::parseTrace(text, written.is_absolute()
                                    ? requests_
                                    : (fs::path(file_).parent_path() / written)
                                          .lexically_normal()
                                          .string());
        requestsHash_ = hw::fingerprintString(fnv1a64(text));
      }
    for (const auto &kv : node) {
      const std::string key = keyText(kv.first);
      if (key == "requests")
        continue;
      const ServeKey *k = findServeKey(key, true);
      if (!k)
        fail(kv.first, "unknown key '" + key + "' in the serve section" +
                           suggestion(key, serveSectionKeys()) +
                           " (keys: requests, or a serving knob such as "
                           "batching, max_num_seqs, chunk_size, rate_scale; "
                           "docs/sweep.md)");
      k->set(serveBase_, serveValue(*k, kv.second).value);
      serveSet_.insert(std::string(k->name));
    }
  }

  /// A trace file, or every parameter of the generator for every point.
  void checkTraceSource() const {
    if (!requests_.empty())
      return;
    std::string missing;
    for (const char *name : {"rate", "prompt", "output", "count"}) {
      const std::string full = std::string(kServePrefix) + name;
      if (!serveSet_.count(name) && !keyOwner_.count(full))
        missing += (missing.empty() ? "" : ", ") + std::string(name);
    }
    if (!missing.empty())
      throw UserError(serveLoc_,
                      "the serve section names no trace: give 'requests' (a "
                      "trace file) or the generator's rate, prompt, output "
                      "and count (missing: " + missing + ")");
  }

  /// A config value of `param`, converted to its type.
  Setting configValue(const hw::ParamInfo &param, const YAML::Node &value) {
    const std::string key(param.path);
    const bool integer = param.field.type == hw::ParamType::Int ||
                         param.field.type == hw::ParamType::Int64;
    const std::string expected = integer ? "an integer"
                                 : param.field.type == hw::ParamType::Double
                                     ? "a number"
                                     : "a string";
    if (!value.IsScalar())
      fail(value, "'" + key + "' takes " + expected + ", got " +
                      describeNode(value));
    const std::string &text = value.Scalar();
    if (param.field.type == hw::ParamType::String)
      return {key, hw::ParamValue(text)};
    if (quotedScalar(value))
      fail(value, "'" + key + "' takes " + expected +
                      ", got the quoted string '" + text + "'");
    if (integer) {
      int64_t v = 0;
      const IntParse r = parseInt64(text, v);
      if (r == IntParse::OutOfRange ||
          (r == IntParse::Ok && param.field.type == hw::ParamType::Int &&
           (v < INT32_MIN || v > INT32_MAX)))
        fail(value, "'" + key + "': " + text + " does not fit in a " +
                        (r == IntParse::OutOfRange ? "64" : "32") +
                        "-bit integer");
      if (r != IntParse::Ok)
        fail(value, "'" + key + "' takes " + expected + ", got " +
                        (parseDouble(text) ? text : "'" + text + "'"));
      return {key, hw::ParamValue(v)};
    }
    std::optional<double> d = parseDouble(text);
    if (!d)
      fail(value, "'" + key + "' takes a finite number, got '" + text + "'");
    return {key, hw::ParamValue(*d)};
  }

  /// The settings one value of key `key` makes: one for a config key or a
  /// compiler option, one per entry of a map for a section (`memory: {...}`)
  /// or a linked entry of full key paths.
  std::vector<Setting> settingsOf(const YAML::Node &keyNode,
                                  const std::string &key,
                                  const YAML::Node &value, bool linkedName) {
    if (key == kOptLevelKey || key == kMappingKey)
      return {optionValue(key, value)};
    if (const hw::ParamInfo *p = hw::findParam(key))
      return {configValue(*p, value)};
    if (const ServeKey *k = findServeKey(key))
      return {serveValue(*k, value)};
    const bool section =
        hw::findSection(key) != nullptr || key == kServeSection;
    if (!section && !(linkedName && value.IsMap()))
      fail(keyNode, "unknown config key '" + key + "'" +
                        suggestion(key, allKeys()) +
                        " (keys as `spyre config show` prints them, e.g. "
                        "lx.size_bytes; or opt_level, mapping)");
    if (!value.IsMap())
      fail(value, "'" + key + "' is a config section: its values are maps of "
                      "its keys, e.g. {" + firstLeafOf(key) + ": ...}; got " +
                      describeNode(value));
    if (value.size() == 0)
      fail(value, "'" + key + "' sets no keys here");
    std::vector<Setting> out;
    for (const auto &kv : value) {
      const std::string inner = keyText(kv.first);
      const std::string full = section ? key + "." + inner : inner;
      const hw::ParamInfo *p = hw::findParam(full);
      const ServeKey *served = findServeKey(full);
      if (!p && !served) {
        std::vector<std::string> candidates;
        for (const hw::ParamInfo &q : hw::configSchema())
          if (!section || hw::sectionOf(q.path) == key)
            candidates.emplace_back(section ? hw::leafOf(q.path) : q.path);
        for (const ServeKey &q : serveKeys())
          if (!section || key == kServeSection)
            candidates.push_back((section ? "" : std::string(kServePrefix)) +
                                 std::string(q.name));
        fail(kv.first,
             "unknown config key '" + full + "'" +
                 suggestion(inner, candidates) +
                 (section ? "" : " (a linked entry named '" + key +
                                     "' takes full key paths such as "
                                     "memory.peak_gb_per_s)"));
      }
      for (const Setting &s : out)
        if (s.key == full)
          fail(kv.first, "'" + full + "' is set twice");
      out.push_back(p ? configValue(*p, kv.second)
                      : serveValue(*served, kv.second));
    }
    return out;
  }

  static std::string settingsText(const std::vector<Setting> &settings) {
    std::string out;
    for (const Setting &s : settings)
      out += s.key + "=" + hw::formatValue(s.value) + ";";
    return out;
  }

  static std::vector<std::string> keysOf(const std::vector<Setting> &s) {
    std::vector<std::string> keys;
    for (const Setting &x : s)
      keys.push_back(x.key);
    return keys;
  }

  /// Fails when `key` is already set by another axis.
  void claimKey(const std::string &key, const std::string &axis,
                const YAML::Node &where) {
    auto [it, fresh] = keyOwner_.emplace(key, axis);
    if (!fresh && it->second != axis)
      fail(where, "'" + key + "' is set by two entries ('" + it->second +
                      "' and '" + axis + "')");
  }

  void readGrid(const YAML::Node &node) {
    if (!node.IsMap())
      fail(node, "'grid' is a map from a key to its list of values, got " +
                     describeNode(node));
    if (node.size() == 0)
      fail(node, "the grid is empty; give at least one key with its values");
    for (const auto &kv : node) {
      SpecAxis a;
      a.axis.name = keyText(kv.first);
      const YAML::Node &list = kv.second;
      if (!list.IsSequence())
        fail(list.IsNull() ? kv.first : list,
             "'" + a.axis.name + "' in the grid takes a list of values, "
                   "got " + describeNode(list));
      if (list.size() == 0)
        fail(list, "'" + a.axis.name + "' has no values; an empty list gives "
                   "no points");
      std::map<std::string, YAML::Node> seen;
      for (const YAML::Node &v : list) {
        AxisValue value{settingsOf(kv.first, a.axis.name, v, true)};
        if (!a.values.empty() &&
            keysOf(value.settings) != keysOf(a.values.front().settings))
          fail(v, "each value of '" + a.axis.name +
                      "' must set the same keys, in the same order, as the "
                      "first");
        const std::string text = settingsText(value.settings);
        auto [it, fresh] = seen.emplace(text, v);
        if (!fresh)
          fail(v, "'" + a.axis.name + "' lists this value twice (also at " +
                      at(it->second).str() + ")");
        a.values.push_back(std::move(value));
      }
      a.axis.keys = keysOf(a.values.front().settings);
      a.axis.values = a.values.size();
      for (const std::string &key : a.axis.keys)
        claimKey(key, a.axis.name, kv.first);
      grid_.push_back(std::move(a));
    }
  }

  void readPoints(const YAML::Node &node) {
    if (!node.IsSequence())
      fail(node, "'points' is a list of maps (key: value), got " +
                     describeNode(node));
    if (node.size() == 0)
      fail(node, "'points' is empty; list at least one point");
    std::map<std::string, YAML::Node> seen;
    for (const YAML::Node &p : node) {
      if (!p.IsMap())
        fail(p, "a point is a map of keys to values, got " + describeNode(p));
      AxisValue value;
      for (const auto &kv : p) {
        const std::string key = keyText(kv.first);
        std::vector<Setting> s = settingsOf(kv.first, key, kv.second, false);
        size_t axis = 0;
        while (axis < grid_.size() && grid_[axis].axis.name != key)
          ++axis;
        if (axis == grid_.size()) {
          SpecAxis a;
          a.axis.name = key;
          grid_.push_back(std::move(a));
        }
        for (const Setting &x : s) {
          for (const Setting &y : value.settings)
            if (y.key == x.key)
              fail(kv.first, "'" + x.key + "' is set twice in this point");
          std::vector<std::string> &keys = grid_[axis].axis.keys;
          if (std::find(keys.begin(), keys.end(), x.key) == keys.end())
            keys.push_back(x.key);
          claimKey(x.key, key, kv.first);
        }
        value.settings.insert(value.settings.end(), s.begin(), s.end());
      }
      auto [it, fresh] = seen.emplace(settingsText(sorted(value.settings)), p);
      if (!fresh)
        fail(p, "this point is listed twice (also at " + at(it->second).str() +
                    ")");
      listed_.push_back(std::move(value));
    }
  }

  void readConstraints(const YAML::Node &node) {
    if (!node.IsSequence())
      fail(node, "'constraints' is a list of expressions, e.g. "
                 "- lx.size_bytes * chip.cores <= 67108864; got " +
                     describeNode(node));
    for (const YAML::Node &c : node) {
      if (!c.IsScalar())
        fail(c, "a constraint is an expression, got " + describeNode(c));
      const SourceLoc loc = textAt(c);
      Expr e = Expr::parse(c.Scalar(), loc);
      for (size_t i = 0; i < e.names().size(); ++i) {
        const std::string &name = e.names()[i];
        SourceLoc nameLoc = loc;
        nameLoc.col += static_cast<int>(e.nameOffset(i));
        if (name == kOptLevelKey)
          continue;
        if (const ServeKey *k = findServeKey(name)) {
          if (!serve_)
            throw UserError(nameLoc, "'" + name + "' is a serving knob; this "
                                     "sweep has no 'serve' section");
          if (k->type == hw::ParamType::String)
            throw UserError(nameLoc, "'" + name + "' is a string; "
                                     "constraints compute with numbers");
          continue;
        }
        const hw::ParamInfo *p = hw::findParam(name);
        if (!p)
          throw UserError(nameLoc,
                          "unknown name '" + name + "' in the constraint" +
                              suggestion(name, allKeys()) +
                              " (names are config keys such as "
                              "lx.size_bytes, or opt_level)");
        if (p->field.type == hw::ParamType::String)
          throw UserError(nameLoc, "'" + name + "' is a string; constraints "
                                   "compute with numbers");
      }
      constraints_.push_back(std::move(e));
    }
  }

  // -------------------------------------------------------------------------
  // Expansion

  static std::vector<Setting> sorted(std::vector<Setting> s) {
    std::stable_sort(s.begin(), s.end(),
                     [](const Setting &a, const Setting &b) {
                       return a.key < b.key;
                     });
    return s;
  }

  SweepPoint pointOf(const SpecModel &model,
                     const std::vector<Setting> &settings) const {
    SweepPoint p;
    p.model = model.written;
    p.modelPath = model.path;
    p.modelHash = model.hash;
    p.settings = settings;
    p.optLevel = optLevel_;
    p.mapping = mapping_;
    p.config = base_;
    p.serve = serveBase_;
    for (const Setting &s : settings) {
      if (const ServeKey *k = findServeKey(s.key)) {
        k->set(p.serve, s.value);
        continue;
      }
      if (s.key == kOptLevelKey) {
        p.optLevel = static_cast<int>(std::get<int64_t>(s.value));
        continue;
      }
      if (s.key == kMappingKey) {
        p.mapping = std::get<std::string>(s.value);
        continue;
      }
      const hw::ParamInfo *param = hw::findParam(s.key);
      SPYRE_ASSERT(param, "setting of an unknown key '" + s.key + "'");
      param->field.set(p.config, s.value);
    }
    if (!p.mapping.empty())
      p.mappingPath = resolve(p.mapping);
    p.configFingerprint = hw::fingerprintString(p.config.fingerprint());

    std::string canonical = "model=" + model.written + "\n";
    for (const Setting &s : sorted(settings))
      if (s.key != kOptLevelKey && s.key != kMappingKey)
        canonical += s.key + "=" + hw::formatValue(s.value) + "\n";
    canonical += "opt_level=" + std::to_string(p.optLevel) + "\n";
    if (!p.mapping.empty())
      canonical += "mapping=" + p.mapping + "\n";
    if (numerics_)
      canonical += "numerics=seed " + std::to_string(seed_) + "\n";
    if (serve_) {
      canonical += "serve\n";
      p.serveFingerprint = hw::fingerprintString(fnv1a64(
          serveSettingsText(p.serve) + "requests=" + requests_ + " " +
          requestsHash_ + "\n"));
    }
    p.id = toHex(mixBits(fnv1a64(canonical)) >> (64 - 4 * kIdDigits),
                 kIdDigits);
    return p;
  }

  /// The first constraint the point fails, or null.
  const Expr *failedConstraint(const SweepPoint &p) const {
    auto lookup = [&](const std::string &name) -> double {
      if (name == kOptLevelKey)
        return p.optLevel;
      const ServeKey *k = findServeKey(name);
      const hw::ParamValue v =
          k ? k->get(p.serve) : hw::findParam(name)->field.get(p.config);
      if (const int64_t *i = std::get_if<int64_t>(&v))
        return static_cast<double>(*i);
      return std::get<double>(v);
    };
    for (const Expr &c : constraints_) {
      const double v = c.eval(lookup);
      if (v == 0 || std::isnan(v))
        return &c;
    }
    return nullptr;
  }

  /// Refuses a spec that expands to more than maxPoints_ points, counting
  /// them first: the product of the axes can be far beyond memory (or
  /// beyond 64 bits) while the spec is a few lines.
  void checkPointCount() const {
    std::vector<uint64_t> factors = {models_.size()};
    if (!listed_.empty())
      factors.push_back(listed_.size());
    else
      for (const SpecAxis &a : grid_)
        factors.push_back(a.values.size());
    uint64_t count = 1;
    bool overflow = false;
    std::string product;
    for (uint64_t f : factors) {
      product += (product.empty() ? "" : " x ") + std::to_string(f);
      overflow = overflow || __builtin_mul_overflow(count, f, &count);
    }
    if (!overflow && count <= maxPoints_)
      return;
    const std::string total =
        overflow ? "more than 2^64" : std::to_string(count);
    throw UserError(SourceLoc{file_},
                    "the spec expands to " + total + " points (" + product +
                        ", models first, before the constraints); at most " +
                        std::to_string(maxPoints_) +
                        " are expanded: split the sweep, or raise the limit "
                        "with --max-points N");
  }

  SweepPlan expand() {
    SweepPlan plan;
    plan.specPath = file_;
    plan.baseConfig = baseConfig_;
    plan.baseSettings = settings_;
    plan.numerics = numerics_;
    plan.seed = seed_;
    plan.keepStats = keepStats_;
    plan.maxPoints = maxPoints_;
    plan.serve = serve_;
    plan.requests = requests_;
    plan.requestsPath = requestsPath_;
    plan.requestsHash = requestsHash_;
    for (const SpecAxis &a : grid_)
      plan.axes.push_back(a.axis);
    checkPointCount();

    std::vector<std::vector<Setting>> combos;
    if (!listed_.empty()) {
      for (const AxisValue &v : listed_)
        combos.push_back(v.settings);
    } else {
      combos.emplace_back();
      // The first grid key varies slowest, like nested loops as written.
      for (const SpecAxis &a : grid_) {
        std::vector<std::vector<Setting>> next;
        for (const std::vector<Setting> &prefix : combos)
          for (const AxisValue &v : a.values) {
            std::vector<Setting> s = prefix;
            s.insert(s.end(), v.settings.begin(), v.settings.end());
            next.push_back(std::move(s));
          }
        combos = std::move(next);
      }
    }

    std::map<std::string, size_t> ids;
    for (const SpecModel &model : models_)
      for (const std::vector<Setting> &settings : combos) {
        SweepPoint p = pointOf(model, settings);
        ++plan.gridSize;
        if (const Expr *c = failedConstraint(p)) {
          plan.dropped.push_back({std::move(p), c->text()});
          continue;
        }
        p.index = plan.points.size();
        auto [it, fresh] = ids.emplace(p.id, p.index);
        if (!fresh)
          throw UserError(SourceLoc{file_},
                          "points " + std::to_string(it->second) + " and " +
                              std::to_string(p.index) +
                              " have the same id " + p.id +
                              " (a hash collision); change a value slightly");
        plan.points.push_back(std::move(p));
      }
    // How many values each axis takes among the points that run.
    for (Axis &a : plan.axes) {
      std::set<std::string> distinct;
      for (const SweepPoint &p : plan.points) {
        std::string text;
        for (const std::string &key : a.keys)
          text += hw::formatValue(columnValue(p, key)) + ";";
        distinct.insert(text);
      }
      a.values = distinct.size();
    }
    if (plan.points.empty())
      throw UserError(SourceLoc{file_},
                      "the constraints drop all " +
                          std::to_string(plan.gridSize) +
                          " points; nothing would run");
    return plan;
  }

  std::string file_;
  std::string text_;
  uint64_t maxPoints_;
  std::vector<std::string> settings_; ///< --set over the base config
  fs::path specDir_;
  std::vector<SpecModel> models_;
  std::string baseConfig_;
  hw::HwConfig base_;
  int optLevel_ = 2;
  std::string mapping_;
  bool numerics_ = false;
  uint64_t seed_ = 0;
  bool keepStats_ = false;
  std::vector<SpecAxis> grid_;
  std::vector<AxisValue> listed_;
  std::vector<Expr> constraints_;
  std::map<std::string, std::string> keyOwner_;
  bool serve_ = false; ///< a serve sweep
  SourceLoc serveLoc_;
  std::string requests_;     ///< the trace as written, or empty
  std::string requestsPath_; ///< absolute
  std::string requestsHash_;
  ServeSettings serveBase_;  ///< the serve section's knobs
  std::set<std::string> serveSet_; ///< the knobs it sets, bare
};

} // namespace

SweepPlan planSweep(const std::string &specPath, const std::string &outDir,
                    uint64_t maxPoints,
                    const std::vector<std::string> &baseSettings) {
  SweepPlan plan = SpecReader(specPath, readFile(specPath, kSweepSpecLimit),
                              maxPoints, baseSettings)
                       .read();
  plan.outDir = outDir;
  const std::string exe = currentExecutable();
  for (SweepPoint &p : plan.points)
    p.command = pointArgv(plan, p.index, exe);
  return plan;
}

} // namespace spyre::sweep
