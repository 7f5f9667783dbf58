// Nesting limits of the parsers that read untrusted text (docs/program-file.md,
// docs/graph-json.md, docs/config.md, docs/sweep.md). nlohmann::json and
// yaml-cpp build trees whose depth is the input's, and our own code walks
// those trees recursively (dump, comparisons, conversions): a file nested a
// few hundred thousand levels deep overflows the stack. Every reader of JSON
// or YAML checks the text with these functions before it builds a tree, and
// refuses deeper input with a located error.
#pragma once

#include "support/Diagnostic.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace spyre {

/// Deepest nesting of JSON arrays and objects accepted anywhere. The
/// project's own JSON (graphs, statistics, traces, mappings, host-op
/// attributes) nests fewer than ten levels.
inline constexpr int kMaxJsonDepth = 200;

/// Deepest nesting of YAML collections (maps and lists, block or flow)
/// accepted anywhere. Configs nest three levels, sweep specs five.
inline constexpr int kMaxYamlDepth = 64;

/// A place in a text: 1-based line and column (in bytes), and the offset.
struct TextPos {
  int line = 1;
  int col = 1;
  size_t offset = 0;
};

/// Where `text` opens its array or object number `maxDepth + 1` inside
/// others, reading it as JSON (brackets inside strings do not count); or
/// nullopt when it nests no deeper than `maxDepth`. The text need not be
/// valid JSON: this runs before the parser, which reports other errors.
std::optional<TextPos> findJsonTooDeep(std::string_view text,
                                       int maxDepth = kMaxJsonDepth);

/// The message for JSON nested deeper than `maxDepth`.
std::string jsonTooDeepMessage(int maxDepth = kMaxJsonDepth);

/// Throws a UserError at `file:line:col` when `text` nests deeper than
/// `maxDepth` (findJsonTooDeep).
void checkJsonDepth(std::string_view text, const std::string &file,
                    int maxDepth = kMaxJsonDepth);

/// Where `text` opens its YAML collection number `maxDepth + 1` inside
/// others (flow `[`/`{` or a block map or list) in its first two documents
/// (what the readers look at), or nullopt. It parses them with yaml-cpp's
/// event parser, which stops at the first collection
/// too deep; a syntax error before that point is thrown as the
/// YAML::Exception the tree loader would throw.
std::optional<TextPos> findYamlTooDeep(std::string_view text,
                                       int maxDepth = kMaxYamlDepth);

/// The message for YAML nested deeper than `maxDepth`.
std::string yamlTooDeepMessage(int maxDepth = kMaxYamlDepth);

} // namespace spyre
