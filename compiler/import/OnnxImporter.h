// The ONNX importer's machinery, shared by the files that implement it
// (not a public header: compiler/import/Onnx.h is). One Importer per model:
// it checks the model, indexes its values, finds the nodes whose results
// are needed as data, then converts those nodes in order, each through the
// converter its op type's rule names (kRules, Onnx.cpp). A converter that
// meets something it cannot express throws Unsupported with the reason;
// the import stops there with an error naming the node, while the coverage
// walk records the reason and goes on.
//
// OnnxImporter.cpp: model checks and indexes, node conversion (the host
// fallback), the inputs of a node, building IR, outputs, and the entry
// points of Onnx.h. OnnxConverters.cpp: the converters, one per op family,
// the causal mask patterns, and the op table (kRules). Onnx.cpp: the model
// file reader and the parameters of host ops.
#pragma once

#include "compiler/import/Onnx.h"
#include "compiler/import/OnnxOpsets.h"
#include "compiler/import/OnnxPatterns.h"
#include "compiler/import/OnnxTensor.h"
#include "compiler/ir/Graph.h"
#include "support/Diagnostic.h"

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace onnx::checker {
// Exported by libonnx (1.12) though its header declares only the overloads
// without a context: the checker looks for external data files in the
// context's model folder, which the overload for a ModelProto leaves empty
// (the working folder).
void check_model(const ModelProto &model, CheckerContext &ctx);
} // namespace onnx::checker

namespace spyre::compiler {

namespace onnx_import {

using onnx::AttributeProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::TypeProto;

/// Why a node cannot be converted; thrown by converters, caught per node.
struct Unsupported {
  std::string reason;
};

[[noreturn]] inline void unsupported(std::string reason) {
  throw Unsupported{std::move(reason)};
}

/// External integer tensors up to this many elements (shapes, axes, split
/// sizes) are read at load time: ONNX shape inference needs their values.
constexpr int64_t kEagerExternalElements = int64_t{1} << 16;

/// A finite causal-mask fill counts as -inf when it is at most this and
/// only a softmax over the last axis reads the masked scores: exp(s - 1e4 -
/// max) is exactly 0 in double and float arithmetic for any scores less than
/// 9,000 apart, as it is for -inf.
constexpr double kLargeNegative = -1e4;

inline bool isDefaultDomain(const NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

inline std::string qualifiedOpType(const NodeProto &node) {
  return isDefaultDomain(node) ? node.op_type()
                               : node.domain() + "." + node.op_type();
}

inline std::string nodePath(int index) {
  return "graph.node[" + std::to_string(index) + "]";
}

/// `node 'fc1' (Gemm)`, or `node (Gemm)` for a node without a name.
inline std::string describeNode(const NodeProto &node) {
  std::string type = qualifiedOpType(node);
  if (node.name().empty())
    return "node (" + type + ")";
  return "node '" + node.name() + "' (" + type + ")";
}

/// ONNX's exception texts on one line: the context the checker appends
/// after a blank line goes in parentheses.
inline std::string oneLine(std::string text) {
  const std::string context = "\n\n==> Context: ";
  size_t at = text.find(context);
  if (at != std::string::npos)
    text = text.substr(0, at) + " (" + text.substr(at + context.size()) + ")";
  for (char &c : text)
    if (c == '\n' || c == '\r')
      c = ' ';
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text;
}

inline std::optional<ElementType> elementTypeOf(int32_t onnxType) {
  if (onnxType == TensorProto::FLOAT)
    return ElementType::F32;
  if (onnxType == TensorProto::FLOAT16)
    return ElementType::F16;
  return std::nullopt;
}

inline std::string intsText(const std::vector<int64_t> &v) {
  return shapeStr(v);
}

/// Row-major `values` of shape `from` broadcast (NumPy rules) to `to`.
inline std::vector<double> broadcastValues(const std::vector<double> &values,
                                           const Shape &from, const Shape &to) {
  size_t rank = to.size(), offset = rank - from.size();
  std::vector<int64_t> fromStrides = rowMajorStrides(from);
  std::vector<double> out(static_cast<size_t>(shapeElementCount(to)));
  std::vector<int64_t> idx(rank, 0);
  for (double &o : out) {
    int64_t src = 0;
    for (size_t d = offset; d < rank; ++d)
      if (from[d - offset] != 1)
        src += idx[d] * fromStrides[d - offset];
    o = values[static_cast<size_t>(src)];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < to[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

/// Whether position (i, j) of the last two dimensions [q, k] is hidden by
/// causal_mask_add (docs/ir.md: the mask is aligned to the bottom right).
inline bool causallyMasked(int64_t i, int64_t j, int64_t q, int64_t k) {
  return j > i + (k - q);
}

class Importer;
using ConvertFn = void (Importer::*)(const NodeProto &node);

/// How the importer handles one ONNX op type: the one table of ONNX op
/// types to IR ops (kRules, Onnx.cpp).
struct OpRule {
  std::string_view opType;
  ConvertFn convert;
  /// The IR op a converter of several op types (convertUnary,
  /// convertBinary, convertReduce) makes for this one.
  std::optional<OpKind> kind = std::nullopt;
  /// Bit i: input i is a static parameter (a shape, axes, split sizes, an
  /// exponent, a condition), read from a constant at import time instead of
  /// being computed as data.
  unsigned paramInputs = 0;
  /// Bit i: static input i is data when the node runs on the host (Pow's
  /// exponent), so a node computing it is converted too.
  unsigned hostDataInputs = 0;
};

/// The rule of an op type of the default domain (kRules, Onnx.cpp), or
/// nullptr.
const OpRule *findRule(std::string_view opType);

/// The IR op of `node`'s rule (a converter of several op types asks).
OpKind ruleKind(const NodeProto &node);

class Importer {
public:
  /// Takes the model by value: overrides and shape inference edit it.
  Importer(ModelProto model, const std::string &fileName,
           const OnnxImportOptions &options)
      : model_(std::move(model)), file_(fileName), options_(options),
        graph_(graphName(model_, fileName)),
        modelDir_(std::filesystem::path(fileName).parent_path().string()) {}

  /// Converts the model; throws UserError for the first problem.
  Graph run();

  /// One entry per node; throws UserError for a model-level problem.
  std::vector<OpCoverage> coverage();

private:
  // ---- Model-level checks and indexes ----

  static std::string graphName(const ModelProto &model,
                               const std::string &fileName);

  [[noreturn]] void fail(const std::string &keyPath,
                         std::string message) const {
    throw UserError(SourceLoc{file_, 0, 0, keyPath}, std::move(message));
  }

  void prepare();

  /// The integer initializers ONNX's checker, version converter and shape
  /// inference read as values (shapes, axes, repeats) must hold as many
  /// values as their dimensions say: libonnx reads them without checking
  /// and runs past the end of a short one (found by the fuzzer). Those of
  /// up to kEagerExternalElements elements are checked here, which is
  /// every such tensor a real model has.
  void checkIntegerInitializers() const;

  /// Checks where every initializer stored in an external file lies (an
  /// error at the initializer otherwise) without reading it; small integer
  /// ones, which shape inference reads, are read into the model.
  void locateExternalData();

  /// The checker names a bad node in its context (`Bad node spec for node.
  /// Name: act OpType: Relu`); the error then points at that node.
  [[noreturn]] void reportCheckerError(const std::string &text) const;

  bool isInitializer(const std::string &name) const;

  void applyShapeOverrides();

  void inferShapes();

  /// ONNX lists node errors as `(op_type:Add, node name: add): [Shape
  /// InferenceError] message`; the first becomes an error at that node.
  [[noreturn]] void reportInferenceError(const std::string &text) const;

  void indexGraph();

  void indexConstantNode(const NodeProto &node);

  /// Marks the values needed as data by the graph outputs (through the data
  /// inputs of the nodes computing them) and the nodes producing them.
  void markNeeded();

  std::string notNeededReason(const NodeProto &node) const;

  void addInputs();
  /// Whether every reader of `name` takes it as a Gather's indices (and it
  /// is no graph output).
  bool readOnlyAsGatherIndices(const std::string &name) const;

  // ---- Converting nodes ----

  void convertNode(int index);

  /// After the device converter refused node `index`: converts it to a
  /// `host` op when the fallback is on and the host library runs it.
  /// Returns nullopt on success, else what to add to the device's reason.
  std::optional<std::string> tryHost(int index);

  /// The node as a `host` op: its ONNX attributes and constant parameter
  /// inputs become the op's attrs JSON, its float inputs its operands.
  void convertHost(const NodeProto &node);

  /// Input `k` of a host op as data: a constant of an integer type (Pow's
  /// exponent) becomes a FLOAT constant, which holds its values exactly up
  /// to 2^24; anything else as data().
  Value *hostData(const NodeProto &node, int k);

  /// Every needed output is defined, with the type ONNX inferred for it.
  void checkOutputs(const NodeProto &node);

  /// Coverage: the results of an unsupported node become stand-in inputs,
  /// so that the nodes after it are judged on their own.
  void standInForOutputs(int index);

  /// The type ONNX shape inference gives `name`, when it is a float tensor
  /// with a static shape the IR can hold.
  std::optional<TensorType> staticType(const std::string &name) const;

  std::optional<Shape> staticShape(const std::string &name) const;

  // ---- Inputs of the current node ----

  static bool hasInput(const NodeProto &node, int k) {
    return k < node.input_size() && !node.input(k).empty();
  }

  bool isConstant(const std::string &name) const {
    return constants_.contains(name);
  }

  /// Input `k` as an IR value (a constant is made on first use).
  Value *data(const NodeProto &node, int k);

  /// The IR constant for an initializer or Constant node output.
  Value *materialize(const std::string &name);

  /// An initializer's data in an external file, read when first needed.
  static ConstantDataPtr deferredConstant(const TensorType &type,
                                          const OnnxExternalData &where);

  /// The tensor of constant `name` with its data in the message (external
  /// data read now).
  const TensorProto &withData(const std::string &name);

  /// The values of input `k` when it is a constant; nullptr when it is
  /// computed or a model input.
  const OnnxTensorValues *constInput(const NodeProto &node, int k);

  /// Integer values of constant input `k` (`what` names it in messages);
  /// nullopt when the input is computed or a model input.
  std::optional<std::vector<int64_t>> constInts(const NodeProto &node, int k,
                                                const std::string &what);

  /// `what 'name' is not a constant`, for static inputs computed at run time.
  [[noreturn]] void notConstant(const NodeProto &node, int k,
                                const std::string &what,
                                const std::string &consequence);

  static const AttributeProto *findAttr(const NodeProto &node,
                                        std::string_view name);

  static int64_t intAttr(const NodeProto &node, std::string_view name,
                         int64_t fallback);

  static double floatAttr(const NodeProto &node, std::string_view name,
                          float fallback);

  static std::optional<std::vector<int64_t>> intsAttr(const NodeProto &node,
                                                      std::string_view name);

  bool isNeeded(const NodeProto &node, int output) const;

  // ---- Building IR ----

  /// A name the model defines twice would break the IR's one-definition
  /// rule; the checker's SSA check should have caught it.
  void requireFreshName(const std::string &name) const;

  std::string freshValueName(const std::string &base) const;

  std::string freshOpName(const std::string &base) const;

  /// Builds an op of the current node with results named `resultNames`.
  /// The first op giving a result of the node takes the node's name; the
  /// others are named after it and their kind.
  Op *emit(OpKind kind, std::vector<Value *> operands, AttrDict attrs,
           std::vector<std::string> resultNames, bool givesNodeResult);

  /// An op whose result is output `k` of the current node.
  Value *emitOutput(OpKind kind, std::vector<Value *> operands, AttrDict attrs,
                    int k = 0);

  /// An op computing an intermediate value of the current node.
  Value *emitHelper(OpKind kind, std::vector<Value *> operands, AttrDict attrs,
                    const std::string &role);

  std::string outputBase() const;

  /// A constant made by the importer (a scale, a select mask).
  Value *makeConstant(const std::string &role, ElementType type,
                      const Shape &shape, const std::vector<double> &values);

  // ---- Converters, one per op family ----

public:
  void convertUnary(const NodeProto &node);

  void convertBinary(const NodeProto &node);

  void convertPow(const NodeProto &node);

  void convertMatMul(const NodeProto &node);

  void convertGemm(const NodeProto &node);

  void convertSoftmax(const NodeProto &node);

  void convertLayerNorm(const NodeProto &node);

  /// The optional Mean and InvStdDev outputs, computed as ONNX defines them.
  void convertLayerNormStatistics(const NodeProto &node, Value *x, int64_t axis,
                                  double eps);

  void convertReduce(const NodeProto &node);

  void convertTranspose(const NodeProto &node);

  void convertReshape(const NodeProto &node);

  void convertSplit(const NodeProto &node);

  std::optional<std::vector<int64_t>>
  splitSizesFromOutputs(const NodeProto &node, int64_t axis);

  void convertConcat(const NodeProto &node);

  void convertSqueeze(const NodeProto &node);

  void convertUnsqueeze(const NodeProto &node);

  /// Squeeze and Unsqueeze with computed axes: the result shape ONNX
  /// inferred says what they do.
  void reshapeToInferred(const NodeProto &node, Value *x,
                         const std::string &what);

  void convertFlatten(const NodeProto &node);

  void convertIdentity(const NodeProto &node);

  void convertConstant(const NodeProto &node);

  void convertWhere(const NodeProto &node);
  /// Gather of a table's rows by ids from an integer model input: an
  /// `embedding` op.
  void convertGather(const NodeProto &node);
  /// ArgMax over the last axis: an `argmax` op (greedy sampling).
  void convertArgMax(const NodeProto &node);

private:
  // ---- Causal masks ----

  /// Whether every reader of `name` is a softmax over the last of `rank`
  /// axes, and it is not a graph output: then a finite large-negative mask
  /// gives the same result as -inf.
  bool onlySoftmaxReads(const std::string &name, int64_t rank) const;

  /// Whether a tensor of shape `dims` masks exactly the positions
  /// causal_mask_add hides, in every slice of its last two dimensions, and
  /// broadcasts onto `scores` without changing its shape.
  template <class IsMasked>
  static bool isCausalLayout(const std::vector<int64_t> &dims,
                             const Shape &scores, IsMasked isMasked) {
    size_t r = dims.size();
    if (r < 2 || scores.size() < r ||
        dims[r - 2] != scores[scores.size() - 2] ||
        dims[r - 1] != scores.back())
      return false;
    Shape shape(dims.begin(), dims.end());
    if (!checkShape(shape).empty() || broadcastShapes(shape, scores) != scores)
      return false;
    int64_t q = dims[r - 2], k = dims[r - 1];
    int64_t n = shapeElementCount(shape);
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t i = (flat / k) % q, j = flat % k;
      if (isMasked(flat) != causallyMasked(i, j, q, k))
        return false;
    }
    return true;
  }

  /// Add(scores, mask) with a constant mask of 0 on and below the causal
  /// diagonal and -inf (or a large negative number) above it.
  bool fuseCausalMaskAdd(const NodeProto &node);

  /// Where(causal, scores, fill) or Where(not causal, fill, scores) with a
  /// one-element fill of -inf (or a large negative number).
  bool fuseCausalMaskWhere(const NodeProto &node, const OnnxTensorValues &cond);

  // ---- Outputs ----

  void setOutputs();

  Value *materializeOutput(const std::string &name, const std::string &path);

  ModelProto model_;
  std::string file_;
  const OnnxImportOptions &options_;
  Graph graph_;

  /// Initializers and Constant node values, by value name.
  std::map<std::string, const TensorProto *> constants_;
  /// Initializers of the model (their TensorProto is the importer's).
  std::set<std::string> initializers_;
  /// Initializers whose raw bytes moved into their IR constant.
  std::set<std::string> movedToIr_;
  /// Initializers whose data is in an external file not read yet.
  std::map<std::string, OnnxExternalData> external_;
  /// The model's folder, which external data locations are relative to.
  std::string modelDir_;
  /// How the model's opset was brought to 13-17.
  OpsetChange opsetChange_;
  std::vector<std::unique_ptr<TensorProto>> ownedConstants_;
  std::map<std::string, OnnxTensorValues> constantValues_;
  /// Constants that cannot be read, and why.
  std::map<std::string, std::string> constantProblems_;
  /// Model inputs that cannot be IR inputs (not float tensors), and why.
  std::map<std::string, std::string> nonDataInputs_;
  std::map<std::string, const TypeProto *> types_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<std::pair<int, int>>> consumers_;
  std::set<std::string> graphOutputs_;
  std::set<std::string> needed_;
  std::vector<bool> nodeNeeded_;
  std::map<std::string, Value *> values_;
  /// Coverage: results of unsupported nodes without a stand-in.
  std::map<std::string, int> failedProducer_;
  std::set<std::string> reservedValueNames_;
  std::set<std::string> reservedOpNames_;

  const NodeProto *node_ = nullptr;
  int nodeIndex_ = 0;
  std::string nodeBase_;
  bool mainNamed_ = false;
};

} // namespace onnx_import
} // namespace spyre::compiler
