// The assembler's instructions: operands matched to the table's fields by
// the field kinds alone, converted and checked against the config's limits
// (AssemblerParser.h).
#include "isa/AssemblerParser.h"

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
namespace spyre::isa::asm_detail {

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
      error(peek(),
            "expected a base register in '[...]', found " + describe(peek()));
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
              std::to_string(bound - 1) +
              ", chip.cores = " + std::to_string(bound) + ")");
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
              std::to_string(bound - 1) +
              ", limits.barriers = " + std::to_string(bound) + ")");
    return false;
  case Limit::LoopCount:
    if (v < bound)
      return true;
    error(op.line, op.col,
          what + " is out of range: " + std::to_string(v) + " (valid: 1.." +
              std::to_string(bound - 1) +
              ", limits.max_loop_count = " + std::to_string(bound - 1) + ")");
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
          what + " is out of range: " + shown +
              " (valid: " + fieldRangeText(f) + ")");
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
      error(op.line, op.col,
            what + " is out of range: " + op.text +
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
      error(op.line, op.col, what + " is a negative address: " + hexText(v));
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
        error(peek(),
              "expected ',' between operands, found " + describe(peek()));
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
      error(op.line, op.kwCol, "operand '" + op.keyword + "' given twice");
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

} // namespace spyre::isa::asm_detail
