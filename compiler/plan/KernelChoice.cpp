// The kernel choice (what it decides: KernelChoice.h).
#include "compiler/plan/KernelChoice.h"

#include "compiler/plan/Mapping.h"

#include <algorithm>
#include <functional>

namespace spyre::compiler {

using codegen::TensorRef;

namespace {

int64_t elementsOf(const Value &v) { return v.type().elementCount(); }

bool stickLast(const Value &v) {
  return v.type().rank() == 0 || requireLayout(v).stickDim == v.type().rank() - 1;
}

/// Whether transpose `t` swaps the two dims just above the last and keeps
/// the others: [.., S, H, L] <-> [.., H, S, L].
bool swapsAboveLast(const Op &t) {
  if (t.kind() != OpKind::Transpose)
    return false;
  const std::vector<int64_t> p = t.intsAttr("perm");
  const size_t n = p.size();
  if (n < 3)
    return false;
  for (size_t d = 0; d < n; ++d) {
    const size_t want = d == n - 3 ? n - 2 : d == n - 2 ? n - 3 : d;
    if (p[d] != static_cast<int64_t>(want))
      return false;
  }
  return true;
}

/// Whether `flat` [S, H x L] and `heads` [S, H, L] are the two sides of a
/// split into heads of exactly one stick (L the lanes of a stick), with
/// no dim of more than one index above S.
bool stickHeads(const Shape &flat, const Shape &heads, int64_t lanes) {
  return flat.size() >= 2 && heads.size() == flat.size() + 1 &&
         heads.back() == lanes &&
         heads[heads.size() - 2] * lanes == flat.back() &&
         std::equal(flat.begin(), flat.end() - 1, heads.begin()) &&
         product(flat, 0, flat.size() - 2) == 1;
}

bool splitsStickHeadsBack(const Op &r) { return splitsStickHeads(r, true); }

bool onlyUsedBy(const Graph &graph, const Value *v,
                const std::function<bool(const Op &)> &ok) {
  if (graph.isOutput(v))
    return false;
  const std::vector<OpUse> uses = graph.usesOf(v);
  return !uses.empty() &&
         std::all_of(uses.begin(), uses.end(),
                     [&](const OpUse &u) { return ok(*u.op); });
}

/// Whether `t` is a transpose [B, S, H, D] <-> [B, H, S, D].
bool swapsHeads(const Op &t) {
  return t.kind() == OpKind::Transpose && t.result()->type().rank() == 4 &&
         t.intsAttr("perm") == std::vector<int64_t>{0, 2, 1, 3};
}

} // namespace

int64_t product(const std::vector<int64_t> &s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= s[i];
  return p;
}

int64_t numel(const std::vector<int64_t> &s) {
  return product(s, 0, s.size());
}

/// Host dims in the order a kernel sees them: the stick dim last.
std::vector<int64_t> refOrder(const Value &v) {
  const int64_t rank = v.type().rank();
  if (rank == 0)
    return {};
  const int64_t stick = requireLayout(v).stickDim;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < rank; ++i)
    if (i != stick)
      order.push_back(i);
  order.push_back(stick);
  return order;
}

std::vector<int64_t> refShapeOf(const Value &v) {
  const Shape &s = v.type().shape;
  if (s.empty())
    return {1};
  std::vector<int64_t> r;
  for (int64_t d : refOrder(v))
    r.push_back(s[static_cast<size_t>(d)]);
  return r;
}

/// Whether reshape `r` splits its last dim into heads of one stick
/// (`back`: merges them again).
bool splitsStickHeads(const Op &r, bool back) {
  if (r.kind() != OpKind::Reshape)
    return false;
  const Shape &xs = r.operand(0)->type().shape, &ys = r.result()->type().shape;
  const int64_t lanes = elementsPerStick(requireLayout(*r.operand(0)).dtype);
  return back ? stickHeads(ys, xs, lanes) : stickHeads(xs, ys, lanes);
}

/// A head split [S, H x L] -> [S, H, L] -> [H, S, L] (a reshape, then a
/// transpose) or the merge back (the transpose, then the reshape), with
/// heads of one stick: stick h of row s is the stick of (h, s) in both
/// default layouts, since the stick blocks of the last dim are outermost.
/// The pair moves nothing; `op` is either of them, and the value between
/// them is used by nothing else.
bool isHeadSwap(const Graph &graph, const Op &op) {
  auto mergeReshape = [&](const Op &r) {
    return splitsStickHeadsBack(r) && r.operand(0)->isOpResult() &&
           swapsAboveLast(*r.operand(0)->definingOp());
  };
  switch (op.kind()) {
  case OpKind::Reshape: {
    if (splitsStickHeads(op))
      return onlyUsedBy(graph, op.result(), swapsAboveLast);
    if (!mergeReshape(op))
      return false;
    return onlyUsedBy(graph, op.operand(0),
                      [&](const Op &u) { return &u == &op; });
  }
  case OpKind::Transpose: {
    if (!swapsAboveLast(op))
      return false;
    const Value *x = op.operand(0);
    if (x->isOpResult() && splitsStickHeads(*x->definingOp()) &&
        onlyUsedBy(graph, x, swapsAboveLast))
      return true;
    return onlyUsedBy(graph, op.result(), [&](const Op &u) {
      return u.kind() == OpKind::Reshape && u.operand(0) == op.result() &&
             splitsStickHeadsBack(u);
    });
  }
  default:
    return false;
  }
}

/// Whether reshape `r` splits [B, S, H x D] into [B, S, H, D] (or, `back`,
/// merges them), D whole sticks.
bool splitsHeads(const Op &r, bool back) {
  if (r.kind() != OpKind::Reshape)
    return false;
  const Shape &flat = back ? r.result()->type().shape
                           : r.operand(0)->type().shape;
  const Shape &heads = back ? r.operand(0)->type().shape
                            : r.result()->type().shape;
  const int64_t lanes = elementsPerStick(requireLayout(*r.operand(0)).dtype);
  return flat.size() == 3 && heads.size() == 4 && heads[0] == flat[0] &&
         heads[1] == flat[1] && heads[2] * heads[3] == flat[2] &&
         heads[3] % lanes == 0;
}

bool isAttentionHeadView(const Graph &graph, const Op &op) {
  auto byAttention = [&](const Value *v) {
    return onlyUsedBy(graph, v, [&](const Op &u) {
      return u.kind() == OpKind::Attention;
    });
  };
  auto splitPair = [&](const Op &t) {
    if (!swapsHeads(t) || !t.operand(0)->isOpResult())
      return false;
    const Op &r = *t.operand(0)->definingOp();
    return splitsHeads(r) &&
           onlyUsedBy(graph, r.result(),
                      [&](const Op &u) { return &u == &t; }) &&
           byAttention(t.result());
  };
  auto mergePair = [&](const Op &t) {
    if (!swapsHeads(t) || !t.operand(0)->isOpResult() ||
        t.operand(0)->definingOp()->kind() != OpKind::Attention)
      return false;
    if (!onlyUsedBy(graph, t.operand(0), [&](const Op &u) { return &u == &t; }))
      return false;
    return onlyUsedBy(graph, t.result(), [&](const Op &u) {
      return u.operand(0) == t.result() && splitsHeads(u, true);
    });
  };
  if (op.kind() == OpKind::Transpose)
    return splitPair(op) || mergePair(op);
  if (splitsHeads(op)) {
    // The split alone is a view also when the transpose after it must be
    // stored (a graph output, such as the keys a cache appends): the
    // transpose then reads it in place, one copy instead of two.
    const std::vector<OpUse> uses = graph.usesOf(op.result());
    if (uses.size() != 1 || graph.isOutput(op.result()) ||
        !swapsHeads(*uses.front().op))
      return false;
    const std::vector<OpUse> after = graph.usesOf(uses.front().op->result());
    return !after.empty() &&
           std::all_of(after.begin(), after.end(), [](const OpUse &u) {
             return u.op->kind() == OpKind::Attention;
           });
  }
  if (splitsHeads(op, true) && op.operand(0)->isOpResult())
    return mergePair(*op.operand(0)->definingOp());
  return false;
}

bool isFreeView(const Graph &graph, const Op &op) {
  const Value *x = op.numOperands() > 0 ? op.operand(0) : nullptr;
  if (!x || !stickLast(*x))
    return false;
  const DeviceLayout xl = requireLayout(*x);
  for (const Value *r : op.results())
    if (!stickLast(*r) || requireLayout(*r).dtype != xl.dtype)
      return false;
  const Shape &xs = x->type().shape;
  switch (op.kind()) {
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze: {
    const Shape &ys = op.result(0)->type().shape;
    if (numel(xs) == 1)
      return true;
    if (!xs.empty() && !ys.empty() && xs.back() == ys.back())
      return true;
    return isHeadSwap(graph, op) || isAttentionHeadView(graph, op);
  }
  case OpKind::Split: {
    const int64_t rank = x->type().rank();
    const int64_t axis = *normalizeAxis(op.intAttr("axis"), rank);
    const int64_t lanes = elementsPerStick(xl.dtype);
    const std::vector<int64_t> sizes = op.intsAttr("sizes");
    if (axis == rank - 1) {
      for (size_t i = 0; i + 1 < sizes.size(); ++i)
        if (sizes[i] % lanes != 0)
          return false;
      return true;
    }
    return xs.back() <= lanes &&
           product(xs, 0, static_cast<size_t>(axis)) == 1;
  }
  case OpKind::Transpose:
    return isHeadSwap(graph, op) || isAttentionHeadView(graph, op);
  default:
    return false;
  }
}

int64_t coresPerBatch(int64_t batches, int64_t cores) {
  return cores / std::min(batches, cores);
}

hw::HwConfig batchConfig(const hw::HwConfig &config, int64_t batches,
                         int64_t cores) {
  hw::HwConfig c = config;
  const double groups =
      static_cast<double>(std::max<int64_t>(1, std::min(batches, cores)));
  c.memory.sustainedReadGBps /= groups;
  c.memory.sustainedMixedGBps /= groups;
  return c;
}

bool turnsBInKernel(const Op &op) {
  if (op.kind() != OpKind::Matmul || !op.boolAttr("transpose_b") ||
      op.operand(1)->isConstant())
    return false;
  const Shape &a = op.operand(0)->type().shape,
              &b = op.operand(1)->type().shape;
  const size_t ra = a.size(), rb = b.size();
  const int64_t m = op.boolAttr("transpose_a") ? a[ra - 1] : a[ra - 2];
  const int64_t rows =
      product(b, 0, rb - 2) == 1 ? product(a, 0, ra - 2) * m : m;
  return rows <= kTurnedBMaxRows;
}

bool readsBTurned(const Op &op) {
  const Value &b = *op.operand(1);
  return op.kind() == OpKind::Matmul && op.boolAttr("transpose_b") &&
         requireLayout(b).stickDim == b.type().rank() - 1;
}

MatmulWork matmulWork(const Graph &graph, const Op &op,
                      const std::string &fuseBias) {
  auto refOf = [](const Value *v) {
    TensorRef t;
    t.name = v->name();
    t.dtype = requireLayout(*v).dtype;
    t.shape = refShapeOf(*v);
    return t;
  };
  const TensorRef a = refOf(op.operand(0)), b = refOf(op.operand(1));
  const Value *out = op.result();
  MatmulWork w;
  if (!fuseBias.empty()) {
    const Op *add = graph.findOp(fuseBias);
    SPYRE_ASSERT(add, "fused add '" + fuseBias + "' is gone");
    const Value *bv =
        add->operand(0) == op.result() ? add->operand(1) : add->operand(0);
    out = add->result();
    w.args.bias = refOf(bv);
    w.args.bias->shape = {numel(w.args.bias->shape)};
  }
  const TensorRef c = refOf(out);
  const size_t ra = a.shape.size(), rb = b.shape.size();
  const bool turned = readsBTurned(op);
  const int64_t m = a.shape[ra - 2], k = a.shape.back(),
                n = turned ? b.shape[rb - 2] : b.shape.back();
  const int64_t batchA = product(a.shape, 0, ra - 2);
  const int64_t batchB = product(b.shape, 0, rb - 2);
  w.args.a = a;
  w.args.b = b;
  w.args.c = c;
  w.args.b.shape =
      turned ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  w.args.transB = turned;
  if (op.kind() == OpKind::GatedMatmul) {
    w.args.up = refOf(op.operand(2));
    w.args.up->shape = {k, n};
  }
  if (batchB == 1) {
    w.args.a.shape = {batchA * m, k};
    w.args.c.shape = {batchA * m, n};
    return w;
  }
  w.batches = batchB;
  w.args.a.shape = {m, k};
  w.args.c.shape = {m, n};
  return w;
}

/// Whether emitChain takes `other` beside chain value `v` as it is: v's
/// shape and stick dim, or one row of v's last dim, or one element (the
/// dtype is converted if need be).
bool chainOperandFits(const Value &other, const Value &v) {
  const Shape &os = other.type().shape, &vs = v.type().shape;
  if (elementsOf(other) == 1)
    return true;
  if (os == vs)
    return requireLayout(other).stickDim == requireLayout(v).stickDim;
  return !os.empty() && !vs.empty() && os.back() == vs.back() &&
         elementsOf(other) == os.back() && stickLast(other) &&
         stickLast(v);
}

bool opRunsKernels(const Graph &graph, const Op &op) {
  return opMapping(op).fusedInto.empty() && !isFreeView(graph, op);
}

isa::Opcode binaryOpcode(OpKind kind) {
  switch (kind) {
  case OpKind::Add:
    return isa::Opcode::Add;
  case OpKind::Sub:
    return isa::Opcode::Sub;
  case OpKind::Mul:
    return isa::Opcode::Mul;
  case OpKind::Div:
    return isa::Opcode::Div;
  default:
    SPYRE_UNREACHABLE("no SFU binary op for " +
                      std::string(opKindName(kind)));
  }
}

std::optional<ElementwiseStep> elementwiseStep(const Op &op, size_t running) {
  if (running >= op.numOperands() || op.numResults() != 1)
    return std::nullopt;
  ElementwiseStep s;
  switch (op.kind()) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div: {
    if (op.numOperands() != 2)
      return std::nullopt;
    const bool commutative =
        op.kind() == OpKind::Add || op.kind() == OpKind::Mul;
    const Value *other = op.operand(1 - running);
    s.op = binaryOpcode(op.kind());
    s.operandFirst = running == 1 && !commutative;
    if (other->isConstant() && elementsOf(*other) == 1 && !s.operandFirst &&
        op.kind() != OpKind::Div) {
      // A constant scalar is an immediate: no load, no broadcast. (Not for
      // div: multiplying by the reciprocal would round differently.)
      const double c = other->constantData().element(0);
      const bool add = op.kind() == OpKind::Add || op.kind() == OpKind::Sub;
      s.op = add ? isa::Opcode::Adds : isa::Opcode::Muls;
      s.imm = static_cast<float>(op.kind() == OpKind::Sub ? -c : c);
      return s;
    }
    s.operand = other;
    return s;
  }
  case OpKind::Pow:
    s.op = isa::Opcode::Pows;
    s.imm = static_cast<float>(op.floatAttr("exponent"));
    return s;
  case OpKind::Reciprocal:
    s.op = isa::Opcode::Recip;
    return s;
  case OpKind::Gelu:
    s.op = op.stringAttr("approximate") == "tanh" ? isa::Opcode::Gelut
                                                  : isa::Opcode::Gelu;
    return s;
  case OpKind::Relu:
    s.op = isa::Opcode::Relu;
    return s;
  case OpKind::Silu:
    s.op = isa::Opcode::Silu;
    return s;
  case OpKind::Sigmoid:
    s.op = isa::Opcode::Sigmoid;
    return s;
  case OpKind::Tanh:
    s.op = isa::Opcode::Tanh;
    return s;
  case OpKind::Erf:
    s.op = isa::Opcode::Erf;
    return s;
  case OpKind::Exp:
    s.op = isa::Opcode::Exp;
    return s;
  case OpKind::Sqrt:
    s.op = isa::Opcode::Sqrt;
    return s;
  case OpKind::Rsqrt:
    s.op = isa::Opcode::Rsqrt;
    return s;
  case OpKind::Neg:
    s.op = isa::Opcode::Neg;
    return s;
  case OpKind::Abs:
    s.op = isa::Opcode::Abs;
    return s;
  default:
    return std::nullopt;
  }
}

std::optional<size_t> chainInput(const Op &op) {
  if (op.numResults() != 1)
    return std::nullopt;
  const Value &y = *op.result();
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const Value &x = *op.operand(i);
    if (x.type().shape != y.type().shape ||
        requireLayout(x).stickDim != requireLayout(y).stickDim)
      continue;
    std::optional<ElementwiseStep> s = elementwiseStep(op, i);
    if (!s)
      return std::nullopt;
    if (s->operand && !chainOperandFits(*s->operand, y))
      return std::nullopt;
    return i;
  }
  return std::nullopt;
}

} // namespace spyre::compiler
