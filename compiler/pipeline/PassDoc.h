// The pass reference: generated from the registry for `--list-passes` and
// for the section of docs/passes.md between two marker lines (the prose
// around it is written by hand), so the documentation cannot drift from the
// passes the compiler has.
#pragma once

#include <optional>
#include <string>

namespace spyre::compiler {

inline constexpr const char *kPassReferenceBegin =
    "<!-- BEGIN PASS REFERENCE: generated from the pass registry by "
    "spyre-pass-doc; do not edit -->";
inline constexpr const char *kPassReferenceEnd = "<!-- END PASS REFERENCE -->";

/// Plain text: each pass with its summary, postcondition, the passes it
/// requires before it and those it is required before, options and
/// statistics, then the default pipelines.
std::string passListText();

/// The generated section of docs/passes.md (Markdown).
std::string passReferenceMarkdown();

/// `doc` with the text between the markers replaced by the generated
/// section, or nullopt when the markers are missing or out of order.
std::optional<std::string> updatePassReference(const std::string &doc);

} // namespace spyre::compiler
