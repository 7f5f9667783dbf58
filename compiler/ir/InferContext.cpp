// The InferContext getters and reports (InferContext.h). describeOperand,
// which names an operand as the op's row does, is in OpRegistry.cpp.
#include "compiler/ir/InferContext.h"

namespace spyre::compiler {

int64_t InferContext::intAttr(std::string_view name) const {
  return attrs_.get(name).asInt();
}

double InferContext::floatAttr(std::string_view name) const {
  return attrs_.get(name).asFloat();
}

bool InferContext::boolAttr(std::string_view name) const {
  return attrs_.get(name).asBool();
}

const std::string &InferContext::stringAttr(std::string_view name) const {
  return attrs_.get(name).asString();
}

std::vector<int64_t> InferContext::intsAttr(std::string_view name) const {
  return attrs_.get(name).asInts();
}

bool InferContext::opError(std::string message) {
  issues_.push_back({OpIssue::Target::Op, -1, "", std::move(message)});
  return false;
}

bool InferContext::operandError(size_t index, std::string message) {
  issues_.push_back(
      {OpIssue::Target::Operand, static_cast<int>(index), "", std::move(message)});
  return false;
}

bool InferContext::attrError(std::string_view name, std::string message) {
  issues_.push_back(
      {OpIssue::Target::Attr, -1, std::string(name), std::move(message)});
  return false;
}

} // namespace spyre::compiler
