// Emission of the ops the row kernels run: elementwise ops and chains,
// softmax, norms, reductions, causal masks, rotary (Emission.h, Emitter.h).
#include "compiler/emit/Emitter.h"

namespace spyre::compiler::emit_detail {

namespace {

/// `t` viewed as one column of a result of shape `y`: [.., R, 1] with y's
/// leading dims [.., R] (t may lack leading dims of one), the bytes of a
/// default layout read as they are. nullopt when t is not such a column.
std::optional<TensorRef> columnOf(const TensorRef &t,
                                  const std::vector<int64_t> &y) {
  if (t.shape.back() != 1 || t.shape.size() > y.size())
    return std::nullopt;
  std::vector<int64_t> col = y;
  col.back() = 1;
  std::vector<int64_t> padded(y.size() - t.shape.size(), 1);
  padded.insert(padded.end(), t.shape.begin(), t.shape.end());
  if (padded != col)
    return std::nullopt;
  return viewAs(t, col);
}

} // namespace

bool Emitter::emitBinary(const Op &op) {
  TensorRef a = ref(op.operand(0)), b = ref(op.operand(1));
  const Value *bv = op.operand(1);
  const TensorRef y = result(op.result());
  const isa::Opcode sfuOp = binaryOpcode(op.kind());
  // One operand of the result's shape and one value per row in the other
  // ([.., R, 1], what reductions with keepdims give, as in softmax and the
  // norms written out as primitive ops): the column kernel broadcasts each
  // row's value in LX, so no [.., R, C] copy of the column is made. A
  // single element stays a scalar (an immediate when constant) except
  // before a non-commutative op, where the scalar path cannot take it.
  if ((a.shape == y.shape) != (b.shape == y.shape)) {
    const bool colFirst = b.shape == y.shape;
    const TensorRef &full = colFirst ? b : a;
    const TensorRef &other = colFirst ? a : b;
    const bool commutative =
        op.kind() == OpKind::Add || op.kind() == OpKind::Mul;
    const bool scalar = numel(other.shape) == 1;
    std::optional<TensorRef> col = columnOf(other, y.shape);
    if (col && (!scalar || (colFirst && !commutative))) {
      const TensorRef x = asDType(full, y.dtype);
      const TensorRef c = asDType(*col, y.dtype);
      beginKernel();
      return rowDone(
          codegen::emitColumnBinary(pb_, sfuOp, x, c, y, colFirst, options()));
    }
  }
  auto smallOk = [&](const TensorRef &t) {
    return numel(t.shape) == 1 || (t.shape.back() == y.shape.back() &&
                                   numel(t.shape) == t.shape.back());
  };
  bool commutative = op.kind() == OpKind::Add || op.kind() == OpKind::Mul;
  size_t running = 0;
  if (a.shape != y.shape && b.shape == y.shape && commutative) {
    std::swap(a, b);
    bv = op.operand(0);
    running = 1;
  }
  // Other broadcasts are made explicit first: a copy of the operand at the
  // result's shape (a row of the last dim and a scalar second operand are
  // taken by the kernels as they are).
  auto expand = [&](const TensorRef &t) {
    if (t.shape == y.shape)
      return t;
    const TensorRef full = scratch(t.dtype, y.shape);
    broadcastTo(t, full);
    return full;
  };
  a = expand(a);
  if (b.shape != y.shape && !smallOk(b))
    b = expand(b);
  a = asDType(a, y.dtype);
  const std::optional<ElementwiseStep> step = elementwiseStep(op, running);
  SPYRE_ASSERT(step && (step->imm || step->operand == bv),
               "binary op '" + op.name() + "' is no elementwise step");
  if (step->imm) {
    beginKernel();
    return rowDone(
        codegen::emitScalar(pb_, step->op, *step->imm, a, y, options()));
  }
  b = asDType(b, y.dtype);
  beginKernel();
  return rowDone(codegen::emitBinary(pb_, sfuOp, a, b, y, options()));
}

bool Emitter::emitUnaryOp(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const std::optional<ElementwiseStep> step = elementwiseStep(op, 0);
  SPYRE_ASSERT(step && !step->operand,
               "unary op '" + op.name() + "' is no elementwise step");
  beginKernel();
  if (step->imm)
    return rowDone(
        codegen::emitScalar(pb_, step->op, *step->imm, x, y, options()));
  return rowDone(codegen::emitUnary(pb_, step->op, x, y, options()));
}

bool Emitter::emitChainOp(const Op &op) {
  // The divide pass checked the chain (compiler/passes/Divide.h): each op
  // runs on the one before, its other operands are in device memory
  // already.
  std::vector<const Op *> ops = {&op};
  for (const std::string &name : m_.chain) {
    const Op *next = g_.findOp(name);
    SPYRE_ASSERT(next, "chained op '" + name + "' is gone");
    ops.push_back(next);
  }
  const TensorRef y = result(ops.back()->result());
  const std::optional<size_t> input = chainInput(op);
  SPYRE_ASSERT(input, "op '" + op.name() + "' cannot start a chain");
  const TensorRef x = asDType(ref(op.operand(*input)), y.dtype);
  std::vector<codegen::ChainStep> steps;
  size_t running = *input;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i > 0)
      running = static_cast<size_t>(
          std::find(ops[i]->operands().begin(), ops[i]->operands().end(),
                    ops[i - 1]->result()) -
          ops[i]->operands().begin());
    const std::optional<ElementwiseStep> s =
        elementwiseStep(*ops[i], running);
    SPYRE_ASSERT(s, "op '" + ops[i]->name() + "' is no elementwise step");
    codegen::ChainStep c;
    c.op = s->op;
    c.imm = s->imm;
    c.operandFirst = s->operandFirst;
    if (s->operand)
      c.operand = asDType(ref(s->operand), y.dtype);
    steps.push_back(std::move(c));
  }
  beginKernel();
  return rowDone(codegen::emitChain(pb_, x, steps, y, options()));
}

bool Emitter::emitSoftmax(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const int n = x.rank();
  const int axis = static_cast<int>(*normalizeAxis(op.intAttr("axis"), n));
  if (axis == n - 1) {
    beginKernel();
    return rowDone(codegen::emitSoftmax(pb_, x, y, options()));
  }
  std::vector<int> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::swap(p[static_cast<size_t>(axis)], p.back());
  const TensorRef t1 = scratch(y.dtype, permuted(x.shape, p));
  const TensorRef t2 = scratch(y.dtype, t1.shape);
  permute(x, p, t1);
  beginKernel();
  if (!rowDone(codegen::emitSoftmax(pb_, t1, t2, options())))
    return false;
  permute(t2, p, y);
  return true;
}

bool Emitter::emitNorm(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const int64_t rank = op.operand(0)->type().rank();
  if (*normalizeAxis(op.intAttr("axis"), rank) != rank - 1)
    return fail("normalising over more than the last dim is not run on the "
                "device");
  auto vec = [&](size_t i) -> std::optional<TensorRef> {
    if (op.numOperands() <= i || !op.operand(i))
      return std::nullopt;
    TensorRef t = ref(op.operand(i));
    t.shape = {numel(t.shape)};
    return t;
  };
  // Declared in operand order before the call: a tensor's address follows
  // the order of its first reference, and the order in which a call's
  // arguments are evaluated is the compiler's choice.
  const std::optional<TensorRef> weight = vec(1), bias = vec(2);
  const float eps = static_cast<float>(op.floatAttr("epsilon"));
  beginKernel();
  if (op.kind() == OpKind::LayerNorm)
    return rowDone(
        codegen::emitLayerNorm(pb_, x, weight, bias, y, eps, options()));
  return rowDone(codegen::emitRmsNorm(pb_, x, weight, y, eps, options()));
}

bool Emitter::emitReduce(const Op &op) {
  const TensorRef y = result(op.result());
  TensorRef cur = asDType(ref(op.operand(0)), y.dtype);
  const int n = cur.rank();
  const codegen::ReduceKind kind =
      op.kind() == OpKind::ReduceSum    ? codegen::ReduceKind::Sum
      : op.kind() == OpKind::ReduceMean ? codegen::ReduceKind::Mean
                                        : codegen::ReduceKind::Max;
  std::vector<int64_t> axes;
  for (int64_t a : op.intsAttr("axes"))
    axes.push_back(*normalizeAxis(a, n));
  std::sort(axes.begin(), axes.end());
  // One axis at a time, keeping reduced dims as 1 (a mean of equal-sized
  // means is the mean).
  for (int64_t axis : axes) {
    std::vector<int64_t> outShape = cur.shape;
    outShape[static_cast<size_t>(axis)] = 1;
    if (axis == n - 1) {
      TensorRef t = scratch(y.dtype, outShape);
      beginKernel();
      if (!rowDone(codegen::emitReduce(pb_, kind, cur, t, options())))
        return false;
      cur = t;
      continue;
    }
    std::vector<int> p(static_cast<size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    std::swap(p[static_cast<size_t>(axis)], p.back());
    const TensorRef t1 = scratch(y.dtype, permuted(cur.shape, p));
    permute(cur, p, t1);
    std::vector<int64_t> rShape = t1.shape;
    rShape.back() = 1;
    const TensorRef t2 = scratch(y.dtype, rShape);
    beginKernel();
    if (!rowDone(codegen::emitReduce(pb_, kind, t1, t2, options())))
      return false;
    const TensorRef t3 = scratch(y.dtype, outShape);
    permute(t2, p, t3);
    cur = t3;
  }
  // cur has the keepdims shape; y drops the reduced dims or keeps them.
  if (std::optional<TensorRef> yv = viewAs(y, cur.shape)) {
    beginKernel();
    codegen::emitRelayout(pb_, cur, *yv, options());
    return true;
  }
  // The last dim was reduced and dropped: [..., M, 1] -> [..., M] is a
  // transpose of the last two dims of [P, M, 1].
  const int64_t mDim = y.shape.back();
  std::optional<TensorRef> cv =
      viewAs(cur, {numel(cur.shape) / mDim, mDim, 1});
  std::optional<TensorRef> yv = viewAs(y, {numel(y.shape) / mDim, 1, mDim});
  SPYRE_ASSERT(cv && yv, "reduce: result views");
  beginKernel();
  codegen::emitTranspose(pb_, *cv, *yv, options());
  return true;
}


bool Emitter::emitCausalMask(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const Shape &s = op.operand(0)->type().shape;
  const int64_t q = s[s.size() - 2], k = s.back();
  std::vector<float> mask(static_cast<size_t>(numel(s)), 0.0f);
  for (size_t at = 0; at < mask.size(); ++at) {
    const int64_t j = static_cast<int64_t>(at) % k;
    const int64_t i = static_cast<int64_t>(at) / k % q;
    if (j > i + (k - q))
      mask[at] = codegen::kMaskValue;
  }
  reserve(op.name() + ".mask", y.dtype, s);
  const isa::TensorDecl &d =
      pb_.addConst(op.name() + ".mask", y.dtype, s, mask);
  beginKernel();
  return rowDone(
      codegen::emitBinary(pb_, isa::Opcode::Add, x, TensorRef::of(d), y,
                          options()));
}

bool Emitter::emitCausalSoftmax(const Op &op) {
  // The mask is a table of at most Q + K sticks (codegen::causalMaskTable),
  // never the scores' size: one per op, loaded once into LX by every core.
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const Shape &s = op.operand(0)->type().shape;
  const codegen::MaskTable table = codegen::causalMaskTable(
      s[s.size() - 2], s.back(), static_cast<int>(y.lanes()));
  const std::string name = op.name() + ".mask";
  reserve(name, y.dtype, table.shape);
  const isa::TensorDecl &d =
      pb_.addConst(name, y.dtype, table.shape, table.values);
  beginKernel();
  return rowDone(codegen::emitCausalSoftmax(
      pb_, x, TensorRef::of(d), y, static_cast<float>(op.floatAttr("scale")),
      options()));
}

bool Emitter::emitRotary(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const TensorRef cos = asDType(ref(op.operand(1)), y.dtype);
  const TensorRef sin = asDType(ref(op.operand(2)), y.dtype);
  const int64_t d = op.intAttr("head_dim");
  if ((d / 2) % y.lanes() != 0)
    return fail("the halves of a head (" + std::to_string(d / 2) +
                " elements) must be whole sticks of " +
                std::to_string(y.lanes()));
  beginKernel();
  return rowDone(codegen::emitRotary(pb_, x, cos, sin, y, d, options()));
}

} // namespace spyre::compiler::emit_detail
