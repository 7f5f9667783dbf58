// The small expression language of sweep constraints and report costs:
// numbers, names (config key paths such as `lx.size_bytes`, and `opt_level`),
// + - * /, unary minus, parentheses, the comparisons < <= > >= == != and
// `and`, `or`, `not`. Values are doubles; a comparison or logical operator
// gives 1 or 0, and a constraint holds when its value is not 0 (a division
// by zero gives inf or NaN: comparisons with NaN are false). An expression
// is at most kMaxLength characters and nests at most kMaxDepth levels.
#pragma once

#include "support/Diagnostic.h"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sweep {

class Expr {
public:
  /// Longest expression text accepted: constraints and costs are one line.
  static constexpr size_t kMaxLength = 10000;
  /// Deepest nesting accepted, counting each '(', unary '-' and 'not' that
  /// is still open: the parser recurses once per level.
  static constexpr int kMaxDepth = 100;

  /// Parses `text`; a syntax error is a UserError at `at` moved right by
  /// the column of the offending token (`at` is where `text` starts).
  static Expr parse(std::string_view text, const SourceLoc &at,
                    ExitCode code = ExitCode::BadInput);

  /// Every name used, in order of first use.
  const std::vector<std::string> &names() const { return names_; }
  /// The column offset (from 0) of the first use of `names()[i]`.
  size_t nameOffset(size_t i) const { return nameOffsets_[i]; }

  double eval(const std::function<double(const std::string &)> &lookup) const;

  const std::string &text() const { return text_; }

private:
  enum class Kind { Number, Name, Neg, Not, Binary };
  struct Node {
    Kind kind = Kind::Number;
    double number = 0;
    std::string op; ///< Binary: + - * / < <= > >= == != and or
    size_t name = 0; ///< Name: index into names_
    int lhs = -1;
    int rhs = -1;
  };
  friend class ExprParser;

  /// Node `index`, from the values of the names and of the nodes before it.
  double evalNode(size_t index, const std::vector<double> &names,
                  const std::vector<double> &values) const;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
  std::vector<std::string> names_;
  std::vector<size_t> nameOffsets_;
};

} // namespace spyre::sweep
