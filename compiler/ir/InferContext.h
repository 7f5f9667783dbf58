// What an op's inference and verifier hooks see (InferContext) and how they
// report (OpIssue). The hooks themselves are ShapeInference.h; the table
// that names them, OpRegistry.h. This header sits below both, so the table
// and the hooks do not include each other.
#pragma once

#include "compiler/ir/Attribute.h"
#include "compiler/ir/Types.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

/// What is wrong with an op, and where: the whole op, one operand, one
/// attribute or one result. Readers turn the target into a location (a JSON
/// path, a line and column), the verifier into words.
struct OpIssue {
  enum class Target : uint8_t { Op, Operand, Attr, Result };
  Target target = Target::Op;
  int index = -1;   ///< operand or result index
  std::string attr; ///< attribute name
  std::string message;
};

struct OpDef;

/// What inference and verifier hooks see: the operand types, the attributes
/// (complete and of the schema's types, so the getters cannot fail), and
/// where to put result types and problems.
class InferContext {
public:
  InferContext(const OpDef &def, std::span<const TensorType> operands,
               const AttrDict &attrs, std::vector<TensorType> &results,
               std::vector<OpIssue> &issues)
      : def_(def), operands_(operands), attrs_(attrs), results_(results),
        issues_(issues) {}

  const OpDef &def() const { return def_; }
  size_t numOperands() const { return operands_.size(); }
  const TensorType &operand(size_t i) const { return operands_[i]; }
  ElementType elementType() const { return operands_[0].elementType; }

  int64_t intAttr(std::string_view name) const;
  double floatAttr(std::string_view name) const;
  bool boolAttr(std::string_view name) const;
  const std::string &stringAttr(std::string_view name) const;
  std::vector<int64_t> intsAttr(std::string_view name) const;

  void addResult(TensorType type) { results_.push_back(std::move(type)); }
  /// Report a problem; each returns false so a hook can `return c.xxx(...)`.
  bool opError(std::string message);
  bool operandError(size_t index, std::string message);
  bool attrError(std::string_view name, std::string message);

  /// `weight f32[3, 5]`: an operand as messages name it.
  std::string describeOperand(size_t index) const;

private:
  const OpDef &def_;
  std::span<const TensorType> operands_;
  const AttrDict &attrs_;
  std::vector<TensorType> &results_;
  std::vector<OpIssue> &issues_;
};

/// Infers result types (adding them in order); reports problems and returns
/// false when the operands or attributes do not fit.
using InferFn = bool (*)(InferContext &c);
/// Checks attribute values that the schema's types cannot express (a
/// positive epsilon, a finite exponent); returns false after reporting.
using VerifyFn = bool (*)(InferContext &c);

} // namespace spyre::compiler
