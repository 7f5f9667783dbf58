// The assembler's parser, internal to isa/ (isa/Assembler.h is the
// interface): the tokens, the statement state and the Assembler class whose
// members are defined by job in AsmLexer.cpp (tokens and diagnostics),
// AsmDirectives.cpp (directives), AsmInstructions.cpp (instructions and
// their operands) and Assembler.cpp (statements and streams).
#pragma once

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/InstrTable.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace spyre::isa::asm_detail {

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

bool identStart(char c);
bool identChar(char c);
bool digit(char c);
std::string describe(const Token &t);
/// Parses an integer literal: optional sign, decimal or 0x hex.
std::optional<int64_t> parseInt(std::string_view s);
/// Parses an FP32 literal: decimal (with exponent), inf, nan, with a sign.
/// A decimal beyond the FP32 range sets `outOfRange`.
std::optional<float> parseFloat(std::string_view s, bool *outOfRange = nullptr);
/// `rN` / `cN` with N a small decimal number, else nullopt.
std::optional<int64_t> prefixedNumber(const std::string &s, char prefix);
/// FP32 bits of a parsed value; every NaN becomes the quiet NaN of its sign.
uint32_t canonicalBits(float v);

/// An operand as written, before it is matched to a field.
struct Operand {
  enum Kind { Ident, Number, Address } kind = Number;
  std::string keyword; ///< `name` of `name=value`, empty when positional
  std::string text;    ///< identifier, or number with its sign
  std::string reg;     ///< Address: base register text
  std::string offset;  ///< Address: offset with its sign, empty for none
  int line = 0;
  int col = 0;   ///< start of the value
  int kwCol = 0; ///< start of the keyword
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

} // namespace spyre::isa::asm_detail
