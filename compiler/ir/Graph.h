// The graph IR: named tensor values and the ops that compute them.
//
// A Graph owns its Values and Ops. A Value is a graph input, a constant
// (with its data), or one result of exactly one Op. Ops are held in a list
// that the verifier requires to be topological: every operand is defined
// before the op that uses it. Values and ops have unique names (two
// separate namespaces) that the printer, the JSON files and the diagnostics
// use; pointers to them stay valid until they are erased.
//
// Besides its schema'd attributes (OpRegistry.h) every op, value and the
// graph itself carries an `annotations` dictionary where passes record
// structured decisions (a layout, a core split); the printer and parser
// handle annotations generically and the op schema does not check them.
//
// Nothing here iterates a hash or pointer-keyed container: every order
// (inputs, constants, ops, outputs, attributes) is an order of the IR.
#pragma once

#include "compiler/ir/Attribute.h"
#include "compiler/ir/OpRegistry.h"
#include "compiler/ir/Types.h"
#include "support/Diagnostic.h"
#include "support/Npy.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

class Graph;
class Op;

enum class ValueKind : uint8_t { Input, Constant, OpResult };

/// One use of a value: operand `operandIndex` of `op`.
struct OpUse {
  Op *op = nullptr;
  size_t operandIndex = 0;
};

/// The immutable data of a constant: `type.elementCount()` little-endian
/// elements in row-major order. Shared (never copied) between a graph and
/// its clones. Deferred data is read when first asked for (weights in an
/// ONNX external data file, which a timing-only compile never reads).
class ConstantData {
public:
  /// `bytes` must hold exactly type.byteSize() bytes.
  ConstantData(TensorType type, std::string bytes);
  /// Deferred: `load` gives the type.byteSize() bytes when first needed (or
  /// throws a UserError); `source` says where they lie and stands for them
  /// in the digest.
  ConstantData(TensorType type, std::string source,
               std::function<std::string()> load);
  ConstantData(const ConstantData &) = delete;
  ConstantData &operator=(const ConstantData &) = delete;

  /// A deferred constant (the constructor above).
  static std::shared_ptr<const ConstantData>
  deferred(TensorType type, std::string source,
           std::function<std::string()> load);

  static std::shared_ptr<const ConstantData> create(TensorType type,
                                                    std::string bytes);
  /// The array's dtype and shape become the type.
  static std::shared_ptr<const ConstantData> fromNpy(const NpyArray &array);
  /// Float or integer values converted to `type` (f32/f16 round to nearest
  /// even; integer types take values that are already integers in range).
  static std::shared_ptr<const ConstantData>
  fromDoubles(const TensorType &type, const std::vector<double> &values);

  const TensorType &type() const { return type_; }
  /// The bytes (read first for a deferred constant).
  const std::string &bytes() const;
  /// Whether the bytes are in memory: false for deferred data not yet read.
  bool loaded() const;
  /// FNV-1a 64 over the type text and the bytes (for deferred data, its
  /// source instead of the bytes): how printed IR names the data without
  /// printing it.
  uint64_t digest() const { return digest_; }
  /// Element `index` (row-major) as a double; exact for every element type.
  double element(int64_t index) const;
  std::vector<double> toDoubles() const;
  NpyArray toNpy() const;

private:
  TensorType type_;
  mutable std::string bytes_;
  uint64_t digest_ = 0;
  std::function<std::string()> load_;
  mutable std::once_flag loadOnce_;
  mutable std::atomic<bool> loaded_{true};
};

using ConstantDataPtr = std::shared_ptr<const ConstantData>;

class Value {
  struct Private {
    explicit Private() = default;
  };

public:
  Value(Private, std::string name, TensorType type, ValueKind kind);
  Value(const Value &) = delete;
  Value &operator=(const Value &) = delete;

  const std::string &name() const { return name_; }
  const TensorType &type() const { return type_; }
  /// Changes the type. An op result must keep the type inference gives (the
  /// verifier checks); a constant's type is its data's.
  void setType(TensorType type) { type_ = std::move(type); }
  ValueKind kind() const { return kind_; }
  bool isInput() const { return kind_ == ValueKind::Input; }
  bool isConstant() const { return kind_ == ValueKind::Constant; }
  bool isOpResult() const { return kind_ == ValueKind::OpResult; }

  /// The op this value is a result of; nullptr for inputs and constants.
  Op *definingOp() const { return definingOp_; }
  /// Position among the defining op's results.
  size_t resultIndex() const { return resultIndex_; }
  /// The data of a constant (asserts that this is one).
  const ConstantData &constantData() const;
  const ConstantDataPtr &constantDataPtr() const { return data_; }

  AttrDict &annotations() { return annotations_; }
  const AttrDict &annotations() const { return annotations_; }

private:
  friend class Graph;
  friend class Op;

  std::string name_;
  TensorType type_;
  ValueKind kind_;
  Op *definingOp_ = nullptr;
  size_t resultIndex_ = 0;
  ConstantDataPtr data_;
  AttrDict annotations_;
  /// The graph that owns the value.
  const Graph *graph_ = nullptr;
  /// Its uses by ops of the same graph, in no particular order (Graph::usesOf
  /// sorts them): kept by every operand change, so that a pass asking for
  /// the uses of each value does not walk the whole graph each time.
  std::vector<OpUse> uses_;
};

class Op {
  struct Private {
    explicit Private() = default;
  };

public:
  Op(Private, OpKind kind, std::string name);
  Op(const Op &) = delete;
  Op &operator=(const Op &) = delete;

  OpKind kind() const { return kind_; }
  const OpDef &def() const { return opDef(kind_); }
  std::string_view kindName() const { return opKindName(kind_); }
  const std::string &name() const { return name_; }

  size_t numOperands() const { return operands_.size(); }
  Value *operand(size_t index) const;
  const std::vector<Value *> &operands() const { return operands_; }
  void setOperand(size_t index, Value *value);
  void setOperands(std::vector<Value *> operands);

  size_t numResults() const { return results_.size(); }
  Value *result(size_t index = 0) const;
  std::vector<Value *> results() const;

  /// The schema'd attributes. Every op carries every attribute of its
  /// schema (defaults included); the verifier checks.
  const AttrDict &attrs() const { return attrs_; }
  AttrDict &attrs() { return attrs_; }
  // Typed reads of a verified op's attributes (assert presence and type).
  int64_t intAttr(std::string_view name) const;
  double floatAttr(std::string_view name) const;
  bool boolAttr(std::string_view name) const;
  const std::string &stringAttr(std::string_view name) const;
  std::vector<int64_t> intsAttr(std::string_view name) const;

  AttrDict &annotations() { return annotations_; }
  const AttrDict &annotations() const { return annotations_; }

  /// Where the op came from (a JSON path, a line of IR text); empty for ops
  /// a pass made without one. Diagnostics about the op point here.
  const SourceLoc &loc() const { return loc_; }
  void setLoc(SourceLoc loc) { loc_ = std::move(loc); }

private:
  friend class Graph;

  /// Records operand `index` as a use of its value (when the value belongs
  /// to the op's graph; a foreign operand is the verifier's to report).
  void linkOperand(size_t index);
  void unlinkOperand(size_t index);

  OpKind kind_;
  std::string name_;
  /// The graph that owns the op, and its position in the op list when that
  /// is below the graph's `validIndexEnd_` (positions are renumbered lazily).
  const Graph *graph_ = nullptr;
  size_t index_ = 0;
  std::vector<Value *> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttrDict attrs_;
  AttrDict annotations_;
  SourceLoc loc_;
};

/// A result for Graph::createOp.
struct ResultSpec {
  std::string name;
  TensorType type;
};

class Graph {
public:
  explicit Graph(std::string name);
  ~Graph();
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  // Values and ops point back at their graph: a move re-points them.
  Graph(Graph &&other) noexcept;
  Graph &operator=(Graph &&other) noexcept;

  /// A deep copy (constant data is shared; it is immutable).
  std::unique_ptr<Graph> clone() const;

  const std::string &name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }
  /// The model file the graph was read from, empty for one built in memory.
  const std::string &sourceFile() const { return sourceFile_; }
  void setSourceFile(std::string file) { sourceFile_ = std::move(file); }
  AttrDict &annotations() { return annotations_; }
  const AttrDict &annotations() const { return annotations_; }

  // ---- Building ----
  // Names must be non-empty and unused (values and ops are separate
  // namespaces); a clash is a bug in the caller and asserts. Readers check
  // user-given names first and report them as diagnostics.

  Value *addInput(std::string name, TensorType type);
  Value *addConstant(std::string name, ConstantDataPtr data);
  /// Creates an op with explicit result types (nothing is inferred or
  /// checked here; see buildOp). It goes before `before`, or at the end.
  Op *createOp(OpKind kind, std::string name, std::vector<Value *> operands,
               AttrDict attrs, std::vector<ResultSpec> results,
               const Op *before = nullptr);
  /// Removes an op whose results have no uses and are not outputs.
  void eraseOp(Op *op);
  /// Removes a constant that has no uses and is not an output.
  void eraseConstant(Value *value);
  /// Moves `op` before `before`, or to the end.
  void moveOpBefore(Op *op, const Op *before);
  /// Moves `ops` (distinct, `before` not among them) before `before`, or to
  /// the end, in the order given: what moveOpBefore does for each in turn,
  /// in one pass over the op list.
  void moveOpsBefore(const std::vector<Op *> &ops, const Op *before);
  void setOutputs(std::vector<Value *> outputs);

  // ---- Reading ----
  // The lists are snapshots: the graph may be changed while walking them.

  std::vector<Value *> inputs() const;
  std::vector<Value *> constants() const;
  std::vector<Op *> ops() const;
  const std::vector<Value *> &outputs() const { return outputs_; }
  size_t numInputs() const { return inputs_.size(); }
  size_t numConstants() const { return constants_.size(); }
  size_t numOps() const { return ops_.size(); }
  /// Inputs, constants and op results.
  size_t numValues() const { return values_.size(); }

  /// The value or op called `name`, or nullptr.
  Value *findValue(std::string_view name) const;
  Op *findOp(std::string_view name) const;
  /// Whether `value` / `op` belongs to this graph.
  bool contains(const Value *value) const;
  bool contains(const Op *op) const;
  /// Position of `op` in the op list (amortised constant time: positions
  /// are renumbered from the first edited one when next asked for).
  size_t opIndex(const Op *op) const;
  /// The op after `op`, or nullptr for the last: `createOp(..., nextOp(op))`
  /// inserts right after `op`.
  Op *nextOp(const Op *op) const;

  /// Every use of `value` as an operand, in op order. Proportional to the
  /// number of uses, not to the size of the graph.
  std::vector<OpUse> usesOf(const Value *value) const;
  /// The number of uses of `value` (usesOf(value).size(), without sorting).
  size_t numUses(const Value *value) const;
  bool isOutput(const Value *value) const;
  /// Makes every operand and output that is `from` be `to`.
  void replaceAllUsesWith(Value *from, Value *to);

  /// `base` when no value is called that, else `base.1`, `base.2`, ...
  std::string uniqueValueName(std::string_view base) const;
  std::string uniqueOpName(std::string_view base) const;

  /// Bytes of constant data (the model's parameters).
  int64_t parameterBytes() const;

private:
  void registerValue(Value *value);
  /// Points every value and op at this graph (after a move).
  void adoptMembers();
  /// Marks positions from `index` on as stale.
  void invalidateIndexesFrom(size_t index) {
    validIndexEnd_ = std::min(validIndexEnd_, index);
  }

  std::string name_;
  std::string sourceFile_;
  AttrDict annotations_;
  std::vector<std::unique_ptr<Value>> inputs_;
  std::vector<std::unique_ptr<Value>> constants_;
  std::vector<std::unique_ptr<Op>> ops_;
  std::vector<Value *> outputs_;
  // The outputs for membership tests; never iterated.
  std::set<const Value *> outputSet_;
  // Name indexes; ordered by name, never iterated for decisions.
  std::map<std::string, Value *, std::less<>> values_;
  std::map<std::string, Op *, std::less<>> opsByName_;
  // Op::index_ is the op's position for every op before this position.
  mutable size_t validIndexEnd_ = 0;
};

/// Builds an op the way a pass does: fills in default attributes, infers the
/// result types and names the results `resultNames` (fresh names derived
/// from the op's name for missing ones). An op that does not check is a bug
/// in the caller and asserts with the reason.
Op *buildOp(Graph &graph, OpKind kind, std::string name,
            std::vector<Value *> operands, AttrDict attrs = {},
            std::vector<std::string> resultNames = {},
            const Op *before = nullptr);

/// Empty when the graphs are equal (names, types, constant data, ops in
/// order with operands, attributes, results and annotations, outputs;
/// source locations are not compared), else the first difference.
std::string graphDifference(const Graph &a, const Graph &b);

/// Where a diagnostic about the whole graph points: the model file the user
/// gave, or `<graph NAME>` for a graph built in memory.
SourceLoc graphLoc(const Graph &graph);

/// `%name` / `@name`: names made of letters, digits and `_ . $ -` print
/// bare, others quoted (`%"attn/q proj"`).
std::string printName(char sigil, std::string_view name);

} // namespace spyre::compiler
