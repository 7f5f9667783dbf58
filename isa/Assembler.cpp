// The assembler. A lexer turns the text into tokens with line and column; a
// statement parser handles labels, directives and instructions. Instruction
// operands are matched to the table's fields by the field kinds alone, so
// adding an instruction to the table needs no change here. Errors are
// collected (each with the source line and a caret) and parsing resumes at
// the next line.
#include "isa/Assembler.h"

#include "hw/HwConfig.h"
#include "numerics/Dlf16.h"
#include "support/ParseNumber.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace spyre::isa {

namespace {

constexpr size_t kMaxErrors = 50;
constexpr int kMaxRank = 8;
constexpr uint64_t kMaxElements = uint64_t(1) << 48;

enum class Tok { Ident, Directive, Number, String, Punct, Newline, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  int line = 0;
  int col = 0;

  bool is(char c) const {
    return kind == Tok::Punct && text.size() == 1 && text[0] == c;
  }
};

bool identStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool identChar(char c) {
  return identStart(c) || (c >= '0' && c <= '9') || c == '.';
}
bool digit(char c) { return c >= '0' && c <= '9'; }

std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Newline:
    return "end of line";
  case Tok::End:
    return "end of file";
  case Tok::String:
    return "\"" + t.text + "\"";
  default:
    return "'" + t.text + "'";
  }
}

/// Parses an integer literal: optional sign, decimal or 0x hex.
std::optional<int64_t> parseInt(std::string_view s) { return parseInt64(s); }

/// Parses an FP32 literal: decimal (with exponent), inf, nan, with a sign.
/// A decimal beyond the FP32 range sets `outOfRange`.
std::optional<float> parseFloat(std::string_view s, bool *outOfRange = nullptr) {
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  float v = 0;
  if (s == "inf") {
    v = std::numeric_limits<float>::infinity();
  } else if (s == "nan") {
    v = std::numeric_limits<float>::quiet_NaN();
  } else {
    if (s.empty() || !(digit(s[0]) || s[0] == '.'))
      return std::nullopt;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (end != s.data() + s.size())
      return std::nullopt;
    if (ec == std::errc::result_out_of_range) {
      if (outOfRange)
        *outOfRange = true;
      return std::nullopt;
    }
    if (ec != std::errc())
      return std::nullopt;
  }
  return neg ? -v : v;
}

/// `rN` / `cN` with N a small decimal number, else nullopt.
std::optional<int64_t> prefixedNumber(const std::string &s, char prefix) {
  if (s.size() < 2 || s[0] != prefix)
    return std::nullopt;
  for (size_t i = 1; i < s.size(); ++i)
    if (!digit(s[i]))
      return std::nullopt;
  if (s.size() > 6)
    return INT64_MAX;
  return std::stoll(s.substr(1));
}

/// FP32 bits of a parsed value; every NaN becomes the quiet NaN of its sign.
uint32_t canonicalBits(float v) {
  if (std::isnan(v))
    return std::signbit(v) ? 0xFFC00000u : 0x7FC00000u;
  return std::bit_cast<uint32_t>(v);
}

/// An operand as written, before it is matched to a field.
struct Operand {
  enum Kind { Ident, Number, Address } kind = Number;
  std::string keyword; ///< `name` of `name=value`, empty when positional
  std::string text;    ///< identifier, or number with its sign
  std::string reg;     ///< Address: base register text
  std::string offset;  ///< Address: offset with its sign, empty for none
  int line = 0;
  int col = 0;    ///< start of the value
  int kwCol = 0;  ///< start of the keyword
};

struct Label {
  size_t index = 0;
  int line = 0;
  int col = 0;
};

struct LoopFixup {
  size_t instr = 0;
  std::string label;
  int line = 0;
  int col = 0;
};

struct StreamState {
  Stream stream;
  int line = 0;
  int col = 0;
  bool discard = false; ///< a duplicate: parsed for errors, then dropped
  std::map<std::string, Label> labels;
  std::vector<LoopFixup> loops;
  std::vector<std::pair<int, int>> instrLoc;
  uint32_t currentOp = kNoProvenance;
};

struct TensorLoc {
  int line = 0;
  int col = 0;
};

class Assembler {
public:
  Assembler(std::string_view text, const std::string &fileName,
            const hw::HwConfig &config, DiagnosticEngine &diags)
      : text_(text), file_(fileName), config_(config), diags_(diags) {}

  Program run();

private:
  // ---- diagnostics ----
  void error(int line, int col, const std::string &msg);
  void flushErrors();
  void error(const Token &t, const std::string &msg) {
    error(t.line, t.col, msg);
  }

  // ---- lexing ----
  void lex();

  // ---- token cursor ----
  const Token &peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, toks_.size() - 1);
    return toks_[i];
  }
  const Token &next() {
    const Token &t = toks_[pos_];
    if (pos_ + 1 < toks_.size())
      ++pos_;
    return t;
  }
  bool atLineEnd() const {
    return peek().kind == Tok::Newline || peek().kind == Tok::End;
  }
  void skipLine() {
    while (!atLineEnd())
      next();
  }
  bool expectLineEnd(std::string_view after);

  // ---- statements ----
  void statement();
  void directive();
  void dirProgram(const Token &d);
  void dirCore();
  void dirEngine(const Token &d);
  void dirOp(const Token &d);
  void dirTensor(const Token &d);
  void dirHost(const Token &d);
  /// Resolves the tensors of `.host` directives and checks every host op
  /// and every `host` instruction's op index.
  void finishHostOps();
  void instruction();
  std::optional<Operand> operand();
  bool convert(const InstrDesc &desc, size_t field, const Operand &op,
               Instr &instr, LoopFixup &fixup);
  bool checkLimit(const InstrDesc &desc, const FieldDesc &f, const Operand &op,
                  int64_t v);

  // ---- streams ----
  void finishStream();
  std::string fieldError(const InstrDesc &desc, const FieldDesc &f) const {
    return "operand '" + std::string(f.name) + "' of '" +
           std::string(desc.mnemonic) + "'";
  }

  std::string_view text_;
  std::string file_;
  const hw::HwConfig &config_;
  DiagnosticEngine &diags_;

  std::vector<std::string> lines_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::vector<Diagnostic> errors_;

  Program program_;
  bool haveName_ = false;
  int nameLine_ = 0;
  std::optional<int> core_;
  std::vector<StreamState> streams_;
  int current_ = -1;
  std::map<std::tuple<int, Engine, int>, int> streamLine_;
  std::map<std::string, uint32_t> opIndex_;
  std::vector<TensorLoc> tensorLoc_;
  struct PendingHost {
    Token at;
    HostOpDecl decl;
    std::vector<Token> inputs, outputs;
  };
  std::vector<PendingHost> hosts_;
};

void Assembler::error(int line, int col, const std::string &msg) {
  // Collection stops well past what is shown, so a file of garbage cannot
  // grow memory without bound.
  if (errors_.size() > 4 * kMaxErrors)
    return;
  Diagnostic d;
  d.severity = Severity::Error;
  d.loc = SourceLoc{file_, line, col, {}};
  d.message = msg;
  if (line >= 1 && static_cast<size_t>(line) <= lines_.size())
    d.sourceLine = lines_[static_cast<size_t>(line) - 1];
  errors_.push_back(std::move(d));
}

void Assembler::flushErrors() {
  // Lexing sees the whole file before parsing starts: order by line so the
  // report reads top to bottom (within a line, in the order found).
  std::stable_sort(errors_.begin(), errors_.end(),
                   [](const Diagnostic &a, const Diagnostic &b) {
                     return a.loc.line < b.loc.line;
                   });
  for (size_t i = 0; i < errors_.size(); ++i) {
    if (i == kMaxErrors) {
      diags_.note(SourceLoc{file_}, "too many errors, stopping");
      break;
    }
    diags_.report(errors_[i]);
  }
}

void Assembler::lex() {
  // Keep the source lines for diagnostics (tabs widen the caret column the
  // same way as the text, since columns count bytes).
  size_t start = 0;
  while (start <= text_.size()) {
    size_t nl = text_.find('\n', start);
    std::string_view l = text_.substr(
        start, nl == std::string_view::npos ? std::string_view::npos
                                            : nl - start);
    if (!l.empty() && l.back() == '\r')
      l.remove_suffix(1);
    lines_.emplace_back(l);
    if (nl == std::string_view::npos)
      break;
    start = nl + 1;
  }

  for (size_t ln = 0; ln < lines_.size(); ++ln) {
    const std::string &l = lines_[ln];
    int line = static_cast<int>(ln) + 1;
    size_t i = 0;
    while (i < l.size()) {
      char c = l[i];
      int col = static_cast<int>(i) + 1;
      if (c == ' ' || c == '\t') {
        ++i;
        continue;
      }
      if (c == ';')
        break;
      Token t;
      t.line = line;
      t.col = col;
      if (identStart(c) || (c == '.' && i + 1 < l.size() && identStart(l[i + 1]))) {
        t.kind = c == '.' ? Tok::Directive : Tok::Ident;
        size_t j = i + 1;
        while (j < l.size() && identChar(l[j]))
          ++j;
        t.text = l.substr(i, j - i);
        i = j;
      } else if (digit(c)) {
        t.kind = Tok::Number;
        bool hex = c == '0' && i + 1 < l.size() && (l[i + 1] == 'x' || l[i + 1] == 'X');
        size_t j = i + 1;
        while (j < l.size()) {
          char d = l[j];
          if (identChar(d) || digit(d)) {
            ++j;
            continue;
          }
          // An exponent sign belongs to the number: 1e-3, 2.5E+8.
          if (!hex && (d == '+' || d == '-') && (l[j - 1] == 'e' || l[j - 1] == 'E')) {
            ++j;
            continue;
          }
          break;
        }
        t.text = l.substr(i, j - i);
        i = j;
      } else if (c == '"') {
        t.kind = Tok::String;
        size_t j = i + 1;
        bool closed = false;
        while (j < l.size()) {
          if (l[j] == '\\' && j + 1 < l.size()) {
            char e = l[j + 1];
            t.text += e == 'n' ? '\n' : e == 't' ? '\t' : e;
            j += 2;
            continue;
          }
          if (l[j] == '"') {
            closed = true;
            ++j;
            break;
          }
          t.text += l[j++];
        }
        if (!closed)
          error(line, col, "unterminated string");
        i = j;
      } else if (std::strchr(",[]=:@+-", c)) {
        t.kind = Tok::Punct;
        t.text = std::string(1, c);
        ++i;
      } else {
        error(line, col, std::string("unexpected character '") + c + "'");
        ++i;
        continue;
      }
      toks_.push_back(std::move(t));
    }
    Token nl;
    nl.kind = Tok::Newline;
    nl.line = line;
    nl.col = static_cast<int>(l.size()) + 1;
    toks_.push_back(nl);
  }
  Token end;
  end.kind = Tok::End;
  end.line = static_cast<int>(lines_.size());
  end.col = 1;
  toks_.push_back(end);
}

bool Assembler::expectLineEnd(std::string_view after) {
  if (atLineEnd())
    return true;
  error(peek(), "unexpected " + describe(peek()) + " after " +
                    std::string(after));
  skipLine();
  return false;
}

Program Assembler::run() {
  lex();
  if (config_.chip.stickBytes != kStickBytes)
    error(0, 0,
          "the ISA addresses 128-byte sticks; the config has "
          "chip.stick_bytes = " +
              std::to_string(config_.chip.stickBytes));
  while (peek().kind != Tok::End) {
    statement();
    // Each statement ends at a newline (or stops at one after an error).
    while (peek().kind != Tok::Newline && peek().kind != Tok::End)
      next();
    if (peek().kind == Tok::Newline)
      next();
  }
  finishStream();
  finishHostOps();
  flushErrors();

  // Streams in (core, engine, unit) order whatever the text order; source
  // ops renumbered in first-use order over that order (canonical).
  std::vector<Stream> streams;
  for (StreamState &s : streams_)
    if (!s.discard)
      streams.push_back(std::move(s.stream));
  std::sort(streams.begin(), streams.end(), streamLess);
  std::vector<uint32_t> remap(program_.strings.size(), kNoProvenance);
  std::vector<std::string> strings;
  for (Stream &s : streams)
    for (uint32_t &p : s.provenance) {
      if (p == kNoProvenance)
        continue;
      if (remap[p] == kNoProvenance) {
        remap[p] = static_cast<uint32_t>(strings.size());
        strings.push_back(program_.strings[p]);
      }
      p = remap[p];
    }
  program_.strings = std::move(strings);
  program_.streams = std::move(streams);
  program_.configFingerprint = config_.fingerprint();
  return std::move(program_);
}

void Assembler::statement() {
  if (atLineEnd())
    return;
  // Labels: `name:` before an instruction or on a line of their own.
  while (peek().kind == Tok::Ident && peek(1).is(':')) {
    const Token &name = next();
    next();
    if (current_ < 0) {
      error(name, "label '" + name.text + "' outside a stream");
    } else {
      StreamState &s = streams_[static_cast<size_t>(current_)];
      auto [it, added] = s.labels.emplace(
          name.text, Label{s.stream.code.size(), name.line, name.col});
      if (!added)
        error(name, "duplicate label '" + name.text + "' (first defined on line " +
                        std::to_string(it->second.line) + ")");
    }
    if (atLineEnd())
      return;
  }
  if (peek().kind == Tok::Directive)
    return directive();
  if (peek().kind == Tok::Ident)
    return instruction();
  error(peek(), "expected an instruction, a label or a directive, found " +
                    describe(peek()));
  skipLine();
}

void Assembler::directive() {
  const Token &d = next();
  if (d.text == ".program")
    return dirProgram(d);
  if (d.text == ".core")
    return dirCore();
  if (d.text == ".engine")
    return dirEngine(d);
  if (d.text == ".op")
    return dirOp(d);
  if (d.text == ".tensor")
    return dirTensor(d);
  if (d.text == ".host")
    return dirHost(d);
  error(d, "unknown directive '" + d.text +
               "' (expected .program, .tensor, .host, .core, .engine or .op)");
  skipLine();
}

void Assembler::dirProgram(const Token &d) {
  if (peek().kind != Tok::String) {
    error(peek(), "'.program' needs a quoted name, found " + describe(peek()));
    return skipLine();
  }
  const Token &name = next();
  if (haveName_)
    error(d, "'.program' given twice (first on line " +
                 std::to_string(nameLine_) + ")");
  haveName_ = true;
  nameLine_ = d.line;
  if (hasControlChar(name.text))
    error(name, "the program name holds a control character");
  program_.name = name.text;
  expectLineEnd("the program name");
}

void Assembler::dirCore() {
  finishStream();
  core_.reset();
  std::optional<int64_t> v;
  if (peek().kind == Tok::Number)
    v = parseInt(peek().text);
  if (!v) {
    error(peek(), "'.core' needs a core number, found " + describe(peek()));
    return skipLine();
  }
  const Token &num = next();
  int64_t cores = config_.chip.cores;
  if (*v < 0 || *v >= cores) {
    error(num, "core " + num.text + " is out of range (valid: 0.." +
                   std::to_string(cores - 1) + ", chip.cores = " +
                   std::to_string(cores) + ")");
    return skipLine();
  }
  core_ = static_cast<int>(*v);
  expectLineEnd("the core number");
}

void Assembler::dirEngine(const Token &d) {
  finishStream();
  if (peek().kind != Tok::Ident) {
    error(peek(), "'.engine' needs an engine name (dma.load, dma.store, pt.N, "
                  "sfu.N or ring), found " +
                      describe(peek()));
    return skipLine();
  }
  const Token &name = next();
  std::optional<Engine> engine;
  int unit = 0;
  bool unitOk = true;
  for (int e = 0; e < kNumEngines; ++e) {
    Engine eng = static_cast<Engine>(e);
    std::string base(engineName(eng));
    if (!engineHasUnits(eng)) {
      if (name.text == base)
        engine = eng;
      continue;
    }
    if (name.text != base && name.text.rfind(base + ".", 0) != 0)
      continue;
    engine = eng;
    std::optional<int64_t> u;
    if (name.text != base)
      u = prefixedNumber("#" + name.text.substr(base.size() + 1), '#');
    unitOk = u && *u < config_.chip.coreletsPerCore;
    if (unitOk)
      unit = static_cast<int>(*u);
  }
  if (!engine) {
    error(name, "unknown engine '" + name.text +
                    "' (expected dma.load, dma.store, pt.N, sfu.N or ring)");
    return skipLine();
  }
  if (!unitOk) {
    std::string base(engineName(*engine));
    error(name, "no engine '" + name.text + "' (valid: " + base + ".0.." +
                    base + "." +
                    std::to_string(config_.chip.coreletsPerCore - 1) +
                    ", chip.corelets_per_core = " +
                    std::to_string(config_.chip.coreletsPerCore) + ")");
    return skipLine();
  }
  if (!core_) {
    error(d, "'.engine' needs a '.core' first");
    return skipLine();
  }
  StreamState s;
  s.stream.core = *core_;
  s.stream.engine = *engine;
  s.stream.unit = unit;
  s.line = d.line;
  s.col = d.col;
  auto key = std::tuple(*core_, *engine, unit);
  auto [it, added] = streamLine_.emplace(key, d.line);
  if (!added) {
    error(name, "stream " + s.stream.name() + " defined twice (first on line " +
                    std::to_string(it->second) + ")");
    s.discard = true;
  }
  streams_.push_back(std::move(s));
  current_ = static_cast<int>(streams_.size()) - 1;
  expectLineEnd("the engine name");
}

void Assembler::dirOp(const Token &d) {
  uint32_t op = kNoProvenance;
  if (peek().kind == Tok::String) {
    const Token &name = next();
    if (hasControlChar(name.text))
      error(name, "the op name holds a control character");
    auto [it, added] = opIndex_.emplace(
        name.text, static_cast<uint32_t>(program_.strings.size()));
    if (added)
      program_.strings.push_back(name.text);
    op = it->second;
  } else if (!atLineEnd()) {
    error(peek(), "'.op' takes a quoted op name (or nothing, for no op), "
                  "found " +
                      describe(peek()));
    return skipLine();
  }
  if (current_ < 0) {
    error(d, "'.op' outside a stream (open one with .core and .engine)");
    return skipLine();
  }
  streams_[static_cast<size_t>(current_)].currentOp = op;
  expectLineEnd("the op name");
}

void Assembler::dirHost(const Token &d) {
  auto want = [&](bool ok, const std::string &what) {
    if (ok)
      return true;
    error(peek(), "'.host' expects " + what + ", found " + describe(peek()) +
                      " (syntax: .host NAME OPTYPE \"ATTRS\" in TENSORS... "
                      "out TENSORS... flops N)");
    skipLine();
    return false;
  };
  auto isName = [&] {
    return peek().kind == Tok::Ident || peek().kind == Tok::String;
  };
  PendingHost h;
  h.at = d;
  if (!want(isName(), "a name"))
    return;
  if (hasControlChar(peek().text))
    error(peek(), "the host op's name holds a control character");
  h.decl.name = next().text;
  if (!want(isName(), "an ONNX op type"))
    return;
  if (hasControlChar(peek().text))
    error(peek(), "the host op's type holds a control character");
  h.decl.opType = next().text;
  if (!want(peek().kind == Tok::String, "the attributes as a quoted JSON object"))
    return;
  h.decl.attrs = next().text;
  if (!want(peek().kind == Tok::Ident && peek().text == "in", "'in'"))
    return;
  next();
  while (isName() && peek().text != "out")
    h.inputs.push_back(next());
  if (!want(peek().kind == Tok::Ident && peek().text == "out", "'out'"))
    return;
  next();
  while (isName() && peek().text != "flops")
    h.outputs.push_back(next());
  if (!want(peek().kind == Tok::Ident && peek().text == "flops", "'flops'"))
    return;
  next();
  std::optional<int64_t> flops;
  if (peek().kind == Tok::Number)
    flops = parseInt(peek().text);
  if (!want(flops && *flops >= 0, "a flop count"))
    return;
  next();
  h.decl.flops = static_cast<uint64_t>(*flops);
  hosts_.push_back(std::move(h));
  expectLineEnd("the flop count");
}

void Assembler::finishHostOps() {
  for (PendingHost &h : hosts_) {
    bool ok = true;
    for (auto [names, indices] :
         {std::pair{&h.inputs, &h.decl.inputs},
          std::pair{&h.outputs, &h.decl.outputs}})
      for (const Token &n : *names) {
        const TensorDecl *t = program_.findTensor(n.text);
        if (!t) {
          error(n, "no tensor '" + n.text + "' (declare it with .tensor)");
          ok = false;
          continue;
        }
        indices->push_back(static_cast<uint32_t>(t - program_.tensors.data()));
      }
    if (!ok)
      continue;
    std::string problem = checkHostOp(program_, h.decl);
    if (!problem.empty())
      error(h.at, "host op '" + h.decl.name + "': " + problem);
    program_.hostOps.push_back(h.decl);
  }
  const int opField = instrDesc(Opcode::Host).fieldIndex("op");
  for (const StreamState &s : streams_)
    for (size_t k = 0; k < s.stream.code.size(); ++k) {
      const Instr &in = s.stream.code[k];
      if (in.opcode == Opcode::Host &&
          static_cast<uint64_t>(in.value[static_cast<size_t>(opField)]) >=
              program_.hostOps.size())
        error(k < s.instrLoc.size() ? s.instrLoc[k].first : 0,
              k < s.instrLoc.size() ? s.instrLoc[k].second : 0,
              "stream " + s.stream.name() + ", instruction " +
                  std::to_string(k) + ": host op " +
                  std::to_string(in.value[static_cast<size_t>(opField)]) +
                  " is not declared (the program has " +
                  std::to_string(program_.hostOps.size()) +
                  " .host directives)");
    }
}

void Assembler::dirTensor(const Token &d) {
  auto want = [&](bool ok, const std::string &what) {
    if (ok)
      return true;
    error(peek(), "'.tensor' expects " + what + ", found " + describe(peek()) +
                      " (syntax: .tensor KIND NAME DTYPE [DIMS] @ ADDRESS "
                      "[= [VALUES]])");
    skipLine();
    return false;
  };
  TensorDecl t;
  if (!want(peek().kind == Tok::Ident, "a kind (input, output, const, scratch)"))
    return;
  const Token &kind = next();
  std::optional<TensorKind> k = parseTensorKind(kind.text);
  if (!k) {
    error(kind, "unknown tensor kind '" + kind.text +
                    "' (expected input, output, const or scratch)");
    return skipLine();
  }
  t.kind = *k;
  if (!want(peek().kind == Tok::Ident || peek().kind == Tok::String, "a name"))
    return;
  const Token &name = next();
  t.name = name.text;
  if (std::string why = tensorNameProblem(t.name, t.kind); !why.empty()) {
    error(name, std::string(tensorKindName(t.kind)) + " tensor '" +
                    printableName(t.name) + "': " + why);
    return skipLine();
  }
  if (!want(peek().kind == Tok::Ident, "a dtype (dl16, fp32, int8, int32)"))
    return;
  const Token &dtype = next();
  std::optional<DType> dt = parseDType(dtype.text);
  if (!dt) {
    error(dtype, "unknown dtype '" + dtype.text +
                     "' (expected dl16, fp32, int8 or int32)");
    return skipLine();
  }
  t.dtype = *dt;
  if (!want(peek().is('['), "'[' and the host shape"))
    return;
  const Token &open = next();
  uint64_t elements = 1;
  while (true) {
    std::optional<int64_t> v;
    if (peek().kind == Tok::Number)
      v = parseInt(peek().text);
    if (!v || *v < 1) {
      error(peek(), "tensor dims must be positive integers, found " +
                        describe(peek()));
      return skipLine();
    }
    const Token &dim = next();
    if (static_cast<uint64_t>(*v) > kMaxElements / elements) {
      error(dim, "tensor '" + t.name + "' is too large");
      return skipLine();
    }
    elements *= static_cast<uint64_t>(*v);
    t.hostShape.push_back(*v);
    if (peek().is(',')) {
      next();
      continue;
    }
    if (!want(peek().is(']'), "',' or ']' in the shape"))
      return;
    next();
    break;
  }
  if (t.hostShape.size() > static_cast<size_t>(kMaxRank)) {
    error(open, "tensor '" + t.name + "' has " +
                    std::to_string(t.hostShape.size()) +
                    " dims; at most " + std::to_string(kMaxRank) +
                    " are supported");
    return skipLine();
  }
  if (!want(peek().is('@'), "'@' and an address in sticks"))
    return;
  next();
  std::optional<int64_t> addr;
  if (peek().kind == Tok::Number)
    addr = parseInt(peek().text);
  if (!addr || *addr < 0) {
    error(peek(), "tensor address must be a non-negative number of sticks, "
                  "found " +
                      describe(peek()));
    return skipLine();
  }
  const Token &addrTok = next();
  t.address = static_cast<uint64_t>(*addr);
  t.deviceShape = deviceShapeOf(t.hostShape, t.dtype);
  t.sizeSticks = sticksOf(t.deviceShape);

  // Constant values, possibly over several lines.
  bool haveValues = false;
  std::vector<Token> values;
  if (peek().is('=')) {
    const Token &eq = next();
    haveValues = true;
    if (!want(peek().is('['), "'[' and the constant's values"))
      return;
    next();
    while (true) {
      while (peek().kind == Tok::Newline)
        next();
      if (peek().is(']') && values.empty()) {
        next();
        break;
      }
      Token v = peek();
      if (v.is('-') || v.is('+')) {
        next();
        if (peek().kind != Tok::Number && peek().kind != Tok::Ident) {
          error(peek(), "expected a number after '" + v.text + "', found " +
                            describe(peek()));
          return skipLine();
        }
        v.text += next().text;
      } else if (v.kind == Tok::Number || v.kind == Tok::Ident) {
        next();
      } else {
        error(v, "expected a constant value, found " + describe(v));
        return skipLine();
      }
      values.push_back(v);
      while (peek().kind == Tok::Newline)
        next();
      if (peek().is(',')) {
        next();
        continue;
      }
      if (peek().is(']')) {
        next();
        break;
      }
      error(peek(), "expected ',' or ']' in the constant's values, found " +
                        describe(peek()));
      return skipLine();
    }
    if (t.kind != TensorKind::Const) {
      error(eq, "only const tensors take values; '" + t.name + "' is " +
                    std::string(tensorKindName(t.kind)));
      return skipLine();
    }
  }
  if (!expectLineEnd("the tensor declaration"))
    return;

  bool ok = true;
  if (t.kind == TensorKind::Const && !haveValues) {
    error(d, "constant '" + t.name + "' needs values (= [...])");
    ok = false;
  }
  if (haveValues && values.size() != elements) {
    std::string shape;
    for (int64_t v : t.hostShape)
      shape += (shape.empty() ? "" : ", ") + std::to_string(v);
    error(d, "constant '" + t.name + "' has " + std::to_string(values.size()) +
                 " values; its shape [" + shape + "] needs " +
                 std::to_string(elements));
    ok = false;
  }
  if (ok && haveValues) {
    t.data.assign(t.sizeSticks * kStickBytes, 0);
    for (size_t i = 0; i < values.size(); ++i) {
      const Token &v = values[i];
      uint64_t off = deviceByteOffset(t.hostShape, t.dtype, i);
      uint8_t *dst = t.data.data() + off;
      if (t.dtype == DType::Dl16 || t.dtype == DType::Fp32) {
        bool outOfRange = false;
        std::optional<float> f = parseFloat(v.text, &outOfRange);
        if (outOfRange) {
          error(v, "'" + v.text + "' is not representable as FP32");
          ok = false;
          continue;
        }
        if (!f) {
          error(v, "'" + v.text + "' is not a number");
          ok = false;
          continue;
        }
        if (t.dtype == DType::Dl16) {
          dlf16::Flags flags;
          uint16_t code =
              dlf16::fromFloat(*f, dlf16::Overflow::ToSpecial, &flags);
          if (flags.overflow && std::isfinite(*f)) {
            error(v, "'" + v.text + "' is beyond the DL16 range (largest " +
                         formatFloat(dlf16::toFloat(dlf16::kMaxFinite)) +
                         ")");
            ok = false;
            continue;
          }
          dst[0] = static_cast<uint8_t>(code & 0xFF);
          dst[1] = static_cast<uint8_t>(code >> 8);
        } else {
          uint32_t bits = canonicalBits(*f);
          for (int b = 0; b < 4; ++b)
            dst[b] = static_cast<uint8_t>(bits >> (8 * b));
        }
        continue;
      }
      std::optional<int64_t> n = parseInt(v.text);
      int64_t lo = t.dtype == DType::Int8 ? -128 : INT32_MIN;
      int64_t hi = t.dtype == DType::Int8 ? 127 : INT32_MAX;
      if (!n || *n < lo || *n > hi) {
        error(v, "'" + v.text + "' is not an " +
                     std::string(dtypeName(t.dtype)) + " value (" +
                     std::to_string(lo) + ".." + std::to_string(hi) + ")");
        ok = false;
        continue;
      }
      uint32_t bits = static_cast<uint32_t>(*n);
      for (int b = 0; b < dtypeBytes(t.dtype); ++b)
        dst[b] = static_cast<uint8_t>(bits >> (8 * b));
    }
  }

  for (size_t i = 0; i < program_.tensors.size(); ++i) {
    const TensorDecl &o = program_.tensors[i];
    if (o.name == t.name) {
      error(name, "tensor '" + t.name + "' declared twice (first on line " +
                      std::to_string(tensorLoc_[i].line) + ")");
      return;
    }
  }
  auto range = [](const TensorDecl &x) {
    // The address is below 2^63 (the parser refuses more) and the size far
    // below, so the end fits in 64 unsigned bits but maybe not in signed.
    return "[" + hexTextUnsigned(x.address) + ", " +
           hexTextUnsigned(x.address + x.sizeSticks) + ")";
  };
  uint64_t memSticks =
      static_cast<uint64_t>(config_.memory.sizeBytes) / kStickBytes;
  if (t.address + t.sizeSticks > memSticks) {
    error(addrTok, "tensor '" + t.name + "' at sticks " + range(t) +
                       " lies beyond device memory (" +
                       hexTextUnsigned(memSticks) +
                       " sticks, memory.size_bytes = " +
                       std::to_string(config_.memory.sizeBytes) + ")");
    ok = false;
  }
  for (size_t i = 0; i < program_.tensors.size(); ++i) {
    const TensorDecl &o = program_.tensors[i];
    if (t.address < o.address + o.sizeSticks &&
        o.address < t.address + t.sizeSticks && !replacesInPlace(t, o)) {
      error(addrTok, "tensor '" + t.name + "' at sticks " + range(t) +
                         " overlaps tensor '" + o.name + "' at " + range(o) +
                         " (line " + std::to_string(tensorLoc_[i].line) + ")");
      ok = false;
      break;
    }
  }
  if (!ok)
    return;
  program_.tensors.push_back(std::move(t));
  tensorLoc_.push_back({d.line, d.col});
}

std::optional<Operand> Assembler::operand() {
  Operand op;
  if (peek().kind == Tok::Ident && peek(1).is('=')) {
    op.keyword = peek().text;
    op.kwCol = peek().col;
    next();
    next();
  }
  const Token &t = peek();
  op.line = t.line;
  op.col = t.col;
  if (op.kwCol == 0)
    op.kwCol = t.col;
  if (t.is('[')) {
    next();
    op.kind = Operand::Address;
    if (peek().kind != Tok::Ident) {
      error(peek(), "expected a base register in '[...]', found " +
                        describe(peek()));
      return std::nullopt;
    }
    op.reg = next().text;
    if (peek().is('+') || peek().is('-')) {
      std::string sign = next().text;
      if (peek().kind != Tok::Number) {
        error(peek(), "expected an offset after '" + sign + "', found " +
                          describe(peek()));
        return std::nullopt;
      }
      op.offset = sign + next().text;
    }
    if (!peek().is(']')) {
      error(peek(), "expected ']', found " + describe(peek()));
      return std::nullopt;
    }
    next();
    return op;
  }
  if (t.is('-') || t.is('+')) {
    std::string sign = next().text;
    if (peek().kind != Tok::Number && peek().kind != Tok::Ident) {
      error(peek(), "expected a number after '" + sign + "', found " +
                        describe(peek()));
      return std::nullopt;
    }
    op.kind = peek().kind == Tok::Number ? Operand::Number : Operand::Ident;
    op.text = sign + next().text;
    return op;
  }
  if (t.kind == Tok::Number || t.kind == Tok::Ident) {
    op.kind = t.kind == Tok::Number ? Operand::Number : Operand::Ident;
    op.text = next().text;
    return op;
  }
  error(t, "expected an operand, found " + describe(t));
  return std::nullopt;
}

bool Assembler::checkLimit(const InstrDesc &desc, const FieldDesc &f,
                           const Operand &op, int64_t v) {
  if (f.limit == Limit::None)
    return true;
  int64_t bound = limitBound(f.limit, config_);
  std::string what = fieldError(desc, f);
  switch (f.limit) {
  case Limit::None:
    return true;
  case Limit::LxSticks:
  case Limit::MemSticks: {
    int64_t mag = v < 0 ? -v : v;
    if (mag < bound)
      return true;
    error(op.line, op.col,
          what + " is out of range: offset " + hexText(v) +
              " (valid: |offset| < " + hexText(bound) + ", the " +
              (f.limit == Limit::LxSticks ? "LX" : "device memory") +
              " size in sticks)");
    return false;
  }
  case Limit::Cores:
    if (v == kCoreSelf || v < bound)
      return true;
    error(op.line, op.col,
          what + " is out of range: " + std::to_string(v) + " (valid: 0.." +
              std::to_string(bound - 1) + ", chip.cores = " +
              std::to_string(bound) + ")");
    return false;
  case Limit::SyncCounters:
    if (v < bound)
      return true;
    error(op.line, op.col,
          what + " is out of range: c" + std::to_string(v) + " (valid: c0..c" +
              std::to_string(bound - 1) + ", limits.sync_counters_per_core = " +
              std::to_string(bound) + ")");
    return false;
  case Limit::Barriers:
    if (v < bound)
      return true;
    error(op.line, op.col,
          what + " is out of range: " + std::to_string(v) + " (valid: 0.." +
              std::to_string(bound - 1) + ", limits.barriers = " +
              std::to_string(bound) + ")");
    return false;
  case Limit::LoopCount:
    if (v < bound)
      return true;
    error(op.line, op.col,
          what + " is out of range: " + std::to_string(v) + " (valid: 1.." +
              std::to_string(bound - 1) + ", limits.max_loop_count = " +
              std::to_string(bound - 1) + ")");
    return false;
  }
  return true;
}

bool Assembler::convert(const InstrDesc &desc, size_t field, const Operand &op,
                        Instr &instr, LoopFixup &fixup) {
  const FieldDesc &f = desc.fields[field];
  std::string what = fieldError(desc, f);
  std::string got =
      op.kind == Operand::Address ? "an address" : "'" + op.text + "'";
  auto kindError = [&](const std::string &expected) {
    error(op.line, op.col, what + " must be " + expected + ", got " + got);
    return false;
  };
  auto rangeCheck = [&](int64_t v) {
    std::string bad = checkFieldValue(f, v);
    if (bad.empty())
      return true;
    std::string shown = op.kind == Operand::Ident ? op.text : std::to_string(v);
    error(op.line, op.col,
          what + " is out of range: " + shown + " (valid: " +
              fieldRangeText(f) + ")");
    return false;
  };
  int64_t v = 0;
  switch (f.kind) {
  case FieldKind::Reg:
  case FieldKind::RegDst: {
    std::optional<int64_t> r;
    if (op.kind == Operand::Ident)
      r = prefixedNumber(op.text, 'r');
    if (!r)
      return kindError("a register (r0..r15)");
    if (*r >= kNumRegs) {
      error(op.line, op.col, "no register '" + op.text + "' (r0..r15)");
      return false;
    }
    if (f.kind == FieldKind::RegDst && *r == 0) {
      error(op.line, op.col,
            "r0 cannot be a destination (it always reads 0): " + what);
      return false;
    }
    v = *r;
    break;
  }
  case FieldKind::Int: {
    std::optional<int64_t> n;
    if (op.kind == Operand::Number)
      n = parseInt(op.text);
    if (!n) {
      if (op.kind == Operand::Number)
        return kindError("an integer in " + fieldRangeText(f));
      return kindError("an integer");
    }
    v = *n;
    if (!rangeCheck(v))
      return false;
    break;
  }
  case FieldKind::Float: {
    std::optional<float> x;
    bool outOfRange = false;
    if (op.kind != Operand::Address)
      x = parseFloat(op.text, &outOfRange);
    if (outOfRange) {
      error(op.line, op.col, what + " is out of range: " + op.text +
                                 " is not representable as FP32");
      return false;
    }
    if (!x)
      return kindError("an FP32 number");
    v = canonicalBits(*x);
    break;
  }
  case FieldKind::Enum: {
    auto it = op.kind == Operand::Ident
                  ? std::find(f.enumValues.begin(), f.enumValues.end(), op.text)
                  : f.enumValues.end();
    if (it == f.enumValues.end())
      return kindError("one of " + fieldRangeText(f));
    v = it - f.enumValues.begin();
    break;
  }
  case FieldKind::Counter: {
    std::optional<int64_t> c;
    if (op.kind == Operand::Ident)
      c = prefixedNumber(op.text, 'c');
    if (!c)
      return kindError("a sync counter (c0, c1, ...)");
    v = *c;
    if (!rangeCheck(v))
      return false;
    break;
  }
  case FieldKind::Core: {
    if (op.kind == Operand::Ident && op.text == "self" &&
        f.maxValue == kCoreSelf) {
      v = kCoreSelf;
      break;
    }
    std::optional<int64_t> n;
    if (op.kind == Operand::Number)
      n = parseInt(op.text);
    if (!n)
      return kindError(f.maxValue == kCoreSelf ? "a core number or self"
                                               : "a core number");
    v = *n;
    if (!rangeCheck(v))
      return false;
    if (v == kCoreSelf) {
      // The all-ones code means self; as a number it names no core.
      error(op.line, op.col,
            what + " is out of range: " + op.text + " (valid: 0.." +
                std::to_string(config_.chip.cores - 1) + " or self)");
      return false;
    }
    break;
  }
  case FieldKind::LoopEnd:
    if (op.kind != Operand::Ident)
      return kindError("a label");
    fixup.label = op.text;
    fixup.line = op.line;
    fixup.col = op.col;
    v = 1; // the body length is known once the label is
    break;
  case FieldKind::LxAddr:
  case FieldKind::MemAddr: {
    int64_t base = 0;
    std::optional<int64_t> off = int64_t(0);
    if (op.kind == Operand::Address) {
      std::optional<int64_t> r = prefixedNumber(op.reg, 'r');
      if (!r || *r >= kNumRegs) {
        error(op.line, op.col + 1,
              "expected a base register r0..r15 in '[...]', got '" + op.reg +
                  "'");
        return false;
      }
      base = *r;
      if (!op.offset.empty())
        off = parseInt(op.offset);
    } else if (op.kind == Operand::Number) {
      off = parseInt(op.text);
    } else {
      return kindError(std::string("an address ([rN+offset] or a number of "
                                   "sticks)"));
    }
    if (!off) {
      error(op.line, op.col, what + " has a malformed offset");
      return false;
    }
    v = *off;
    if (base == 0 && v < 0) {
      error(op.line, op.col,
            what + " is a negative address: " + hexText(v));
      return false;
    }
    if (!rangeCheck(v))
      return false;
    instr.base[field] = static_cast<uint8_t>(base);
    break;
  }
  }
  if (!checkLimit(desc, f, op, v))
    return false;
  instr.value[field] = v;
  return true;
}

void Assembler::instruction() {
  const Token &mn = next();
  const InstrDesc *desc = findInstr(mn.text);
  if (!desc) {
    error(mn, "unknown instruction '" + mn.text + "'");
    return skipLine();
  }
  if (current_ < 0) {
    error(mn, "instruction '" + mn.text +
                  "' outside a stream (open one with .core and .engine)");
    return skipLine();
  }
  StreamState &s = streams_[static_cast<size_t>(current_)];
  bool ok = true;
  if (!desc->runsOn(s.stream.engine)) {
    error(mn, "'" + mn.text + "' cannot run on " +
                  std::string(engineName(s.stream.engine)) + " (it runs on " +
                  engineSetName(desc->engines) + ")");
    ok = false;
  }

  // Collect operands.
  std::vector<Operand> ops;
  if (!atLineEnd()) {
    while (true) {
      std::optional<Operand> op = operand();
      if (!op)
        return skipLine();
      ops.push_back(std::move(*op));
      if (atLineEnd())
        break;
      if (!peek().is(',')) {
        error(peek(), "expected ',' between operands, found " +
                          describe(peek()));
        return skipLine();
      }
      next();
    }
  }

  // Match them to fields: positional in order, keywords by name.
  std::string syntaxNote = " (syntax: " + desc->syntax() + ")";
  std::array<const Operand *, kMaxFields> given{};
  size_t nextPositional = 0;
  auto positionalField = [&](size_t from) {
    for (size_t i = from; i < desc->fields.size(); ++i)
      if (desc->fields[i].form == FieldForm::Positional)
        return i;
    return desc->fields.size();
  };
  for (const Operand &op : ops) {
    if (op.keyword.empty()) {
      size_t f = positionalField(nextPositional);
      if (f >= desc->fields.size()) {
        error(op.line, op.col,
              "too many positional operands for '" + mn.text +
                  "'; write optional operands as name=value" + syntaxNote);
        return skipLine();
      }
      given[f] = &op;
      nextPositional = f + 1;
      continue;
    }
    int f = desc->fieldIndex(op.keyword);
    if (f < 0) {
      error(op.line, op.kwCol,
            "'" + mn.text + "' has no operand '" + op.keyword + "'" +
                syntaxNote);
      ok = false;
      continue;
    }
    if (desc->fields[static_cast<size_t>(f)].form == FieldForm::Positional) {
      error(op.line, op.kwCol,
            "operand '" + op.keyword + "' of '" + mn.text +
                "' is positional; write it without 'name='" + syntaxNote);
      ok = false;
      continue;
    }
    if (given[static_cast<size_t>(f)]) {
      error(op.line, op.kwCol,
            "operand '" + op.keyword + "' given twice");
      ok = false;
      continue;
    }
    given[static_cast<size_t>(f)] = &op;
  }

  Instr instr;
  instr.opcode = desc->opcode;
  LoopFixup fixup;
  for (size_t i = 0; i < desc->fields.size(); ++i) {
    const FieldDesc &f = desc->fields[i];
    if (given[i]) {
      if (!convert(*desc, i, *given[i], instr, fixup))
        ok = false;
      continue;
    }
    if (f.form == FieldForm::Optional)
      continue;
    std::string name(f.name);
    if (f.form == FieldForm::Keyword)
      name += "=";
    error(mn.line, mn.col,
          "'" + mn.text + "' is missing operand '" + name + "'" + syntaxNote);
    ok = false;
  }
  if (!ok)
    return;
  // Defaults: constants first, then those derived from other fields.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < desc->fields.size(); ++i) {
      const FieldDesc &f = desc->fields[i];
      if (given[i] || f.form != FieldForm::Optional)
        continue;
      if ((f.defaultRule == DefaultRule::Const) != (pass == 0))
        continue;
      instr.value[i] = defaultValueOf(*desc, i, instr.value.data());
    }
  if (!fixup.label.empty()) {
    fixup.instr = s.stream.code.size();
    s.loops.push_back(fixup);
  }
  s.stream.code.push_back(instr);
  s.stream.provenance.push_back(s.currentOp);
  s.instrLoc.emplace_back(mn.line, mn.col);
}

void Assembler::finishStream() {
  if (current_ < 0)
    return;
  StreamState &s = streams_[static_cast<size_t>(current_)];
  current_ = -1;
  // A duplicate stream was reported where it was opened; its body was only
  // parsed to find errors of its own.
  if (s.discard)
    return;
  std::vector<Instr> &code = s.stream.code;
  std::string name = s.stream.name();
  if (code.empty()) {
    error(s.line, s.col,
          "stream " + name + " is empty; it must end with 'halt'");
    return;
  }
  if (code.back().opcode != Opcode::Halt)
    error(s.instrLoc.back().first, s.instrLoc.back().second,
          "stream " + name + " does not end with 'halt'");

  bool resolved = true;
  for (const LoopFixup &l : s.loops) {
    auto it = s.labels.find(l.label);
    if (it == s.labels.end()) {
      error(l.line, l.col, "undefined label '" + l.label + "'");
      resolved = false;
      continue;
    }
    size_t end = it->second.index;
    if (end <= l.instr) {
      error(l.line, l.col,
            "loop end label '" + l.label + "' must come after the loop");
      resolved = false;
      continue;
    }
    if (end == l.instr + 1) {
      error(l.line, l.col,
            "loop body is empty: label '" + l.label +
                "' directly follows the loop");
      resolved = false;
      continue;
    }
    if (end >= code.size()) {
      error(l.line, l.col,
            "loop body includes the stream's final 'halt'; put label '" +
                l.label + "' before it");
      resolved = false;
      continue;
    }
    int64_t body = static_cast<int64_t>(end - l.instr - 1);
    const FieldDesc &bodyField = instrDesc(Opcode::Loop).fields[1];
    if (body > bodyField.maxValue) {
      error(l.line, l.col,
            "loop body of " + std::to_string(body) +
                " instructions is longer than " +
                std::to_string(bodyField.maxValue));
      resolved = false;
      continue;
    }
    code[l.instr].value[1] = body;
  }
  if (!resolved)
    return;

  // Nesting: walk the loops in order with the stack of enclosing ends.
  struct Open {
    size_t end;
    int line;
  };
  std::vector<Open> open;
  for (const LoopFixup &l : s.loops) {
    while (!open.empty() && open.back().end <= l.instr)
      open.pop_back();
    size_t end = l.instr + 1 + static_cast<size_t>(code[l.instr].value[1]);
    if (!open.empty() && end > open.back().end) {
      error(l.line, l.col,
            "loop body ends after the end of the enclosing loop on line " +
                std::to_string(open.back().line));
      return;
    }
    open.push_back({end, s.instrLoc[l.instr].first});
    if (static_cast<int>(open.size()) > config_.limits.maxLoopDepth) {
      const auto &[line, col] = s.instrLoc[l.instr];
      error(line, col,
            "loops nested " + std::to_string(open.size()) +
                " deep; limits.max_loop_depth = " +
                std::to_string(config_.limits.maxLoopDepth));
      return;
    }
  }
}

} // namespace

Program assemble(std::string_view text, const std::string &fileName,
                 const hw::HwConfig &config, DiagnosticEngine &diags) {
  Assembler a(text, fileName, config, diags);
  return a.run();
}

} // namespace spyre::isa
