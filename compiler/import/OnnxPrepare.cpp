// The ONNX importer before conversion (OnnxImporter.h): the model's checks
// (external data, integer initializers, the ONNX checker), shape overrides
// and inference, the indexes of initializers, constants and producers, the
// nodes the outputs need, and the graph inputs. OnnxImporter.cpp converts
// the nodes.
#include "compiler/import/OnnxImporter.h"

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <filesystem>

namespace spyre::compiler::onnx_import {

std::string Importer::graphName(const ModelProto &model,
                                const std::string &fileName) {
  if (!model.graph().name().empty())
    return model.graph().name();
  std::string stem = std::filesystem::path(fileName).stem().string();
  return stem.empty() ? "model" : stem;
}

void Importer::prepare() {
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

void Importer::checkIntegerInitializers() const {
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

void Importer::locateExternalData() {
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
    if (isOnnxIntegerType(t.data_type()) && count <= kEagerExternalElements) {
      t.set_raw_data(readOnnxExternalData(*where));
      t.clear_external_data();
      t.clear_data_location();
      continue;
    }
    external_[t.name()] = *where;
  }
}

void Importer::reportCheckerError(const std::string &text) const {
  const std::string context = "\n\n==> Context: Bad node spec for node. Name: ";
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

bool Importer::isInitializer(const std::string &name) const {
  for (const TensorProto &t : model_.graph().initializer())
    if (t.name() == name)
      return true;
  return false;
}

void Importer::applyShapeOverrides() {
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
                   "' (its inputs: " + (names.empty() ? "none" : names) + ")");
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

void Importer::inferShapes() {
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

void Importer::reportInferenceError(const std::string &text) const {
  const std::string opKey = "(op_type:", nameKey = ", node name: ";
  size_t at = text.find(opKey);
  size_t nameAt = at == std::string::npos ? at : text.find(nameKey, at);
  size_t end = nameAt == std::string::npos ? nameAt : text.find("): ", nameAt);
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

void Importer::indexGraph() {
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

void Importer::indexConstantNode(const NodeProto &node) {
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

void Importer::markNeeded() {
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
      bool param =
          rule ? k < 32 && ((rule->paramInputs >> k) & 1u)
               : isDefaultDomain(node) && isHostParamInput(node.op_type(), k);
      // A computed input the host fallback reads as data must exist.
      if (param && rule && options_.hostFallback && k < 32 &&
          ((rule->hostDataInputs >> k) & 1u) && !isConstant(node.input(k)))
        param = false;
      if (!node.input(k).empty() && !param)
        work.push_back(node.input(k));
    }
  }
}

std::string Importer::notNeededReason(const NodeProto &node) const {
  for (const std::string &out : node.output())
    if (consumers_.contains(out) || graphOutputs_.contains(out))
      return "not needed: its results only feed static inputs (shapes, "
             "axes, sizes) of other nodes, which are read at import time";
  return "not needed: nothing uses its results";
}

bool Importer::readOnlyAsGatherIndices(const std::string &name) const {
  auto it = consumers_.find(name);
  if (it == consumers_.end() || graphOutputs_.contains(name))
    return false;
  const auto &g = model_.graph();
  for (const auto &[node, input] : it->second)
    if (input != 1 || !isDefaultDomain(g.node(node)) ||
        g.node(node).op_type() != "Gather")
      return false;
  return true;
}

void Importer::addInputs() {
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
    const int32_t onnxType = type.tensor_type().elem_type();
    std::optional<ElementType> et = elementTypeOf(onnxType);
    // Integer ids (INT64 as exporters write them) are held as i32: an id
    // outside int32 is an error where the input is read.
    if (!et &&
        (onnxType == TensorProto::INT32 || onnxType == TensorProto::INT64) &&
        readOnlyAsGatherIndices(in.name()))
      et = ElementType::I32;
    if (!et) {
      nonDataInputs_[in.name()] =
          "has element type " + onnxTypeName(onnxType) +
          "; model inputs must be FLOAT or FLOAT16 (or integers read only as "
          "the indices of a Gather, an embedding lookup)";
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

} // namespace spyre::compiler::onnx_import
