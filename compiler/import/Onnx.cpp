// ONNX import (what it reads and how: Onnx.h; the user's view: docs/onnx.md).
//
// One Importer per model: it checks the model, indexes its values, finds the
// nodes whose results are needed as data, then converts those nodes in
// order, each through the converter its op type's rule names. A converter
// that meets something it cannot express throws Unsupported with the
// reason; the import stops there with an error naming the node, while the
// coverage walk records the reason and goes on.
#include "compiler/import/Onnx.h"

#include "compiler/import/OnnxOpsets.h"
#include "compiler/import/OnnxPatterns.h"
#include "compiler/import/OnnxTensor.h"
#include "compiler/ir/Verifier.h"
#include "host/HostOp.h"
#include "support/FileIO.h"
#include "support/HostMemory.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace onnx::checker {
// Exported by libonnx (1.12) though its header declares only the overloads
// without a context: the checker looks for external data files in the
// context's model folder, which the overload for a ModelProto leaves empty
// (the working folder).
void check_model(const ModelProto &model, CheckerContext &ctx);
} // namespace onnx::checker

namespace spyre::compiler {

namespace {

using onnx::AttributeProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::TypeProto;

/// Why a node cannot be converted; thrown by converters, caught per node.
struct Unsupported {
  std::string reason;
};

[[noreturn]] void unsupported(std::string reason) {
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

bool isDefaultDomain(const NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

std::string qualifiedOpType(const NodeProto &node) {
  return isDefaultDomain(node) ? node.op_type()
                               : node.domain() + "." + node.op_type();
}

std::string nodePath(int index) {
  return "graph.node[" + std::to_string(index) + "]";
}

/// `node 'fc1' (Gemm)`, or `node (Gemm)` for a node without a name.
std::string describeNode(const NodeProto &node) {
  std::string type = qualifiedOpType(node);
  if (node.name().empty())
    return "node (" + type + ")";
  return "node '" + node.name() + "' (" + type + ")";
}

/// ONNX's exception texts on one line: the context the checker appends
/// after a blank line goes in parentheses.
std::string oneLine(std::string text) {
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

std::optional<ElementType> elementTypeOf(int32_t onnxType) {
  if (onnxType == TensorProto::FLOAT)
    return ElementType::F32;
  if (onnxType == TensorProto::FLOAT16)
    return ElementType::F16;
  return std::nullopt;
}

std::string intsText(const std::vector<int64_t> &v) { return shapeStr(v); }

/// Row-major `values` of shape `from` broadcast (NumPy rules) to `to`.
std::vector<double> broadcastValues(const std::vector<double> &values,
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
bool causallyMasked(int64_t i, int64_t j, int64_t q, int64_t k) {
  return j > i + (k - q);
}

class Importer;
using ConvertFn = void (Importer::*)(const NodeProto &node);

/// How the importer handles one ONNX op type.
struct OpRule {
  std::string_view opType;
  ConvertFn convert;
  /// Bit i: input i is a static parameter (a shape, axes, split sizes, an
  /// exponent, a condition), read from a constant at import time instead of
  /// being computed as data.
  unsigned paramInputs = 0;
  /// Bit i: static input i is data when the node runs on the host (Pow's
  /// exponent), so a node computing it is converted too.
  unsigned hostDataInputs = 0;
};

const OpRule *findRule(std::string_view opType);

} // namespace

std::string hostParamName(std::string_view opType, int index);

namespace {

class Importer {
public:
  /// Takes the model by value: overrides and shape inference edit it.
  Importer(ModelProto model, const std::string &fileName,
           const OnnxImportOptions &options)
      : model_(std::move(model)), file_(fileName), options_(options),
        graph_(graphName(model_, fileName)),
        modelDir_(std::filesystem::path(fileName).parent_path().string()) {}

  /// Converts the model; throws UserError for the first problem.
  Graph run() {
    prepare();
    for (int i = 0; i < model_.graph().node_size(); ++i) {
      if (!nodeNeeded_[static_cast<size_t>(i)])
        continue;
      try {
        convertNode(i);
      } catch (const Unsupported &u) {
        std::optional<std::string> hostWhy = tryHost(i);
        if (!hostWhy)
          continue;
        fail(nodePath(i),
             describeNode(model_.graph().node(i)) + ": " + u.reason + *hostWhy);
      }
    }
    setOutputs();
    fuseRmsNorm(graph_);
    eraseUnused(graph_);
    return std::move(graph_);
  }

  /// One entry per node; throws UserError for a model-level problem.
  std::vector<OpCoverage> coverage() {
    prepare();
    std::vector<OpCoverage> out;
    const auto &nodes = model_.graph().node();
    for (int i = 0; i < nodes.size(); ++i) {
      const NodeProto &node = nodes.Get(i);
      OpCoverage c{i, node.name(), qualifiedOpType(node), true, false, ""};
      if (!nodeNeeded_[static_cast<size_t>(i)]) {
        c.reason = notNeededReason(node);
        out.push_back(std::move(c));
        continue;
      }
      try {
        convertNode(i);
      } catch (const Unsupported &u) {
        c.reason = u.reason;
        std::optional<std::string> hostWhy = tryHost(i);
        c.onHost = !hostWhy;
        c.supported = c.onHost;
        if (!c.onHost) {
          c.reason += *hostWhy;
          standInForOutputs(i);
        }
      }
      out.push_back(std::move(c));
    }
    return out;
  }

private:
  // ---- Model-level checks and indexes ----

  static std::string graphName(const ModelProto &model,
                               const std::string &fileName) {
    if (!model.graph().name().empty())
      return model.graph().name();
    std::string stem = std::filesystem::path(fileName).stem().string();
    return stem.empty() ? "model" : stem;
  }

  [[noreturn]] void fail(const std::string &keyPath,
                         std::string message) const {
    throw UserError(SourceLoc{file_, 0, 0, keyPath}, std::move(message));
  }

  void prepare() {
    locateExternalData();
    checkIntegerInitializers();
    opsetChange_ = normalizeOpset(model_, file_);
    try {
      onnx::checker::CheckerContext ctx;
      ctx.set_model_dir(modelDir_.empty() ? "." : modelDir_);
      onnx::checker::check_model(model_, ctx);
    } catch (const std::exception &e) {
      reportCheckerError(e.what());
    }
    applyShapeOverrides();
    inferShapes();
    indexGraph();
    markNeeded();
    addInputs();
  }

  /// The integer initializers ONNX's checker, version converter and shape
  /// inference read as values (shapes, axes, repeats) must hold as many
  /// values as their dimensions say: libonnx reads them without checking
  /// and runs past the end of a short one (found by the fuzzer). Those of
  /// up to kEagerExternalElements elements are checked here, which is
  /// every such tensor a real model has.
  void checkIntegerInitializers() const {
    const auto &inits = model_.graph().initializer();
    for (int i = 0; i < inits.size(); ++i) {
      const TensorProto &t = inits.Get(i);
      if (t.data_location() == TensorProto::EXTERNAL ||
          !isOnnxIntegerType(t.data_type()))
        continue;
      int64_t count = 1;
      bool small = true;
      for (int64_t d : t.dims()) {
        if (d < 0 || (d > 0 && count > kEagerExternalElements / d)) {
          small = d < 0; // a negative dimension: readOnnxTensor names it
          break;
        }
        count *= d;
      }
      if (!small)
        continue;
      std::string why;
      if (!readOnnxTensor(t, why))
        fail("graph.initializer[" + std::to_string(i) + "]",
             "initializer '" + t.name() + "': " + why);
    }
  }

  /// Checks where every initializer stored in an external file lies (an
  /// error at the initializer otherwise) without reading it; small integer
  /// ones, which shape inference reads, are read into the model.
  void locateExternalData() {
    auto *inits = model_.mutable_graph()->mutable_initializer();
    for (int i = 0; i < inits->size(); ++i) {
      TensorProto &t = *inits->Mutable(i);
      if (t.data_location() != TensorProto::EXTERNAL)
        continue;
      std::string why;
      std::optional<OnnxExternalData> where =
          locateOnnxExternalData(t, modelDir_, why);
      if (!where)
        fail("graph.initializer[" + std::to_string(i) + "]",
             "initializer '" + t.name() + "': " + why);
      int64_t count = 1;
      for (int64_t d : t.dims())
        count *= d;
      if (isOnnxIntegerType(t.data_type()) &&
          count <= kEagerExternalElements) {
        t.set_raw_data(readOnnxExternalData(*where));
        t.clear_external_data();
        t.clear_data_location();
        continue;
      }
      external_[t.name()] = *where;
    }
  }

  /// The checker names a bad node in its context (`Bad node spec for node.
  /// Name: act OpType: Relu`); the error then points at that node.
  [[noreturn]] void reportCheckerError(const std::string &text) const {
    const std::string context =
        "\n\n==> Context: Bad node spec for node. Name: ";
    const std::string typeKey = " OpType: ";
    size_t at = text.find(context);
    size_t typeAt = at == std::string::npos ? at : text.find(typeKey, at);
    if (typeAt == std::string::npos)
      fail("", "ONNX checker: " + oneLine(text));
    std::string name =
        text.substr(at + context.size(), typeAt - at - context.size());
    std::string opType = text.substr(typeAt + typeKey.size());
    opType = opType.substr(0, opType.find_first_of(" \n"));
    std::string message = "ONNX checker: " + oneLine(text.substr(0, at));
    const auto &nodes = model_.graph().node();
    for (int i = 0; i < nodes.size(); ++i)
      if (!name.empty() && nodes.Get(i).name() == name &&
          nodes.Get(i).op_type() == opType)
        fail(nodePath(i), describeNode(nodes.Get(i)) + ": " + message);
    fail("", "ONNX checker: " + oneLine(text));
  }

  bool isInitializer(const std::string &name) const {
    for (const TensorProto &t : model_.graph().initializer())
      if (t.name() == name)
        return true;
    return false;
  }

  void applyShapeOverrides() {
    auto *graph = model_.mutable_graph();
    for (const auto &[name, shape] : options_.shapeOverrides) {
      int index = -1;
      std::string names;
      for (int i = 0; i < graph->input_size(); ++i) {
        if (isInitializer(graph->input(i).name()))
          continue;
        names += (names.empty() ? "" : ", ") + graph->input(i).name();
        if (graph->input(i).name() == name)
          index = i;
      }
      std::string what = "shape override " + name + "=" + shapeStr(shape);
      if (index < 0)
        fail("", what + ": the model has no input '" + name +
                     "' (its inputs: " + (names.empty() ? "none" : names) +
                     ")");
      std::string path = "graph.input[" + std::to_string(index) + "]";
      std::string problem = checkShape(shape);
      if (!problem.empty())
        fail(path, what + ": " + problem);
      auto *type = graph->mutable_input(index)->mutable_type();
      if (!type->has_tensor_type())
        fail(path, what + ": input '" + name + "' is not a tensor");
      auto *dims = type->mutable_tensor_type()->mutable_shape();
      if (type->tensor_type().has_shape() &&
          dims->dim_size() != static_cast<int>(shape.size()))
        fail(path, what + " has rank " + std::to_string(shape.size()) +
                       ", input '" + name + "' has rank " +
                       std::to_string(dims->dim_size()));
      for (size_t d = 0; d < shape.size(); ++d) {
        if (static_cast<int>(d) < dims->dim_size() &&
            dims->dim(static_cast<int>(d)).has_dim_value() &&
            dims->dim(static_cast<int>(d)).dim_value() != shape[d])
          fail(path,
               what + " gives dimension " + std::to_string(d) + " as " +
                   std::to_string(shape[d]) + ", the model says " +
                   std::to_string(dims->dim(static_cast<int>(d)).dim_value()));
      }
      dims->clear_dim();
      for (int64_t d : shape)
        dims->add_dim()->set_dim_value(d);
    }
  }

  void inferShapes() {
    // Value infos written by the exporter may hold dimensions the
    // overrides change; inference recomputes all of them.
    model_.mutable_graph()->clear_value_info();
    onnx::ShapeInferenceOptions strict(/*check_type_val=*/true,
                                       /*strict_mode_val=*/1,
                                       /*data_prop_val=*/true);
    try {
      onnx::shape_inference::InferShapes(
          model_, onnx::OpSchemaRegistry::Instance(), strict);
    } catch (const std::exception &e) {
      reportInferenceError(e.what());
    }
  }

  /// ONNX lists node errors as `(op_type:Add, node name: add): [Shape
  /// InferenceError] message`; the first becomes an error at that node.
  [[noreturn]] void reportInferenceError(const std::string &text) const {
    const std::string opKey = "(op_type:", nameKey = ", node name: ";
    size_t at = text.find(opKey);
    size_t nameAt = at == std::string::npos ? at : text.find(nameKey, at);
    size_t end =
        nameAt == std::string::npos ? nameAt : text.find("): ", nameAt);
    if (end == std::string::npos)
      fail("", "ONNX shape inference: " + oneLine(text));
    std::string opType =
        text.substr(at + opKey.size(), nameAt - at - opKey.size());
    std::string name =
        text.substr(nameAt + nameKey.size(), end - nameAt - nameKey.size());
    std::string message = text.substr(end + 3);
    message = message.substr(0, message.find('\n'));
    for (const char *tag : {"[ShapeInferenceError] ", "[TypeInferenceError] "})
      if (message.rfind(tag, 0) == 0)
        message = message.substr(std::string(tag).size());
    const auto &nodes = model_.graph().node();
    for (int i = 0; i < nodes.size(); ++i)
      if (!name.empty() && nodes.Get(i).name() == name &&
          nodes.Get(i).op_type() == opType)
        fail(nodePath(i),
             describeNode(nodes.Get(i)) + ": ONNX shape inference: " + message +
                 (std::count(opsetChange_.splitsByCount.begin(),
                             opsetChange_.splitsByCount.end(), i)
                      ? " (a Split of opset 18 by num_outputs must be even "
                        "here: the importer reads Split as opset 17 "
                        "defines it)"
                      : ""));
    fail("", "node (" + opType + "): ONNX shape inference: " + message);
  }

  void indexGraph() {
    const auto &g = model_.graph();
    for (const TensorProto &t : g.initializer()) {
      constants_[t.name()] = &t;
      initializers_.insert(t.name());
    }
    for (const auto &s : g.sparse_initializer())
      constantProblems_[s.values().name()] = "it is a sparse initializer";
    for (int i = 0; i < g.node_size(); ++i) {
      const NodeProto &node = g.node(i);
      if (isDefaultDomain(node) && node.op_type() == "Constant" &&
          node.output_size() == 1)
        indexConstantNode(node);
      for (const std::string &out : node.output())
        if (!out.empty())
          producer_[out] = i;
      for (int k = 0; k < node.input_size(); ++k)
        if (!node.input(k).empty())
          consumers_[node.input(k)].push_back({i, k});
      if (!node.name().empty())
        reservedOpNames_.insert(node.name());
    }
    for (const auto &v : g.input())
      types_[v.name()] = &v.type();
    for (const auto &v : g.value_info())
      types_[v.name()] = &v.type();
    for (const auto &v : g.output()) {
      types_[v.name()] = &v.type();
      graphOutputs_.insert(v.name());
    }
    for (const auto &[name, type] : types_)
      reservedValueNames_.insert(name);
    for (const auto &[name, t] : constants_)
      reservedValueNames_.insert(name);
    for (const auto &[name, i] : producer_)
      reservedValueNames_.insert(name);
  }

  void indexConstantNode(const NodeProto &node) {
    const std::string &name = node.output(0);
    if (node.attribute_size() != 1) {
      constantProblems_[name] = "its Constant node has no single value";
      return;
    }
    const AttributeProto &a = node.attribute(0);
    if (a.name() == "value") {
      constants_[name] = &a.t();
      return;
    }
    auto t = std::make_unique<TensorProto>();
    if (a.name() == "value_float") {
      t->set_data_type(TensorProto::FLOAT);
      t->add_float_data(a.f());
    } else if (a.name() == "value_floats") {
      t->set_data_type(TensorProto::FLOAT);
      t->add_dims(a.floats_size());
      for (float f : a.floats())
        t->add_float_data(f);
    } else if (a.name() == "value_int") {
      t->set_data_type(TensorProto::INT64);
      t->add_int64_data(a.i());
    } else if (a.name() == "value_ints") {
      t->set_data_type(TensorProto::INT64);
      t->add_dims(a.ints_size());
      for (int64_t v : a.ints())
        t->add_int64_data(v);
    } else {
      constantProblems_[name] =
          "its Constant node gives '" + a.name() + "', which holds no numbers";
      return;
    }
    constants_[name] = t.get();
    ownedConstants_.push_back(std::move(t));
  }

  /// Marks the values needed as data by the graph outputs (through the data
  /// inputs of the nodes computing them) and the nodes producing them.
  void markNeeded() {
    const auto &g = model_.graph();
    nodeNeeded_.assign(static_cast<size_t>(g.node_size()), false);
    std::vector<std::string> work(graphOutputs_.begin(), graphOutputs_.end());
    while (!work.empty()) {
      std::string name = std::move(work.back());
      work.pop_back();
      if (!needed_.insert(name).second)
        continue;
      auto p = producer_.find(name);
      if (p == producer_.end() || nodeNeeded_[static_cast<size_t>(p->second)])
        continue;
      nodeNeeded_[static_cast<size_t>(p->second)] = true;
      const NodeProto &node = g.node(p->second);
      const OpRule *rule =
          isDefaultDomain(node) ? findRule(node.op_type()) : nullptr;
      for (int k = 0; k < node.input_size(); ++k) {
        bool param = rule ? k < 32 && ((rule->paramInputs >> k) & 1u)
                          : isDefaultDomain(node) &&
                                isHostParamInput(node.op_type(), k);
        // A computed input the host fallback reads as data must exist.
        if (param && rule && options_.hostFallback && k < 32 &&
            ((rule->hostDataInputs >> k) & 1u) && !isConstant(node.input(k)))
          param = false;
        if (!node.input(k).empty() && !param)
          work.push_back(node.input(k));
      }
    }
  }

  std::string notNeededReason(const NodeProto &node) const {
    for (const std::string &out : node.output())
      if (consumers_.contains(out) || graphOutputs_.contains(out))
        return "not needed: its results only feed static inputs (shapes, "
               "axes, sizes) of other nodes, which are read at import time";
    return "not needed: nothing uses its results";
  }

  void addInputs() {
    const auto &inputs = model_.graph().input();
    for (int i = 0; i < inputs.size(); ++i) {
      const auto &in = inputs.Get(i);
      // Before IR version 4, initializers were listed as inputs too; the
      // initializer gives the value.
      if (constants_.contains(in.name()))
        continue;
      std::string path = "graph.input[" + std::to_string(i) + "]";
      const TypeProto &type = in.type();
      if (!type.has_tensor_type()) {
        nonDataInputs_[in.name()] = "is not a tensor";
        continue;
      }
      std::optional<ElementType> et =
          elementTypeOf(type.tensor_type().elem_type());
      if (!et) {
        nonDataInputs_[in.name()] =
            "has element type " + onnxTypeName(type.tensor_type().elem_type()) +
            "; model inputs must be FLOAT or FLOAT16";
        continue;
      }
      if (!type.tensor_type().has_shape())
        fail(path, "input '" + in.name() +
                       "' has no shape; give it with a shape override "
                       "(--shape " +
                       in.name() + "=D0,D1,...)");
      Shape shape;
      const auto &dims = type.tensor_type().shape().dim();
      for (int d = 0; d < dims.size(); ++d) {
        const auto &dim = dims.Get(d);
        if (!dim.has_dim_value())
          fail(path,
               "input '" + in.name() + "': dimension " + std::to_string(d) +
                   (dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : "") +
                   " is not static; give the input's shape with a shape "
                   "override (--shape " +
                   in.name() + "=D0,D1,...)");
        shape.push_back(dim.dim_value());
      }
      std::string problem = checkShape(shape);
      if (!problem.empty())
        fail(path,
             "input '" + in.name() + "' " + shapeStr(shape) + ": " + problem);
      if (in.name().empty() || graph_.findValue(in.name()))
        fail(path, in.name().empty()
                       ? std::string("an input has an empty name")
                       : "input '" + in.name() + "' is listed twice");
      values_[in.name()] = graph_.addInput(in.name(), {*et, shape});
    }
  }

  // ---- Converting nodes ----

  void convertNode(int index) {
    const NodeProto &node = model_.graph().node(index);
    node_ = &node;
    nodeIndex_ = index;
    mainNamed_ = false;
    nodeBase_ = !node.name().empty() ? node.name()
                : node.output_size() > 0 && !node.output(0).empty()
                    ? node.output(0)
                    : node.op_type();
    if (!isDefaultDomain(node))
      unsupported("op type '" + node.op_type() + "' of domain '" +
                  node.domain() +
                  "' is not supported (only the default ONNX domain is)");
    const OpRule *rule = findRule(node.op_type());
    if (!rule)
      unsupported("op type '" + node.op_type() +
                  "' is not supported (docs/onnx.md lists the supported ops)");
    (this->*rule->convert)(node);
    checkOutputs(node);
  }

  /// After the device converter refused node `index`: converts it to a
  /// `host` op when the fallback is on and the host library runs it.
  /// Returns nullopt on success, else what to add to the device's reason.
  std::optional<std::string> tryHost(int index) {
    if (!options_.hostFallback)
      return std::string();
    const NodeProto &node = model_.graph().node(index);
    if (!isDefaultDomain(node) || !host::isHostOpType(node.op_type()))
      return std::string();
    try {
      node_ = &node;
      nodeIndex_ = index;
      mainNamed_ = false;
      convertHost(node);
      checkOutputs(node);
      return std::nullopt;
    } catch (const Unsupported &u) {
      return "; the host fallback cannot run it either: " + u.reason;
    }
  }

  /// The node as a `host` op: its ONNX attributes and constant parameter
  /// inputs become the op's attrs JSON, its float inputs its operands.
  void convertHost(const NodeProto &node) {
    nlohmann::json attrs = nlohmann::json::object();
    for (const AttributeProto &a : node.attribute()) {
      switch (a.type()) {
      case AttributeProto::INT:
        attrs[a.name()] = a.i();
        break;
      case AttributeProto::FLOAT:
        attrs[a.name()] = static_cast<double>(a.f());
        break;
      case AttributeProto::STRING:
        attrs[a.name()] = a.s();
        break;
      case AttributeProto::INTS:
        attrs[a.name()] = std::vector<int64_t>(a.ints().begin(), a.ints().end());
        break;
      case AttributeProto::FLOATS: {
        std::vector<double> v(a.floats().begin(), a.floats().end());
        attrs[a.name()] = v;
        break;
      }
      default:
        unsupported("attribute '" + a.name() + "' has a type the host op "
                    "cannot take");
      }
    }
    std::vector<Value *> operands;
    const std::string &type = node.op_type();
    for (int k = 0; k < node.input_size(); ++k) {
      if (!hasInput(node, k))
        continue;
      if (!isHostParamInput(type, k)) {
        operands.push_back(hostData(node, k));
        continue;
      }
      const std::string name = hostParamName(type, k);
      const OnnxTensorValues *v = constInput(node, k);
      if (!v)
        notConstant(node, k, "the " + name, "; the host op needs it at "
                                            "compile time");
      const bool floatParam = name == "min" || name == "max" ||
                              name == "constant_value";
      if (floatParam) {
        if (v->values.size() != 1)
          unsupported("the " + name + " '" + node.input(k) +
                      "' must hold one value");
        attrs[name] = v->values[0];
        continue;
      }
      if (!isOnnxIntegerType(v->dataType))
        unsupported("the " + name + " '" + node.input(k) + "' is a " +
                    onnxTypeName(v->dataType) + " constant, not integers");
      if (name == "axis") {
        if (v->ints.size() != 1)
          unsupported("the axis '" + node.input(k) + "' must hold one value");
        attrs[name] = v->ints[0];
        continue;
      }
      attrs[name] = v->ints;
      if (name == "indices")
        attrs["indices_shape"] = v->dims;
    }
    if (operands.empty())
      unsupported("it has no float data input");
    if (node.output_size() != 1 || node.output(0).empty())
      unsupported("a host op has exactly one output");
    emitOutput(OpKind::Host, std::move(operands),
               AttrDict{{"op", type}, {"attrs", host::hostAttrsText(attrs)}});
  }

  /// Input `k` of a host op as data: a constant of an integer type (Pow's
  /// exponent) becomes a FLOAT constant, which holds its values exactly up
  /// to 2^24; anything else as data().
  Value *hostData(const NodeProto &node, int k) {
    const std::string &name = node.input(k);
    if (values_.contains(name) || !isConstant(name) ||
        elementTypeOf(constants_.at(name)->data_type()))
      return data(node, k);
    const OnnxTensorValues *v = constInput(node, k);
    if (!isOnnxIntegerType(v->dataType))
      return data(node, k);
    for (int64_t i : v->ints)
      if (i < -(int64_t{1} << 24) || i > (int64_t{1} << 24))
        unsupported("constant '" + name + "' holds " + std::to_string(i) +
                    ", which FLOAT does not hold exactly");
    Shape shape(v->dims.begin(), v->dims.end());
    std::string problem = checkShape(shape);
    if (!problem.empty())
      unsupported("constant '" + name + "' " + shapeStr(shape) + ": " +
                  problem);
    requireFreshName(name);
    Value *c = graph_.addConstant(
        name, ConstantData::fromDoubles({ElementType::F32, shape}, v->values));
    values_[name] = c;
    return c;
  }

  /// Every needed output is defined, with the type ONNX inferred for it.
  void checkOutputs(const NodeProto &node) {
    for (const std::string &out : node.output()) {
      if (out.empty() || !needed_.contains(out))
        continue;
      auto it = values_.find(out);
      SPYRE_ASSERT(it != values_.end(), "converter of " + node.op_type() +
                                            " left output '" + out +
                                            "' undefined");
      std::optional<TensorType> inferred = staticType(out);
      if (inferred && *inferred != it->second->type())
        unsupported("output '" + out + "' converts to " +
                    it->second->type().str() +
                    ", but ONNX shape inference gives " + inferred->str());
    }
  }

  /// Coverage: the results of an unsupported node become stand-in inputs,
  /// so that the nodes after it are judged on their own.
  void standInForOutputs(int index) {
    const NodeProto &node = model_.graph().node(index);
    for (const std::string &out : node.output()) {
      if (out.empty() || values_.contains(out))
        continue;
      std::optional<TensorType> type = staticType(out);
      if (type && !graph_.findValue(out))
        values_[out] = graph_.addInput(out, *type);
      else
        failedProducer_[out] = index;
    }
  }

  /// The type ONNX shape inference gives `name`, when it is a float tensor
  /// with a static shape the IR can hold.
  std::optional<TensorType> staticType(const std::string &name) const {
    auto it = types_.find(name);
    if (it == types_.end() || !it->second->has_tensor_type())
      return std::nullopt;
    std::optional<ElementType> et =
        elementTypeOf(it->second->tensor_type().elem_type());
    std::optional<Shape> shape = staticShape(name);
    if (!et || !shape)
      return std::nullopt;
    return TensorType{*et, *shape};
  }

  std::optional<Shape> staticShape(const std::string &name) const {
    auto it = types_.find(name);
    if (it == types_.end() || !it->second->has_tensor_type() ||
        !it->second->tensor_type().has_shape())
      return std::nullopt;
    Shape shape;
    for (const auto &dim : it->second->tensor_type().shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 1)
        return std::nullopt;
      shape.push_back(dim.dim_value());
    }
    if (!checkShape(shape).empty())
      return std::nullopt;
    return shape;
  }

  // ---- Inputs of the current node ----

  static bool hasInput(const NodeProto &node, int k) {
    return k < node.input_size() && !node.input(k).empty();
  }

  bool isConstant(const std::string &name) const {
    return constants_.contains(name);
  }

  /// Input `k` as an IR value (a constant is made on first use).
  Value *data(const NodeProto &node, int k) {
    if (!hasInput(node, k))
      unsupported("input " + std::to_string(k) + " is missing");
    const std::string &name = node.input(k);
    if (auto it = values_.find(name); it != values_.end())
      return it->second;
    if (auto it = constantProblems_.find(name); it != constantProblems_.end())
      unsupported("input '" + name + "' cannot be read: " + it->second);
    if (isConstant(name))
      return materialize(name);
    if (auto it = nonDataInputs_.find(name); it != nonDataInputs_.end())
      unsupported("input '" + name + "' is a model input that " + it->second);
    if (auto it = failedProducer_.find(name); it != failedProducer_.end())
      unsupported("input '" + name + "' comes from " +
                  describeNode(model_.graph().node(it->second)) +
                  ", which is not converted");
    unsupported("input '" + name +
                "' is neither a model input, a constant nor the result of a "
                "converted node");
  }

  /// The IR constant for an initializer or Constant node output.
  Value *materialize(const std::string &name) {
    const TensorProto &t = *constants_.at(name);
    std::optional<ElementType> et = elementTypeOf(t.data_type());
    if (!et)
      unsupported("constant '" + name + "' has element type " +
                  onnxTypeName(t.data_type()) +
                  "; tensors used as data must be FLOAT or FLOAT16 (integers "
                  "only where a shape or axes are expected)");
    Shape shape(t.dims().begin(), t.dims().end());
    std::string problem = checkShape(shape);
    if (!problem.empty())
      unsupported("constant '" + name + "' " + shapeStr(shape) + ": " +
                  problem);
    TensorType type{*et, shape};
    requireFreshName(name);
    ConstantDataPtr data;
    if (auto ext = external_.find(name); ext != external_.end()) {
      data = deferredConstant(type, ext->second);
    } else if (t.has_raw_data() && t.data_location() != TensorProto::EXTERNAL &&
        std::endian::native == std::endian::little &&
        static_cast<int64_t>(t.raw_data().size()) == type.byteSize()) {
      // raw_data holds little-endian elements, as the IR stores them. An
      // initializer's bytes move (the model is the importer's own copy), so
      // a large model is not held twice; constInput reads them back from
      // the IR constant.
      if (initializers_.contains(name)) {
        data = ConstantData::create(
            type, std::move(*const_cast<TensorProto &>(t).mutable_raw_data()));
        movedToIr_.insert(name);
      } else {
        data = ConstantData::create(type, t.raw_data());
      }
    } else {
      std::string why;
      std::optional<OnnxTensorValues> v = readOnnxTensor(t, why);
      if (!v)
        unsupported("constant '" + name + "' cannot be read: " + why);
      data = ConstantData::fromDoubles(type, v->values);
    }
    Value *c = graph_.addConstant(name, std::move(data));
    values_[name] = c;
    return c;
  }

  /// An initializer's data in an external file, read when first needed.
  static ConstantDataPtr deferredConstant(const TensorType &type,
                                          const OnnxExternalData &where) {
    std::string source = where.location + "@" + std::to_string(where.offset) +
                         "+" + std::to_string(where.length);
    return ConstantData::deferred(type, std::move(source), [type, where] {
      std::string bytes = readOnnxExternalData(where);
      if (std::endian::native == std::endian::little)
        return bytes; // little-endian elements, as the IR stores them
      TensorProto t;
      t.set_data_type(type.elementType == ElementType::F16
                          ? TensorProto::FLOAT16
                          : TensorProto::FLOAT);
      for (int64_t d : type.shape)
        t.add_dims(d);
      t.set_raw_data(std::move(bytes));
      std::string why;
      std::optional<OnnxTensorValues> v = readOnnxTensor(t, why);
      SPYRE_ASSERT(v.has_value(), "external data re-read: " + why);
      return ConstantData::fromDoubles(type, v->values)->bytes();
    });
  }

  /// The tensor of constant `name` with its data in the message (external
  /// data read now).
  const TensorProto &withData(const std::string &name) {
    const TensorProto &t = *constants_.at(name);
    auto ext = external_.find(name);
    if (ext == external_.end())
      return t;
    auto read = std::make_unique<TensorProto>(t);
    read->clear_external_data();
    read->clear_data_location();
    read->set_raw_data(readOnnxExternalData(ext->second));
    const TensorProto *p = read.get();
    ownedConstants_.push_back(std::move(read));
    constants_[name] = p;
    external_.erase(ext);
    return *p;
  }

  /// The values of input `k` when it is a constant; nullptr when it is
  /// computed or a model input.
  const OnnxTensorValues *constInput(const NodeProto &node, int k) {
    if (!hasInput(node, k))
      return nullptr;
    const std::string &name = node.input(k);
    if (auto it = constantProblems_.find(name); it != constantProblems_.end())
      unsupported("input '" + name + "' cannot be read: " + it->second);
    auto c = constants_.find(name);
    if (c == constants_.end())
      return nullptr;
    auto cached = constantValues_.find(name);
    if (cached != constantValues_.end())
      return &cached->second;
    if (movedToIr_.contains(name)) {
      const ConstantData &d = values_.at(name)->constantData();
      OnnxTensorValues v;
      v.dims = d.type().shape;
      v.dataType = c->second->data_type();
      v.values = d.toDoubles();
      return &constantValues_.emplace(name, std::move(v)).first->second;
    }
    std::string why;
    std::optional<OnnxTensorValues> v = readOnnxTensor(withData(name), why);
    if (!v)
      unsupported("constant '" + name + "' cannot be read: " + why);
    return &constantValues_.emplace(name, std::move(*v)).first->second;
  }

  /// Integer values of constant input `k` (`what` names it in messages);
  /// nullopt when the input is computed or a model input.
  std::optional<std::vector<int64_t>> constInts(const NodeProto &node, int k,
                                                const std::string &what) {
    const OnnxTensorValues *v = constInput(node, k);
    if (!v)
      return std::nullopt;
    if (!isOnnxIntegerType(v->dataType))
      unsupported(what + " '" + node.input(k) + "' is a " +
                  onnxTypeName(v->dataType) + " constant, not integers");
    return v->ints;
  }

  /// `what 'name' is not a constant`, for static inputs computed at run time.
  [[noreturn]] void notConstant(const NodeProto &node, int k,
                                const std::string &what,
                                const std::string &consequence) {
    unsupported(what + " '" + node.input(k) + "' is not a constant" +
                consequence);
  }

  static const AttributeProto *findAttr(const NodeProto &node,
                                        std::string_view name) {
    for (const AttributeProto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }

  static int64_t intAttr(const NodeProto &node, std::string_view name,
                         int64_t fallback) {
    const AttributeProto *a = findAttr(node, name);
    return a ? a->i() : fallback;
  }

  static double floatAttr(const NodeProto &node, std::string_view name,
                          float fallback) {
    const AttributeProto *a = findAttr(node, name);
    return a ? a->f() : fallback;
  }

  static std::optional<std::vector<int64_t>> intsAttr(const NodeProto &node,
                                                      std::string_view name) {
    const AttributeProto *a = findAttr(node, name);
    if (!a)
      return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }

  bool isNeeded(const NodeProto &node, int output) const {
    return output < node.output_size() && !node.output(output).empty() &&
           needed_.contains(node.output(output));
  }

  // ---- Building IR ----

  /// A name the model defines twice would break the IR's one-definition
  /// rule; the checker's SSA check should have caught it.
  void requireFreshName(const std::string &name) const {
    if (name.empty() || graph_.findValue(name))
      unsupported(name.empty() ? std::string("a value has an empty name")
                               : "value '" + name + "' is defined twice");
  }

  std::string freshValueName(const std::string &base) const {
    for (int k = 0;; ++k) {
      std::string name = k == 0 ? base : base + "." + std::to_string(k);
      if (!graph_.findValue(name) && !reservedValueNames_.contains(name))
        return name;
    }
  }

  std::string freshOpName(const std::string &base) const {
    for (int k = 0;; ++k) {
      std::string name = k == 0 ? base : base + "." + std::to_string(k);
      if (!graph_.findOp(name) && !reservedOpNames_.contains(name))
        return name;
    }
  }

  /// Builds an op of the current node with results named `resultNames`.
  /// The first op giving a result of the node takes the node's name; the
  /// others are named after it and their kind.
  Op *emit(OpKind kind, std::vector<Value *> operands, AttrDict attrs,
           std::vector<std::string> resultNames, bool givesNodeResult) {
    const OpDef &def = opDef(kind);
    std::vector<OpIssue> issues;
    std::vector<TensorType> types;
    for (const Value *v : operands)
      types.push_back(v->type());
    std::optional<std::vector<TensorType>> results;
    if (completeAttrs(def, attrs, issues))
      results = checkOp(def, types, attrs, issues);
    if (!results)
      unsupported("the IR's " + std::string(def.name) + " rejects it: " +
                  (issues.empty() ? "" : issues.front().message));
    SPYRE_ASSERT(results->size() == resultNames.size(),
                 "result names for " + std::string(def.name));
    std::string opName;
    if (givesNodeResult && !mainNamed_) {
      opName = graph_.uniqueOpName(nodeBase_);
      mainNamed_ = true;
    } else {
      opName = freshOpName(nodeBase_ + "." + std::string(def.name));
    }
    std::vector<ResultSpec> specs;
    for (size_t i = 0; i < results->size(); ++i) {
      requireFreshName(resultNames[i]);
      specs.push_back({resultNames[i], (*results)[i]});
    }
    Op *op = graph_.createOp(kind, opName, std::move(operands),
                             std::move(attrs), std::move(specs));
    op->setLoc(SourceLoc{file_, 0, 0, nodePath(nodeIndex_)});
    return op;
  }

  /// An op whose result is output `k` of the current node.
  Value *emitOutput(OpKind kind, std::vector<Value *> operands, AttrDict attrs,
                    int k = 0) {
    const std::string &name = node_->output(k);
    Value *v = emit(kind, std::move(operands), std::move(attrs), {name}, true)
                   ->result();
    values_[name] = v;
    return v;
  }

  /// An op computing an intermediate value of the current node.
  Value *emitHelper(OpKind kind, std::vector<Value *> operands, AttrDict attrs,
                    const std::string &role) {
    std::string name = freshValueName(outputBase() + "." + role);
    return emit(kind, std::move(operands), std::move(attrs), {name}, false)
        ->result();
  }

  std::string outputBase() const {
    return node_->output_size() > 0 && !node_->output(0).empty()
               ? node_->output(0)
               : nodeBase_;
  }

  /// A constant made by the importer (a scale, a select mask).
  Value *makeConstant(const std::string &role, ElementType type,
                      const Shape &shape, const std::vector<double> &values) {
    std::string name = freshValueName(outputBase() + "." + role);
    return graph_.addConstant(name,
                              ConstantData::fromDoubles({type, shape}, values));
  }

  // ---- Converters, one per op family ----

public:
  void convertUnary(const NodeProto &node) {
    static const std::map<std::string, OpKind, std::less<>> kKinds = {
        {"Abs", OpKind::Abs},
        {"Erf", OpKind::Erf},
        {"Exp", OpKind::Exp},
        {"Neg", OpKind::Neg},
        {"Reciprocal", OpKind::Reciprocal},
        {"Relu", OpKind::Relu},
        {"Sigmoid", OpKind::Sigmoid},
        {"Sqrt", OpKind::Sqrt},
        {"Tanh", OpKind::Tanh}};
    emitOutput(kKinds.at(node.op_type()), {data(node, 0)}, {});
  }

  void convertBinary(const NodeProto &node) {
    static const std::map<std::string, OpKind, std::less<>> kKinds = {
        {"Add", OpKind::Add},
        {"Sub", OpKind::Sub},
        {"Mul", OpKind::Mul},
        {"Div", OpKind::Div}};
    if (node.op_type() == "Add" && fuseCausalMaskAdd(node))
      return;
    emitOutput(kKinds.at(node.op_type()), {data(node, 0), data(node, 1)}, {});
  }

  void convertPow(const NodeProto &node) {
    Value *x = data(node, 0);
    const OnnxTensorValues *e = constInput(node, 1);
    if (!e)
      notConstant(node, 1, "the exponent",
                  "; the device takes only a constant exponent with one "
                  "element");
    if (e->elementCount() != 1)
      unsupported("the exponent '" + node.input(1) + "' has " +
                  std::to_string(e->elementCount()) +
                  " elements; the device takes only a constant exponent with "
                  "one element");
    emitOutput(OpKind::Pow, {x}, {{"exponent", e->values[0]}});
  }

  void convertMatMul(const NodeProto &node) {
    Value *a = data(node, 0), *b = data(node, 1);
    bool rowA = a->type().rank() == 1, columnB = b->type().rank() == 1;
    if (!rowA && !columnB) {
      emitOutput(OpKind::Matmul, {a, b}, {});
      return;
    }
    // NumPy's rule for 1-D operands: a vector a is a row [1, K], a vector b
    // a column [K, 1], and the added dimension is dropped from the result.
    if (rowA)
      a = emitHelper(OpKind::Unsqueeze, {a}, {{"axes", Attribute::ints({0})}},
                     "row");
    if (columnB)
      b = emitHelper(OpKind::Unsqueeze, {b}, {{"axes", Attribute::ints({1})}},
                     "column");
    Value *p = emitHelper(OpKind::Matmul, {a, b}, {}, "matmul");
    Shape shape = p->type().shape;
    if (columnB)
      shape.pop_back();
    if (rowA)
      shape.erase(shape.end() - (columnB ? 1 : 2));
    emitOutput(OpKind::Reshape, {p}, {{"shape", Attribute::ints(shape)}});
  }

  void convertGemm(const NodeProto &node) {
    Value *a = data(node, 0), *b = data(node, 1);
    double alpha = floatAttr(node, "alpha", 1.0f);
    double beta = floatAttr(node, "beta", 1.0f);
    // C is unused when beta is 0 (ONNX computes 0 * C; a finite C adds 0).
    bool bias = hasInput(node, 2) && beta != 0.0;
    bool scale = alpha != 1.0;
    ElementType et = a->type().elementType;
    AttrDict mm{{"transpose_a", intAttr(node, "transA", 0) != 0},
                {"transpose_b", intAttr(node, "transB", 0) != 0}};
    if (!scale && !bias) {
      emitOutput(OpKind::Matmul, {a, b}, std::move(mm));
      return;
    }
    Value *y = emitHelper(OpKind::Matmul, {a, b}, std::move(mm), "matmul");
    if (scale) {
      Value *alphaConst = makeConstant("alpha", et, {}, {alpha});
      y = bias ? emitHelper(OpKind::Mul, {y, alphaConst}, {}, "scaled")
               : emitOutput(OpKind::Mul, {y, alphaConst}, {});
    }
    if (!bias)
      return;
    Value *c = data(node, 2);
    if (beta != 1.0)
      c = emitHelper(OpKind::Mul, {c, makeConstant("beta", et, {}, {beta})}, {},
                     "bias");
    emitOutput(OpKind::Add, {y, c}, {});
  }

  void convertSoftmax(const NodeProto &node) {
    emitOutput(OpKind::Softmax, {data(node, 0)},
               {{"axis", intAttr(node, "axis", -1)}});
  }

  void convertLayerNorm(const NodeProto &node) {
    Value *x = data(node, 0), *scale = data(node, 1);
    Value *bias = hasInput(node, 2) ? data(node, 2) : nullptr;
    int64_t axisAttr = intAttr(node, "axis", -1);
    double eps = floatAttr(node, "epsilon", 1e-5f);
    std::optional<int64_t> axis = normalizeAxis(axisAttr, x->type().rank());
    if (!axis)
      unsupported("axis " + std::to_string(axisAttr) + " is out of range for " +
                  x->type().str());
    Shape normalized(x->type().shape.begin() + *axis, x->type().shape.end());
    AttrDict attrs{{"axis", axisAttr}, {"epsilon", eps}};
    bool fused = scale->type().shape == normalized &&
                 (!bias || bias->type().shape == normalized);
    if (fused) {
      std::vector<Value *> operands{x, scale};
      if (bias)
        operands.push_back(bias);
      emitOutput(OpKind::LayerNorm, operands, attrs);
    } else {
      // Scale and bias that broadcast to the normalised shape without
      // having it: normalise, then scale and shift with broadcasting.
      Value *y = emitHelper(OpKind::LayerNorm, {x}, attrs, "normalized");
      y = bias ? emitHelper(OpKind::Mul, {y, scale}, {}, "scaled")
               : emitOutput(OpKind::Mul, {y, scale}, {});
      if (bias)
        emitOutput(OpKind::Add, {y, bias}, {});
    }
    convertLayerNormStatistics(node, x, *axis, eps);
  }

  /// The optional Mean and InvStdDev outputs, computed as ONNX defines them.
  void convertLayerNormStatistics(const NodeProto &node, Value *x, int64_t axis,
                                  double eps) {
    bool wantMean = isNeeded(node, 1), wantInvStd = isNeeded(node, 2);
    if (!wantMean && !wantInvStd)
      return;
    if (x->type().elementType != ElementType::F32)
      unsupported("its Mean and InvStdDev outputs are FLOAT for a " +
                  std::string(elementTypeName(x->type().elementType)) +
                  " input, which the IR cannot mix");
    std::vector<int64_t> axes;
    for (int64_t d = axis; d < x->type().rank(); ++d)
      axes.push_back(d);
    AttrDict reduce{{"axes", Attribute::ints(axes)}, {"keepdims", true}};
    Value *mean = wantMean
                      ? emitOutput(OpKind::ReduceMean, {x}, reduce, 1)
                      : emitHelper(OpKind::ReduceMean, {x}, reduce, "mean");
    if (!wantInvStd)
      return;
    Value *d = emitHelper(OpKind::Sub, {x, mean}, {}, "centered");
    Value *sq = emitHelper(OpKind::Mul, {d, d}, {}, "squared");
    Value *var = emitHelper(OpKind::ReduceMean, {sq}, reduce, "variance");
    Value *epsConst = makeConstant("epsilon", ElementType::F32, {}, {eps});
    Value *shifted = emitHelper(OpKind::Add, {var, epsConst}, {}, "shifted");
    emitOutput(OpKind::Rsqrt, {shifted}, {}, 2);
  }

  void convertReduce(const NodeProto &node) {
    static const std::map<std::string, OpKind, std::less<>> kKinds = {
        {"ReduceMax", OpKind::ReduceMax},
        {"ReduceMean", OpKind::ReduceMean},
        {"ReduceSum", OpKind::ReduceSum}};
    OpKind kind = kKinds.at(node.op_type());
    Value *x = data(node, 0);
    int64_t rank = x->type().rank();
    bool keep = intAttr(node, "keepdims", 1) != 0;
    std::optional<std::vector<int64_t>> axes = intsAttr(node, "axes");
    if (hasInput(node, 1)) {
      axes = constInts(node, 1, "the axes");
      if (!axes)
        notConstant(node, 1, "the axes", "; only constant axes are supported");
    }
    if (!axes || axes->empty()) {
      if (intAttr(node, "noop_with_empty_axes", 0) != 0 || rank == 0) {
        emitOutput(OpKind::Reshape, {x},
                   {{"shape", Attribute::ints(x->type().shape)}});
        return;
      }
      axes.emplace();
      for (int64_t d = 0; d < rank; ++d)
        axes->push_back(d);
    }
    emitOutput(kind, {x},
               {{"axes", Attribute::ints(*axes)}, {"keepdims", keep}});
  }

  void convertTranspose(const NodeProto &node) {
    Value *x = data(node, 0);
    std::optional<std::vector<int64_t>> perm = intsAttr(node, "perm");
    if (!perm) {
      perm.emplace();
      for (int64_t d = x->type().rank(); d-- > 0;)
        perm->push_back(d);
    }
    emitOutput(OpKind::Transpose, {x}, {{"perm", Attribute::ints(*perm)}});
  }

  void convertReshape(const NodeProto &node) {
    Value *x = data(node, 0);
    const Shape &in = x->type().shape;
    std::vector<int64_t> target;
    if (std::optional<std::vector<int64_t>> shape =
            constInts(node, 1, "the shape")) {
      bool allowZero = intAttr(node, "allowzero", 0) != 0;
      target = *shape;
      for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] != 0)
          continue;
        // 0 copies the input's dimension, unless allowzero makes it a
        // real zero-size dimension.
        if (allowZero || i >= in.size())
          unsupported("the shape " + intsText(*shape) +
                      " gives a zero-size dimension, which is not supported");
        target[i] = in[i];
      }
    } else if (std::optional<Shape> inferred = staticShape(node.output(0))) {
      target = *inferred;
    } else {
      notConstant(node, 1, "the shape",
                  " and ONNX shape inference cannot make the result static");
    }
    emitOutput(OpKind::Reshape, {x}, {{"shape", Attribute::ints(target)}});
  }

  void convertSplit(const NodeProto &node) {
    Value *x = data(node, 0);
    int64_t axisAttr = intAttr(node, "axis", 0);
    std::optional<int64_t> axis = normalizeAxis(axisAttr, x->type().rank());
    if (!axis)
      unsupported("axis " + std::to_string(axisAttr) + " is out of range for " +
                  x->type().str());
    int64_t dim = x->type().shape[static_cast<size_t>(*axis)];
    int parts = node.output_size();
    if (parts == 0)
      unsupported("it has no outputs");
    std::optional<std::vector<int64_t>> sizes = intsAttr(node, "split");
    if (hasInput(node, 1)) {
      sizes = constInts(node, 1, "the split sizes");
      if (!sizes)
        sizes = splitSizesFromOutputs(node, *axis);
    }
    if (!sizes) {
      if (dim % parts != 0)
        unsupported("dimension " + std::to_string(*axis) + " of size " +
                    std::to_string(dim) + " does not split into " +
                    std::to_string(parts) + " equal parts");
      sizes = std::vector<int64_t>(static_cast<size_t>(parts), dim / parts);
    }
    for (int64_t s : *sizes)
      if (s == 0)
        unsupported("split sizes " + intsText(*sizes) +
                    " give a zero-size result, which is not supported");
    if (sizes->size() != static_cast<size_t>(parts))
      unsupported(std::to_string(sizes->size()) + " split sizes for " +
                  std::to_string(parts) + " outputs");
    std::vector<std::string> names;
    for (int i = 0; i < parts; ++i)
      names.push_back(
          !node.output(i).empty()
              ? node.output(i)
              : freshValueName(nodeBase_ + ".part" + std::to_string(i)));
    Op *op = emit(OpKind::Split, {x},
                  {{"axis", axisAttr}, {"sizes", Attribute::ints(*sizes)}},
                  names, true);
    for (int i = 0; i < parts; ++i)
      if (!node.output(i).empty())
        values_[node.output(i)] = op->result(static_cast<size_t>(i));
  }

  std::optional<std::vector<int64_t>>
  splitSizesFromOutputs(const NodeProto &node, int64_t axis) {
    std::vector<int64_t> sizes;
    for (const std::string &out : node.output()) {
      std::optional<Shape> s = out.empty() ? std::nullopt : staticShape(out);
      if (!s || static_cast<int64_t>(s->size()) <= axis)
        notConstant(node, 1, "the split sizes",
                    " and ONNX shape inference cannot make the results static");
      sizes.push_back((*s)[static_cast<size_t>(axis)]);
    }
    return sizes;
  }

  void convertConcat(const NodeProto &node) {
    std::vector<Value *> operands;
    for (int k = 0; k < node.input_size(); ++k)
      operands.push_back(data(node, k));
    emitOutput(OpKind::Concat, operands, {{"axis", intAttr(node, "axis", 0)}});
  }

  void convertSqueeze(const NodeProto &node) {
    Value *x = data(node, 0);
    std::optional<std::vector<int64_t>> axes = intsAttr(node, "axes");
    if (hasInput(node, 1)) {
      axes = constInts(node, 1, "the axes");
      if (!axes) {
        reshapeToInferred(node, x, "the axes");
        return;
      }
    }
    if (!axes) {
      axes.emplace();
      for (int64_t d = 0; d < x->type().rank(); ++d)
        if (x->type().shape[static_cast<size_t>(d)] == 1)
          axes->push_back(d);
    }
    emitOutput(OpKind::Squeeze, {x}, {{"axes", Attribute::ints(*axes)}});
  }

  void convertUnsqueeze(const NodeProto &node) {
    Value *x = data(node, 0);
    std::optional<std::vector<int64_t>> axes = intsAttr(node, "axes");
    if (hasInput(node, 1)) {
      axes = constInts(node, 1, "the axes");
      if (!axes) {
        reshapeToInferred(node, x, "the axes");
        return;
      }
    }
    if (!axes)
      unsupported("it gives no axes");
    emitOutput(OpKind::Unsqueeze, {x}, {{"axes", Attribute::ints(*axes)}});
  }

  /// Squeeze and Unsqueeze with computed axes: the result shape ONNX
  /// inferred says what they do.
  void reshapeToInferred(const NodeProto &node, Value *x,
                         const std::string &what) {
    std::optional<Shape> shape = staticShape(node.output(0));
    if (!shape)
      notConstant(node, 1, what,
                  " and ONNX shape inference cannot make the result static");
    emitOutput(OpKind::Reshape, {x}, {{"shape", Attribute::ints(*shape)}});
  }

  void convertFlatten(const NodeProto &node) {
    Value *x = data(node, 0);
    const Shape &in = x->type().shape;
    int64_t axisAttr = intAttr(node, "axis", 1);
    auto rank = static_cast<int64_t>(in.size());
    if (axisAttr < -rank || axisAttr > rank)
      unsupported("axis " + std::to_string(axisAttr) + " is out of range for " +
                  x->type().str());
    auto axis = static_cast<size_t>(axisAttr < 0 ? axisAttr + rank : axisAttr);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < in.size(); ++d)
      (d < axis ? outer : inner) *= in[d];
    emitOutput(OpKind::Reshape, {x},
               {{"shape", Attribute::ints({outer, inner})}});
  }

  void convertIdentity(const NodeProto &node) {
    Value *x = data(node, 0);
    // A reshape to the same shape keeps the output's own name; the
    // canonicalize pass removes it.
    emitOutput(OpKind::Reshape, {x},
               {{"shape", Attribute::ints(x->type().shape)}});
  }

  void convertConstant(const NodeProto &node) {
    // Converted only when something reads the value as data; static inputs
    // read it from the node.
    if (auto it = constantProblems_.find(node.output(0));
        it != constantProblems_.end())
      unsupported(it->second);
    if (!values_.contains(node.output(0)))
      materialize(node.output(0));
  }

  void convertWhere(const NodeProto &node) {
    const OnnxTensorValues *cond = constInput(node, 0);
    if (!cond)
      notConstant(node, 0, "the condition",
                  "; only a constant condition is supported");
    if (fuseCausalMaskWhere(node, *cond))
      return;
    // where(c, x, y) = x * c + y * (1 - c) with c as 0 and 1, and a constant
    // branch folded into one constant; exact for finite values (an inf or
    // NaN in the branch not taken would make NaN).
    Shape condShape(cond->dims.begin(), cond->dims.end());
    std::vector<double> keepX, keepY;
    for (double c : cond->values) {
      keepX.push_back(c != 0 ? 1.0 : 0.0);
      keepY.push_back(c != 0 ? 0.0 : 1.0);
    }
    std::optional<TensorType> outType = staticType(node.output(0));
    if (!outType)
      unsupported("ONNX shape inference gives its result no static float type");
    ElementType et = outType->elementType;
    if (!checkShape(condShape).empty())
      unsupported("the condition has shape " + shapeStr(condShape) +
                  ", which the IR cannot hold");
    std::vector<Value *> terms;
    std::vector<double> folded(static_cast<size_t>(outType->elementCount()),
                               0.0);
    bool anyFolded = false;
    for (int k : {1, 2}) {
      const std::vector<double> &keep = k == 1 ? keepX : keepY;
      const OnnxTensorValues *c =
          isConstant(node.input(k)) ? constInput(node, k) : nullptr;
      if (c) {
        Shape shape(c->dims.begin(), c->dims.end());
        if (broadcastShapes(shape, outType->shape) != outType->shape ||
            broadcastShapes(condShape, outType->shape) != outType->shape)
          unsupported("its operands do not broadcast to " + outType->str());
        std::vector<double> v =
            broadcastValues(c->values, shape, outType->shape);
        std::vector<double> m =
            broadcastValues(keep, condShape, outType->shape);
        for (size_t i = 0; i < folded.size(); ++i)
          folded[i] += m[i] != 0 ? v[i] : 0.0;
        anyFolded = true;
        continue;
      }
      Value *branch = data(node, k);
      Value *mask =
          makeConstant(k == 1 ? "keep_x" : "keep_y", et, condShape, keep);
      terms.push_back(emitHelper(OpKind::Mul, {branch, mask}, {},
                                 k == 1 ? "x_part" : "y_part"));
    }
    if (terms.empty()) {
      // Both branches constant: the result is a constant.
      const std::string &name = node.output(0);
      requireFreshName(name);
      values_[name] =
          graph_.addConstant(name, ConstantData::fromDoubles(*outType, folded));
      return;
    }
    if (anyFolded)
      terms.push_back(
          makeConstant("constant_part", et, outType->shape, folded));
    if (terms.size() == 1)
      terms.push_back(makeConstant("zero", et, {}, {0.0}));
    emitOutput(OpKind::Add, {terms[0], terms[1]}, {});
  }

private:
  // ---- Causal masks ----

  /// Whether every reader of `name` is a softmax over the last of `rank`
  /// axes, and it is not a graph output: then a finite large-negative mask
  /// gives the same result as -inf.
  bool onlySoftmaxReads(const std::string &name, int64_t rank) const {
    if (graphOutputs_.contains(name))
      return false;
    auto it = consumers_.find(name);
    if (it == consumers_.end())
      return false;
    for (auto [nodeIndex, inputIndex] : it->second) {
      const NodeProto &user = model_.graph().node(nodeIndex);
      if (!isDefaultDomain(user) || user.op_type() != "Softmax" ||
          inputIndex != 0)
        return false;
      std::optional<int64_t> axis =
          normalizeAxis(intAttr(user, "axis", -1), rank);
      if (!axis || *axis != rank - 1)
        return false;
    }
    return true;
  }

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
  bool fuseCausalMaskAdd(const NodeProto &node) {
    for (int m : {1, 0}) {
      const std::string &scoresName = node.input(1 - m);
      if (!isConstant(node.input(m)) || isConstant(scoresName) ||
          constants_.at(node.input(m))->dims_size() < 2)
        continue;
      const OnnxTensorValues *mask = constInput(node, m);
      if (!elementTypeOf(mask->dataType))
        continue;
      bool finite = false, valid = true;
      for (double v : mask->values) {
        if (v == 0 || v == -std::numeric_limits<double>::infinity())
          continue;
        if (v <= kLargeNegative)
          finite = true;
        else
          valid = false;
      }
      Value *scores = data(node, 1 - m);
      const Shape &s = scores->type().shape;
      if (!valid || !isCausalLayout(mask->dims, s, [&](int64_t f) {
            return mask->values[static_cast<size_t>(f)] != 0;
          }))
        continue;
      if (finite && (s[s.size() - 2] > s.back() ||
                     !onlySoftmaxReads(node.output(0), scores->type().rank())))
        continue;
      emitOutput(OpKind::CausalMaskAdd, {scores}, {});
      return true;
    }
    return false;
  }

  /// Where(causal, scores, fill) or Where(not causal, fill, scores) with a
  /// one-element fill of -inf (or a large negative number).
  bool fuseCausalMaskWhere(const NodeProto &node,
                           const OnnxTensorValues &cond) {
    for (int s : {1, 2}) {
      int f = 3 - s;
      if (!isConstant(node.input(f)) || isConstant(node.input(s)))
        continue;
      const OnnxTensorValues *fill = constInput(node, f);
      if (!elementTypeOf(fill->dataType) || fill->elementCount() != 1)
        continue;
      double v = fill->values[0];
      bool finite = std::isfinite(v);
      if (v != -std::numeric_limits<double>::infinity() &&
          !(finite && v <= kLargeNegative))
        continue;
      Value *scores = data(node, s);
      const Shape &shape = scores->type().shape;
      bool keepWhereTrue = s == 1;
      if (!isCausalLayout(cond.dims, shape, [&](int64_t i) {
            return (cond.values[static_cast<size_t>(i)] != 0) != keepWhereTrue;
          }))
        continue;
      if (finite && (shape[shape.size() - 2] > shape.back() ||
                     !onlySoftmaxReads(node.output(0), scores->type().rank())))
        continue;
      emitOutput(OpKind::CausalMaskAdd, {scores}, {});
      return true;
    }
    return false;
  }

  // ---- Outputs ----

  void setOutputs() {
    const auto &outputs = model_.graph().output();
    if (outputs.empty())
      fail("graph.output", "the model has no outputs");
    std::vector<Value *> values;
    for (int i = 0; i < outputs.size(); ++i) {
      const std::string &name = outputs.Get(i).name();
      std::string path = "graph.output[" + std::to_string(i) + "]";
      Value *v = nullptr;
      if (auto it = values_.find(name); it != values_.end())
        v = it->second;
      else if (auto p = constantProblems_.find(name);
               p != constantProblems_.end())
        fail(path, "output '" + name + "' cannot be read: " + p->second);
      else if (isConstant(name))
        v = materializeOutput(name, path);
      else if (auto in = nonDataInputs_.find(name); in != nonDataInputs_.end())
        fail(path, "output '" + name + "' is a model input that " + in->second);
      else
        fail(path, "output '" + name + "' is not computed by the model");
      if (std::find(values.begin(), values.end(), v) != values.end())
        fail(path, "output '" + name + "' is listed twice");
      values.push_back(v);
    }
    graph_.setOutputs(std::move(values));
  }

  Value *materializeOutput(const std::string &name, const std::string &path) {
    try {
      return materialize(name);
    } catch (const Unsupported &u) {
      fail(path, "output '" + name + "': " + u.reason);
    }
  }

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

constexpr unsigned kInput1 = 1u << 1;

// Sorted by op type (onnxSupportedOpTypes lists them in this order).
const OpRule kRules[] = {
    {"Abs", &Importer::convertUnary},
    {"Add", &Importer::convertBinary},
    {"Concat", &Importer::convertConcat},
    {"Constant", &Importer::convertConstant},
    {"Div", &Importer::convertBinary},
    {"Erf", &Importer::convertUnary},
    {"Exp", &Importer::convertUnary},
    {"Flatten", &Importer::convertFlatten},
    {"Gemm", &Importer::convertGemm},
    {"Identity", &Importer::convertIdentity},
    {"LayerNormalization", &Importer::convertLayerNorm},
    {"MatMul", &Importer::convertMatMul},
    {"Mul", &Importer::convertBinary},
    {"Neg", &Importer::convertUnary},
    {"Pow", &Importer::convertPow, kInput1, kInput1},
    {"Reciprocal", &Importer::convertUnary},
    {"ReduceMax", &Importer::convertReduce},
    {"ReduceMean", &Importer::convertReduce},
    {"ReduceSum", &Importer::convertReduce, kInput1},
    {"Relu", &Importer::convertUnary},
    {"Reshape", &Importer::convertReshape, kInput1},
    {"Sigmoid", &Importer::convertUnary},
    {"Softmax", &Importer::convertSoftmax},
    {"Split", &Importer::convertSplit, kInput1},
    {"Sqrt", &Importer::convertUnary},
    {"Squeeze", &Importer::convertSqueeze, kInput1},
    {"Sub", &Importer::convertBinary},
    {"Tanh", &Importer::convertUnary},
    {"Transpose", &Importer::convertTranspose},
    {"Unsqueeze", &Importer::convertUnsqueeze, kInput1},
    {"Where", &Importer::convertWhere, 1u << 0},
};

const OpRule *findRule(std::string_view opType) {
  for (const OpRule &r : kRules)
    if (r.opType == opType)
      return &r;
  return nullptr;
}

} // namespace

std::span<const std::string_view> onnxSupportedOpTypes() {
  static const std::vector<std::string_view> types = [] {
    std::vector<std::string_view> t;
    for (const OpRule &r : kRules)
      t.push_back(r.opType);
    SPYRE_ASSERT(std::is_sorted(t.begin(), t.end()),
                 "ONNX op rules out of order");
    return t;
  }();
  return types;
}

bool isOnnxStaticInput(std::string_view opType, int index) {
  const OpRule *rule = findRule(opType);
  return rule && index >= 0 && index < 32 &&
         ((rule->paramInputs >> index) & 1u);
}

namespace {

/// The parameter inputs of host ops, by position, under the attribute
/// names the host library reads (host/HostOp.h).
struct HostParams {
  std::string_view opType;
  std::array<std::string_view, 5> names;
};
constexpr HostParams kHostParams[] = {
    {"Clip", {"", "min", "max"}},
    {"CumSum", {"", "axis"}},
    {"Expand", {"", "shape"}},
    {"Gather", {"", "indices"}},
    {"Pad", {"", "pads", "constant_value"}},
    {"Slice", {"", "starts", "ends", "axes", "steps"}},
    {"Tile", {"", "repeats"}},
};

} // namespace

std::string hostParamName(std::string_view opType, int index) {
  for (const HostParams &p : kHostParams)
    if (p.opType == opType && index >= 0 &&
        static_cast<size_t>(index) < p.names.size())
      return std::string(p.names[static_cast<size_t>(index)]);
  return "";
}

bool isHostParamInput(std::string_view opType, int index) {
  return !hostParamName(opType, index).empty();
}

namespace {

namespace pbio = google::protobuf::io;
using google::protobuf::internal::WireFormatLite;

/// One field of a message read from `in`, through a CodedInputStream of its
/// own: protobuf counts a stream's bytes in an int, so no single stream may
/// read a whole model above 2 GiB, but each of its parts is smaller.
class FieldReader {
public:
  explicit FieldReader(pbio::ZeroCopyInputStream &in) : coded_(&in) {
    coded_.SetTotalBytesLimit(std::numeric_limits<int>::max());
  }
  pbio::CodedInputStream &coded() { return coded_; }
  /// Bytes read so far (the tag, a length, the field).
  uint64_t used() const {
    return static_cast<uint64_t>(coded_.CurrentPosition());
  }

private:
  pbio::CodedInputStream coded_;
};

/// Appends the field of `tag`, read from `r`, to `rest` as it was encoded.
bool copyField(FieldReader &r, uint32_t tag, std::string &rest) {
  pbio::StringOutputStream sink(&rest);
  pbio::CodedOutputStream out(&sink);
  return WireFormatLite::SkipField(&r.coded(), tag, &out);
}

/// The repeated message field of GraphProto that `field` numbers, or
/// nullptr for the others (name, doc_string), which are copied.
google::protobuf::MessageLite *graphEntry(onnx::GraphProto &g, int field) {
  switch (field) {
  case onnx::GraphProto::kNodeFieldNumber:
    return g.add_node();
  case onnx::GraphProto::kInitializerFieldNumber:
    return g.add_initializer();
  case onnx::GraphProto::kSparseInitializerFieldNumber:
    return g.add_sparse_initializer();
  case onnx::GraphProto::kInputFieldNumber:
    return g.add_input();
  case onnx::GraphProto::kOutputFieldNumber:
    return g.add_output();
  case onnx::GraphProto::kValueInfoFieldNumber:
    return g.add_value_info();
  case onnx::GraphProto::kQuantizationAnnotationFieldNumber:
    return g.add_quantization_annotation();
  default:
    return nullptr;
  }
}

/// The `length` bytes of a GraphProto, entry by entry: each node and
/// initializer is parsed on its own, so the graph may exceed 2 GiB as long
/// as each of them does not.
bool parseGraph(pbio::ZeroCopyInputStream &in, uint64_t length,
                onnx::GraphProto &graph) {
  std::string rest;
  while (length > 0) {
    FieldReader r(in);
    const uint32_t tag = r.coded().ReadTag();
    if (tag == 0)
      return false;
    google::protobuf::MessageLite *entry = nullptr;
    if (WireFormatLite::GetTagWireType(tag) ==
        WireFormatLite::WIRETYPE_LENGTH_DELIMITED)
      entry = graphEntry(graph, WireFormatLite::GetTagFieldNumber(tag));
    if (entry) {
      uint32_t size = 0;
      if (!r.coded().ReadVarint32(&size) ||
          size > static_cast<uint32_t>(std::numeric_limits<int>::max() - 16))
        return false;
      pbio::CodedInputStream::Limit limit =
          r.coded().PushLimit(static_cast<int>(size));
      if (!entry->MergePartialFromCodedStream(&r.coded()) ||
          !r.coded().ConsumedEntireMessage())
        return false;
      r.coded().PopLimit(limit);
    } else if (!copyField(r, tag, rest)) {
      return false;
    }
    if (r.used() > length)
      return false;
    length -= r.used();
  }
  return graph.MergeFromString(rest);
}

/// A ModelProto from `in`, its graph through parseGraph.
bool parseModel(pbio::ZeroCopyInputStream &in, onnx::ModelProto &model) {
  std::string rest;
  for (;;) {
    uint64_t graphLength = 0;
    {
      FieldReader r(in);
      const uint32_t tag = r.coded().ReadTag();
      if (tag == 0)
        return r.coded().ConsumedEntireMessage() &&
               model.MergeFromString(rest);
      const bool graph = WireFormatLite::GetTagFieldNumber(tag) ==
                             onnx::ModelProto::kGraphFieldNumber &&
                         WireFormatLite::GetTagWireType(tag) ==
                             WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
      if (!graph) {
        if (!copyField(r, tag, rest))
          return false;
        continue;
      }
      if (!r.coded().ReadVarint64(&graphLength))
        return false;
    } // the reader gives back what it buffered beyond the length
    if (!parseGraph(in, graphLength, *model.mutable_graph()))
      return false;
  }
}

} // namespace

bool readOnnxModel(const std::string &path, onnx::ModelProto &model,
                   DiagnosticEngine &diags) {
  std::optional<uint64_t> size;
  try {
    size = checkInputFile(path, kOnnxFileLimit);
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    return false;
  }
  if (size && *size == 0) {
    diags.error(SourceLoc{path}, "the file is empty; expected an ONNX model");
    return false;
  }
  // The parsed model holds about the file's bytes.
  try {
    HostMemoryEstimate need;
    need.add("the model", size.value_or(0));
    checkHostMemory(need, physicalMemoryBytes(), SourceLoc{path});
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    return false;
  }
  // Parsed from the file as a stream, part by part: the file's bytes are
  // not held in a buffer beside the message they become, and a model above
  // protobuf's 2 GiB message limit reads as long as each node and
  // initializer is below it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    diags.error(SourceLoc{path},
                std::string("cannot open file: ") + std::strerror(errno));
    return false;
  }
  pbio::FileInputStream file(fd);
  file.SetCloseOnDelete(true);
  const bool parsed = parseModel(file, model);
  if (file.GetErrno() != 0) {
    diags.error(SourceLoc{path},
                std::string("read error: ") + std::strerror(file.GetErrno()));
    return false;
  }
  if (!parsed) {
    diags.error(SourceLoc{path},
                "not an ONNX model: the file does not parse as an ONNX "
                "ModelProto (protobuf)");
    return false;
  }
  return true;
}

namespace {

std::optional<Graph> importModel(ModelProto model, const std::string &fileName,
                                 const OnnxImportOptions &options,
                                 DiagnosticEngine &diags) {
  std::optional<Graph> graph;
  try {
    graph.emplace(Importer(std::move(model), fileName, options).run());
    graph->setSourceFile(fileName);
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    return std::nullopt;
  }
  if (!verifyGraph(*graph, diags))
    return std::nullopt;
  return graph;
}

std::vector<OpCoverage> coverageOf(ModelProto model,
                                   const std::string &fileName,
                                   const OnnxImportOptions &options,
                                   DiagnosticEngine &diags) {
  try {
    return Importer(std::move(model), fileName, options).coverage();
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    return {};
  }
}

} // namespace

std::optional<Graph> importOnnxModel(const onnx::ModelProto &model,
                                     const std::string &fileName,
                                     const OnnxImportOptions &options,
                                     DiagnosticEngine &diags) {
  return importModel(model, fileName, options, diags);
}

std::optional<Graph> importOnnx(const std::string &path,
                                const OnnxImportOptions &options,
                                DiagnosticEngine &diags) {
  onnx::ModelProto model;
  if (!readOnnxModel(path, model, diags))
    return std::nullopt;
  return importModel(std::move(model), path, options, diags);
}

std::vector<OpCoverage> onnxCoverage(const onnx::ModelProto &model,
                                     const std::string &fileName,
                                     const OnnxImportOptions &options,
                                     DiagnosticEngine &diags) {
  return coverageOf(model, fileName, options, diags);
}

std::vector<OpCoverage> onnxCoverage(const std::string &path,
                                     const OnnxImportOptions &options,
                                     DiagnosticEngine &diags) {
  onnx::ModelProto model;
  if (!readOnnxModel(path, model, diags))
    return {};
  return coverageOf(std::move(model), path, options, diags);
}

} // namespace spyre::compiler
