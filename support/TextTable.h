// Plain-text tables for terminal summaries (`spyre run`, `spyre sweep`):
// columns two spaces apart after a two-space indent.
#pragma once

#include <string>
#include <vector>

namespace spyre {

/// `left[c]` left-aligns column c (a missing entry: right-aligned, as for
/// numbers); a left-aligned last column is not padded.
std::string textTable(const std::vector<std::vector<std::string>> &rows,
                      const std::vector<bool> &left);

} // namespace spyre
