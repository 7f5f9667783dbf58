// The canonicalize pass (what it rewrites: Canonicalize.h).
#include "compiler/passes/Canonicalize.h"

#include "compiler/ir/Verifier.h"
#include "compiler/pm/Rewrite.h"

#include <cmath>

namespace spyre::compiler {

namespace {

bool isView(OpKind kind) {
  return kind == OpKind::Reshape || kind == OpKind::Squeeze ||
         kind == OpKind::Unsqueeze;
}

Op *definedBy(const Value *v, OpKind kind) {
  Op *op = v->definingOp();
  return op && op->kind() == kind ? op : nullptr;
}

/// Every use of `from` becomes `to`, unless `from` is a graph output (which
/// keeps its name); returns whether it happened.
bool forwardUses(Graph &graph, Value *from, Value *to) {
  if (graph.isOutput(from))
    return false;
  graph.replaceAllUsesWith(from, to);
  return true;
}

/// pow by a constant exponent that has an op of its own.
struct PowRule {
  double exponent;
  OpKind kind; ///< unary, or mul of x by itself
  const char *statistic;
};

constexpr PowRule kPowRules[] = {
    {2.0, OpKind::Mul, "pow-to-mul"},
    {0.5, OpKind::Sqrt, "pow-to-sqrt"},
    {-0.5, OpKind::Rsqrt, "pow-to-rsqrt"},
    {-1.0, OpKind::Reciprocal, "pow-to-reciprocal"},
};

const PowRule *findPowRule(double exponent) {
  for (const PowRule &r : kPowRules)
    if (r.exponent == exponent)
      return &r;
  return nullptr;
}

class Canonicalizer {
public:
  Canonicalizer(Graph &graph, PassContext &context)
      : graph_(graph), context_(context) {}

  void run() {
    bool changed = true;
    while (changed) {
      changed = false;
      // Each rule removes an op or an edge into one, so this ends.
      for (Op *op : graph_.ops())
        changed = rewrite(op) || changed;
      int dead = eraseDeadOps(graph_);
      context_.addStatistic("dead-ops-erased", dead);
    }
  }

private:
  /// Applies the first rule that matches `op`. A rule may erase `op`
  /// itself, never another op.
  bool rewrite(Op *op) {
    switch (op->kind()) {
    case OpKind::Linear:
      return linearToMatmul(op);
    case OpKind::Matmul:
      return foldConstantTranspose(op, 0, "transpose_a") ||
             foldConstantTranspose(op, 1, "transpose_b");
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
      return foldViews(op);
    case OpKind::Pow:
      return simplifyPow(op);
    case OpKind::Neg:
      return removeDoubleNeg(op);
    case OpKind::Mul:
      return fuseErfGelu(op) || fuseSilu(op);
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      return flattenNorm(op);
    case OpKind::Softmax:
      return fuseCausalSoftmax(op);
    case OpKind::CausalSoftmax:
      return foldSoftmaxScale(op);
    default:
      return false;
    }
  }

  bool linearToMatmul(Op *op) {
    Value *x = op->operand(0), *weight = op->operand(1);
    Value *bias = op->numOperands() == 3 ? op->operand(2) : nullptr;
    bool vector = x->type().rank() == 1;
    int64_t in = weight->type().shape[1], out = weight->type().shape[0];
    replaceOpInPlace(graph_, op, [&](OpBuilder &b, const ReplacedNames &n) {
      // The last op built takes the result's name; the others get fresh ones.
      Value *cur = x;
      if (vector)
        cur = b.create(OpKind::Reshape, graph_.uniqueOpName(n.opName + ".in"),
                       {cur}, {{"shape", Attribute::ints({1, in})}},
                       graph_.uniqueValueName(n.resultName + ".in"));
      bool last = !bias && !vector;
      cur = b.create(OpKind::Matmul, n.opName, {cur, weight},
                     {{"transpose_b", true}},
                     last ? n.resultName
                          : graph_.uniqueValueName(n.resultName + ".matmul"));
      if (bias)
        cur = b.create(OpKind::Add, graph_.uniqueOpName(n.opName + ".bias"),
                       {cur, bias}, {},
                       vector ? graph_.uniqueValueName(n.resultName + ".bias")
                              : n.resultName);
      if (vector)
        cur =
            b.create(OpKind::Reshape, graph_.uniqueOpName(n.opName + ".out"),
                     {cur}, {{"shape", Attribute::ints({out})}}, n.resultName);
      return cur;
    });
    context_.addStatistic("linear-to-matmul");
    return true;
  }

  /// matmul(transpose(C), ...) with C a constant and the transpose swapping
  /// the last two dimensions only: read C with the attribute flipped.
  bool foldConstantTranspose(Op *op, size_t index, const char *attr) {
    Op *t = definedBy(op->operand(index), OpKind::Transpose);
    if (!t || !t->operand(0)->isConstant())
      return false;
    std::vector<int64_t> perm = t->intsAttr("perm");
    size_t rank = perm.size();
    for (size_t d = 0; d < rank; ++d) {
      size_t want = d + 2 < rank ? d : (d == rank - 2 ? rank - 1 : rank - 2);
      if (perm[d] != static_cast<int64_t>(want))
        return false;
    }
    op->setOperand(index, t->operand(0));
    op->attrs().set(attr, !op->boolAttr(attr));
    context_.addStatistic("transpose-folded");
    return true;
  }

  bool foldViews(Op *op) {
    Value *src = op->operand(0);
    Value *result = op->result();
    if (src->type().shape == result->type().shape) {
      if (!forwardUses(graph_, result, src))
        return false;
      context_.addStatistic("views-cancelled");
      return true;
    }
    Op *inner = src->definingOp();
    if (!inner || !isView(inner->kind()))
      return false;
    Value *origin = inner->operand(0);
    if (origin->type().shape == result->type().shape &&
        forwardUses(graph_, result, origin)) {
      context_.addStatistic("views-cancelled");
      return true;
    }
    if (op->kind() == OpKind::Reshape) {
      // The target shape is absolute (a -1 resolves to the same size, since
      // the element count is the same), so the reshape can read the origin.
      op->setOperand(0, origin);
    } else {
      Shape shape = result->type().shape;
      replaceOpInPlace(graph_, op, [&](OpBuilder &b, const ReplacedNames &n) {
        return b.create(OpKind::Reshape, n.opName, {origin},
                        {{"shape", Attribute::ints(shape)}}, n.resultName);
      });
    }
    context_.addStatistic("views-merged");
    return true;
  }

  bool simplifyPow(Op *op) {
    double e = op->floatAttr("exponent");
    Value *x = op->operand(0);
    if (e == 1.0) {
      if (!forwardUses(graph_, op->result(), x))
        return false;
      context_.addStatistic("pow-removed");
      return true;
    }
    const PowRule *rule = findPowRule(e);
    if (!rule)
      return false;
    replaceOpInPlace(graph_, op, [&](OpBuilder &b, const ReplacedNames &n) {
      std::vector<Value *> operands{x};
      if (rule->kind == OpKind::Mul)
        operands.push_back(x);
      return b.create(rule->kind, n.opName, operands, {}, n.resultName);
    });
    context_.addStatistic(rule->statistic);
    return true;
  }

  bool removeDoubleNeg(Op *op) {
    Op *inner = definedBy(op->operand(0), OpKind::Neg);
    if (!inner || !forwardUses(graph_, op->result(), inner->operand(0)))
      return false;
    context_.addStatistic("double-neg-removed");
    return true;
  }

  /// A norm over several trailing dims is the same norm over the last dim
  /// of x reshaped to [rows, elements normalised] (weight and bias
  /// flattened alike), reshaped back: the device normalises rows only.
  bool flattenNorm(Op *op) {
    Value *x = op->operand(0);
    const Shape shape = x->type().shape;
    const int64_t rank = x->type().rank();
    const int64_t axis = *normalizeAxis(op->intAttr("axis"), rank);
    if (axis == rank - 1)
      return false;
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? rows : cols) *= shape[static_cast<size_t>(d)];
    AttrDict attrs = op->attrs();
    attrs.set("axis", int64_t{-1});
    const OpKind kind = op->kind();
    const std::vector<Value *> params(op->operands().begin() + 1,
                                      op->operands().end());
    replaceOpInPlace(graph_, op, [&](OpBuilder &b, const ReplacedNames &n) {
      auto reshape = [&](Value *v, const std::string &what, Shape to) {
        return b.create(OpKind::Reshape, graph_.uniqueOpName(n.opName + what),
                        {v}, {{"shape", Attribute::ints(to)}},
                        graph_.uniqueValueName(n.resultName + what));
      };
      std::vector<Value *> operands{reshape(x, ".rows", {rows, cols})};
      for (size_t i = 0; i < params.size(); ++i)
        operands.push_back(
            reshape(params[i], ".param" + std::to_string(i + 1), {cols}));
      Value *y = b.create(kind, n.opName, operands, attrs,
                          graph_.uniqueValueName(n.resultName + ".flat"));
      return b.create(OpKind::Reshape,
                      graph_.uniqueOpName(n.opName + ".unflatten"), {y},
                      {{"shape", Attribute::ints(shape)}}, n.resultName);
    });
    context_.addStatistic("norm-flattened");
    return true;
  }

  /// softmax(causal_mask_add(x)) over the last axis becomes
  /// causal_softmax(x): one pass over the scores, the mask never stored.
  bool fuseCausalSoftmax(Op *op) {
    const int64_t rank = op->operand(0)->type().rank();
    Op *mask = definedBy(op->operand(0), OpKind::CausalMaskAdd);
    if (!mask || *normalizeAxis(op->intAttr("axis"), rank) != rank - 1 ||
        !onlyFeeds(mask->result(), op))
      return false;
    const Shape &s = op->operand(0)->type().shape;
    if (s.back() < s[s.size() - 2]) // rows with every key hidden
      return false;
    Value *x = mask->operand(0);
    replaceOpInPlace(graph_, op, [&](OpBuilder &b, const ReplacedNames &n) {
      return b.create(OpKind::CausalSoftmax, n.opName, {x}, {{"scale", 1.0}},
                      n.resultName);
    });
    context_.addStatistic("causal-softmax-fused");
    return true;
  }

  /// causal_softmax(x * c) and causal_softmax(x / c), c a positive finite
  /// scalar constant, take c (or 1 / c) into the op's scale.
  bool foldSoftmaxScale(Op *op) {
    Value *v = op->operand(0);
    Op *m = v->definingOp();
    if (!m || (m->kind() != OpKind::Mul && m->kind() != OpKind::Div) ||
        !onlyFeeds(v, op))
      return false;
    for (size_t i = 0; i < 2; ++i) {
      if (m->kind() == OpKind::Div && i == 0)
        continue; // c / x is no scale
      Value *c = m->operand(i), *x = m->operand(1 - i);
      if (!c->isConstant() || c->type().elementCount() != 1 ||
          x->type() != v->type())
        continue;
      const double k = c->constantData().element(0);
      const double scale =
          op->floatAttr("scale") * (m->kind() == OpKind::Div ? 1 / k : k);
      if (!std::isfinite(scale) || scale <= 0)
        continue;
      op->setOperand(0, x);
      op->attrs().set("scale", scale);
      context_.addStatistic("softmax-scale-folded");
      return true;
    }
    return false;
  }

  /// x * sigmoid(x) (either order) becomes silu(x).
  bool fuseSilu(Op *op) {
    for (size_t i = 0; i < 2; ++i) {
      Value *x = op->operand(i);
      Op *sig = definedBy(op->operand(1 - i), OpKind::Sigmoid);
      if (!sig || sig->operand(0) != x || !onlyFeeds(sig->result(), op) ||
          op->result()->type() != x->type())
        continue;
      replaceOpInPlace(graph_, op, [&](OpBuilder &b, const ReplacedNames &n) {
        return b.create(OpKind::Silu, n.opName, {x}, {}, n.resultName);
      });
      context_.addStatistic("silu-fused");
      return true;
    }
    return false;
  }

  /// Whether `v` is the result of an op that only `user` reads (once) and
  /// that is not a graph output: a value a fused op may swallow.
  bool onlyFeeds(const Value *v, const Op *user) const {
    std::vector<OpUse> uses = graph_.usesOf(v);
    return v->isOpResult() && !graph_.isOutput(v) && uses.size() == 1 &&
           uses.front().op == user;
  }

  /// x * 0.5 * (1 + erf(x / sqrt 2)) in any grouping of its three factors,
  /// with x / sqrt 2 also written x * (1 / sqrt 2), becomes gelu(x).
  bool fuseErfGelu(Op *op) {
    // The three factors: the operands of the final mul, one of them opened
    // when it is a mul of its own that only feeds this one.
    std::vector<Value *> factors;
    std::vector<Op *> inner;
    for (Value *v : op->operands()) {
      Op *m = definedBy(v, OpKind::Mul);
      if (m && onlyFeeds(v, op)) {
        inner.push_back(m);
        factors.push_back(m->operand(0));
        factors.push_back(m->operand(1));
        continue;
      }
      factors.push_back(v);
    }
    if (factors.size() != 3 || inner.size() != 1)
      return false;
    Value *x = nullptr;
    bool tanh = false;
    for (size_t i = 0; i < 3 && !x; ++i) {
      Value *half = factors[i];
      Value *sum = factors[(i + 1) % 3], *other = factors[(i + 2) % 3];
      if (!isScalarConstant(half, 0.5))
        continue;
      for (int order = 0; order < 2 && !x; ++order) {
        if ((x = erfGeluArgument(sum, other)))
          break;
        if ((x = tanhGeluArgument(sum, other))) {
          tanh = true;
          break;
        }
        std::swap(sum, other);
      }
    }
    if (!x || op->result()->type() != x->type())
      return false;
    // The mul that held two factors must not be needed elsewhere either.
    if (!onlyFeeds(inner.front()->result(), op))
      return false;
    replaceOpInPlace(graph_, op, [&](OpBuilder &b, const ReplacedNames &n) {
      return b.create(OpKind::Gelu, n.opName, {x},
                      {{"approximate", std::string(tanh ? "tanh" : "none")}},
                      n.resultName);
    });
    context_.addStatistic(tanh ? "tanh-gelu-fused" : "erf-gelu-fused");
    return true;
  }

  /// When `sum` is 1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)), as
  /// exporters write GELU's tanh form (x^3 as x * (x * x), either order, or
  /// pow x 3; each step used only by the next) and `x` is that x: x; else
  /// nullptr.
  Value *tanhGeluArgument(Value *sum, Value *x) const {
    constexpr double kBeta = 0.79788456080286535588; // sqrt(2 / pi)
    constexpr double kKappa = 0.044715;
    Value *t = scalarTerm(sum, OpKind::Add, 1.0);
    Op *th = t ? definedBy(t, OpKind::Tanh) : nullptr;
    if (!th || graph_.isOutput(sum) || graph_.usesOf(sum).size() != 1)
      return nullptr;
    Value *s = scalarTerm(th->operand(0), OpKind::Mul, kBeta);
    Op *add = s ? definedBy(s, OpKind::Add) : nullptr;
    if (!add)
      return nullptr;
    for (int i = 0; i < 2; ++i) {
      Value *cube = scalarTerm(add->operand(1 - i), OpKind::Mul, kKappa);
      if (add->operand(i) == x && cube && onlyFeeds(add->operand(1 - i), add) &&
          isCubeOf(cube, x))
        return x;
    }
    return nullptr;
  }

  /// When `v` is op(c, other) or op(other, c) for a scalar constant c near
  /// `value`, and `v` has one use (the next step of a pattern): other.
  Value *scalarTerm(Value *v, OpKind kind, double value) const {
    Op *op = definedBy(v, kind);
    if (!op || graph_.isOutput(v) || graph_.usesOf(v).size() != 1)
      return nullptr;
    for (int i = 0; i < 2; ++i)
      if (isScalarNear(op->operand(i), value) && op->operand(1 - i) != v)
        return op->operand(1 - i);
    return nullptr;
  }

  /// `v` = x * (x * x) in either order, or pow(x, 3), used only once.
  bool isCubeOf(Value *v, const Value *x) const {
    if (graph_.isOutput(v) || graph_.usesOf(v).size() != 1)
      return false;
    if (Op *p = definedBy(v, OpKind::Pow))
      return p->operand(0) == x && p->floatAttr("exponent") == 3.0;
    Op *m = definedBy(v, OpKind::Mul);
    if (!m)
      return false;
    for (int i = 0; i < 2; ++i) {
      Op *sq = definedBy(m->operand(1 - i), OpKind::Mul);
      if (m->operand(i) == x && sq && sq->operand(0) == x &&
          sq->operand(1) == x && onlyFeeds(m->operand(1 - i), m))
        return true;
    }
    return false;
  }

  /// When `sum` is 1 + erf(x / sqrt 2) (each step used only by the next)
  /// and `x` is that x: x; else nullptr.
  Value *erfGeluArgument(Value *sum, Value *x) const {
    Op *add = definedBy(sum, OpKind::Add);
    if (!add)
      return nullptr;
    Value *e = add->operand(0), *one = add->operand(1);
    if (!isScalarConstant(one, 1.0))
      std::swap(e, one);
    Op *erf = definedBy(e, OpKind::Erf);
    if (!erf || !isScalarConstant(one, 1.0) || !onlyFeeds(e, add))
      return nullptr;
    Value *scaled = erf->operand(0);
    if (!onlyFeeds(scaled, erf) || !isScaledBySqrtHalf(scaled, x))
      return nullptr;
    // The sum is one of the three factors, so its one use is in the product.
    if (graph_.isOutput(sum) || graph_.usesOf(sum).size() != 1)
      return nullptr;
    return x;
  }

  /// `v` = x / sqrt(2) or x * (1 / sqrt(2)), the constant as an exporter
  /// writes it in float32 (1.4142135, 0.70710678).
  bool isScaledBySqrtHalf(const Value *v, const Value *x) const {
    constexpr double kSqrt2 = 1.41421356237309504880;
    if (Op *d = definedBy(v, OpKind::Div))
      return d->operand(0) == x && isScalarNear(d->operand(1), kSqrt2);
    Op *m = definedBy(v, OpKind::Mul);
    if (!m)
      return false;
    return (m->operand(0) == x && isScalarNear(m->operand(1), 1 / kSqrt2)) ||
           (m->operand(1) == x && isScalarNear(m->operand(0), 1 / kSqrt2));
  }

  /// A constant with one element equal to `value`.
  static bool isScalarConstant(const Value *v, double value) {
    return v->isConstant() && v->type().elementCount() == 1 &&
           v->constantData().element(0) == value;
  }

  /// A constant with one element within float32 rounding of `value`.
  static bool isScalarNear(const Value *v, double value) {
    return v->isConstant() && v->type().elementCount() == 1 &&
           std::fabs(v->constantData().element(0) - value) <= 1e-6 * value;
  }

  Graph &graph_;
  PassContext &context_;
};

bool checkCanonical(const Graph &graph, const PassContext &,
                    DiagnosticEngine &diags) {
  bool ok = true;
  for (const Op *op : graph.ops()) {
    if (op->kind() == OpKind::Linear) {
      diags.error(opLocation(graph, *op),
                  opPrefix(*op) + "linear remains after canonicalize");
      ok = false;
    }
    if (op->kind() == OpKind::Pow && findPowRule(op->floatAttr("exponent"))) {
      diags.error(opLocation(graph, *op),
                  opPrefix(*op) + "pow with exponent " +
                      formatDouble(op->floatAttr("exponent")) +
                      " remains after canonicalize");
      ok = false;
    }
  }
  return ok;
}

} // namespace

const PassInfo &canonicalizePass() {
  static const PassInfo info{
      "canonicalize",
      "Rewrites linear as matmul + add, folds transposes of constants into "
      "matmul, collapses view chains, simplifies pow and double negation, "
      "fuses the erf and tanh forms of GELU, SiLU and scaled causal "
      "softmax, flattens norms over several dims, erases dead ops",
      "no `linear` op remains, nor a `pow` with exponent 2, 0.5, -0.5 or -1; "
      "every "
      "rewrite computes the same values (pow -> sqrt/rsqrt differ from C pow "
      "only "
      "at -0 and -inf); graph outputs keep their names.",
      {},
      {
          {"linear-to-matmul",
           "linear ops rewritten as matmul {transpose_b} (+ add of the bias)"},
          {"transpose-folded", "transposes of constants folded into a matmul's "
                               "transpose attribute"},
          {"views-cancelled", "reshape/squeeze/unsqueeze results replaced by "
                              "an earlier value of the same shape"},
          {"views-merged",
           "view chains collapsed into one reshape of their source"},
          {"pow-removed", "pow with exponent 1 removed"},
          {"pow-to-mul", "pow with exponent 2 rewritten as mul x x"},
          {"pow-to-sqrt", "pow with exponent 0.5 rewritten as sqrt"},
          {"pow-to-rsqrt", "pow with exponent -0.5 rewritten as rsqrt"},
          {"pow-to-reciprocal", "pow with exponent -1 rewritten as reciprocal"},
          {"double-neg-removed", "neg of a neg removed"},
          {"erf-gelu-fused", "x * 0.5 * (1 + erf(x / sqrt 2)) rewritten as "
                             "gelu {approximate = \"none\"}"},
          {"tanh-gelu-fused",
           "x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) "
           "rewritten as gelu {approximate = \"tanh\"}"},
          {"silu-fused", "x * sigmoid(x) rewritten as silu"},
          {"norm-flattened",
           "layernorm/rmsnorm over several trailing dims rewritten as the "
           "norm of x reshaped to [rows, elements normalised]"},
          {"causal-softmax-fused",
           "softmax of causal_mask_add rewritten as causal_softmax"},
          {"softmax-scale-folded",
           "a scalar mul or div before causal_softmax taken into its scale"},
          {"dead-ops-erased", "ops erased because nothing used their results"},
      },
      [](Graph &graph, PassContext &context) {
        Canonicalizer(graph, context).run();
        return PassResult::Success;
      },
      checkCanonical,
  };
  return info;
}

} // namespace spyre::compiler
