// Bringing a model to the opsets the importer reads (OnnxOpsets.h).
#include "compiler/import/OnnxOpsets.h"

#include "compiler/import/OnnxTensor.h"
#include "support/Diagnostic.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/version_converter/convert.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <optional>
#include <string_view>

namespace spyre::compiler {

namespace {

using onnx::AttributeProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

/// The newest opset the ONNX library checks, and the one an old model is
/// upgraded to (the first the importer converts).
constexpr int64_t kLibraryOpset = 17;
constexpr int64_t kUpgradeTarget = 13;

/// What a version of an op after opset 17 changed.
enum class Change {
  /// More element types only (bfloat16, float8, int4, float4, strings):
  /// a node of the types opset 17 admits means the same.
  TypesOnly,
  /// Rewritten to the opset-17 form where the node does not use what the
  /// version added (rewriteNode); refused otherwise.
  Rewritten,
  /// Different semantics or interface: refused.
  Refused,
};

struct OpVersion {
  std::string_view op;
  int64_t opset;
  Change change;
  std::string_view what; ///< for Refused: what changed
};

// Every version after 17 of an op that opset 17 defines, from ONNX's
// docs/Operators.md and docs/Changelog.md at v1.22.0 (opset 27). Ops first
// defined after 17 are refused by the schema registry instead (it does not
// know them).
constexpr OpVersion kVersionsAfter17[] = {
    // Opset 18.
    {"LpPool", 18, Change::Refused, "ceil_mode and dilations"},
    {"OptionalGetElement", 18, Change::Refused, "tensors as well as optionals"},
    {"OptionalHasElement", 18, Change::Refused, "tensors as well as optionals"},
    {"Pad", 18, Change::Rewritten, ""},
    {"ReduceL1", 18, Change::Rewritten, ""},
    {"ReduceL2", 18, Change::Rewritten, ""},
    {"ReduceLogSum", 18, Change::Rewritten, ""},
    {"ReduceLogSumExp", 18, Change::Rewritten, ""},
    {"ReduceMax", 18, Change::Rewritten, ""},
    {"ReduceMean", 18, Change::Rewritten, ""},
    {"ReduceMin", 18, Change::Rewritten, ""},
    {"ReduceProd", 18, Change::Rewritten, ""},
    {"ReduceSumSquare", 18, Change::Rewritten, ""},
    {"Resize", 18, Change::Refused,
     "antialias, axes and keep_aspect_ratio_policy"},
    {"ScatterElements", 18, Change::Refused, "reduction max and min"},
    {"ScatterND", 18, Change::Refused, "reduction max and min"},
    {"Split", 18, Change::Rewritten, ""},
    // Opset 19.
    {"AveragePool", 19, Change::Refused, "dilations"},
    {"Cast", 19, Change::Rewritten, ""},
    {"CastLike", 19, Change::Rewritten, ""},
    {"Constant", 19, Change::TypesOnly, ""},
    {"DequantizeLinear", 19, Change::Refused, "float8 types"},
    {"Equal", 19, Change::TypesOnly, ""},
    {"Identity", 19, Change::TypesOnly, ""},
    {"If", 19, Change::TypesOnly, ""},
    {"Loop", 19, Change::TypesOnly, ""},
    {"Pad", 19, Change::Rewritten, ""},
    {"QuantizeLinear", 19, Change::Refused, "float8 types and saturate"},
    {"Reshape", 19, Change::TypesOnly, ""},
    {"Resize", 19, Change::Refused, "half_pixel_symmetric"},
    {"Scan", 19, Change::TypesOnly, ""},
    {"Shape", 19, Change::TypesOnly, ""},
    {"Size", 19, Change::TypesOnly, ""},
    // Opset 20.
    {"ConstantOfShape", 20, Change::TypesOnly, ""},
    {"DFT", 20, Change::Refused, "axis became an input"},
    {"GridSample", 20, Change::Refused, "N-D grids and new mode names"},
    {"IsInf", 20, Change::TypesOnly, ""},
    {"IsNaN", 20, Change::TypesOnly, ""},
    {"ReduceMax", 20, Change::TypesOnly, ""},
    {"ReduceMin", 20, Change::TypesOnly, ""},
    // Opsets 21, 23, 24, 25: int4, uint4, float4 and float8e8m0 types.
    {"Cast", 21, Change::TypesOnly, ""},
    {"CastLike", 21, Change::TypesOnly, ""},
    {"Constant", 21, Change::TypesOnly, ""},
    {"ConstantOfShape", 21, Change::TypesOnly, ""},
    {"DequantizeLinear", 21, Change::Refused, "blocked quantization"},
    {"Flatten", 21, Change::TypesOnly, ""},
    {"Identity", 21, Change::TypesOnly, ""},
    {"If", 21, Change::TypesOnly, ""},
    {"Loop", 21, Change::TypesOnly, ""},
    {"Pad", 21, Change::TypesOnly, ""},
    {"QLinearMatMul", 21, Change::Refused, "float8 types"},
    {"QuantizeLinear", 21, Change::Refused, "blocked quantization"},
    {"Reshape", 21, Change::TypesOnly, ""},
    {"Scan", 21, Change::TypesOnly, ""},
    {"Shape", 21, Change::TypesOnly, ""},
    {"Size", 21, Change::TypesOnly, ""},
    {"Squeeze", 21, Change::TypesOnly, ""},
    {"Transpose", 21, Change::TypesOnly, ""},
    {"Unsqueeze", 21, Change::TypesOnly, ""},
    // Opset 22: bfloat16 for the float ops.
    {"Acos", 22, Change::TypesOnly, ""},
    {"Acosh", 22, Change::TypesOnly, ""},
    {"Asin", 22, Change::TypesOnly, ""},
    {"Asinh", 22, Change::TypesOnly, ""},
    {"Atan", 22, Change::TypesOnly, ""},
    {"Atanh", 22, Change::TypesOnly, ""},
    {"AveragePool", 22, Change::TypesOnly, ""},
    {"Bernoulli", 22, Change::TypesOnly, ""},
    {"Conv", 22, Change::TypesOnly, ""},
    {"ConvTranspose", 22, Change::TypesOnly, ""},
    {"Cos", 22, Change::TypesOnly, ""},
    {"Cosh", 22, Change::TypesOnly, ""},
    {"Det", 22, Change::TypesOnly, ""},
    {"Dropout", 22, Change::TypesOnly, ""},
    {"Elu", 22, Change::TypesOnly, ""},
    {"EyeLike", 22, Change::TypesOnly, ""},
    {"GRU", 22, Change::TypesOnly, ""},
    {"GlobalAveragePool", 22, Change::TypesOnly, ""},
    {"GlobalLpPool", 22, Change::TypesOnly, ""},
    {"GlobalMaxPool", 22, Change::TypesOnly, ""},
    {"GridSample", 22, Change::TypesOnly, ""},
    {"HardSigmoid", 22, Change::TypesOnly, ""},
    {"HardSwish", 22, Change::TypesOnly, ""},
    {"InstanceNormalization", 22, Change::TypesOnly, ""},
    {"LSTM", 22, Change::TypesOnly, ""},
    {"LpNormalization", 22, Change::TypesOnly, ""},
    {"LpPool", 22, Change::TypesOnly, ""},
    {"MaxPool", 22, Change::TypesOnly, ""},
    {"MaxRoiPool", 22, Change::TypesOnly, ""},
    {"MaxUnpool", 22, Change::TypesOnly, ""},
    {"Multinomial", 22, Change::TypesOnly, ""},
    {"NegativeLogLikelihoodLoss", 22, Change::TypesOnly, ""},
    {"RNN", 22, Change::TypesOnly, ""},
    {"RandomNormal", 22, Change::TypesOnly, ""},
    {"RandomNormalLike", 22, Change::TypesOnly, ""},
    {"RandomUniform", 22, Change::TypesOnly, ""},
    {"RandomUniformLike", 22, Change::TypesOnly, ""},
    {"RoiAlign", 22, Change::TypesOnly, ""},
    {"Round", 22, Change::TypesOnly, ""},
    {"Selu", 22, Change::TypesOnly, ""},
    {"Sin", 22, Change::TypesOnly, ""},
    {"Sinh", 22, Change::TypesOnly, ""},
    {"Softplus", 22, Change::TypesOnly, ""},
    {"Softsign", 22, Change::TypesOnly, ""},
    {"Tan", 22, Change::TypesOnly, ""},
    {"ThresholdedRelu", 22, Change::TypesOnly, ""},
    // Opset 23.
    {"Cast", 23, Change::TypesOnly, ""},
    {"CastLike", 23, Change::TypesOnly, ""},
    {"Constant", 23, Change::TypesOnly, ""},
    {"ConstantOfShape", 23, Change::TypesOnly, ""},
    {"DequantizeLinear", 23, Change::Refused, "output_dtype"},
    {"Flatten", 23, Change::TypesOnly, ""},
    {"Identity", 23, Change::TypesOnly, ""},
    {"If", 23, Change::TypesOnly, ""},
    {"Loop", 23, Change::TypesOnly, ""},
    {"Pad", 23, Change::TypesOnly, ""},
    {"QuantizeLinear", 23, Change::Refused, "precision"},
    {"Reshape", 23, Change::TypesOnly, ""},
    {"Scan", 23, Change::TypesOnly, ""},
    {"Shape", 23, Change::TypesOnly, ""},
    {"Size", 23, Change::TypesOnly, ""},
    {"Squeeze", 23, Change::TypesOnly, ""},
    {"Transpose", 23, Change::TypesOnly, ""},
    {"Unsqueeze", 23, Change::TypesOnly, ""},
    // Opset 24.
    {"Cast", 24, Change::Rewritten, ""},
    {"CastLike", 24, Change::Rewritten, ""},
    {"Constant", 24, Change::TypesOnly, ""},
    {"ConstantOfShape", 24, Change::TypesOnly, ""},
    {"DequantizeLinear", 24, Change::Refused, "float8e8m0 scales"},
    {"Flatten", 24, Change::TypesOnly, ""},
    {"Identity", 24, Change::TypesOnly, ""},
    {"If", 24, Change::TypesOnly, ""},
    {"Loop", 24, Change::TypesOnly, ""},
    {"Pad", 24, Change::TypesOnly, ""},
    {"QuantizeLinear", 24, Change::Refused, "float8e8m0 scales"},
    {"Reshape", 24, Change::TypesOnly, ""},
    {"Scan", 24, Change::TypesOnly, ""},
    {"Shape", 24, Change::TypesOnly, ""},
    {"Size", 24, Change::TypesOnly, ""},
    {"SplitToSequence", 24, Change::Refused, "a new version"},
    {"Squeeze", 24, Change::TypesOnly, ""},
    {"TopK", 24, Change::Refused, "a new version"},
    {"Transpose", 24, Change::TypesOnly, ""},
    {"Unsqueeze", 24, Change::TypesOnly, ""},
    // Opset 25.
    {"Cast", 25, Change::TypesOnly, ""},
    {"CastLike", 25, Change::TypesOnly, ""},
    {"Constant", 25, Change::TypesOnly, ""},
    {"ConstantOfShape", 25, Change::TypesOnly, ""},
    {"DequantizeLinear", 25, Change::Refused, "a new version"},
    {"Flatten", 25, Change::TypesOnly, ""},
    {"Identity", 25, Change::TypesOnly, ""},
    {"If", 25, Change::TypesOnly, ""},
    {"Loop", 25, Change::TypesOnly, ""},
    {"Pad", 25, Change::TypesOnly, ""},
    {"QuantizeLinear", 25, Change::Refused, "a new version"},
    {"Reshape", 25, Change::TypesOnly, ""},
    {"Scan", 25, Change::TypesOnly, ""},
    {"Shape", 25, Change::TypesOnly, ""},
    {"Size", 25, Change::TypesOnly, ""},
    {"Squeeze", 25, Change::TypesOnly, ""},
    {"Transpose", 25, Change::TypesOnly, ""},
    {"Unsqueeze", 25, Change::TypesOnly, ""},
    // Opset 27.
    {"Range", 27, Change::Refused, "stash_type"},
};

bool isDefaultDomain(std::string_view domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// `name` for a message: printable ASCII as it is, other bytes as `\xNN`.
std::string printable(const std::string &name) {
  std::string out;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out += ch;
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

std::string describe(const NodeProto &node) {
  if (node.name().empty())
    return "node (" + node.op_type() + ")";
  return "node '" + node.name() + "' (" + node.op_type() + ")";
}

class OpsetNormalizer {
public:
  OpsetNormalizer(ModelProto &model, const std::string &file)
      : model_(model), file_(file) {}

  OpsetChange run() {
    int index = -1;
    for (int i = 0; i < model_.opset_import_size(); ++i)
      if (isDefaultDomain(model_.opset_import(i).domain()))
        index = i;
    if (index < 0)
      return {};
    const int64_t opset = model_.opset_import(index).version();
    const std::string path = "opset_import[" + std::to_string(index) + "]";
    if (opset < kOnnxOldestOpset || opset > kOnnxNewestOpset)
      fail(path, "opset " + std::to_string(opset) +
                     " of the default ONNX domain is not supported (this "
                     "importer reads opsets " +
                     std::to_string(kOnnxOldestOpset) + " to " +
                     std::to_string(kOnnxNewestOpset) + ")");
    // A newer IR version adds element types the importer does not read;
    // the library's checker refuses a model that states one it does not
    // know, so such a model is read as the newest it knows.
    if (model_.ir_version() > onnx::Version::IR_VERSION)
      model_.set_ir_version(onnx::Version::IR_VERSION);
    if (opset < kUpgradeTarget) {
      upgrade(opset, path);
      return {opset, kUpgradeTarget, {}};
    }
    if (opset <= kLibraryOpset)
      return {opset, opset, {}};
    indexConstants();
    OpsetChange change{opset, kLibraryOpset, {}};
    auto *nodes = model_.mutable_graph()->mutable_node();
    for (int i = 0; i < nodes->size(); ++i) {
      NodeProto &node = *nodes->Mutable(i);
      if (!isDefaultDomain(node.domain()))
        continue;
      if (node.op_type() == "Split" && findAttribute(node, "num_outputs"))
        change.splitsByCount.push_back(i);
      readAsOpset17(node, i, opset);
    }
    model_.mutable_opset_import(index)->set_version(kLibraryOpset);
    return change;
  }

private:
  [[noreturn]] void fail(const std::string &keyPath, std::string message) {
    throw UserError(SourceLoc{file_, 0, 0, keyPath}, std::move(message));
  }

  // ---- Opsets 7 to 12 ----

  void upgrade(int64_t opset, const std::string &path) {
    // The converter goes through ONNX's in-memory IR, which keeps a
    // tensor's values but not where external data lies; such initializers
    // go in as shapes and are put back as they were.
    std::map<std::string, TensorProto> external;
    ModelProto in = model_;
    for (TensorProto &t : *in.mutable_graph()->mutable_initializer())
      if (t.data_location() == TensorProto::EXTERNAL) {
        external[t.name()] = t;
        t.clear_external_data();
        t.clear_data_location();
      }
    // The converter builds ONNX's in-memory IR without checking the model
    // and crashes on some malformed ones: the checker goes first, and a
    // graph output that nothing defines (which the checker lets through
    // and the converter dereferences; found by the fuzzer) is refused.
    std::set<std::string> defined;
    for (const auto &v : in.graph().input())
      defined.insert(v.name());
    for (const TensorProto &t : in.graph().initializer())
      defined.insert(t.name());
    for (const NodeProto &n : in.graph().node())
      for (const std::string &o : n.output())
        defined.insert(o);
    for (int i = 0; i < in.graph().output_size(); ++i)
      if (!defined.count(in.graph().output(i).name()))
        fail("graph.output[" + std::to_string(i) + "]",
             "output '" + printable(in.graph().output(i).name()) +
                 "' is no input, initializer or node output of the graph");
    try {
      onnx::checker::check_model(in);
    } catch (const std::exception &e) {
      std::string why = e.what();
      for (char &c : why)
        if (c == '\n')
          c = ' ';
      fail(path, "ONNX checker (before upgrading opset " +
                     std::to_string(opset) + "): " + why);
    }
    ModelProto out;
    try {
      out = onnx::version_conversion::ConvertVersion(
          in, static_cast<int>(kUpgradeTarget));
    } catch (const std::exception &e) {
      std::string why = e.what();
      for (char &c : why)
        if (c == '\n')
          c = ' ';
      fail(path, "the ONNX version converter cannot upgrade opset " +
                     std::to_string(opset) + " to " +
                     std::to_string(kUpgradeTarget) + ": " + why);
    }
    for (TensorProto &t : *out.mutable_graph()->mutable_initializer())
      if (auto it = external.find(t.name()); it != external.end())
        t = it->second;
    model_ = std::move(out);
  }

  // ---- Opsets 18 to 27 ----

  void indexConstants() {
    const auto &g = model_.graph();
    for (const TensorProto &t : g.initializer())
      constants_[t.name()] = &t;
    for (const NodeProto &n : g.node())
      if (isDefaultDomain(n.domain()) && n.op_type() == "Constant" &&
          n.output_size() == 1 && n.attribute_size() == 1)
        constantNodes_[n.output(0)] = &n;
  }

  /// The integer values of a constant input, or nullopt.
  std::optional<std::vector<int64_t>> constantInts(const std::string &name) {
    if (auto it = constantNodes_.find(name); it != constantNodes_.end()) {
      const AttributeProto &a = it->second->attribute(0);
      if (a.name() == "value_ints")
        return std::vector<int64_t>(a.ints().begin(), a.ints().end());
      if (a.name() == "value_int")
        return std::vector<int64_t>{a.i()};
      if (a.name() != "value")
        return std::nullopt;
      return tensorInts(a.t());
    }
    if (auto it = constants_.find(name); it != constants_.end())
      return tensorInts(*it->second);
    return std::nullopt;
  }

  static std::optional<std::vector<int64_t>> tensorInts(const TensorProto &t) {
    std::string why;
    std::optional<OnnxTensorValues> v = readOnnxTensor(t, why);
    if (!v || !isOnnxIntegerType(v->dataType))
      return std::nullopt;
    return v->ints;
  }

  void readAsOpset17(NodeProto &node, int index, int64_t opset) {
    const std::string path = "graph.node[" + std::to_string(index) + "]";
    const std::string &op = node.op_type();
    if (!onnx::OpSchemaRegistry::Schema(op, static_cast<int>(kLibraryOpset)))
      fail(path, describe(node) + ": op type '" + op +
                     "' is not defined in opset 17, the newest the ONNX "
                     "library of this importer knows (the model has opset " +
                     std::to_string(opset) + ")");
    for (const OpVersion &v : kVersionsAfter17) {
      if (v.op != op || v.opset > opset)
        continue;
      std::string at = "opset " + std::to_string(v.opset);
      if (v.change == Change::Refused)
        fail(path, describe(node) + ": " + at + " changed " + op + " (" +
                       std::string(v.what) +
                       "); this importer reads it only as opset 17 defines "
                       "it");
      if (v.change == Change::Rewritten) {
        std::string why = rewrite(node, v.opset);
        if (!why.empty())
          fail(path, describe(node) + ": " + at + " " + why);
      }
    }
  }

  /// Rewrites `node` from the form of op version `opset` to its opset-17
  /// form; returns why it cannot (after "opset N "), or "".
  std::string rewrite(NodeProto &node, int64_t opset) {
    const std::string &op = node.op_type();
    if (op.rfind("Reduce", 0) == 0)
      return rewriteReduce(node);
    if (op == "Split") {
      // The output count says the same; an uneven split, which opset 18
      // added, fails opset-17 shape inference.
      dropAttribute(node, "num_outputs");
      return "";
    }
    if (op == "Cast" || op == "CastLike") {
      // Both only affect float8 and float4 results, which opset 17 lacks.
      dropAttribute(node, "saturate");
      dropAttribute(node, "round_mode");
      return "";
    }
    if (op == "Pad" && opset == 18)
      return node.input_size() > 3 && !node.input(3).empty()
                 ? "gave Pad an axes input, which is not supported (pads "
                   "for every axis are)"
                 : "";
    if (op == "Pad") {
      const AttributeProto *mode = findAttribute(node, "mode");
      return mode && mode->s() == "wrap" ? "added Pad's wrap mode, which is "
                                           "not supported"
                                         : "";
    }
    SPYRE_UNREACHABLE("no opset-17 rewrite for " + op);
  }

  /// Reduce* of opset 18: the axes input becomes the attribute of opset
  /// 13, noop_with_empty_axes (new but for ReduceSum) is dropped where it
  /// does not apply.
  std::string rewriteReduce(NodeProto &node) {
    const std::string &op = node.op_type();
    std::vector<int64_t> axes;
    bool given = node.input_size() > 1 && !node.input(1).empty();
    if (given) {
      std::optional<std::vector<int64_t>> c = constantInts(node.input(1));
      if (!c)
        return "made the axes of " + op + " an input; axes '" +
               node.input(1) +
               "' are not a constant of integers, which is not supported";
      axes = *c;
    }
    const AttributeProto *noop = findAttribute(node, "noop_with_empty_axes");
    const bool identity = noop && noop->i() != 0 && axes.empty();
    dropAttribute(node, "noop_with_empty_axes");
    while (node.input_size() > 1)
      node.mutable_input()->RemoveLast();
    if (identity) {
      // No axes with noop_with_empty_axes: the input as it is.
      node.set_op_type("Identity");
      node.clear_attribute();
      return "";
    }
    if (!axes.empty()) {
      AttributeProto *a = node.add_attribute();
      a->set_name("axes");
      a->set_type(AttributeProto::INTS);
      for (int64_t x : axes)
        a->add_ints(x);
    }
    return "";
  }

  static const AttributeProto *findAttribute(const NodeProto &node,
                                             std::string_view name) {
    for (const AttributeProto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }

  static void dropAttribute(NodeProto &node, std::string_view name) {
    auto *attrs = node.mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i)
      if (attrs->Get(i).name() == name) {
        attrs->DeleteSubrange(i, 1);
        return;
      }
  }

  ModelProto &model_;
  const std::string &file_;
  std::map<std::string, const TensorProto *> constants_;
  std::map<std::string, const NodeProto *> constantNodes_;
};

} // namespace

OpsetChange normalizeOpset(ModelProto &model, const std::string &fileName) {
  return OpsetNormalizer(model, fileName).run();
}

} // namespace spyre::compiler
