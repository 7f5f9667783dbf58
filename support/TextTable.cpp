// Plain-text tables (TextTable.h).
#include "support/TextTable.h"

#include <algorithm>

namespace spyre {

std::string textTable(const std::vector<std::vector<std::string>> &rows,
                      const std::vector<bool> &left) {
  std::vector<size_t> width;
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      width.resize(std::max(width.size(), c + 1));
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto &row : rows) {
    std::string line = "  ";
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      const bool l = c < left.size() && left[c];
      line += l ? row[c] + (c + 1 < row.size() ? pad : "") : pad + row[c];
      if (c + 1 < row.size())
        line += "  ";
    }
    out += line + "\n";
  }
  return out;
}

} // namespace spyre
