#include "compiler/ir/Parser.h"

#include "compiler/ir/Verifier.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace spyre::compiler {

// ---- ConstantPool ----

void ConstantPool::add(ConstantDataPtr data) {
  uint64_t digest = data->digest();
  byDigest_.emplace(digest, std::move(data));
}

void ConstantPool::addGraph(const Graph &graph) {
  for (const Value *v : graph.constants())
    if (v->constantDataPtr())
      add(v->constantDataPtr());
}

ConstantDataPtr ConstantPool::find(uint64_t digest) const {
  auto it = byDigest_.find(digest);
  return it == byDigest_.end() ? nullptr : it->second;
}

namespace {

enum class Tok : uint8_t {
  Eof,
  Ident,     ///< keyword, op kind, element type, attribute key
  ValueName, ///< %name, text holds the name
  OpName,    ///< @name, text holds the name
  Int,
  HexInt,    ///< 0x..., only for constant digests
  Float,
  String,    ///< text holds the decoded string
  Punct,     ///< one of { } ( ) [ ] < > , : = #
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text;
  int line = 1;
  int col = 1;
};

/// The first error stops the parse; it unwinds to parseGraph.
struct ParseFailure {
  int line;
  int col;
  std::string message;
};

std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Eof:
    return "end of input";
  case Tok::ValueName:
    return "'" + printName('%', t.text) + "'";
  case Tok::OpName:
    return "'" + printName('@', t.text) + "'";
  case Tok::String:
    return quoteString(t.text);
  default:
    return "'" + t.text + "'";
  }
}

bool isBareNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$' || c == '-';
}

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isIdentChar(char c) {
  return isIdentStart(c) || (c >= '0' && c <= '9') || c == '.';
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

class Lexer {
public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    skipSpaceAndComments();
    Token t;
    t.line = line_;
    t.col = col_;
    if (pos_ >= text_.size())
      return t;
    char c = text_[pos_];
    if (c == '%' || c == '@') {
      advance();
      t.kind = c == '%' ? Tok::ValueName : Tok::OpName;
      t.text = lexName(c, t);
      return t;
    }
    if (c == '"') {
      t.kind = Tok::String;
      t.text = lexString();
      return t;
    }
    if (isDigit(c) || (c == '-' && pos_ + 1 < text_.size() &&
                       (isDigit(text_[pos_ + 1]) || text_.substr(pos_ + 1, 3) == "inf")))
      return lexNumber(t);
    if (isIdentStart(c)) {
      t.kind = Tok::Ident;
      while (pos_ < text_.size() && isIdentChar(text_[pos_]))
        t.text += advance();
      return t;
    }
    if (std::string_view("{}()[]<>,:=#").find(c) != std::string_view::npos) {
      t.kind = Tok::Punct;
      t.text = std::string(1, advance());
      return t;
    }
    fail(line_, col_, "unexpected character '" + printable(c) + "'");
  }

private:
  [[noreturn]] static void fail(int line, int col, std::string message) {
    throw ParseFailure{line, col, std::move(message)};
  }

  static std::string printable(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
      return std::string(1, c);
    static const char kHex[] = "0123456789abcdef";
    return std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
  }

  char advance() {
    char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }

  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
        continue;
      }
      if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          advance();
        continue;
      }
      return;
    }
  }

  std::string lexName(char sigil, const Token &t) {
    if (pos_ < text_.size() && text_[pos_] == '"') {
      std::string name = lexString();
      if (name.empty())
        fail(t.line, t.col, std::string("empty name after '") + sigil + "'");
      return name;
    }
    std::string name;
    while (pos_ < text_.size() && isBareNameChar(text_[pos_]))
      name += advance();
    if (name.empty())
      fail(t.line, t.col, std::string("expected a name after '") + sigil + "'");
    return name;
  }

  std::string lexString() {
    int startLine = line_, startCol = col_;
    advance(); // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n')
        fail(startLine, startCol, "unterminated string");
      char c = advance();
      if (c == '"')
        return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      int escLine = line_, escCol = col_ - 1;
      if (pos_ >= text_.size())
        fail(startLine, startCol, "unterminated string");
      char e = advance();
      if (e == '"' || e == '\\')
        out += e;
      else if (e == 'n')
        out += '\n';
      else if (e == 't')
        out += '\t';
      else if (e == 'x' && pos_ + 1 < text_.size() && isHexDigit(text_[pos_]) &&
               isHexDigit(text_[pos_ + 1])) {
        std::string hex{advance(), advance()};
        out += static_cast<char>(std::stoi(hex, nullptr, 16));
      } else {
        fail(escLine, escCol, "unknown escape '\\" + printable(e) +
                                  "' (use \\\", \\\\, \\n, \\t or \\xHH)");
      }
    }
  }

  Token lexNumber(Token t) {
    size_t start = pos_;
    if (text_[pos_] == '-')
      advance();
    if (text_.substr(pos_, 3) == "inf") {
      advance();
      advance();
      advance();
      t.kind = Tok::Float;
      t.text = "-inf";
      return t;
    }
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X') && start == pos_) {
      advance();
      advance();
      while (pos_ < text_.size() && isHexDigit(text_[pos_]))
        advance();
      t.kind = Tok::HexInt;
      t.text = std::string(text_.substr(start, pos_ - start));
      return t;
    }
    bool isFloat = false;
    while (pos_ < text_.size() && isDigit(text_[pos_]))
      advance();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      isFloat = true;
      advance();
      while (pos_ < text_.size() && isDigit(text_[pos_]))
        advance();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      isFloat = true;
      advance();
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        advance();
      if (pos_ >= text_.size() || !isDigit(text_[pos_]))
        fail(t.line, t.col, "malformed number exponent");
      while (pos_ < text_.size() && isDigit(text_[pos_]))
        advance();
    }
    if (pos_ < text_.size() && isIdentChar(text_[pos_]))
      fail(t.line, t.col, "malformed number '" +
                              std::string(text_.substr(start, pos_ + 1 - start)) +
                              "'");
    t.kind = isFloat ? Tok::Float : Tok::Int;
    t.text = std::string(text_.substr(start, pos_ - start));
    return t;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

/// An attribute dictionary with where each key was written.
struct ParsedDict {
  AttrDict dict;
  std::map<std::string, Token> keys;
  Token open;
};

class IrParser {
public:
  IrParser(std::string_view text, const std::string &fileName,
           const ConstantPool *pool)
      : lexer_(text), fileName_(fileName), pool_(pool) {
    cur_ = lexer_.next();
  }

  std::unique_ptr<Graph> parseGraphText() {
    expectKeyword("graph");
    Token nameTok = expect(Tok::OpName, "a graph name (@name)");
    auto graph = std::make_unique<Graph>(nameTok.text);
    graph_ = graph.get();
    if (isPunct("#"))
      graph->annotations() = parseAnnotations();
    expectPunct("{");
    while (!isKeyword("return")) {
      if (isKeyword("input"))
        parseInput();
      else if (isKeyword("const"))
        parseConstant();
      else if (cur_.kind == Tok::ValueName)
        parseOpLine();
      else
        failAt(cur_, "expected 'input', 'const', an op (%name = ...) or "
                     "'return', found " +
                         describe(cur_));
    }
    parseReturn();
    expectPunct("}");
    if (cur_.kind != Tok::Eof)
      failAt(cur_, "unexpected " + describe(cur_) + " after the graph");
    return graph;
  }

  Attribute parseWholeAttribute() {
    Attribute a = parseAttrValue();
    if (cur_.kind != Tok::Eof)
      failAt(cur_, "unexpected " + describe(cur_) + " after the attribute");
    return a;
  }

private:
  // ---- Token helpers ----

  [[noreturn]] void failAt(const Token &t, std::string message) {
    throw ParseFailure{t.line, t.col, std::move(message)};
  }

  Token take() {
    Token t = std::move(cur_);
    cur_ = lexer_.next();
    return t;
  }

  bool isPunct(std::string_view p) const {
    return cur_.kind == Tok::Punct && cur_.text == p;
  }

  bool isKeyword(std::string_view k) const {
    return cur_.kind == Tok::Ident && cur_.text == k;
  }

  Token expect(Tok kind, const std::string &what) {
    if (cur_.kind != kind)
      failAt(cur_, "expected " + what + ", found " + describe(cur_));
    return take();
  }

  Token expectPunct(std::string_view p) {
    if (!isPunct(p))
      failAt(cur_, "expected '" + std::string(p) + "', found " + describe(cur_));
    return take();
  }

  Token expectKeyword(std::string_view k) {
    if (!isKeyword(k))
      failAt(cur_, "expected '" + std::string(k) + "', found " + describe(cur_));
    return take();
  }

  // ---- Values and types ----

  void checkNewValueName(const Token &t) {
    auto it = definedAt_.find(t.text);
    if (it != definedAt_.end())
      failAt(t, "value " + printName('%', t.text) +
                    " is already defined at line " + std::to_string(it->second));
  }

  Value *useValue(const Token &t) {
    Value *v = graph_->findValue(t.text);
    if (!v)
      failAt(t, "use of undefined value " + printName('%', t.text));
    return v;
  }

  int64_t parseInt(const Token &t) {
    int64_t v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
      failAt(t, "integer " + t.text + " is out of range");
    return v;
  }

  double parseDouble(const Token &t) {
    if (t.text == "inf")
      return std::numeric_limits<double>::infinity();
    if (t.text == "-inf")
      return -std::numeric_limits<double>::infinity();
    if (t.text == "nan")
      return std::numeric_limits<double>::quiet_NaN();
    double v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
      failAt(t, "float " + t.text + " is out of range");
    return v;
  }

  TensorType parseType(Token *where = nullptr) {
    Token t = expect(Tok::Ident, "a tensor type such as f32[3, 64]");
    if (where)
      *where = t;
    std::optional<ElementType> et = parseElementType(t.text);
    if (!et)
      failAt(t, "unknown element type '" + t.text + "' (expected " +
                    elementTypeChoices() + ")");
    expectPunct("[");
    Shape shape;
    while (!isPunct("]")) {
      if (!shape.empty())
        expectPunct(",");
      shape.push_back(parseInt(expect(Tok::Int, "a dimension")));
    }
    take();
    std::string problem = checkShape(shape);
    if (!problem.empty())
      failAt(t, "invalid shape " + shapeStr(shape) + ": " + problem);
    return {*et, shape};
  }

  // ---- Attributes ----

  Attribute parseAttrValue() {
    // Deep enough for any annotation, shallow enough for the stack.
    constexpr int kMaxDepth = 64;
    if (depth_ >= kMaxDepth)
      failAt(cur_, "attributes nest deeper than " + std::to_string(kMaxDepth) +
                       " levels");
    ++depth_;
    Attribute a = parseAttrValueAtDepth();
    --depth_;
    return a;
  }

  Attribute parseAttrValueAtDepth() {
    Token t = cur_;
    switch (t.kind) {
    case Tok::Int:
      take();
      return parseInt(t);
    case Tok::Float:
      take();
      return parseDouble(t);
    case Tok::String:
      take();
      return t.text;
    case Tok::Ident:
      take();
      if (t.text == "true" || t.text == "false")
        return t.text == "true";
      if (t.text == "inf" || t.text == "nan")
        return parseDouble(t);
      failAt(t, "expected an attribute value, found " + describe(t));
    case Tok::Punct:
      if (t.text == "[") {
        take();
        Attribute::List elements;
        while (!isPunct("]")) {
          if (!elements.empty())
            expectPunct(",");
          elements.push_back(parseAttrValue());
        }
        take();
        return Attribute::list(std::move(elements));
      }
      if (t.text == "{")
        return parseDict().dict;
      break;
    default:
      break;
    }
    failAt(t, "expected an attribute value, found " + describe(t));
  }

  ParsedDict parseDict() {
    ParsedDict out;
    out.open = expectPunct("{");
    while (!isPunct("}")) {
      if (!out.dict.empty())
        expectPunct(",");
      if (cur_.kind != Tok::Ident && cur_.kind != Tok::String)
        failAt(cur_, "expected an attribute name, found " + describe(cur_));
      Token key = take();
      if (out.dict.contains(key.text))
        failAt(key, "attribute '" + key.text + "' is given twice");
      expectPunct("=");
      out.dict.set(key.text, parseAttrValue());
      out.keys.emplace(key.text, key);
    }
    take();
    return out;
  }

  AttrDict parseAnnotations() {
    expectPunct("#");
    return parseDict().dict;
  }

  // ---- Items ----

  void parseInput() {
    take();
    Token name = expect(Tok::ValueName, "an input name (%name)");
    checkNewValueName(name);
    expectPunct(":");
    TensorType type = parseType();
    Value *v = graph_->addInput(name.text, type);
    definedAt_[name.text] = name.line;
    if (isPunct("#"))
      v->annotations() = parseAnnotations();
  }

  void parseConstant() {
    take();
    Token name = expect(Tok::ValueName, "a constant name (%name)");
    checkNewValueName(name);
    expectPunct(":");
    Token typeTok;
    TensorType type = parseType(&typeTok);
    expectPunct("=");
    ConstantDataPtr data;
    Token form = expect(Tok::Ident, "'dense' or 'data'");
    if (form.text == "dense")
      data = parseDense(type);
    else if (form.text == "data")
      data = parseDataRef(name, type);
    else
      failAt(form, "expected 'dense' or 'data', found " + describe(form));
    Value *v = graph_->addConstant(name.text, std::move(data));
    definedAt_[name.text] = name.line;
    if (isPunct("#"))
      v->annotations() = parseAnnotations();
  }

  ConstantDataPtr parseDense(const TensorType &type) {
    expectPunct("<");
    Token open = expectPunct("[");
    std::vector<double> values;
    while (!isPunct("]")) {
      if (!values.empty())
        expectPunct(",");
      Token t = cur_;
      if (t.kind == Tok::Ident && (t.text == "inf" || t.text == "nan"))
        t.kind = Tok::Float;
      if (t.kind != Tok::Int && t.kind != Tok::Float)
        failAt(t, "expected a number, found " + describe(t));
      take();
      values.push_back(denseValue(t, type.elementType));
    }
    take();
    expectPunct(">");
    if (static_cast<int64_t>(values.size()) != type.elementCount())
      failAt(open, "dense data has " + std::to_string(values.size()) +
                       " values, " + type.str() + " needs " +
                       std::to_string(type.elementCount()));
    return ConstantData::fromDoubles(type, values);
  }

  double denseValue(const Token &t, ElementType et) {
    if (isFloatType(et)) {
      if (t.kind == Tok::Int)
        return static_cast<double>(parseInt(t));
      // Parsed as the element type itself, so the text's nearest f32 is
      // what is stored (parsing as double first could round twice).
      if (t.text == "inf" || t.text == "-inf" || t.text == "nan")
        return parseDouble(t);
      float f = 0;
      auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), f);
      if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
        failAt(t, "float " + t.text + " is out of range for " +
                      std::string(elementTypeName(et)));
      return f;
    }
    if (t.kind != Tok::Int)
      failAt(t, std::string(elementTypeName(et)) + " data must be integers, found " +
                    t.text);
    int64_t v = parseInt(t);
    int64_t lo = et == ElementType::I8 ? -128 : std::numeric_limits<int32_t>::min();
    int64_t hi = et == ElementType::I8 ? 127 : std::numeric_limits<int32_t>::max();
    if (v < lo || v > hi)
      failAt(t, std::to_string(v) + " is out of range for " +
                    std::string(elementTypeName(et)));
    return static_cast<double>(v);
  }

  ConstantDataPtr parseDataRef(const Token &name, const TensorType &type) {
    expectPunct("<");
    Token hex = expect(Tok::HexInt, "a data digest (0x followed by 16 hex digits)");
    if (hex.text.size() != 18)
      failAt(hex, "a data digest has 16 hex digits, found " + hex.text);
    expectPunct(">");
    uint64_t digest = std::stoull(hex.text.substr(2), nullptr, 16);
    ConstantDataPtr data = pool_ ? pool_->find(digest) : nullptr;
    if (!data)
      failAt(hex, "no data for constant " + printName('%', name.text) +
                      " with digest " + hex.text +
                      " (data<...> refers to constant data held by the graph "
                      "the text was printed from; parse it with that graph's "
                      "constants)");
    if (data->type() != type)
      failAt(hex, "data " + hex.text + " is " + data->type().str() + ", not " +
                      type.str());
    return data;
  }

  void parseOpLine() {
    Token first = cur_;
    std::vector<Token> names;
    names.push_back(take());
    while (isPunct(",")) {
      take();
      names.push_back(expect(Tok::ValueName, "a result name (%name)"));
    }
    for (size_t i = 0; i < names.size(); ++i) {
      checkNewValueName(names[i]);
      for (size_t j = 0; j < i; ++j)
        if (names[j].text == names[i].text)
          failAt(names[i], "value " + printName('%', names[i].text) +
                               " is named twice");
    }
    expectPunct("=");
    Token kindTok = expect(Tok::Ident, "an op kind");
    const OpDef *def = findOpDef(kindTok.text);
    if (!def)
      failAt(kindTok, "unknown op '" + kindTok.text + "'");
    Token opName = expect(Tok::OpName, "an op name (@name)");
    if (auto it = opDefinedAt_.find(opName.text); it != opDefinedAt_.end())
      failAt(opName, "op " + printName('@', opName.text) +
                         " is already defined at line " +
                         std::to_string(it->second));
    expectPunct("(");
    std::vector<Token> operandToks;
    std::vector<Value *> operands;
    while (!isPunct(")")) {
      if (!operandToks.empty())
        expectPunct(",");
      operandToks.push_back(expect(Tok::ValueName, "an operand (%name)"));
      operands.push_back(useValue(operandToks.back()));
    }
    Token close = take();
    ParsedDict attrs;
    attrs.open = kindTok;
    if (isPunct("{"))
      attrs = parseDict();
    AttrDict annotations;
    if (isPunct("#"))
      annotations = parseAnnotations();
    Token colon = expectPunct(":");
    std::vector<TensorType> types;
    std::vector<Token> typeToks;
    std::vector<AttrDict> resultAnnotations;
    do {
      if (!types.empty())
        take();
      typeToks.emplace_back();
      types.push_back(parseType(&typeToks.back()));
      resultAnnotations.push_back(isPunct("#") ? parseAnnotations() : AttrDict{});
    } while (isPunct(","));
    if (types.size() != names.size())
      failAt(colon, std::to_string(names.size()) + " result" +
                        (names.size() == 1 ? " is" : "s are") + " named but " +
                        std::to_string(types.size()) + " type" +
                        (types.size() == 1 ? " is" : "s are") + " given");

    std::vector<OpIssue> issues;
    std::string prefix = "op " + printName('@', opName.text) + " (" +
                         std::string(def->name) + "): ";
    if (!completeAttrs(*def, attrs.dict, issues))
      failIssue(issues.front(), prefix, attrs, kindTok, operandToks, close);
    std::vector<TensorType> operandTypes;
    for (const Value *v : operands)
      operandTypes.push_back(v->type());
    std::optional<std::vector<TensorType>> inferred =
        checkOp(*def, operandTypes, attrs.dict, issues);
    if (!inferred)
      failIssue(issues.front(), prefix, attrs, kindTok, operandToks, close);
    if (inferred->size() != names.size())
      failAt(first, prefix + std::string(def->name) + " gives " +
                        std::to_string(inferred->size()) + " result" +
                        (inferred->size() == 1 ? "" : "s") + ", " +
                        std::to_string(names.size()) + " named");
    std::vector<ResultSpec> results;
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] != (*inferred)[i])
        failAt(typeToks[i], prefix + "result type " + types[i].str() +
                                " differs from " + (*inferred)[i].str() +
                                ", the type " + std::string(def->name) +
                                " gives");
      results.push_back({names[i].text, types[i]});
    }
    Op *op = graph_->createOp(def->kind, opName.text, std::move(operands),
                              std::move(attrs.dict), std::move(results));
    op->setLoc(SourceLoc{fileName_, first.line, first.col});
    op->annotations() = std::move(annotations);
    for (size_t i = 0; i < names.size(); ++i) {
      op->result(i)->annotations() = std::move(resultAnnotations[i]);
      definedAt_[names[i].text] = names[i].line;
    }
    opDefinedAt_[opName.text] = opName.line;
  }

  [[noreturn]] void failIssue(const OpIssue &issue, const std::string &prefix,
                              const ParsedDict &attrs, const Token &kindTok,
                              const std::vector<Token> &operandToks,
                              const Token &close) {
    const Token *at = &kindTok;
    if (issue.target == OpIssue::Target::Operand && issue.index >= 0 &&
        static_cast<size_t>(issue.index) < operandToks.size())
      at = &operandToks[static_cast<size_t>(issue.index)];
    else if (issue.target == OpIssue::Target::Attr) {
      auto it = attrs.keys.find(issue.attr);
      at = it != attrs.keys.end() ? &it->second : &attrs.open;
    } else if (issue.target == OpIssue::Target::Op &&
               issue.message.rfind("expects ", 0) == 0)
      at = &close;
    failAt(*at, prefix + issue.message);
  }

  void parseReturn() {
    Token ret = take();
    std::vector<Value *> outputs;
    do {
      if (!outputs.empty())
        take();
      Token t = expect(Tok::ValueName, "a value to return (%name)");
      Value *v = useValue(t);
      if (std::find(outputs.begin(), outputs.end(), v) != outputs.end())
        failAt(t, "value " + printName('%', t.text) + " is returned twice");
      outputs.push_back(v);
    } while (isPunct(","));
    graph_->setOutputs(std::move(outputs));
  }

  Lexer lexer_;
  Token cur_;
  const std::string &fileName_;
  const ConstantPool *pool_;
  Graph *graph_ = nullptr;
  int depth_ = 0;
  // Where each name was defined, for "already defined at line N".
  std::map<std::string, int, std::less<>> definedAt_;
  std::map<std::string, int, std::less<>> opDefinedAt_;
};

Diagnostic failureDiagnostic(const ParseFailure &f, std::string_view text,
                             const std::string &fileName) {
  Diagnostic d;
  d.loc = SourceLoc{fileName, f.line, f.col};
  d.message = f.message;
  size_t start = 0;
  for (int line = 1; line < f.line && start < text.size(); ++line) {
    size_t nl = text.find('\n', start);
    start = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  size_t end = text.find('\n', start);
  d.sourceLine = std::string(
      text.substr(start, (end == std::string_view::npos ? text.size() : end) - start));
  if (!d.sourceLine.empty() && d.sourceLine.back() == '\r')
    d.sourceLine.pop_back();
  return d;
}

} // namespace

std::unique_ptr<Graph> parseGraph(std::string_view text,
                                  const std::string &fileName,
                                  DiagnosticEngine &diags,
                                  const ConstantPool *pool) {
  std::unique_ptr<Graph> graph;
  try {
    graph = IrParser(text, fileName, pool).parseGraphText();
    graph->setSourceFile(fileName);
  } catch (const ParseFailure &f) {
    diags.report(failureDiagnostic(f, text, fileName));
    return nullptr;
  }
  // Everything verifyGraph checks was checked while parsing; this keeps the
  // promise that a graph that parses is valid.
  if (!verifyGraph(*graph, diags))
    return nullptr;
  return graph;
}

std::optional<Attribute> parseAttribute(std::string_view text,
                                        const std::string &fileName,
                                        DiagnosticEngine &diags) {
  try {
    return IrParser(text, fileName, nullptr).parseWholeAttribute();
  } catch (const ParseFailure &f) {
    diags.report(failureDiagnostic(f, text, fileName));
    return std::nullopt;
  }
}

} // namespace spyre::compiler
