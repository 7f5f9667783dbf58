// The ONNX importer (OnnxImporter.h): the run over the nodes, node
// conversion and the host fallback, the inputs of a node, building IR,
// outputs, and the entry points. The model's checks and indexes before
// conversion are OnnxPrepare.cpp.
#include "compiler/import/OnnxImporter.h"

#include "compiler/import/OnnxLlmPatterns.h"
#include "compiler/ir/Verifier.h"
#include "host/HostOp.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "support/FileIO.h"
#include "support/HostMemory.h"
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <unistd.h>

namespace spyre::compiler::onnx_import {

Graph Importer::run() {
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
  fuseLlmPatterns(graph_);
  eraseUnused(graph_);
  return std::move(graph_);
}

std::vector<OpCoverage> Importer::coverage() {
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
  const std::set<std::string> taken = hostOpsTakenToDevice(graph_);
  for (OpCoverage &c : out)
    if (c.onHost && taken.contains(nodePath(c.nodeIndex))) {
      c.onHost = false;
      c.reason = "on the device as part of an exporter pattern (docs/onnx.md, "
                 "Language models)";
    }
  return out;
}

void Importer::convertNode(int index) {
  const NodeProto &node = model_.graph().node(index);
  node_ = &node;
  nodeIndex_ = index;
  mainNamed_ = false;
  nodeBase_ = !node.name().empty() ? node.name()
              : node.output_size() > 0 && !node.output(0).empty()
                  ? node.output(0)
                  : node.op_type();
  if (!isDefaultDomain(node))
    unsupported("op type '" + node.op_type() + "' of domain '" + node.domain() +
                "' is not supported (only the default ONNX domain is)");
  const OpRule *rule = findRule(node.op_type());
  if (!rule)
    unsupported("op type '" + node.op_type() +
                "' is not supported (docs/onnx.md lists the supported ops)");
  (this->*rule->convert)(node);
  checkOutputs(node);
}

std::optional<std::string> Importer::tryHost(int index) {
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

void Importer::convertHost(const NodeProto &node) {
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
      unsupported("attribute '" + a.name() +
                  "' has a type the host op "
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
      notConstant(node, k, "the " + name,
                  "; the host op needs it at "
                  "compile time");
    const bool floatParam =
        name == "min" || name == "max" || name == "constant_value";
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

Value *Importer::hostData(const NodeProto &node, int k) {
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
    unsupported("constant '" + name + "' " + shapeStr(shape) + ": " + problem);
  requireFreshName(name);
  Value *c = graph_.addConstant(
      name, ConstantData::fromDoubles({ElementType::F32, shape}, v->values));
  values_[name] = c;
  return c;
}

void Importer::checkOutputs(const NodeProto &node) {
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

void Importer::standInForOutputs(int index) {
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

std::optional<TensorType> Importer::staticType(const std::string &name) const {
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

std::optional<Shape> Importer::staticShape(const std::string &name) const {
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

Value *Importer::data(const NodeProto &node, int k) {
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

Value *Importer::materialize(const std::string &name) {
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
    unsupported("constant '" + name + "' " + shapeStr(shape) + ": " + problem);
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

ConstantDataPtr Importer::deferredConstant(const TensorType &type,
                                           const OnnxExternalData &where) {
  std::string source = where.location + "@" + std::to_string(where.offset) +
                       "+" + std::to_string(where.length);
  return ConstantData::deferred(type, std::move(source), [type, where] {
    std::string bytes = readOnnxExternalData(where);
    if (std::endian::native == std::endian::little)
      return bytes; // little-endian elements, as the IR stores them
    TensorProto t;
    t.set_data_type(type.elementType == ElementType::F16 ? TensorProto::FLOAT16
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

const TensorProto &Importer::withData(const std::string &name) {
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

const OnnxTensorValues *Importer::constInput(const NodeProto &node, int k) {
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

std::optional<std::vector<int64_t>>
Importer::constInts(const NodeProto &node, int k, const std::string &what) {
  const OnnxTensorValues *v = constInput(node, k);
  if (!v)
    return std::nullopt;
  if (!isOnnxIntegerType(v->dataType))
    unsupported(what + " '" + node.input(k) + "' is a " +
                onnxTypeName(v->dataType) + " constant, not integers");
  return v->ints;
}

void Importer::notConstant(const NodeProto &node, int k,
                           const std::string &what,
                           const std::string &consequence) {
  unsupported(what + " '" + node.input(k) + "' is not a constant" +
              consequence);
}

const AttributeProto *Importer::findAttr(const NodeProto &node,
                                         std::string_view name) {
  for (const AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t Importer::intAttr(const NodeProto &node, std::string_view name,
                          int64_t fallback) {
  const AttributeProto *a = findAttr(node, name);
  return a ? a->i() : fallback;
}

double Importer::floatAttr(const NodeProto &node, std::string_view name,
                           float fallback) {
  const AttributeProto *a = findAttr(node, name);
  return a ? a->f() : fallback;
}

std::optional<std::vector<int64_t>> Importer::intsAttr(const NodeProto &node,
                                                       std::string_view name) {
  const AttributeProto *a = findAttr(node, name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

bool Importer::isNeeded(const NodeProto &node, int output) const {
  return output < node.output_size() && !node.output(output).empty() &&
         needed_.contains(node.output(output));
}

void Importer::requireFreshName(const std::string &name) const {
  if (name.empty() || graph_.findValue(name))
    unsupported(name.empty() ? std::string("a value has an empty name")
                             : "value '" + name + "' is defined twice");
}

std::string Importer::freshValueName(const std::string &base) const {
  for (int k = 0;; ++k) {
    std::string name = k == 0 ? base : base + "." + std::to_string(k);
    if (!graph_.findValue(name) && !reservedValueNames_.contains(name))
      return name;
  }
}

std::string Importer::freshOpName(const std::string &base) const {
  for (int k = 0;; ++k) {
    std::string name = k == 0 ? base : base + "." + std::to_string(k);
    if (!graph_.findOp(name) && !reservedOpNames_.contains(name))
      return name;
  }
}

Op *Importer::emit(OpKind kind, std::vector<Value *> operands, AttrDict attrs,
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
  Op *op = graph_.createOp(kind, opName, std::move(operands), std::move(attrs),
                           std::move(specs));
  op->setLoc(SourceLoc{file_, 0, 0, nodePath(nodeIndex_)});
  return op;
}

Value *Importer::emitOutput(OpKind kind, std::vector<Value *> operands,
                            AttrDict attrs, int k) {
  const std::string &name = node_->output(k);
  Value *v =
      emit(kind, std::move(operands), std::move(attrs), {name}, true)->result();
  values_[name] = v;
  return v;
}

Value *Importer::emitHelper(OpKind kind, std::vector<Value *> operands,
                            AttrDict attrs, const std::string &role) {
  std::string name = freshValueName(outputBase() + "." + role);
  return emit(kind, std::move(operands), std::move(attrs), {name}, false)
      ->result();
}

std::string Importer::outputBase() const {
  return node_->output_size() > 0 && !node_->output(0).empty()
             ? node_->output(0)
             : nodeBase_;
}

Value *Importer::makeConstant(const std::string &role, ElementType type,
                              const Shape &shape,
                              const std::vector<double> &values) {
  std::string name = freshValueName(outputBase() + "." + role);
  return graph_.addConstant(name,
                            ConstantData::fromDoubles({type, shape}, values));
}

void Importer::setOutputs() {
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

Value *Importer::materializeOutput(const std::string &name,
                                   const std::string &path) {
  try {
    return materialize(name);
  } catch (const Unsupported &u) {
    fail(path, "output '" + name + "': " + u.reason);
  }
}

} // namespace spyre::compiler::onnx_import

// ---- Entry points (Onnx.h) ----

namespace spyre::compiler {

using onnx::ModelProto;
using onnx_import::Importer;

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
