// The ONNX importer's converters, one per op family, and the causal mask
// patterns (OnnxImporter.h).
#include "compiler/import/OnnxImporter.h"

#include "compiler/ir/Verifier.h"
#include "host/HostOp.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
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

void Importer::convertUnary(const NodeProto &node) {
  emitOutput(ruleKind(node), {data(node, 0)}, {});
}

void Importer::convertBinary(const NodeProto &node) {
  if (node.op_type() == "Add" && fuseCausalMaskAdd(node))
    return;
  emitOutput(ruleKind(node), {data(node, 0), data(node, 1)}, {});
}

void Importer::convertPow(const NodeProto &node) {
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

void Importer::convertMatMul(const NodeProto &node) {
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

void Importer::convertGemm(const NodeProto &node) {
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

void Importer::convertSoftmax(const NodeProto &node) {
  emitOutput(OpKind::Softmax, {data(node, 0)},
             {{"axis", intAttr(node, "axis", -1)}});
}

void Importer::convertLayerNorm(const NodeProto &node) {
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

void Importer::convertLayerNormStatistics(const NodeProto &node, Value *x,
                                          int64_t axis, double eps) {
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
  Value *mean = wantMean ? emitOutput(OpKind::ReduceMean, {x}, reduce, 1)
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

void Importer::convertReduce(const NodeProto &node) {
  OpKind kind = ruleKind(node);
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
  emitOutput(kind, {x}, {{"axes", Attribute::ints(*axes)}, {"keepdims", keep}});
}

void Importer::convertTranspose(const NodeProto &node) {
  Value *x = data(node, 0);
  std::optional<std::vector<int64_t>> perm = intsAttr(node, "perm");
  if (!perm) {
    perm.emplace();
    for (int64_t d = x->type().rank(); d-- > 0;)
      perm->push_back(d);
  }
  emitOutput(OpKind::Transpose, {x}, {{"perm", Attribute::ints(*perm)}});
}

void Importer::convertReshape(const NodeProto &node) {
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

void Importer::convertSplit(const NodeProto &node) {
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
                {{"axis", axisAttr}, {"sizes", Attribute::ints(*sizes)}}, names,
                true);
  for (int i = 0; i < parts; ++i)
    if (!node.output(i).empty())
      values_[node.output(i)] = op->result(static_cast<size_t>(i));
}

std::optional<std::vector<int64_t>>
Importer::splitSizesFromOutputs(const NodeProto &node, int64_t axis) {
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

void Importer::convertConcat(const NodeProto &node) {
  std::vector<Value *> operands;
  for (int k = 0; k < node.input_size(); ++k)
    operands.push_back(data(node, k));
  emitOutput(OpKind::Concat, operands, {{"axis", intAttr(node, "axis", 0)}});
}

void Importer::convertSqueeze(const NodeProto &node) {
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

void Importer::convertUnsqueeze(const NodeProto &node) {
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

void Importer::reshapeToInferred(const NodeProto &node, Value *x,
                                 const std::string &what) {
  std::optional<Shape> shape = staticShape(node.output(0));
  if (!shape)
    notConstant(node, 1, what,
                " and ONNX shape inference cannot make the result static");
  emitOutput(OpKind::Reshape, {x}, {{"shape", Attribute::ints(*shape)}});
}

void Importer::convertFlatten(const NodeProto &node) {
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

void Importer::convertIdentity(const NodeProto &node) {
  Value *x = data(node, 0);
  // A reshape to the same shape keeps the output's own name; the
  // canonicalize pass removes it.
  emitOutput(OpKind::Reshape, {x},
             {{"shape", Attribute::ints(x->type().shape)}});
}

void Importer::convertConstant(const NodeProto &node) {
  // Converted only when something reads the value as data; static inputs
  // read it from the node.
  if (auto it = constantProblems_.find(node.output(0));
      it != constantProblems_.end())
    unsupported(it->second);
  if (!values_.contains(node.output(0)))
    materialize(node.output(0));
}

void Importer::convertGather(const NodeProto &node) {
  // Constant indices (a rotary table's rows at fixed positions) are the
  // host op's, which the import computes when the table is constant too.
  if (isConstant(node.input(1)))
    unsupported("its indices are constant; only ids read at run time "
                "(an embedding lookup) are gathered on the device");
  Value *ids = data(node, 1);
  if (ids->type().elementType != ElementType::I32)
    unsupported("its indices are not an integer model input");
  Value *table = data(node, 0);
  const int64_t axisAttr = intAttr(node, "axis", 0);
  if (table->type().rank() != 2 ||
      normalizeAxis(axisAttr, 2) != std::optional<int64_t>(0))
    unsupported("only rows (axis 0) of a rank-2 table are gathered on the "
                "device (an embedding lookup); this one gathers axis " +
                std::to_string(axisAttr) + " of " + table->type().str());
  emitOutput(OpKind::Embedding, {table, ids}, {});
}

void Importer::convertArgMax(const NodeProto &node) {
  Value *x = data(node, 0);
  const int64_t rank = x->type().rank();
  const int64_t axisAttr = intAttr(node, "axis", 0);
  if (normalizeAxis(axisAttr, rank) != std::optional<int64_t>(rank - 1))
    unsupported("only the last axis is searched on the device (greedy "
                "sampling of logits); this one searches axis " +
                std::to_string(axisAttr) + " of " + x->type().str());
  if (intAttr(node, "select_last_index", 0) != 0)
    unsupported("select_last_index = 1 is not built: the device gives the "
                "first of equal maxima");
  if (intAttr(node, "keepdims", 1) != 0) {
    emitOutput(OpKind::Argmax, {x}, {});
    return;
  }
  Value *ids = emitHelper(OpKind::Argmax, {x}, {}, "argmax");
  Shape shape = x->type().shape;
  shape.pop_back();
  emitOutput(OpKind::Reshape, {ids}, {{"shape", Attribute::ints(shape)}});
}

void Importer::convertWhere(const NodeProto &node) {
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
  std::vector<double> folded(static_cast<size_t>(outType->elementCount()), 0.0);
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
      std::vector<double> v = broadcastValues(c->values, shape, outType->shape);
      std::vector<double> m = broadcastValues(keep, condShape, outType->shape);
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
    terms.push_back(makeConstant("constant_part", et, outType->shape, folded));
  if (terms.size() == 1)
    terms.push_back(makeConstant("zero", et, {}, {0.0}));
  emitOutput(OpKind::Add, {terms[0], terms[1]}, {});
}

bool Importer::onlySoftmaxReads(const std::string &name, int64_t rank) const {
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

bool Importer::fuseCausalMaskAdd(const NodeProto &node) {
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

bool Importer::fuseCausalMaskWhere(const NodeProto &node,
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

} // namespace spyre::compiler::onnx_import

// ---- The op table ----

namespace spyre::compiler {

using onnx_import::Importer;
using onnx_import::OpRule;
using onnx_import::findRule;

namespace {

constexpr unsigned kInput1 = 1u << 1;

// Sorted by op type (onnxSupportedOpTypes lists them in this order).
const OpRule kRules[] = {
    {"Abs", &Importer::convertUnary, OpKind::Abs},
    {"Add", &Importer::convertBinary, OpKind::Add},
    {"ArgMax", &Importer::convertArgMax},
    {"Concat", &Importer::convertConcat},
    {"Constant", &Importer::convertConstant},
    {"Div", &Importer::convertBinary, OpKind::Div},
    {"Erf", &Importer::convertUnary, OpKind::Erf},
    {"Exp", &Importer::convertUnary, OpKind::Exp},
    {"Flatten", &Importer::convertFlatten},
    {"Gather", &Importer::convertGather, std::nullopt, kInput1, kInput1},
    {"Gemm", &Importer::convertGemm},
    {"Identity", &Importer::convertIdentity},
    {"LayerNormalization", &Importer::convertLayerNorm},
    {"MatMul", &Importer::convertMatMul},
    {"Mul", &Importer::convertBinary, OpKind::Mul},
    {"Neg", &Importer::convertUnary, OpKind::Neg},
    {"Pow", &Importer::convertPow, std::nullopt, kInput1, kInput1},
    {"Reciprocal", &Importer::convertUnary, OpKind::Reciprocal},
    {"ReduceMax", &Importer::convertReduce, OpKind::ReduceMax},
    {"ReduceMean", &Importer::convertReduce, OpKind::ReduceMean},
    {"ReduceSum", &Importer::convertReduce, OpKind::ReduceSum, kInput1},
    {"Relu", &Importer::convertUnary, OpKind::Relu},
    {"Reshape", &Importer::convertReshape, std::nullopt, kInput1},
    {"Sigmoid", &Importer::convertUnary, OpKind::Sigmoid},
    {"Softmax", &Importer::convertSoftmax},
    {"Split", &Importer::convertSplit, std::nullopt, kInput1},
    {"Sqrt", &Importer::convertUnary, OpKind::Sqrt},
    {"Squeeze", &Importer::convertSqueeze, std::nullopt, kInput1},
    {"Sub", &Importer::convertBinary, OpKind::Sub},
    {"Tanh", &Importer::convertUnary, OpKind::Tanh},
    {"Transpose", &Importer::convertTranspose},
    {"Unsqueeze", &Importer::convertUnsqueeze, std::nullopt, kInput1},
    {"Where", &Importer::convertWhere, std::nullopt, 1u << 0},
};

} // namespace

const OpRule *onnx_import::findRule(std::string_view opType) {
  for (const OpRule &r : kRules)
    if (r.opType == opType)
      return &r;
  return nullptr;
}

OpKind onnx_import::ruleKind(const NodeProto &node) {
  const OpRule *rule = findRule(node.op_type());
  SPYRE_ASSERT(rule && rule->kind, "no IR op for ONNX op type '" +
                                       node.op_type() + "' in the op table");
  return *rule->kind;
}

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

} // namespace spyre::compiler
