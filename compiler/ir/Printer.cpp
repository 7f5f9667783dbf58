#include "compiler/ir/Printer.h"

#include "numerics/Half.h"
#include "support/Hash.h"

#include <bit>
#include <charconv>
#include <cstring>

namespace spyre::compiler {

namespace {

std::string annotationsText(const AttrDict &annotations) {
  return annotations.empty() ? "" : " #" + annotations.str();
}

/// The text of element `i` and whether it reads back as the same bits.
std::pair<std::string, bool> elementText(const ConstantData &data, int64_t i) {
  const char *p = data.bytes().data() + i * elementTypeBytes(data.type().elementType);
  switch (data.type().elementType) {
  case ElementType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    std::string text = formatFloat(f);
    float back = 0;
    std::from_chars(text.data(), text.data() + text.size(), back);
    return {text, std::bit_cast<uint32_t>(back) == std::bit_cast<uint32_t>(f)};
  }
  case ElementType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    std::string text = formatFloat(half::halfToFloat(h));
    float back = 0;
    std::from_chars(text.data(), text.data() + text.size(), back);
    return {text, half::floatToHalf(back) == h};
  }
  case ElementType::I8:
  case ElementType::I32:
    return {std::to_string(static_cast<int64_t>(data.element(i))), true};
  }
  SPYRE_UNREACHABLE("bad element type");
}

} // namespace

std::string printConstantData(const ConstantData &data,
                              const PrintOptions &options) {
  int64_t n = data.type().elementCount();
  if (n <= options.inlineConstantLimit) {
    std::string values;
    bool exact = true;
    for (int64_t i = 0; i < n && exact; ++i) {
      auto [text, roundTrips] = elementText(data, i);
      exact = roundTrips;
      values += (i ? ", " : "") + text;
    }
    if (exact)
      return "dense<[" + values + "]>";
  }
  return "data<0x" + toHex(data.digest(), 16) + ">";
}

std::string printOp(const Op &op) {
  std::string out;
  std::vector<Value *> results = op.results();
  for (size_t i = 0; i < results.size(); ++i)
    out += (i ? ", " : "") + printName('%', results[i]->name());
  out += " = " + std::string(op.kindName()) + " " + printName('@', op.name()) +
         "(";
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const Value *v = op.operand(i);
    out += (i ? ", " : "") + (v ? printName('%', v->name()) : "<<null>>");
  }
  out += ")";
  if (!op.attrs().empty())
    out += " " + op.attrs().str();
  out += annotationsText(op.annotations());
  out += " :";
  for (size_t i = 0; i < results.size(); ++i)
    out += std::string(i ? ", " : " ") + results[i]->type().str() +
           annotationsText(results[i]->annotations());
  return out;
}

std::string printGraph(const Graph &graph, const PrintOptions &options) {
  std::string out = "graph " + printName('@', graph.name()) +
                    annotationsText(graph.annotations()) + " {\n";
  for (const Value *v : graph.inputs())
    out += "  input " + printName('%', v->name()) + " : " + v->type().str() +
           annotationsText(v->annotations()) + "\n";
  for (const Value *v : graph.constants())
    out += "  const " + printName('%', v->name()) + " : " + v->type().str() +
           " = " +
           (v->constantDataPtr() ? printConstantData(v->constantData(), options)
                                 : "<<no data>>") +
           annotationsText(v->annotations()) + "\n";
  for (const Op *op : graph.ops())
    out += "  " + printOp(*op) + "\n";
  out += "  return";
  const std::vector<Value *> &outputs = graph.outputs();
  for (size_t i = 0; i < outputs.size(); ++i)
    out += std::string(i ? ", " : " ") +
           (outputs[i] ? printName('%', outputs[i]->name()) : "<<null>>");
  return out + "\n}\n";
}

} // namespace spyre::compiler
