// The schema of the hardware config: every parameter of HwConfig declared
// once, with its YAML key path, unit, description, source, whether it may be
// omitted, and the checks on its value; plus the rules that tie several
// parameters together. Parsing, validation, canonical printing and the
// reference table in docs/config.md are all driven by these two tables, so
// they cannot disagree.
#pragma once

#include "hw/HwConfig.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace spyre::hw {

enum class ParamType { Int, Int64, Double, String };

/// A parameter value as the schema handles it; integer fields are widened to
/// 64 bits.
using ParamValue = std::variant<int64_t, double, std::string>;

/// Typed access to one field of HwConfig. The type is taken from the struct
/// member itself, so the schema cannot disagree with hw/HwConfig.h.
struct FieldAccess {
  ParamType type;
  ParamValue (*get)(const HwConfig &);
  void (*set)(HwConfig &, const ParamValue &);
};

/// Checks on one value, combined with `|`.
namespace rule {
inline constexpr unsigned kNone = 0;
inline constexpr unsigned kPositive = 1u << 0;
inline constexpr unsigned kNonNegative = 1u << 1;
/// A multiple of chip.stick_bytes (every address the compiler emits is one).
inline constexpr unsigned kWholeSticks = 1u << 2;
inline constexpr unsigned kMultipleOf4 = 1u << 3;
inline constexpr unsigned kPowerOfTwo = 1u << 4;
/// Letters, digits, '.', '_' and '-', starting with a letter.
inline constexpr unsigned kIdentifier = 1u << 5;
/// Not a parameter but a constant a config may state: the one value
/// accepted is `maxValue`, for `maxReason` (kept so that configs that write
/// it down still load).
inline constexpr unsigned kFixed = 1u << 6;
} // namespace rule

struct ParamInfo {
  std::string_view path; ///< YAML key path, `section.key` or `key`
  FieldAccess field;
  std::string_view unit;        ///< empty for names and plain counts
  std::string_view description; ///< one sentence
  std::string_view confidence;  ///< H, M, L or L-M (docs/hardware.md)
  std::string_view source;      ///< where the default comes from
  /// A required key must appear in every file. An optional one falls back to
  /// the built-in default (configs/spyre.yaml); only estimates are optional.
  bool required = true;
  unsigned rules = rule::kNone;
  /// Inclusive upper bound of an integer, checked when `maxReason` is not
  /// empty. Every number has one, so that no product or sum the compiler
  /// and simulator form of the parameters can overflow.
  int64_t maxValue = 0;
  std::string_view maxReason;
  /// Inclusive range of a double, checked when `maxReason` is not empty.
  double minReal = 0;
  double maxReal = 0;
};

/// A YAML map grouping parameters (`chip`, `pt`, ...).
struct SectionInfo {
  std::string_view name;
  std::string_view description;
};

/// A rule between parameters. `check` returns the error text (without the
/// key path) or nothing; it is skipped when any of `uses` is missing or
/// already reported as wrong, so one bad value gives one error.
struct CrossRule {
  std::string_view reportAt; ///< the key the error points at
  std::array<std::string_view, 5> uses;
  std::string_view summary; ///< for docs/config.md
  std::optional<std::string> (*check)(const HwConfig &);
};

/// The section of a key path ("chip" for "chip.cores", "" for "name").
inline std::string_view sectionOf(std::string_view path) {
  size_t dot = path.find('.');
  return dot == std::string_view::npos ? std::string_view()
                                       : path.substr(0, dot);
}

/// The key within its section ("cores" for "chip.cores").
inline std::string_view leafOf(std::string_view path) {
  size_t dot = path.find('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

/// The top-level key of a config file that names the config it is written
/// over: `default` or a file (hw/HwConfig.h, parseConfig).
inline constexpr std::string_view kBaseKey = "base";

/// Parameters in canonical order: sections in order, keys in order within.
std::span<const ParamInfo> configSchema();
std::span<const SectionInfo> configSections();
std::span<const CrossRule> configCrossRules();

/// The parameter at `path`, or null.
const ParamInfo *findParam(std::string_view path);
/// The section called `name`, or null.
const SectionInfo *findSection(std::string_view name);

/// Sets parameter `key` of `config` to `value` in the parameter's type: an
/// integer key takes an integer (a 32-bit one for an int field), a number
/// key an integer or a finite double, a name a string. An unknown key or a
/// value of the wrong type is a usage error at `where` naming the key. The
/// value's range and the rules between keys are validateConfig's.
void setParam(HwConfig &config, std::string_view key, const ParamValue &value,
              const std::string &where);

/// Canonical text of a value: integers plainly, doubles as the shortest
/// decimal that reads back to the same double (always with a '.' or an
/// exponent), names plainly or double-quoted when they need it.
std::string formatValue(const ParamValue &value);

/// True for names that pass rule::kIdentifier.
bool isConfigName(std::string_view s);

/// "int", "int64", "double" or "string".
std::string_view typeName(ParamType type);

/// Human-readable summary of a parameter's checks, e.g. "> 0, whole sticks".
std::string describeRules(const ParamInfo &param);

/// The key reference of docs/config.md (Markdown), generated from the schema
/// with the built-in values.
std::string configReferenceMarkdown();

} // namespace spyre::hw
