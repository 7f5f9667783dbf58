// Recursive-descent parser and evaluator of sweep expressions (Expr.h).
// The text is untrusted (a spec or a --cost option), so its length and its
// nesting (parentheses, unary minus, `not`) are bounded before they can
// exhaust the stack, and evaluation walks the nodes in a loop.
#include "sweep/Expr.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace spyre::sweep {

namespace {

struct Token {
  enum Kind { End, Number, Name, Op, LParen, RParen } kind = End;
  std::string text;
  double number = 0;
  size_t offset = 0;
};

bool isNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

} // namespace

class ExprParser {
public:
  ExprParser(std::string_view text, const SourceLoc &at, ExitCode code,
             Expr &expr)
      : text_(text), at_(at), code_(code), expr_(expr) {}

  void parse() {
    if (text_.size() > Expr::kMaxLength)
      fail(Expr::kMaxLength,
           fmt::format("the expression is {} characters long; at most {} are "
                       "accepted",
                       text_.size(), Expr::kMaxLength));
    next();
    if (tok_.kind == Token::End)
      fail(tok_.offset, "the expression is empty");
    expr_.root_ = parseOr();
    if (tok_.kind != Token::End)
      fail(tok_.offset, "unexpected '" + tok_.text + "' after the expression");
  }

private:
  [[noreturn]] void fail(size_t offset, const std::string &message) const {
    SourceLoc loc = at_;
    if (loc.line > 0)
      loc.col += static_cast<int>(offset);
    throw UserError(loc, message, code_);
  }

  void next() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    tok_ = Token{};
    tok_.offset = pos_;
    if (pos_ >= text_.size())
      return;
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t end = pos_;
      while (end < text_.size() &&
             (std::isdigit(static_cast<unsigned char>(text_[end])) ||
              text_[end] == '.'))
        ++end;
      if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
        size_t exp = end + 1;
        if (exp < text_.size() && (text_[exp] == '+' || text_[exp] == '-'))
          ++exp;
        if (exp < text_.size() &&
            std::isdigit(static_cast<unsigned char>(text_[exp]))) {
          end = exp;
          while (end < text_.size() &&
                 std::isdigit(static_cast<unsigned char>(text_[end])))
            ++end;
        }
      }
      tok_.kind = Token::Number;
      tok_.text = std::string(text_.substr(pos_, end - pos_));
      auto [ptr, ec] = std::from_chars(tok_.text.data(),
                                       tok_.text.data() + tok_.text.size(),
                                       tok_.number);
      if (ec != std::errc() || ptr != tok_.text.data() + tok_.text.size())
        fail(pos_, "malformed number '" + tok_.text + "'");
      if (end < text_.size() && isNameChar(text_[end]))
        fail(end, "malformed number '" +
                      std::string(text_.substr(pos_, end + 1 - pos_)) + "'");
      pos_ = end;
      return;
    }
    if (isNameStart(c)) {
      size_t end = pos_;
      while (end < text_.size() && isNameChar(text_[end]))
        ++end;
      tok_.text = std::string(text_.substr(pos_, end - pos_));
      tok_.kind = tok_.text == "and" || tok_.text == "or" || tok_.text == "not"
                      ? Token::Op
                      : Token::Name;
      pos_ = end;
      return;
    }
    if (c == '(' || c == ')') {
      tok_.kind = c == '(' ? Token::LParen : Token::RParen;
      tok_.text = std::string(1, c);
      ++pos_;
      return;
    }
    for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">", "+", "-",
                                "*", "/"}) {
      if (text_.substr(pos_, op.size()) == op) {
        tok_.kind = Token::Op;
        tok_.text = std::string(op);
        pos_ += op.size();
        return;
      }
    }
    fail(pos_, "unexpected character '" + std::string(1, c) +
                   "' (expressions take numbers, key names, + - * /, "
                   "comparisons, and, or, not and parentheses)");
  }

  bool isOp(std::string_view op) const {
    return tok_.kind == Token::Op && tok_.text == op;
  }

  int add(Expr::Node node) {
    expr_.nodes_.push_back(std::move(node));
    return static_cast<int>(expr_.nodes_.size()) - 1;
  }

  int binary(const std::string &op, int lhs, int rhs) {
    Expr::Node n;
    n.kind = Expr::Kind::Binary;
    n.op = op;
    n.lhs = lhs;
    n.rhs = rhs;
    return add(std::move(n));
  }

  int parseOr() {
    int lhs = parseAnd();
    while (isOp("or")) {
      next();
      lhs = binary("or", lhs, parseAnd());
    }
    return lhs;
  }

  int parseAnd() {
    int lhs = parseNot();
    while (isOp("and")) {
      next();
      lhs = binary("and", lhs, parseNot());
    }
    return lhs;
  }

  /// Counts one level of nesting for as long as it lives.
  class Nested {
  public:
    explicit Nested(ExprParser &p) : p_(p) {
      if (++p_.depth_ > Expr::kMaxDepth)
        p_.fail(p_.tok_.offset,
                fmt::format("the expression nests deeper than {} levels "
                            "(parentheses, unary minus and 'not' together)",
                            Expr::kMaxDepth));
    }
    ~Nested() { --p_.depth_; }
    Nested(const Nested &) = delete;
    Nested &operator=(const Nested &) = delete;

  private:
    ExprParser &p_;
  };

  int parseNot() {
    if (!isOp("not"))
      return parseComparison();
    Nested nested(*this);
    next();
    Expr::Node n;
    n.kind = Expr::Kind::Not;
    n.lhs = parseNot();
    return add(std::move(n));
  }

  int parseComparison() {
    int lhs = parseSum();
    for (std::string_view op : {"<", "<=", ">", ">=", "==", "!="}) {
      if (!isOp(op))
        continue;
      std::string o = tok_.text;
      next();
      int rhs = parseSum();
      for (std::string_view again : {"<", "<=", ">", ">=", "==", "!="})
        if (isOp(again))
          fail(tok_.offset, "comparisons do not chain; join them with 'and'");
      return binary(o, lhs, rhs);
    }
    return lhs;
  }

  int parseSum() {
    int lhs = parseProduct();
    while (isOp("+") || isOp("-")) {
      std::string o = tok_.text;
      next();
      lhs = binary(o, lhs, parseProduct());
    }
    return lhs;
  }

  int parseProduct() {
    int lhs = parseUnary();
    while (isOp("*") || isOp("/")) {
      std::string o = tok_.text;
      next();
      lhs = binary(o, lhs, parseUnary());
    }
    return lhs;
  }

  int parseUnary() {
    if (!isOp("-"))
      return parsePrimary();
    Nested nested(*this);
    next();
    Expr::Node n;
    n.kind = Expr::Kind::Neg;
    n.lhs = parseUnary();
    return add(std::move(n));
  }

  int parsePrimary() {
    if (tok_.kind == Token::Number) {
      Expr::Node n;
      n.number = tok_.number;
      next();
      return add(std::move(n));
    }
    if (tok_.kind == Token::Name) {
      Expr::Node n;
      n.kind = Expr::Kind::Name;
      size_t i = 0;
      while (i < expr_.names_.size() && expr_.names_[i] != tok_.text)
        ++i;
      if (i == expr_.names_.size()) {
        expr_.names_.push_back(tok_.text);
        expr_.nameOffsets_.push_back(tok_.offset);
      }
      n.name = i;
      next();
      return add(std::move(n));
    }
    if (tok_.kind == Token::LParen) {
      Nested nested(*this);
      const size_t open = tok_.offset;
      next();
      int inner = parseOr();
      if (tok_.kind != Token::RParen)
        fail(tok_.kind == Token::End ? open : tok_.offset,
             tok_.kind == Token::End ? "'(' is never closed"
                                     : "expected ')', got '" + tok_.text + "'");
      next();
      return inner;
    }
    if (tok_.kind == Token::End)
      fail(tok_.offset, "the expression ends early; expected a number, a "
                        "key name or '('");
    fail(tok_.offset, "expected a number, a key name or '(', got '" +
                          tok_.text + "'");
  }

  std::string_view text_;
  SourceLoc at_;
  ExitCode code_;
  Expr &expr_;
  size_t pos_ = 0;
  Token tok_;
  int depth_ = 0;
};

Expr Expr::parse(std::string_view text, const SourceLoc &at, ExitCode code) {
  Expr e;
  e.text_ = std::string(text);
  ExprParser(e.text_, at, code, e).parse();
  return e;
}

double Expr::eval(
    const std::function<double(const std::string &)> &lookup) const {
  std::vector<double> names;
  names.reserve(names_.size());
  for (const std::string &name : names_)
    names.push_back(lookup(name));
  // The parser adds a node after its operands, so one pass in index order
  // sees every operand before its use, however long or deep the expression.
  // Both sides of `and` and `or` are evaluated: values have no side effects,
  // so the result is the same as looking at the right side only when needed.
  std::vector<double> values(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i)
    values[i] = evalNode(i, names, values);
  return values[static_cast<size_t>(root_)];
}

double Expr::evalNode(size_t index, const std::vector<double> &names,
                      const std::vector<double> &values) const {
  const Node &n = nodes_[index];
  auto operand = [&](int at) {
    SPYRE_ASSERT(at >= 0 && static_cast<size_t>(at) < index,
                 "an expression node refers to a later node");
    return values[static_cast<size_t>(at)];
  };
  switch (n.kind) {
  case Kind::Number:
    return n.number;
  case Kind::Name:
    return names[n.name];
  case Kind::Neg:
    return -operand(n.lhs);
  case Kind::Not:
    return operand(n.lhs) != 0 ? 0.0 : 1.0;
  case Kind::Binary:
    break;
  }
  const double a = operand(n.lhs);
  const double b = operand(n.rhs);
  if (n.op == "and")
    return a != 0 && b != 0 ? 1.0 : 0.0;
  if (n.op == "or")
    return a != 0 || b != 0 ? 1.0 : 0.0;
  if (n.op == "+")
    return a + b;
  if (n.op == "-")
    return a - b;
  if (n.op == "*")
    return a * b;
  if (n.op == "/")
    return a / b;
  if (n.op == "<")
    return a < b ? 1.0 : 0.0;
  if (n.op == "<=")
    return a <= b ? 1.0 : 0.0;
  if (n.op == ">")
    return a > b ? 1.0 : 0.0;
  if (n.op == ">=")
    return a >= b ? 1.0 : 0.0;
  if (n.op == "==")
    return a == b ? 1.0 : 0.0;
  SPYRE_ASSERT(n.op == "!=", "unknown operator '" + n.op + "'");
  return a != b ? 1.0 : 0.0;
}

} // namespace spyre::sweep
