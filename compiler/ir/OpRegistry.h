// The op registry: every op kind of the graph IR described once.
//
// A row (OpDef) gives the op's name, its operands (named; trailing ones may
// be optional, the last may be variadic), the element types it accepts, its
// attribute schema (name, type, default, allowed values), a shape and type
// inference function, an optional verifier hook for attribute values, and the
// text of docs/ir.md (summary, result rule, semantics). The JSON loader, the
// IR parser, the verifier, the builder and the reference documentation all
// go through `checkOp` and the table; none of them has per-op code except the
// reference evaluator, which computes what the semantics text says.
#pragma once

#include "compiler/ir/Attribute.h"
#include "compiler/ir/InferContext.h"
#include "compiler/ir/Types.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

enum class OpKind : uint8_t {
#define SPYRE_OP(Enum, name) Enum,
#include "compiler/ir/OpKinds.def"
#undef SPYRE_OP
};

constexpr int kNumOpKinds = 0
#define SPYRE_OP(Enum, name) +1
#include "compiler/ir/OpKinds.def"
#undef SPYRE_OP
    ;

/// The value types an op attribute may have.
enum class AttrType : uint8_t { Int, Float, Bool, String, IntList, FloatList };

/// `int`, `float`, `bool`, `string`, `int list`, `float list`.
std::string_view attrTypeName(AttrType type);
/// Whether `value` has type `type` (an int does not count as a float here;
/// readers convert ints to floats where the schema asks for a float).
bool attrHasType(const Attribute &value, AttrType type);

struct AttrSpec {
  std::string_view name;
  AttrType type = AttrType::Int;
  /// The value when the attribute is omitted; nullopt makes it required.
  std::optional<Attribute> defaultValue;
  /// For strings: the permitted values (empty: any string).
  std::vector<std::string_view> allowed;
  std::string_view description;

  bool required() const { return !defaultValue.has_value(); }
};

enum class OperandArity : uint8_t {
  Required,
  Optional, ///< may be omitted, together with every operand after it
  Variadic, ///< one or more; only the last operand
};

struct OperandSpec {
  std::string_view name;
  OperandArity arity = OperandArity::Required;
  std::string_view description;
  /// The element types this operand may have when it is not the op's shared
  /// type (embedding's i32 ids); 0: the shared type (OpDef::types).
  ElementTypeSet ownTypes = 0;
};

struct OpDef {
  OpKind kind{};
  std::string_view name;
  std::string_view summary;
  std::vector<OperandSpec> operands;
  /// Element types the operands may have; all operands share one type
  /// (but an operand with its own types) and the results have it too (but
  /// with a resultType).
  ElementTypeSet types = kFloatTypes;
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  VerifyFn verify = nullptr;
  /// Result shapes in words, for docs/ir.md.
  std::string_view resultRule;
  /// What the op computes, precisely enough to implement it.
  std::string_view semantics;
  /// The results' element type when it is not the operands' (argmax's
  /// i32 ids).
  std::optional<ElementType> resultType;

  size_t minOperands() const;
  /// Largest operand count, or SIZE_MAX for a variadic op.
  size_t maxOperands() const;
  const AttrSpec *findAttr(std::string_view attrName) const;
  /// Name of the operand at `index` (the variadic one repeats).
  std::string_view operandName(size_t index) const;
  /// `linear(x, weight, [bias])`, `concat(inputs...)`.
  std::string signature() const;
};

/// Every op kind, in OpKind order.
std::span<const OpDef> opTable();
/// Rows of the table kept in files of their own: embedding and argmax, the
/// ops that take token ids in or give them out (TokenOps.cpp).
OpDef embeddingOpDef();
OpDef argmaxOpDef();
const OpDef &opDef(OpKind kind);
/// The row named `name`, or nullptr.
const OpDef *findOpDef(std::string_view name);
std::string_view opKindName(OpKind kind);

/// Completes `attrs` against the schema: fills in defaults and converts int
/// values to floats where the schema asks for a float (or float list).
/// Reports unknown attributes, missing required ones and wrong types
/// (Target::Attr); returns false when there was any.
bool completeAttrs(const OpDef &def, AttrDict &attrs,
                   std::vector<OpIssue> &issues);

/// Checks an op fully and infers its result types: operand count, attributes
/// (complete and well typed, as completeAttrs leaves them), the verifier
/// hook, element types, then shapes. Returns the result types, or nullopt
/// with the problems in `issues`.
std::optional<std::vector<TensorType>>
checkOp(const OpDef &def, std::span<const TensorType> operandTypes,
        const AttrDict &attrs, std::vector<OpIssue> &issues);

} // namespace spyre::compiler
