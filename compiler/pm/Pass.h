// What a compiler pass is: one declaration (PassInfo) giving its kebab-case
// name, a one-line summary, what holds after it, its options (typed, with
// defaults and descriptions), its statistics (named counters with
// descriptions), the function that runs it and the checker of its
// postcondition. The pass manager (PassManager.h), the pipeline parser, the
// documentation (docs/passes.md) and `--list-passes` all read this one
// declaration; nothing repeats it.
//
// A pass reports user errors (an unsupported shape, an impossible request)
// as diagnostics and returns PassResult::Failure; it never throws across its
// boundary (the pass manager catches what escapes and reports it). A bug in
// a pass is caught by the verifier and the postcondition the pass manager
// runs after it.
#pragma once

#include "compiler/ir/Attribute.h"
#include "compiler/ir/Graph.h"
#include "compiler/pm/Target.h"
#include "hw/HwConfig.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

/// What a pass returns: Failure only after reporting a diagnostic.
enum class [[nodiscard]] PassResult : uint8_t {
  Success,
  Failure,
};

/// The types an option may have. A list is a list of strings, written
/// `a,b,c` (empty for none).
enum class OptionType : uint8_t { Bool, Int, String, Enum, List };

/// `bool`, `int`, `string`, `enum`, `list`.
std::string_view optionTypeName(OptionType type);

/// Checks a parsed option value beyond its type (list elements that must be
/// op kinds); returns an empty string when it is fine, else what is wrong.
using OptionCheckFn = std::function<std::string(const Attribute &value)>;

struct OptionSpec {
  std::string_view name; ///< kebab-case
  OptionType type = OptionType::String;
  /// The default as a pipeline would write it (`dl16`, `true`; an empty
  /// text is the empty list).
  std::string_view defaultText;
  std::string_view description;
  /// For Enum: the values it may take.
  std::vector<std::string_view> choices;
  OptionCheckFn check;
};

struct StatisticSpec {
  std::string_view name; ///< kebab-case
  std::string_view description;
};

struct PassInfo;

/// The values of one pass's options, every declared option present (defaults
/// filled in), each an Attribute of its type: bool, int, string (String and
/// Enum) or a list of strings.
class PassOptions {
public:
  PassOptions() = default;
  /// The defaults of `pass`.
  explicit PassOptions(const PassInfo &pass);

  bool getBool(std::string_view name) const;
  int64_t getInt(std::string_view name) const;
  const std::string &getString(std::string_view name) const;
  std::vector<std::string> getList(std::string_view name) const;

  const AttrDict &values() const { return values_; }
  void set(std::string name, Attribute value) {
    values_.set(std::move(name), std::move(value));
  }

  /// The text form of one value, as a pipeline writes it.
  static std::string valueText(const Attribute &value);

private:
  const Attribute &get(std::string_view name) const;

  AttrDict values_;
};

class PassContext;

/// Runs the pass on `graph`; reports user errors through context.diags().
using PassRunFn = std::function<PassResult(Graph &graph, PassContext &context)>;
/// Checks what must hold after the pass (the generic verifier has already
/// passed); reports each violation to `diags` and returns whether it holds.
using PostconditionFn = std::function<bool(
    const Graph &graph, const PassContext &context, DiagnosticEngine &diags)>;

struct PassInfo {
  std::string_view name; ///< kebab-case, unique in the registry
  std::string_view summary;
  /// What holds after the pass, in words (docs/passes.md).
  std::string_view postconditionText;
  std::vector<OptionSpec> options;
  std::vector<StatisticSpec> statistics;
  PassRunFn run;
  PostconditionFn postcondition;
  /// Passes a pipeline must run before this one, in this order (emission
  /// reads what they annotate); checked before a pipeline runs
  /// (requirementProblem of PassManager.h).
  std::vector<std::string_view> requiredBefore = {};

  const OptionSpec *findOption(std::string_view optionName) const;
  /// Index of a declared statistic, or -1.
  int statisticIndex(std::string_view statName) const;
};

/// What a pass sees while it runs: its options, the hardware description,
/// the diagnostics, its statistics and the pipeline's target (Target.h).
class PassContext {
public:
  PassContext(const PassInfo &pass, const PassOptions &options,
              const hw::HwConfig &hw, DiagnosticEngine &diags,
              CompileTarget *target = nullptr);

  const PassInfo &pass() const { return pass_; }
  const PassOptions &options() const { return options_; }
  const hw::HwConfig &hw() const { return hw_; }
  DiagnosticEngine &diags() const { return diags_; }
  /// The target of the run; nullptr outside a pass manager.
  CompileTarget *target() const { return target_; }

  /// Adds `amount` to a declared statistic (an undeclared name is a bug).
  void addStatistic(std::string_view name, int64_t amount = 1);
  int64_t statistic(std::string_view name) const;
  /// The counters in declaration order.
  const std::vector<int64_t> &statistics() const { return counters_; }

  /// Reports a user error about `op` at its location and returns Failure:
  /// `return context.opError(graph, *op, "...")`.
  PassResult opError(const Graph &graph, const Op &op,
                     const std::string &message) const;

private:
  const PassInfo &pass_;
  const PassOptions &options_;
  const hw::HwConfig &hw_;
  DiagnosticEngine &diags_;
  CompileTarget *target_;
  std::vector<int64_t> counters_;
};

/// Options from `key = value` text (a map, as a config file gives them):
/// unknown keys and values that do not parse are errors at `loc` naming the
/// pass, the option and what it accepts. Unset options keep their defaults.
std::optional<PassOptions>
parsePassOptions(const PassInfo &pass,
                 const std::map<std::string, std::string> &values,
                 const SourceLoc &loc, DiagnosticEngine &diags);

/// Parses one option value; on failure returns nullopt and sets `error` to
/// the reason (without the pass and option name).
std::optional<Attribute> parseOptionValue(const OptionSpec &spec,
                                          std::string_view text,
                                          std::string &error);

/// `layout{default-dtype=f32}`: the pass name and the options that differ
/// from their defaults, as a pipeline writes them.
std::string invocationText(const PassInfo &pass, const PassOptions &options);

} // namespace spyre::compiler
