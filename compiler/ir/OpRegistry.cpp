// The op table (OpRegistry.h): one OpDef per op kind with its operands,
// attributes, types and documentation, the attribute schema checks, and the
// public lookups. The inference and verifier hooks the rows name are
// ShapeInference.cpp.
#include "compiler/ir/OpRegistry.h"

#include "compiler/ir/ShapeInference.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <limits>

namespace spyre::compiler {

namespace {

using namespace infer;

// ---- The table ----

const OperandSpec kX{"x", OperandArity::Required, "the input"};

AttrSpec axisSpec(std::optional<Attribute> def, std::string_view description) {
  return {"axis", AttrType::Int, std::move(def), {}, description};
}

OpDef unary(OpKind kind, std::string_view name, std::string_view summary,
            std::string_view semantics) {
  return {kind, name, summary, {kX}, kFloatTypes, {}, inferSame, nullptr,
          "the shape of x", semantics};
}

OpDef binary(OpKind kind, std::string_view name, std::string_view summary,
             std::string_view semantics) {
  return {kind,
          name,
          summary,
          {{"a", OperandArity::Required, "left operand"},
           {"b", OperandArity::Required, "right operand"}},
          kFloatTypes,
          {},
          inferBroadcast,
          nullptr,
          "broadcast(a.shape, b.shape), NumPy rules: shapes aligned from the "
          "right, each pair of dimensions equal or one of them 1",
          semantics};
}

OpDef reduce(OpKind kind, std::string_view name, std::string_view summary,
             std::string_view semantics) {
  return {kind,
          name,
          summary,
          {kX},
          kFloatTypes,
          {{"axes", AttrType::IntList, std::nullopt, {},
            "axes to reduce (at least one, no repeats; negative counts from "
            "the end)"},
           {"keepdims", AttrType::Bool, false, {},
            "keep each reduced axis as a dimension of size 1"}},
          inferReduce,
          nullptr,
          "the shape of x without the reduced axes (with them as 1 when "
          "keepdims)",
          semantics};
}

OpDef norm(OpKind kind, std::string_view name, std::string_view summary,
           std::vector<OperandSpec> operands, std::string_view semantics) {
  return {kind,
          name,
          summary,
          std::move(operands),
          kFloatTypes,
          {axisSpec(-1, "first normalised axis; the dimensions from it to the "
                        "last are normalised together"),
           {"epsilon", AttrType::Float, 1e-5, {},
            "added to the variance (mean square) before the square root"}},
          inferNorm,
          verifyEpsilon,
          "the shape of x",
          semantics};
}

std::vector<OpDef> buildTable() {
  std::vector<OpDef> t;
  t.push_back(
      {OpKind::Matmul,
       "matmul",
       "Matrix product, batched over leading dimensions with broadcasting",
       {{"a", OperandArity::Required, "[..., M, K], or [..., K, M] with transpose_a"},
        {"b", OperandArity::Required, "[..., K, N], or [..., N, K] with transpose_b"}},
       kFloatTypes,
       {{"transpose_a", AttrType::Bool, false, {},
         "a holds its last two dimensions swapped"},
        {"transpose_b", AttrType::Bool, false, {},
         "b holds its last two dimensions swapped"}},
       inferMatmul,
       nullptr,
       "[broadcast(batch(a), batch(b))..., M, N], where batch() is every "
       "dimension but the last two",
       "y[..., m, n] = sum over k of A[..., m, k] * B[..., k, n], where A is a "
       "(a with its last two dimensions swapped when transpose_a) and B is b "
       "(likewise with transpose_b). Both operands have rank 2 or more; their "
       "batch dimensions broadcast as in NumPy (numpy.matmul)."});
  t.push_back(
      {OpKind::GatedMatmul,
       "gated_matmul",
       "Gated matrix product of a SwiGLU MLP: silu(a gate) * (a up)",
       {{"a", OperandArity::Required, "[..., M, K], or [..., K, M] with transpose_a"},
        {"gate", OperandArity::Required,
         "[..., K, N], or [..., N, K] with transpose_b"},
        {"up", OperandArity::Required, "the shape of gate"}},
       kFloatTypes,
       {{"transpose_a", AttrType::Bool, false, {},
         "a holds its last two dimensions swapped"},
        {"transpose_b", AttrType::Bool, false, {},
         "gate and up hold their last two dimensions swapped"}},
       inferGatedMatmul,
       nullptr,
       "the shape of matmul(a, gate)",
       "y = silu(G) * U elementwise, where G = matmul(a, gate) and U = "
       "matmul(a, up) with the same transpose attributes, and silu(x) = x / "
       "(1 + exp(-x)). What two matmuls, silu and mul compute in turn; the "
       "fuse-gated-matmul pass makes that pattern this op, whose device "
       "kernel never stores G or U."});
  t.push_back(
      {OpKind::Linear,
       "linear",
       "Fully connected layer, y = x weight^T + bias (PyTorch layout)",
       {{"x", OperandArity::Required, "[..., in_features]"},
        {"weight", OperandArity::Required, "[out_features, in_features]"},
        {"bias", OperandArity::Optional, "[out_features]"}},
       kFloatTypes,
       {},
       inferLinear,
       nullptr,
       "[x.shape[:-1]..., out_features]",
       "y[..., o] = sum over i of x[..., i] * weight[o, i] + bias[o] (bias 0 "
       "when absent), as torch.nn.functional.linear."});
  t.push_back(binary(OpKind::Add, "add", "Elementwise sum", "y = a + b."));
  t.push_back(binary(OpKind::Sub, "sub", "Elementwise difference", "y = a - b."));
  t.push_back(binary(OpKind::Mul, "mul", "Elementwise product", "y = a * b."));
  t.push_back(binary(OpKind::Div, "div", "Elementwise quotient",
                     "y = a / b, with IEEE results for division by zero "
                     "(+-inf, or NaN for 0 / 0)."));
  t.push_back(unary(OpKind::Relu, "relu", "Rectified linear unit",
                    "y = x when x > 0, else 0 (NaN stays NaN)."));
  t.push_back(
      {OpKind::Gelu,
       "gelu",
       "Gaussian error linear unit, exact (erf) or tanh approximation",
       {kX},
       kFloatTypes,
       {{"approximate", AttrType::String, "none", {"none", "tanh"},
         "`none`: the erf form; `tanh`: the tanh approximation"}},
       inferSame,
       nullptr,
       "the shape of x",
       "none: y = 0.5 * x * (1 + erf(x / sqrt(2))); tanh: y = 0.5 * x * (1 + "
       "tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), as torch.nn.GELU."});
  t.push_back(unary(OpKind::Silu, "silu", "Sigmoid linear unit (swish)",
                    "y = x * sigmoid(x)."));
  t.push_back(unary(OpKind::Sigmoid, "sigmoid", "Logistic sigmoid",
                    "y = 1 / (1 + exp(-x))."));
  t.push_back(unary(OpKind::Tanh, "tanh", "Hyperbolic tangent", "y = tanh(x)."));
  t.push_back(unary(OpKind::Erf, "erf", "Gauss error function",
                    "y = erf(x) = 2 / sqrt(pi) * integral from 0 to x of "
                    "exp(-t^2) dt, as C erf (ONNX Erf)."));
  t.push_back(unary(OpKind::Exp, "exp", "Natural exponential", "y = e^x."));
  t.push_back(unary(OpKind::Sqrt, "sqrt", "Square root",
                    "y = sqrt(x) (NaN for x < 0)."));
  t.push_back(unary(OpKind::Rsqrt, "rsqrt", "Reciprocal square root",
                    "y = 1 / sqrt(x) (+inf for +0, NaN for x < 0)."));
  t.push_back(unary(OpKind::Reciprocal, "reciprocal", "Reciprocal",
                    "y = 1 / x."));
  t.push_back(unary(OpKind::Neg, "neg", "Negation", "y = -x."));
  t.push_back(unary(OpKind::Abs, "abs", "Absolute value", "y = |x|."));
  t.push_back(
      {OpKind::Pow,
       "pow",
       "Power by a constant exponent",
       {kX},
       kFloatTypes,
       {{"exponent", AttrType::Float, std::nullopt, {}, "the exponent (finite)"}},
       inferSame,
       verifyPow,
       "the shape of x",
       "y = x^exponent, as C pow (a negative x with a non-integer exponent "
       "gives NaN)."});
  t.push_back(
      {OpKind::Softmax,
       "softmax",
       "Softmax along one axis",
       {kX},
       kFloatTypes,
       {axisSpec(-1, "the axis to normalise (negative counts from the end)")},
       inferSoftmax,
       nullptr,
       "the shape of x",
       "y = exp(x - m) / sum(exp(x - m)) along axis, where m is the maximum "
       "along axis (the result does not depend on m; subtracting it keeps "
       "exp in range). A slice whose elements are all -inf gives NaN."});
  t.push_back(norm(
      OpKind::LayerNorm, "layernorm",
      "Layer normalisation over the trailing dimensions from axis",
      {kX,
       {"weight", OperandArity::Optional, "scale, shape x.shape[axis:]"},
       {"bias", OperandArity::Optional, "shift, shape x.shape[axis:]"}},
      "Over the dimensions from axis to the last (as ONNX "
      "LayerNormalization): mean = average of x, var = average of (x - "
      "mean)^2 (the biased variance), y = (x - mean) / sqrt(var + epsilon) * "
      "weight + bias, with weight 1 and bias 0 when absent. A bias needs a "
      "weight before it."));
  t.push_back(norm(
      OpKind::RmsNorm, "rmsnorm",
      "Root-mean-square normalisation over the trailing dimensions from axis",
      {kX, {"weight", OperandArity::Optional, "scale, shape x.shape[axis:]"}},
      "Over the dimensions from axis to the last: y = x / sqrt(mean(x^2) + "
      "epsilon) * weight, with weight 1 when absent (as torch.nn.RMSNorm)."));
  t.push_back(reduce(OpKind::ReduceSum, "reduce_sum", "Sum over axes",
                     "y = the sum of x over the listed axes."));
  t.push_back(reduce(OpKind::ReduceMean, "reduce_mean", "Mean over axes",
                     "y = the sum of x over the listed axes divided by the "
                     "number of elements summed."));
  t.push_back(reduce(OpKind::ReduceMax, "reduce_max", "Maximum over axes",
                     "y = the largest element of x over the listed axes; NaN "
                     "when any of them is NaN (as numpy.max)."));
  t.push_back(
      {OpKind::Transpose,
       "transpose",
       "Permutation of dimensions",
       {kX},
       kAllTypes,
       {{"perm", AttrType::IntList, std::nullopt, {},
         "a permutation of 0..rank-1: result dimension d is input dimension "
         "perm[d]"}},
       inferTranspose,
       nullptr,
       "y.shape[d] = x.shape[perm[d]]",
       "y[i_0, ..., i_(r-1)] = x[j] where j[perm[d]] = i_d, as numpy.transpose."});
  t.push_back(
      {OpKind::Reshape,
       "reshape",
       "Same elements in row-major order, new shape",
       {kX},
       kAllTypes,
       {{"shape", AttrType::IntList, std::nullopt, {},
         "the new shape; entries at least 1, one of them may be -1 (inferred)"}},
       inferReshape,
       nullptr,
       "shape, with a -1 replaced by the element count divided by the product "
       "of the other entries",
       "y holds the elements of x in the same row-major order."});
  t.push_back(
      {OpKind::Split,
       "split",
       "Cuts a tensor into pieces along one axis",
       {kX},
       kAllTypes,
       {{"axis", AttrType::Int, std::nullopt, {},
         "the axis to cut (negative counts from the end)"},
        {"sizes", AttrType::IntList, std::nullopt, {},
         "size of each piece along axis (each at least 1, summing to "
         "x.shape[axis])"}},
       inferSplit,
       nullptr,
       "one result per entry of sizes: the shape of x with x.shape[axis] "
       "replaced by that size",
       "Result p holds x[..., o_p : o_p + sizes[p], ...] along axis, where o_p "
       "is the sum of the sizes before p."});
  t.push_back(
      {OpKind::Concat,
       "concat",
       "Joins tensors along one axis",
       {{"inputs", OperandArity::Variadic,
         "one or more tensors, equal in every dimension but axis"}},
       kAllTypes,
       {{"axis", AttrType::Int, std::nullopt, {},
         "the axis to join along (negative counts from the end)"}},
       inferConcat,
       nullptr,
       "the shape of the first input with axis the sum of the inputs' sizes "
       "along it",
       "y holds the inputs one after the other along axis, in operand order."});
  t.push_back(
      {OpKind::Squeeze,
       "squeeze",
       "Removes dimensions of size 1",
       {kX},
       kAllTypes,
       {{"axes", AttrType::IntList, std::nullopt, {},
         "dimensions to remove; each must have size 1"}},
       inferSqueeze,
       nullptr,
       "the shape of x without the listed axes",
       "y holds the elements of x in the same order."});
  t.push_back(
      {OpKind::Unsqueeze,
       "unsqueeze",
       "Inserts dimensions of size 1",
       {kX},
       kAllTypes,
       {{"axes", AttrType::IntList, std::nullopt, {},
         "positions of the new dimensions in the result (negative counts from "
         "the end of the result), as ONNX Unsqueeze"}},
       inferUnsqueeze,
       nullptr,
       "rank(x) + len(axes) dimensions: 1 at each listed position, the "
       "dimensions of x in order elsewhere",
       "y holds the elements of x in the same order."});
  t.push_back(
      {OpKind::CausalMaskAdd,
       "causal_mask_add",
       "Adds -inf above the causal diagonal of the last two dimensions",
       {{"x", OperandArity::Required, "attention scores [..., Q, K]"}},
       kFloatTypes,
       {},
       inferCausalMask,
       nullptr,
       "the shape of x",
       "For x of shape [..., Q, K]: y[..., i, j] = x[..., i, j] + (-inf if j > "
       "i + (K - Q), else 0). The mask is aligned to the bottom right: query i "
       "is position i + K - Q of the key sequence and sees keys 0 to that "
       "position. With Q = K this is the usual lower-triangular causal mask; "
       "with Q < K (the last Q positions, as when decoding with a key/value "
       "cache) nothing earlier is hidden; with Q > K the first Q - K rows are "
       "all -inf. The addition follows IEEE arithmetic: a masked NaN stays "
       "NaN and a masked +inf becomes NaN."});
  t.push_back(
      {OpKind::CausalSoftmax,
       "causal_softmax",
       "Scale, causal mask and softmax over the last dimension, in one op",
       {{"x", OperandArity::Required, "attention scores [..., Q, K], K >= Q"}},
       kFloatTypes,
       {{"scale", AttrType::Float, Attribute(1.0), {},
         "the factor the scores are multiplied by (finite, positive)"}},
       inferCausalSoftmax,
       verifyCausalSoftmax,
       "the shape of x",
       "For x of shape [..., Q, K]: y = softmax(x * scale + causal mask) along "
       "the last axis, the mask that causal_mask_add adds: query i sees keys "
       "0 to i + (K - Q), y[..., i, j] = 0 for the others, and the visible "
       "ones are exp(s_j - m) / sum(exp(s - m)) of s = x * scale over them "
       "(m their maximum). What `mul` by a scalar, `causal_mask_add` and "
       "`softmax` compute in turn, in one pass over the scores; canonicalize "
       "makes that chain this op."});
  t.push_back(
      {OpKind::Attention,
       "attention",
       "Grouped-query attention, scores never stored: softmax(q k^T * scale "
       "[+ causal mask]) v",
       {{"q", OperandArity::Required, "queries [B, H, S, D]"},
        {"k", OperandArity::Required, "keys [B, KV, L, D], KV dividing H"},
        {"v", OperandArity::Required, "values [B, KV, L, D]"},
        {"k_more", OperandArity::Optional,
         "more keys [B, KV, M, D], after k's (a cache's new tokens): the "
         "keys are k's L then these M, read where each lies"},
        {"v_more", OperandArity::Optional,
         "their values [B, KV, M, D], with k_more"}},
       kFloatTypes,
       {{"scale",
         AttrType::Float,
         Attribute(1.0),
         {},
         "the factor the scores are multiplied by (finite, positive)"},
        {"causal",
         AttrType::Bool,
         false,
         {},
         "hide from query i the keys after i + (L - S) (L >= S; L counts "
         "k_more's keys too)"}},
       inferAttention,
       verifyAttention,
       "the shape of q",
       "For query head h of sequence b, with key/value head j = h / (H / KV) "
       "(grouped-query attention: the heads of a group share one key and value "
       "head, which is never repeated): s = q[b, h] k[b, j]^T * scale, [S, L]; "
       "with causal, s[i, i'] = -inf for i' > i + (L - S) (the mask of "
       "causal_mask_add); y[b, h] = softmax(s along the last axis) v[b, j]. "
       "What matmul, mul by a scalar, causal_softmax (or softmax) and matmul "
       "compute in turn, without the scores as a tensor: the device kernel "
       "keeps them in LX."});
  t.push_back(
      {OpKind::Rotary,
       "rotary",
       "Rotary position embedding over heads, in one op: x * cos + swap(x) * "
       "sin",
       {{"x", OperandArity::Required, "[..., N], N heads of head_dim"},
        {"cos", OperandArity::Required,
         "cosines, x's shape or [..., head_dim] (shared by the heads)"},
        {"sin", OperandArity::Required,
         "sines, cos's shape, the first half of each head negated"}},
       kFloatTypes,
       {{"head_dim", AttrType::Int, std::nullopt, {},
         "elements per head (even, dividing the last dimension)"}},
       inferRotary,
       nullptr,
       "the shape of x",
       "Along the last axis, in heads of head_dim elements with halves x1 and "
       "x2: y = x * cos + [x2, x1] * sin (the halves of each head swapped), "
       "cos and sin of one head's size applying to every head. "
       "With sin's first half holding -sin this is Hugging Face's "
       "apply_rotary_pos_emb, x * cos + rotate_half(x) * sin; the split, "
       "concat, two mul and the add it replaces make one pass."});
  t.push_back(embeddingOpDef());
  t.push_back(argmaxOpDef());
  t.push_back(
      {OpKind::Host,
       "host",
       "An ONNX op the device does not run, computed on the host",
       {{"inputs", OperandArity::Variadic,
         "the op's float data inputs, in ONNX input order"}},
       kFloatTypes,
       {{"op", AttrType::String, std::nullopt, {},
         "the ONNX op type (one the host library implements: docs/onnx.md)"},
        {"attrs", AttrType::String, Attribute(std::string("{}")), {},
         "the ONNX attributes as a JSON object, with constant parameter "
         "inputs (Slice starts/ends/axes/steps, Gather indices, Pad pads, "
         "Expand shape, Tile repeats, Clip min/max) folded in under their "
         "ONNX input names"}},
       inferHost,
       nullptr,
       "what the ONNX op gives for these inputs and attributes",
       "The results of the ONNX op `op` with attributes `attrs` on the "
       "inputs, computed in double precision by the host library "
       "(host/HostOp.h). On the chip it runs on the host: its inputs go over "
       "PCIe to the host and its results come back."});
  t.push_back(
      {OpKind::Relayout,
       "relayout",
       "Moves a tensor to another device layout; the values are unchanged",
       {kX},
       kAllTypes,
       {},
       inferSame,
       nullptr,
       "the shape of x",
       "y = x. The layout pass inserts it where a producer's device layout "
       "(stick dimension, device data type) differs from what a consumer "
       "needs; the result's `layout` annotation gives the new layout. Any "
       "rounding to the device data type is the device's business, not part "
       "of the graph's meaning."});
  return t;
}

// ---- Attribute schema checks ----

std::string attrNamesOf(const OpDef &def) {
  if (def.attrs.empty())
    return std::string(def.name) + " takes no attributes";
  std::string out = std::string(def.name) + " takes ";
  for (size_t i = 0; i < def.attrs.size(); ++i)
    out += (i ? ", " : "") + std::string(def.attrs[i].name);
  return out;
}

std::string allowedText(const AttrSpec &spec) {
  std::string out;
  for (size_t i = 0; i < spec.allowed.size(); ++i) {
    if (i > 0)
      out += i + 1 == spec.allowed.size() ? " or " : ", ";
    out += "'" + std::string(spec.allowed[i]) + "'";
  }
  return out;
}

/// Checks that `attrs` is exactly the schema's attributes with its types and
/// permitted values.
bool checkAttrSchema(const OpDef &def, const AttrDict &attrs,
                     std::vector<OpIssue> &issues) {
  size_t before = issues.size();
  for (const NamedAttribute &a : attrs) {
    const AttrSpec *spec = def.findAttr(a.name);
    if (!spec) {
      issues.push_back({OpIssue::Target::Attr, -1, a.name,
                        "unknown attribute '" + a.name + "' (" +
                            attrNamesOf(def) + ")"});
      continue;
    }
    if (!attrHasType(a.value, spec->type)) {
      issues.push_back({OpIssue::Target::Attr, -1, a.name,
                        "attribute '" + a.name + "' must be " +
                            (attrTypeName(spec->type)[0] == 'i' ? "an " : "a ") +
                            std::string(attrTypeName(spec->type)) + ", got " +
                            a.value.kindName() + " " + a.value.str()});
      continue;
    }
    if (!spec->allowed.empty() &&
        std::find(spec->allowed.begin(), spec->allowed.end(),
                  a.value.asString()) == spec->allowed.end())
      issues.push_back({OpIssue::Target::Attr, -1, a.name,
                        "attribute '" + a.name + "' must be " +
                            allowedText(*spec) + ", got " + a.value.str()});
  }
  for (const AttrSpec &spec : def.attrs)
    if (!attrs.contains(spec.name))
      issues.push_back({OpIssue::Target::Attr, -1, std::string(spec.name),
                        "missing attribute '" + std::string(spec.name) + "' (" +
                            std::string(attrTypeName(spec.type)) + ")"});
  return issues.size() == before;
}

} // namespace

// ---- Public interface ----

std::string InferContext::describeOperand(size_t index) const {
  return std::string(def_.operandName(index)) + " " + operands_[index].str();
}

std::string_view attrTypeName(AttrType type) {
  switch (type) {
  case AttrType::Int:
    return "int";
  case AttrType::Float:
    return "float";
  case AttrType::Bool:
    return "bool";
  case AttrType::String:
    return "string";
  case AttrType::IntList:
    return "int list";
  case AttrType::FloatList:
    return "float list";
  }
  SPYRE_UNREACHABLE("bad attribute type");
}

bool attrHasType(const Attribute &value, AttrType type) {
  switch (type) {
  case AttrType::Int:
    return value.isInt();
  case AttrType::Float:
    return value.isFloat();
  case AttrType::Bool:
    return value.isBool();
  case AttrType::String:
    return value.isString();
  case AttrType::IntList:
    return value.isIntList();
  case AttrType::FloatList:
    return value.isFloatList();
  }
  SPYRE_UNREACHABLE("bad attribute type");
}

size_t OpDef::minOperands() const {
  size_t n = 0;
  for (const OperandSpec &o : operands)
    if (o.arity != OperandArity::Optional)
      ++n;
  return n;
}

size_t OpDef::maxOperands() const {
  if (!operands.empty() && operands.back().arity == OperandArity::Variadic)
    return std::numeric_limits<size_t>::max();
  return operands.size();
}

const AttrSpec *OpDef::findAttr(std::string_view attrName) const {
  for (const AttrSpec &a : attrs)
    if (a.name == attrName)
      return &a;
  return nullptr;
}

std::string_view OpDef::operandName(size_t index) const {
  if (index < operands.size())
    return operands[index].name;
  SPYRE_ASSERT(!operands.empty() &&
                   operands.back().arity == OperandArity::Variadic,
               "operand index beyond the op's operands");
  return operands.back().name;
}

std::string OpDef::signature() const {
  std::string out = std::string(name) + "(";
  for (size_t i = 0; i < operands.size(); ++i) {
    if (i > 0)
      out += ", ";
    const OperandSpec &o = operands[i];
    if (o.arity == OperandArity::Optional)
      out += "[" + std::string(o.name) + "]";
    else if (o.arity == OperandArity::Variadic)
      out += std::string(o.name) + "...";
    else
      out += o.name;
  }
  return out + ")";
}

std::span<const OpDef> opTable() {
  static const std::vector<OpDef> table = [] {
    std::vector<OpDef> t = buildTable();
    SPYRE_ASSERT(t.size() == static_cast<size_t>(kNumOpKinds),
                 "the op table must have one row per op kind");
    for (size_t i = 0; i < t.size(); ++i)
      SPYRE_ASSERT(static_cast<size_t>(t[i].kind) == i,
                   "op table row out of OpKind order: " + std::string(t[i].name));
    return t;
  }();
  return table;
}

const OpDef &opDef(OpKind kind) {
  return opTable()[static_cast<size_t>(kind)];
}

const OpDef *findOpDef(std::string_view name) {
  for (const OpDef &d : opTable())
    if (d.name == name)
      return &d;
  return nullptr;
}

std::string_view opKindName(OpKind kind) {
  static constexpr std::string_view kNames[] = {
#define SPYRE_OP(Enum, name) name,
#include "compiler/ir/OpKinds.def"
#undef SPYRE_OP
  };
  return kNames[static_cast<size_t>(kind)];
}

bool completeAttrs(const OpDef &def, AttrDict &attrs,
                   std::vector<OpIssue> &issues) {
  for (const AttrSpec &spec : def.attrs) {
    Attribute *a = attrs.find(spec.name);
    if (!a) {
      if (spec.defaultValue)
        attrs.set(std::string(spec.name), *spec.defaultValue);
      continue;
    }
    // Readers see `2` where a float is meant; store what the schema says.
    if (spec.type == AttrType::Float && a->isInt())
      *a = Attribute(static_cast<double>(a->asInt()));
    if (spec.type == AttrType::FloatList && a->isList() && !a->isFloatList()) {
      Attribute::List converted;
      for (const Attribute &e : a->asList())
        converted.push_back(e.isInt() ? Attribute(static_cast<double>(e.asInt()))
                                      : e);
      *a = Attribute::list(std::move(converted));
    }
  }
  return checkAttrSchema(def, attrs, issues);
}

std::optional<std::vector<TensorType>>
checkOp(const OpDef &def, std::span<const TensorType> operandTypes,
        const AttrDict &attrs, std::vector<OpIssue> &issues) {
  size_t n = operandTypes.size();
  if (n < def.minOperands() || n > def.maxOperands()) {
    std::string expected =
        def.maxOperands() == std::numeric_limits<size_t>::max()
            ? std::to_string(def.minOperands()) + " or more"
        : def.minOperands() == def.maxOperands()
            ? std::to_string(def.minOperands())
            : std::to_string(def.minOperands()) + " to " +
                  std::to_string(def.maxOperands());
    issues.push_back({OpIssue::Target::Op, -1, "",
                      "expects " + expected + " operands, as " +
                          def.signature() + ", got " + std::to_string(n)});
    return std::nullopt;
  }
  if (!checkAttrSchema(def, attrs, issues))
    return std::nullopt;

  std::vector<TensorType> results;
  InferContext c(def, operandTypes, attrs, results, issues);
  if (def.verify && !def.verify(c))
    return std::nullopt;
  ElementType type = operandTypes[0].elementType;
  if (!(def.types & elementTypeBit(type))) {
    c.operandError(0, c.describeOperand(0) + ": " + std::string(def.name) +
                          " takes " + elementTypeSetText(def.types));
    return std::nullopt;
  }
  for (size_t i = 1; i < n; ++i)
    if (const ElementTypeSet own = def.operands[std::min(
            i, def.operands.size() - 1)].ownTypes;
        own != 0) {
      if (!(own & elementTypeBit(operandTypes[i].elementType))) {
        c.operandError(i, c.describeOperand(i) + ": " +
                              std::string(def.name) + " takes " +
                              elementTypeSetText(own) + " " +
                              std::string(def.operandName(i)));
        return std::nullopt;
      }
    } else if (operandTypes[i].elementType != type) {
      c.operandError(i, c.describeOperand(i) + " has a different element type "
                                               "from " +
                            c.describeOperand(0));
      return std::nullopt;
    }
  if (!def.infer(c))
    return std::nullopt;
  for (const TensorType &r : results) {
    std::string problem = checkShape(r.shape);
    if (!problem.empty()) {
      c.opError("result " + r.str() + ": " + problem);
      return std::nullopt;
    }
  }
  return results;
}

} // namespace spyre::compiler
