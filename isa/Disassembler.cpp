// The disassembler. All operand text comes from formatInstr (Instr.cpp), so
// the disassembler knows nothing about individual instructions; it adds the
// program structure around them: tensors, streams, labels and source ops.
#include "isa/Disassembler.h"

#include "numerics/Dlf16.h"

#include <bit>
#include <cctype>
#include <map>

namespace spyre::isa {

namespace {

constexpr size_t kValuesPerLine = 16;
constexpr size_t kMnemonicWidth = 7;

bool isPlainName(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'))
      return false;
  return true;
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\t') {
      out += "\\t";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

uint64_t loadLe(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

/// A constant element as assembly writes it, from its device bytes.
std::string elementText(DType dtype, const uint8_t *p) {
  switch (dtype) {
  case DType::Dl16:
    return formatFloat(dlf16::toFloat(static_cast<uint16_t>(loadLe(p, 2))));
  case DType::Fp32:
    return formatFloat(std::bit_cast<float>(static_cast<uint32_t>(loadLe(p, 4))));
  case DType::Int8:
    return std::to_string(static_cast<int8_t>(p[0]));
  case DType::Int32:
    return std::to_string(static_cast<int32_t>(loadLe(p, 4)));
  }
  return "?";
}

void writeTensor(std::string &out, const TensorDecl &t) {
  out += ".tensor " + std::string(tensorKindName(t.kind)) + " " +
         (isPlainName(t.name) ? t.name : quoted(t.name)) + " " +
         std::string(dtypeName(t.dtype)) + " [";
  for (size_t i = 0; i < t.hostShape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(t.hostShape[i]);
  out += "] @ " + hexText(static_cast<int64_t>(t.address));
  if (t.kind != TensorKind::Const) {
    out += "\n";
    return;
  }
  out += " = [";
  uint64_t n = elementCount(t.hostShape);
  for (uint64_t i = 0; i < n; ++i) {
    out += i % kValuesPerLine == 0 ? "\n    " : " ";
    out += elementText(t.dtype,
                       t.data.data() + deviceByteOffset(t.hostShape, t.dtype, i));
    if (i + 1 < n)
      out += ",";
  }
  out += "\n]\n";
}

void writeStream(std::string &out, const Program &p, const Stream &s) {
  // Label names: one per distinct loop end, numbered in address order.
  std::map<size_t, std::string> labels;
  for (size_t i = 0; i < s.code.size(); ++i)
    if (s.code[i].opcode == Opcode::Loop)
      labels[i + 1 + static_cast<size_t>(s.code[i].value[1])];
  int next = 0;
  for (auto &[index, name] : labels)
    name = "L" + std::to_string(next++);

  out += ".engine " + engineUnitName(s.engine, s.unit) + "\n";
  const std::string *op = nullptr;
  for (size_t i = 0; i < s.code.size(); ++i) {
    auto label = labels.find(i);
    if (label != labels.end())
      out += label->second + ":\n";
    const std::string *prov = p.provenanceOf(s, i);
    if (prov != op && !(prov && op && *prov == *op)) {
      out += prov ? ".op " + quoted(*prov) + "\n" : ".op\n";
      op = prov;
    }
    size_t loopEnd = i + 1;
    std::string text = formatInstr(s.code[i], [&](int64_t body) {
      return labels[loopEnd + static_cast<size_t>(body)];
    });
    // Pad the mnemonic so operands line up.
    size_t space = text.find(' ');
    if (space != std::string::npos && space < kMnemonicWidth)
      text.insert(space, kMnemonicWidth - space, ' ');
    out += "    " + text + "\n";
  }
}

} // namespace

std::string disassemble(const Program &program) {
  std::string out;
  if (!program.name.empty())
    out += ".program " + quoted(program.name) + "\n";
  if (!program.tensors.empty() && !out.empty())
    out += "\n";
  for (const TensorDecl &t : program.tensors)
    writeTensor(out, t);
  if (!program.hostOps.empty())
    out += "\n";
  for (const HostOpDecl &h : program.hostOps) {
    out += ".host " + quoted(h.name) + " " + quoted(h.opType) + " " +
           quoted(h.attrs) + " in";
    for (uint32_t t : h.inputs)
      out += " " + quoted(program.tensors[t].name);
    out += " out";
    for (uint32_t t : h.outputs)
      out += " " + quoted(program.tensors[t].name);
    out += " flops " + std::to_string(h.flops) + "\n";
  }
  int core = -1;
  for (const Stream &s : program.streams) {
    if (!out.empty())
      out += "\n";
    if (s.core != core) {
      out += ".core " + std::to_string(s.core) + "\n";
      core = s.core;
    }
    writeStream(out, program, s);
  }
  return out;
}

} // namespace spyre::isa
