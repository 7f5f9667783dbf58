#include "compiler/ir/IrDoc.h"

#include "compiler/ir/OpRegistry.h"

#include <algorithm>
#include <map>

namespace spyre::compiler {

namespace {

std::string operandList(const OpDef &def) {
  std::string out;
  for (size_t i = 0; i < def.operands.size(); ++i) {
    const OperandSpec &o = def.operands[i];
    out += (i ? ", " : "") + std::string(o.name);
    if (o.arity == OperandArity::Optional)
      out += "?";
    else if (o.arity == OperandArity::Variadic)
      out += "...";
  }
  return out;
}

std::string attrList(const OpDef &def) {
  if (def.attrs.empty())
    return "-";
  std::string out;
  for (size_t i = 0; i < def.attrs.size(); ++i)
    out += (i ? ", " : "") + std::string(def.attrs[i].name);
  return out;
}

std::string typeList(ElementTypeSet set) {
  std::string out;
  for (int i = 0; i < kNumElementTypes; ++i) {
    auto t = static_cast<ElementType>(i);
    if (set & elementTypeBit(t))
      out += (out.empty() ? "" : ", ") + std::string(elementTypeName(t));
  }
  return out;
}

/// A sample line of IR for the op, with default attribute values shown.
std::string form(const OpDef &def) {
  std::string out = "%y = " + std::string(def.name) + " @name(";
  for (size_t i = 0; i < def.operands.size(); ++i) {
    const OperandSpec &o = def.operands[i];
    out += (i ? ", " : "") + std::string("%") + std::string(o.name);
    if (o.arity == OperandArity::Variadic)
      out += ", ...";
  }
  out += ")";
  if (!def.attrs.empty()) {
    // Sorted by name, as the printer writes them; a required attribute shows
    // its type in angle brackets.
    std::map<std::string, std::string> shown;
    for (const AttrSpec &a : def.attrs)
      shown[std::string(a.name)] =
          a.defaultValue ? a.defaultValue->str()
                         : "<" + std::string(attrTypeName(a.type)) + ">";
    std::string text;
    for (const auto &[name, value] : shown)
      text += (text.empty() ? "" : ", ") + name + " = " + value;
    out += " {" + text + "}";
  }
  return out + " : ...";
}

} // namespace

std::string opReferenceMarkdown() {
  std::string out;
  out += "| op | operands | attributes | element types | summary |\n";
  out += "|---|---|---|---|---|\n";
  for (const OpDef &def : opTable())
    out += "| [`" + std::string(def.name) + "`](#" + std::string(def.name) +
           ") | " + operandList(def) + " | " + attrList(def) + " | " +
           typeList(def.types) + " | " + std::string(def.summary) + " |\n";
  for (const OpDef &def : opTable()) {
    out += "\n### " + std::string(def.name) + "\n\n";
    out += std::string(def.summary) + ".\n\n";
    out += "- Form: `" + form(def) + "`\n";
    out += "- Operands:\n";
    for (const OperandSpec &o : def.operands) {
      std::string arity = o.arity == OperandArity::Optional   ? " (optional)"
                          : o.arity == OperandArity::Variadic ? " (one or more)"
                                                              : "";
      const std::string own =
          o.ownTypes != 0 ? " (" + typeList(o.ownTypes) + ")" : "";
      out += "  - `" + std::string(o.name) + "`" + arity + own + ": " +
             std::string(o.description) + "\n";
    }
    if (def.attrs.empty()) {
      out += "- Attributes: none\n";
    } else {
      out += "- Attributes:\n";
      for (const AttrSpec &a : def.attrs) {
        out += "  - `" + std::string(a.name) + "` (" +
               std::string(attrTypeName(a.type)) +
               (a.defaultValue ? ", default `" + a.defaultValue->str() + "`"
                               : ", required") +
               "): " + std::string(a.description);
        if (!a.allowed.empty()) {
          out += "; one of";
          for (size_t i = 0; i < a.allowed.size(); ++i)
            out += std::string(i ? "," : "") + " `\"" + std::string(a.allowed[i]) +
                   "\"`";
        }
        out += "\n";
      }
    }
    const bool ownOperand =
        std::any_of(def.operands.begin(), def.operands.end(),
                    [](const OperandSpec &o) { return o.ownTypes != 0; });
    out += "- Element types: " + typeList(def.types) +
           (ownOperand ? " (the operands without types of their own alike"
                       : " (all operands alike") +
           (def.resultType ? "; the results are " +
                                 std::string(elementTypeName(*def.resultType)) +
                                 ")\n"
                           : "; the results have it too)\n");
    out += "- Result: " + std::string(def.resultRule) + "\n";
    out += "- Semantics: " + std::string(def.semantics) + "\n";
  }
  return out;
}

std::optional<std::string> updateOpReference(const std::string &doc) {
  std::string begin = std::string(kOpReferenceBegin) + "\n";
  std::string end = std::string(kOpReferenceEnd) + "\n";
  size_t b = doc.find(begin);
  size_t e = doc.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b + begin.size())
    return std::nullopt;
  return doc.substr(0, b + begin.size()) + "\n" + opReferenceMarkdown() + "\n" +
         doc.substr(e);
}

} // namespace spyre::compiler
