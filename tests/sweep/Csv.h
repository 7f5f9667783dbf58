// results.csv read back as a user's script would: RFC 4180 rows (quoted
// fields may hold commas, quotes and line breaks) and rows as maps from
// column name to field.
#pragma once

#include "support/FileIO.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace spyre::test {

inline std::vector<std::vector<std::string>> readCsv(const std::string &path) {
  const std::string text = readFile(path, kTextFileLimit);
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  rows.pop_back(); // after the last line break
  return rows;
}

/// The rows of a results.csv as maps from column name to value.
inline std::vector<std::map<std::string, std::string>>
csvRecords(const std::string &path) {
  const auto rows = readCsv(path);
  std::vector<std::map<std::string, std::string>> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    EXPECT_EQ(rows[r].size(), rows[0].size()) << "row " << r;
    std::map<std::string, std::string> rec;
    for (size_t c = 0; c < rows[0].size() && c < rows[r].size(); ++c)
      rec[rows[0][c]] = rows[r][c];
    out.push_back(std::move(rec));
  }
  return out;
}

/// results.csv without the wall-clock columns (the last three).
inline std::string withoutWallClock(const std::string &path) {
  std::string out;
  for (const auto &row : readCsv(path)) {
    EXPECT_GE(row.size(), 3u);
    for (size_t c = 0; c + 3 < row.size(); ++c)
      out += row[c] + "|";
    out += "\n";
  }
  return out;
}

} // namespace spyre::test
