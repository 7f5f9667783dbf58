// The op reference of docs/ir.md, generated from the op registry so that the
// documentation cannot drift from what the compiler accepts. The generated
// text sits between two marker lines in docs/ir.md; the prose around it is
// written by hand.
#pragma once

#include <optional>
#include <string>

namespace spyre::compiler {

inline constexpr const char *kOpReferenceBegin =
    "<!-- BEGIN OP REFERENCE: generated from compiler/ir/OpRegistry.cpp by "
    "spyre-ir-doc; do not edit -->";
inline constexpr const char *kOpReferenceEnd = "<!-- END OP REFERENCE -->";

/// The generated section: a summary table and one entry per op kind.
std::string opReferenceMarkdown();

/// `doc` with the text between the markers replaced by the generated
/// section, or nullopt when the markers are missing or out of order.
std::optional<std::string> updateOpReference(const std::string &doc);

} // namespace spyre::compiler
