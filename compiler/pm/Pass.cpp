// Pass declarations: option values, their parsing and text form, and the
// context a pass runs in.
#include "compiler/pm/Pass.h"

#include "compiler/ir/Verifier.h"
#include "support/ParseNumber.h"

#include <algorithm>

namespace spyre::compiler {

std::string_view optionTypeName(OptionType type) {
  switch (type) {
  case OptionType::Bool:
    return "bool";
  case OptionType::Int:
    return "int";
  case OptionType::String:
    return "string";
  case OptionType::Enum:
    return "enum";
  case OptionType::List:
    return "list";
  }
  SPYRE_UNREACHABLE("bad option type");
}

// ---- PassInfo ----

const OptionSpec *PassInfo::findOption(std::string_view optionName) const {
  for (const OptionSpec &o : options)
    if (o.name == optionName)
      return &o;
  return nullptr;
}

int PassInfo::statisticIndex(std::string_view statName) const {
  for (size_t i = 0; i < statistics.size(); ++i)
    if (statistics[i].name == statName)
      return static_cast<int>(i);
  return -1;
}

// ---- Option values ----

namespace {

std::string choicesText(const std::vector<std::string_view> &choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0)
      out += i + 1 == choices.size() ? " or " : ", ";
    out += "'" + std::string(choices[i]) + "'";
  }
  return out;
}

std::vector<std::string> splitList(std::string_view text) {
  std::vector<std::string> out;
  if (text.empty())
    return out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    out.emplace_back(text.substr(start, comma - start));
    if (comma == std::string_view::npos)
      return out;
    start = comma + 1;
  }
}

} // namespace

std::optional<Attribute> parseOptionValue(const OptionSpec &spec,
                                          std::string_view text,
                                          std::string &error) {
  std::optional<Attribute> value;
  switch (spec.type) {
  case OptionType::Bool:
    if (text == "true" || text == "1")
      value = Attribute(true);
    else if (text == "false" || text == "0")
      value = Attribute(false);
    else
      error = "expected 'true' or 'false', got '" + std::string(text) + "'";
    break;
  case OptionType::Int: {
    std::optional<int64_t> n = parseInt64(text);
    if (n)
      value = Attribute(*n);
    else
      error = "expected an integer, got '" + std::string(text) + "'";
    break;
  }
  case OptionType::String:
    value = Attribute(text);
    break;
  case OptionType::Enum:
    if (std::find(spec.choices.begin(), spec.choices.end(), text) !=
        spec.choices.end())
      value = Attribute(text);
    else
      error = "expected " + choicesText(spec.choices) + ", got '" +
              std::string(text) + "'";
    break;
  case OptionType::List: {
    Attribute::List elements;
    for (const std::string &e : splitList(text)) {
      if (e.empty()) {
        error = "empty element in list '" + std::string(text) + "'";
        return std::nullopt;
      }
      elements.emplace_back(e);
    }
    value = Attribute::list(std::move(elements));
    break;
  }
  }
  if (!value)
    return std::nullopt;
  if (spec.check) {
    error = spec.check(*value);
    if (!error.empty())
      return std::nullopt;
  }
  return value;
}

PassOptions::PassOptions(const PassInfo &pass) {
  for (const OptionSpec &spec : pass.options) {
    std::string error;
    std::optional<Attribute> value =
        parseOptionValue(spec, spec.defaultText, error);
    SPYRE_ASSERT(value.has_value(), "default of option '" +
                                        std::string(spec.name) + "' of pass '" +
                                        std::string(pass.name) +
                                        "' does not parse: " + error);
    values_.set(std::string(spec.name), std::move(*value));
  }
}

const Attribute &PassOptions::get(std::string_view name) const {
  const Attribute *a = values_.find(name);
  SPYRE_ASSERT(a != nullptr,
               "reading undeclared option '" + std::string(name) + "'");
  return *a;
}

bool PassOptions::getBool(std::string_view name) const {
  return get(name).asBool();
}

int64_t PassOptions::getInt(std::string_view name) const {
  return get(name).asInt();
}

const std::string &PassOptions::getString(std::string_view name) const {
  return get(name).asString();
}

std::vector<std::string> PassOptions::getList(std::string_view name) const {
  std::vector<std::string> out;
  for (const Attribute &e : get(name).asList())
    out.push_back(e.asString());
  return out;
}

std::string PassOptions::valueText(const Attribute &value) {
  switch (value.kind()) {
  case Attribute::Kind::Bool:
    return value.asBool() ? "true" : "false";
  case Attribute::Kind::Int:
    return std::to_string(value.asInt());
  case Attribute::Kind::String:
    return value.asString();
  case Attribute::Kind::List: {
    std::string out;
    for (const Attribute &e : value.asList())
      out += (out.empty() ? "" : ",") + e.asString();
    return out;
  }
  default:
    SPYRE_UNREACHABLE("option value of an unexpected kind");
  }
}

std::optional<PassOptions>
parsePassOptions(const PassInfo &pass,
                 const std::map<std::string, std::string> &values,
                 const SourceLoc &loc, DiagnosticEngine &diags) {
  PassOptions options(pass);
  bool ok = true;
  for (const auto &[key, text] : values) {
    const OptionSpec *spec = pass.findOption(key);
    if (!spec) {
      std::string known;
      for (const OptionSpec &o : pass.options)
        known += (known.empty() ? "" : ", ") + std::string(o.name);
      diags.error(loc,
                  "pass '" + std::string(pass.name) + "' has no option '" +
                      key + "' (" +
                      (known.empty() ? "it takes none" : "it takes " + known) +
                      ")");
      ok = false;
      continue;
    }
    std::string error;
    std::optional<Attribute> value = parseOptionValue(*spec, text, error);
    if (!value) {
      diags.error(loc, "option '" + key + "' of pass '" +
                           std::string(pass.name) + "': " + error);
      ok = false;
      continue;
    }
    options.set(key, std::move(*value));
  }
  if (!ok)
    return std::nullopt;
  return options;
}

std::string invocationText(const PassInfo &pass, const PassOptions &options) {
  PassOptions defaults(pass);
  std::string out(pass.name);
  std::string opts;
  for (const OptionSpec &spec : pass.options) {
    const Attribute *value = options.values().find(spec.name);
    if (!value || *value == defaults.values().get(spec.name))
      continue;
    opts += (opts.empty() ? "" : " ") + std::string(spec.name) + "=" +
            PassOptions::valueText(*value);
  }
  if (!opts.empty())
    out += "{" + opts + "}";
  return out;
}

// ---- PassContext ----

PassContext::PassContext(const PassInfo &pass, const PassOptions &options,
                         const hw::HwConfig &hw, DiagnosticEngine &diags,
                         CompileTarget *target)
    : pass_(pass), options_(options), hw_(hw), diags_(diags), target_(target),
      counters_(pass.statistics.size(), 0) {}

void PassContext::addStatistic(std::string_view name, int64_t amount) {
  int index = pass_.statisticIndex(name);
  SPYRE_ASSERT(index >= 0, "pass '" + std::string(pass_.name) +
                               "' counts undeclared statistic '" +
                               std::string(name) + "'");
  counters_[static_cast<size_t>(index)] += amount;
}

int64_t PassContext::statistic(std::string_view name) const {
  int index = pass_.statisticIndex(name);
  SPYRE_ASSERT(index >= 0,
               "reading undeclared statistic '" + std::string(name) + "'");
  return counters_[static_cast<size_t>(index)];
}

PassResult PassContext::opError(const Graph &graph, const Op &op,
                                const std::string &message) const {
  diags_.error(opLocation(graph, op), opPrefix(op) + message);
  return PassResult::Failure;
}

} // namespace spyre::compiler
