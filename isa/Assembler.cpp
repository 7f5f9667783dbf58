// The assembler. A lexer turns the text into tokens with line and column; a
// statement parser handles labels, directives and instructions. Instruction
// operands are matched to the table's fields by the field kinds alone, so
// adding an instruction to the table needs no change here. Errors are
// collected (each with the source line and a caret) and parsing resumes at
// the next line.
#include "isa/Assembler.h"
#include "isa/AssemblerParser.h"

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

namespace asm_detail {

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

} // namespace asm_detail

Program assemble(std::string_view text, const std::string &fileName,
                 const hw::HwConfig &config, DiagnosticEngine &diags) {
  asm_detail::Assembler a(text, fileName, config, diags);
  return a.run();
}

} // namespace spyre::isa
