// Shape inference and verification of the ops (ShapeInference.h): one
// inference or verifier hook per op family, each reading its operands and
// attributes from an InferContext and reporting through it. The table that
// names these hooks is OpRegistry.cpp.
#include "compiler/ir/ShapeInference.h"

#include "host/HostOp.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace spyre::compiler {

namespace {

// ---- Inference helpers ----

std::string intsStr(const std::vector<int64_t> &v) { return shapeStr(v); }

/// Normalises every axis of `axes` for `rank`; reports an out-of-range or
/// repeated axis against attribute `attr`.
std::optional<std::vector<int64_t>> normalizeAxes(InferContext &c,
                                                  std::string_view attr,
                                                  const std::vector<int64_t> &axes,
                                                  int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n) {
      c.attrError(attr, "axis " + std::to_string(a) +
                            " is out of range for rank " + std::to_string(rank));
      return std::nullopt;
    }
    if (std::find(out.begin(), out.end(), *n) != out.end()) {
      c.attrError(attr, "axis " + std::to_string(a) + " is listed twice in " +
                            intsStr(axes));
      return std::nullopt;
    }
    out.push_back(*n);
  }
  return out;
}

std::optional<int64_t> axisAttr(InferContext &c, std::string_view attr,
                                int64_t rank) {
  int64_t axis = c.intAttr(attr);
  std::optional<int64_t> n = normalizeAxis(axis, rank);
  if (!n)
    c.attrError(attr, std::string(attr) + " " + std::to_string(axis) +
                          " is out of range for " + c.describeOperand(0));
  return n;
}

} // namespace

// ---- Inference and verifier hooks, one per op family (ShapeInference.h) ----

namespace infer {

bool inferMatmul(InferContext &c) {
  const TensorType &a = c.operand(0), &b = c.operand(1);
  for (size_t i = 0; i < 2; ++i)
    if (c.operand(i).rank() < 2)
      return c.operandError(i, c.describeOperand(i) +
                                   " must have rank 2 or more");
  bool ta = c.boolAttr("transpose_a"), tb = c.boolAttr("transpose_b");
  size_t ra = a.shape.size(), rb = b.shape.size();
  int64_t m = ta ? a.shape[ra - 1] : a.shape[ra - 2];
  int64_t ka = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  int64_t kb = tb ? b.shape[rb - 1] : b.shape[rb - 2];
  int64_t n = tb ? b.shape[rb - 2] : b.shape[rb - 1];
  if (ka != kb)
    return c.operandError(
        1, "contraction sizes differ: " + c.describeOperand(0) + " has K = " +
               std::to_string(ka) + ", " + c.describeOperand(1) + " has K = " +
               std::to_string(kb) + " (transpose_a = " +
               (ta ? "true" : "false") + ", transpose_b = " +
               (tb ? "true" : "false") + ")");
  Shape batchA(a.shape.begin(), a.shape.end() - 2);
  Shape batchB(b.shape.begin(), b.shape.end() - 2);
  std::optional<Shape> batch = broadcastShapes(batchA, batchB);
  if (!batch)
    return c.operandError(1, "batch dimensions " + shapeStr(batchA) + " of a and " +
                                 shapeStr(batchB) + " of b do not broadcast");
  Shape out = *batch;
  out.push_back(m);
  out.push_back(n);
  c.addResult({c.elementType(), out});
  return true;
}

/// A matmul's result from a and gate; up must be gate's twin.
bool inferGatedMatmul(InferContext &c) {
  if (c.operand(2).shape != c.operand(1).shape)
    return c.operandError(2, c.describeOperand(2) +
                                 " must have the shape of " +
                                 c.describeOperand(1));
  return inferMatmul(c);
}

bool inferLinear(InferContext &c) {
  const TensorType &x = c.operand(0), &w = c.operand(1);
  if (x.rank() < 1)
    return c.operandError(0, c.describeOperand(0) + " must have rank 1 or more");
  if (w.rank() != 2)
    return c.operandError(1, c.describeOperand(1) +
                                 " must be [out_features, in_features]");
  int64_t in = x.shape.back(), out = w.shape[0];
  if (w.shape[1] != in)
    return c.operandError(1, c.describeOperand(1) + " has " +
                                 std::to_string(w.shape[1]) +
                                 " input features, " + c.describeOperand(0) +
                                 " has " + std::to_string(in));
  if (c.numOperands() == 3 && c.operand(2).shape != Shape{out})
    return c.operandError(2, c.describeOperand(2) + " must have shape [" +
                                 std::to_string(out) + "] (out_features)");
  Shape shape = x.shape;
  shape.back() = out;
  c.addResult({c.elementType(), shape});
  return true;
}

bool inferBroadcast(InferContext &c) {
  std::optional<Shape> shape =
      broadcastShapes(c.operand(0).shape, c.operand(1).shape);
  if (!shape)
    return c.operandError(1, "shapes of " + c.describeOperand(0) + " and " +
                                 c.describeOperand(1) + " do not broadcast");
  c.addResult({c.elementType(), *shape});
  return true;
}

bool inferSame(InferContext &c) {
  c.addResult(c.operand(0));
  return true;
}

bool verifyPow(InferContext &c) {
  if (!std::isfinite(c.floatAttr("exponent")))
    return c.attrError("exponent", "exponent must be finite");
  return true;
}

bool inferSoftmax(InferContext &c) {
  if (!axisAttr(c, "axis", c.operand(0).rank()))
    return false;
  c.addResult(c.operand(0));
  return true;
}

bool verifyEpsilon(InferContext &c) {
  double eps = c.floatAttr("epsilon");
  if (!std::isfinite(eps) || eps < 0)
    return c.attrError("epsilon", "epsilon must be finite and not negative, got " +
                                      formatDouble(eps));
  return true;
}

/// layernorm and rmsnorm: the optional scale and shift have the shape of the
/// normalised dimensions.
bool inferNorm(InferContext &c) {
  const TensorType &x = c.operand(0);
  std::optional<int64_t> axis = axisAttr(c, "axis", x.rank());
  if (!axis)
    return false;
  Shape normalized(x.shape.begin() + *axis, x.shape.end());
  for (size_t i = 1; i < c.numOperands(); ++i)
    if (c.operand(i).shape != normalized)
      return c.operandError(i, c.describeOperand(i) + " must have shape " +
                                   shapeStr(normalized) +
                                   " (the normalised dimensions of x)");
  c.addResult(x);
  return true;
}

bool inferReduce(InferContext &c) {
  const TensorType &x = c.operand(0);
  std::vector<int64_t> axesAttr = c.intsAttr("axes");
  if (axesAttr.empty())
    return c.attrError("axes", "axes must list at least one axis");
  std::optional<std::vector<int64_t>> axes =
      normalizeAxes(c, "axes", axesAttr, x.rank());
  if (!axes)
    return false;
  bool keep = c.boolAttr("keepdims");
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    bool reduced = std::find(axes->begin(), axes->end(), d) != axes->end();
    if (!reduced)
      shape.push_back(x.shape[static_cast<size_t>(d)]);
    else if (keep)
      shape.push_back(1);
  }
  c.addResult({x.elementType, shape});
  return true;
}

bool inferTranspose(InferContext &c) {
  const TensorType &x = c.operand(0);
  std::vector<int64_t> perm = c.intsAttr("perm");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool isPerm = static_cast<int64_t>(perm.size()) == x.rank();
  for (size_t i = 0; isPerm && i < sorted.size(); ++i)
    isPerm = sorted[i] == static_cast<int64_t>(i);
  if (!isPerm)
    return c.attrError("perm", "perm " + intsStr(perm) +
                                   " is not a permutation of the " +
                                   std::to_string(x.rank()) + " axes of " +
                                   c.describeOperand(0));
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(x.shape[static_cast<size_t>(p)]);
  c.addResult({x.elementType, shape});
  return true;
}

bool inferReshape(InferContext &c) {
  const TensorType &x = c.operand(0);
  std::vector<int64_t> target = c.intsAttr("shape");
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0)
        return c.attrError("shape", "shape " + intsStr(target) +
                                        " has more than one -1");
      inferred = static_cast<int>(i);
      continue;
    }
    if (target[i] < 1)
      return c.attrError("shape", "shape " + intsStr(target) +
                                      " has entry " + std::to_string(target[i]) +
                                      "; entries are at least 1, or -1 once");
    if (target[i] > kMaxElements || known > kMaxElements / target[i])
      return c.attrError("shape", "shape " + intsStr(target) + " is too large");
    known *= target[i];
  }
  int64_t count = x.elementCount();
  if (inferred >= 0) {
    if (count % known != 0)
      return c.attrError("shape", "cannot reshape " + c.describeOperand(0) +
                                      " (" + std::to_string(count) +
                                      " elements) to " + intsStr(target));
    target[static_cast<size_t>(inferred)] = count / known;
  } else if (known != count) {
    return c.attrError("shape", "cannot reshape " + c.describeOperand(0) + " (" +
                                    std::to_string(count) + " elements) to " +
                                    intsStr(target) + " (" +
                                    std::to_string(known) + " elements)");
  }
  c.addResult({x.elementType, target});
  return true;
}

bool inferSplit(InferContext &c) {
  const TensorType &x = c.operand(0);
  std::optional<int64_t> axis = axisAttr(c, "axis", x.rank());
  if (!axis)
    return false;
  std::vector<int64_t> sizes = c.intsAttr("sizes");
  if (sizes.empty())
    return c.attrError("sizes", "sizes must list at least one piece");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 1)
      return c.attrError("sizes", "sizes " + intsStr(sizes) +
                                      " has a piece of size " +
                                      std::to_string(s) + "; pieces are at least 1");
    // Each piece and the sum so far stay within 2^40, so the sum never
    // wraps however long the list.
    if (s > kMaxElements || total > kMaxElements - s)
      return c.attrError("sizes", "sizes " + intsStr(sizes) + " is too large");
    total += s;
  }
  int64_t dim = x.shape[static_cast<size_t>(*axis)];
  if (total != dim)
    return c.attrError("sizes", "sizes " + intsStr(sizes) + " sum to " +
                                    std::to_string(total) + ", but dimension " +
                                    std::to_string(*axis) + " of " +
                                    c.describeOperand(0) + " is " +
                                    std::to_string(dim));
  for (int64_t s : sizes) {
    Shape shape = x.shape;
    shape[static_cast<size_t>(*axis)] = s;
    c.addResult({x.elementType, shape});
  }
  return true;
}

bool inferConcat(InferContext &c) {
  const TensorType &first = c.operand(0);
  std::optional<int64_t> axis = axisAttr(c, "axis", first.rank());
  if (!axis)
    return false;
  Shape shape = first.shape;
  for (size_t i = 1; i < c.numOperands(); ++i) {
    const TensorType &t = c.operand(i);
    bool sameOtherDims = t.rank() == first.rank();
    for (size_t d = 0; sameOtherDims && d < t.shape.size(); ++d)
      sameOtherDims = d == static_cast<size_t>(*axis) || t.shape[d] == first.shape[d];
    if (!sameOtherDims)
      return c.operandError(i, "input " + std::to_string(i) + " " + t.str() +
                                   " does not match input 0 " + first.str() +
                                   " outside axis " + std::to_string(*axis));
    shape[static_cast<size_t>(*axis)] += t.shape[static_cast<size_t>(*axis)];
  }
  c.addResult({first.elementType, shape});
  return true;
}

bool inferSqueeze(InferContext &c) {
  const TensorType &x = c.operand(0);
  std::optional<std::vector<int64_t>> axes =
      normalizeAxes(c, "axes", c.intsAttr("axes"), x.rank());
  if (!axes)
    return false;
  for (int64_t a : *axes)
    if (x.shape[static_cast<size_t>(a)] != 1)
      return c.attrError("axes", "dimension " + std::to_string(a) + " of " +
                                     c.describeOperand(0) + " is " +
                                     std::to_string(x.shape[static_cast<size_t>(a)]) +
                                     ", not 1");
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (std::find(axes->begin(), axes->end(), d) == axes->end())
      shape.push_back(x.shape[static_cast<size_t>(d)]);
  c.addResult({x.elementType, shape});
  return true;
}

bool inferUnsqueeze(InferContext &c) {
  const TensorType &x = c.operand(0);
  std::vector<int64_t> axesAttr = c.intsAttr("axes");
  int64_t outRank = x.rank() + static_cast<int64_t>(axesAttr.size());
  if (outRank > kMaxRank)
    return c.attrError("axes", "the result would have rank " +
                                   std::to_string(outRank) + ", above the limit of " +
                                   std::to_string(kMaxRank));
  std::optional<std::vector<int64_t>> axes =
      normalizeAxes(c, "axes", axesAttr, outRank);
  if (!axes)
    return false;
  Shape shape;
  size_t next = 0;
  for (int64_t d = 0; d < outRank; ++d) {
    if (std::find(axes->begin(), axes->end(), d) != axes->end())
      shape.push_back(1);
    else
      shape.push_back(x.shape[next++]);
  }
  c.addResult({x.elementType, shape});
  return true;
}

bool inferCausalMask(InferContext &c) {
  if (c.operand(0).rank() < 2)
    return c.operandError(0, c.describeOperand(0) +
                                 " must have rank 2 or more ([..., queries, keys])");
  c.addResult(c.operand(0));
  return true;
}

bool inferCausalSoftmax(InferContext &c) {
  const TensorType &x = c.operand(0);
  if (x.rank() < 2)
    return c.operandError(0, c.describeOperand(0) +
                                 " must have rank 2 or more ([..., queries, keys])");
  const int64_t q = x.shape[x.shape.size() - 2], k = x.shape.back();
  if (k < q)
    return c.operandError(0, c.describeOperand(0) +
                                 " must have at least as many keys as queries "
                                 "(a query with no key to see has no softmax)");
  c.addResult(x);
  return true;
}

bool verifyCausalSoftmax(InferContext &c) {
  const double scale = c.floatAttr("scale");
  if (!std::isfinite(scale) || scale <= 0)
    return c.attrError("scale", "scale must be finite and positive");
  return true;
}

bool inferAttention(InferContext &c) {
  if (c.numOperands() == 4)
    return c.operandError(3, c.describeOperand(3) +
                                 " comes with its values, v_more");
  for (size_t i = 0; i < c.numOperands(); ++i)
    if (c.operand(i).rank() != 4)
      return c.operandError(i, c.describeOperand(i) +
                                   " must have rank 4 ([batch, heads, "
                                   "tokens, head_dim])");
  const Shape &q = c.operand(0).shape, &k = c.operand(1).shape,
              &v = c.operand(2).shape;
  if (v != k)
    return c.operandError(2, c.describeOperand(2) + " must have the shape " +
                                 shapeStr(k) + " of k");
  if (k[0] != q[0] || k[3] != q[3])
    return c.operandError(1, c.describeOperand(1) +
                                 " must have q's batch and head_dim ([" +
                                 std::to_string(q[0]) + ", ., ., " +
                                 std::to_string(q[3]) + "])");
  if (k[1] < 1 || q[1] % k[1] != 0)
    return c.operandError(1, c.describeOperand(1) + " has " +
                                 std::to_string(k[1]) +
                                 " heads, which must divide q's " +
                                 std::to_string(q[1]));
  int64_t keys = k[2];
  if (c.numOperands() == 5) {
    const Shape &k2 = c.operand(3).shape, &v2 = c.operand(4).shape;
    if (k2[0] != k[0] || k2[1] != k[1] || k2[3] != k[3])
      return c.operandError(3, c.describeOperand(3) +
                                   " must have k's batch, heads and head_dim "
                                   "([" +
                                   std::to_string(k[0]) + ", " +
                                   std::to_string(k[1]) + ", ., " +
                                   std::to_string(k[3]) + "])");
    if (v2 != k2)
      return c.operandError(4, c.describeOperand(4) + " must have the shape " +
                                   shapeStr(k2) + " of k_more");
    keys += k2[2];
  }
  if (c.boolAttr("causal") && keys < q[2])
    return c.operandError(1, c.describeOperand(1) +
                                 " must have at least as many keys as q has "
                                 "queries under a causal mask");
  c.addResult(c.operand(0));
  return true;
}

bool verifyAttention(InferContext &c) {
  const double scale = c.floatAttr("scale");
  if (!std::isfinite(scale) || scale <= 0)
    return c.attrError("scale", "scale must be finite and positive");
  return true;
}

bool inferRotary(InferContext &c) {
  const TensorType &x = c.operand(0);
  const int64_t d = c.intAttr("head_dim");
  if (x.rank() < 1 || d < 2 || d % 2 != 0 || x.shape.back() % d != 0)
    return c.attrError("head_dim",
                       "head_dim must be even and divide the last dimension " +
                           (x.rank() < 1 ? std::string("of x")
                                         : std::to_string(x.shape.back())));
  Shape perHead = x.shape;
  perHead.back() = d;
  for (size_t i = 1; i < 3; ++i)
    if (c.operand(i).shape != x.shape && c.operand(i).shape != perHead)
      return c.operandError(i, c.describeOperand(i) + " must have x's shape " +
                                   shapeStr(x.shape) + " or one head's " +
                                   shapeStr(perHead));
  if (c.operand(1).shape != c.operand(2).shape)
    return c.operandError(2, c.describeOperand(2) +
                                 " must have the shape of cos");
  c.addResult(x);
  return true;
}

/// A host op's results are what the host library infers for its ONNX op
/// type and attributes (host/HostOp.h).
bool inferHost(InferContext &c) {
  std::string why;
  std::optional<nlohmann::json> attrs =
      host::parseHostAttrs(c.stringAttr("attrs"), why);
  if (!attrs)
    return c.attrError("attrs", why);
  host::HostOp op{c.stringAttr("op"), std::move(*attrs)};
  if (!host::isHostOpType(op.opType))
    return c.attrError("op", "op type '" + op.opType +
                                 "' has no host implementation");
  std::vector<host::HostShape> shapes;
  for (size_t i = 0; i < c.numOperands(); ++i)
    shapes.push_back(c.operand(i).shape);
  host::HostInference r = host::inferHostOp(op, shapes);
  if (!r.ok())
    return c.opError(op.opType + ": " + r.error);
  for (const host::HostShape &s : r.outputs) {
    for (int64_t d : s)
      if (d < 1)
        return c.opError(op.opType + ": the result " + shapeStr(s) +
                         " has an empty dimension");
    c.addResult({c.elementType(), s});
  }
  return true;
}

} // namespace infer

} // namespace spyre::compiler
