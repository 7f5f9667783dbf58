// Exporter patterns fused after ONNX import (which ones: OnnxPatterns.h).
#include "compiler/import/OnnxPatterns.h"

#include <algorithm>
#include <cmath>

namespace spyre::compiler {

namespace {

Op *definedBy(const Value *v, OpKind kind) {
  Op *op = v->definingOp();
  return op && op->kind() == kind ? op : nullptr;
}

/// `v` is an op result read once, by `user`, and not a graph output.
bool onlyFeeds(const Graph &graph, const Value *v, const Op *user) {
  std::vector<OpUse> uses = graph.usesOf(v);
  return v->isOpResult() && !graph.isOutput(v) && uses.size() == 1 &&
         uses.front().op == user;
}

bool isScalarConstant(const Value *v, double value) {
  return v->isConstant() && v->type().elementCount() == 1 &&
         v->constantData().element(0) == value;
}

struct RmsNormMatch {
  Value *x = nullptr;
  Value *weight = nullptr;
  int64_t axis = 0;
  double epsilon = 0;
};

/// x^2 as pow(x) {exponent = 2} or mul(x, x), read only by `user`.
bool isSquareOf(const Graph &graph, const Value *sq, const Value *x,
                const Op *user) {
  if (!onlyFeeds(graph, sq, user))
    return false;
  if (Op *p = definedBy(sq, OpKind::Pow))
    return p->operand(0) == x && p->floatAttr("exponent") == 2.0;
  Op *m = definedBy(sq, OpKind::Mul);
  return m && m->operand(0) == x && m->operand(1) == x;
}

/// `ms` = mean(x^2) + eps over trailing axes, read only by `user`: fills
/// the axis and epsilon of `match`.
bool isMeanSquarePlusEps(const Graph &graph, const Value *ms, const Value *x,
                         const Op *user, RmsNormMatch &match) {
  Op *add = definedBy(ms, OpKind::Add);
  if (!add || !onlyFeeds(graph, ms, user))
    return false;
  for (size_t e = 0; e < 2; ++e) {
    const Value *eps = add->operand(e), *mean = add->operand(1 - e);
    if (!eps->isConstant() || eps->type().elementCount() != 1)
      continue;
    double epsilon = eps->constantData().element(0);
    Op *rm = definedBy(mean, OpKind::ReduceMean);
    if (!std::isfinite(epsilon) || epsilon < 0 || !rm ||
        !onlyFeeds(graph, mean, add) || !rm->boolAttr("keepdims") ||
        !isSquareOf(graph, rm->operand(0), x, rm))
      continue;
    int64_t rank = x->type().rank();
    std::vector<int64_t> axes;
    for (int64_t a : rm->intsAttr("axes"))
      axes.push_back(a < 0 ? a + rank : a);
    std::sort(axes.begin(), axes.end());
    bool trailing = !axes.empty() && axes.back() == rank - 1;
    for (size_t i = 1; trailing && i < axes.size(); ++i)
      trailing = axes[i] == axes[i - 1] + 1;
    if (!trailing)
      continue;
    match.axis = axes.front();
    match.epsilon = epsilon;
    return true;
  }
  return false;
}

/// `r` = 1 / sqrt(ms) as reciprocal(sqrt), div(1, sqrt) or rsqrt, read only
/// by `user`.
bool isInverseRoot(const Graph &graph, const Value *r, const Value *x,
                   const Op *user, RmsNormMatch &match) {
  if (!onlyFeeds(graph, r, user))
    return false;
  if (Op *rs = definedBy(r, OpKind::Rsqrt))
    return isMeanSquarePlusEps(graph, rs->operand(0), x, rs, match);
  const Value *root = nullptr;
  const Op *rootUser = r->definingOp();
  if (Op *rec = definedBy(r, OpKind::Reciprocal))
    root = rec->operand(0);
  else if (Op *d = definedBy(r, OpKind::Div);
           d && isScalarConstant(d->operand(0), 1.0))
    root = d->operand(1);
  Op *sqrt = root ? definedBy(root, OpKind::Sqrt) : nullptr;
  return sqrt && onlyFeeds(graph, root, rootUser) &&
         isMeanSquarePlusEps(graph, sqrt->operand(0), x, sqrt, match);
}

/// `op` computes x / sqrt(mean(x^2) + eps) with the shape of x.
std::optional<RmsNormMatch> matchNormalization(const Graph &graph, Op *op) {
  RmsNormMatch match;
  if (op->kind() == OpKind::Div) {
    Value *x = op->operand(0), *root = op->operand(1);
    Op *sqrt = definedBy(root, OpKind::Sqrt);
    if (!sqrt || !onlyFeeds(graph, root, op) ||
        !isMeanSquarePlusEps(graph, sqrt->operand(0), x, sqrt, match))
      return std::nullopt;
    match.x = x;
  } else if (op->kind() == OpKind::Mul) {
    for (size_t k = 0; k < 2 && !match.x; ++k)
      if (isInverseRoot(graph, op->operand(k), op->operand(1 - k), op, match))
        match.x = op->operand(1 - k);
  }
  if (!match.x || op->result()->type() != match.x->type())
    return std::nullopt;
  return match;
}

/// `mul` scales the normalised `h` by a weight of the normalised shape;
/// returns the weight.
Value *weightOf(const Graph &graph, const Op *mul, const Value *h,
                const RmsNormMatch &match) {
  if (mul->kind() != OpKind::Mul || !onlyFeeds(graph, h, mul) ||
      mul->result()->type() != match.x->type())
    return nullptr;
  Value *w = mul->operand(0) == h ? mul->operand(1) : mul->operand(0);
  const Shape &xs = match.x->type().shape;
  Shape normalized(xs.begin() + match.axis, xs.end());
  if (w == h || w->type().shape != normalized ||
      w->type().elementType != match.x->type().elementType)
    return nullptr;
  return w;
}

/// Replaces `last` by rmsnorm, keeping its op name, result name and place.
void replaceWithRmsNorm(Graph &graph, Op *last, const RmsNormMatch &match) {
  Value *old = last->result();
  std::string opName = last->name(), resultName = old->name();
  SourceLoc loc = last->loc();
  std::vector<OpUse> uses = graph.usesOf(old);
  std::vector<Value *> outputs = graph.outputs();
  // The uses wait on x (defined before `last`) while the names are freed.
  for (const OpUse &u : uses)
    u.op->setOperand(u.operandIndex, match.x);
  std::vector<Value *> parked = outputs;
  for (Value *&v : parked)
    if (v == old)
      v = match.x;
  graph.setOutputs(parked);
  const Op *next = graph.nextOp(last);
  graph.eraseOp(last);
  std::vector<Value *> operands{match.x};
  if (match.weight)
    operands.push_back(match.weight);
  Op *fused = buildOp(graph, OpKind::RmsNorm, opName, operands,
                      {{"axis", match.axis}, {"epsilon", match.epsilon}},
                      {resultName}, next);
  fused->setLoc(loc);
  for (const OpUse &u : uses)
    u.op->setOperand(u.operandIndex, fused->result());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i] == old)
      parked[i] = fused->result();
  graph.setOutputs(parked);
}

} // namespace

int fuseRmsNorm(Graph &graph) {
  int fused = 0;
  // Each op is looked at once, in order; only the op being looked at is
  // replaced, so the list stays valid. A weight mul comes after the
  // normalisation it scales and is fused from there.
  for (Op *op : graph.ops()) {
    Value *result = op->result();
    if (graph.usesOf(result).empty() && !graph.isOutput(result))
      continue;
    if (op->kind() == OpKind::Mul) {
      bool done = false;
      for (size_t k = 0; k < 2 && !done; ++k) {
        Op *norm = op->operand(k)->definingOp();
        std::optional<RmsNormMatch> m =
            norm ? matchNormalization(graph, norm) : std::nullopt;
        if (!m)
          continue;
        m->weight = weightOf(graph, op, norm->result(), *m);
        if (!m->weight)
          continue;
        replaceWithRmsNorm(graph, op, *m);
        done = true;
      }
      if (done) {
        ++fused;
        continue;
      }
    }
    std::optional<RmsNormMatch> m = matchNormalization(graph, op);
    if (!m)
      continue;
    // Left for its weight mul, which comes later.
    std::vector<OpUse> uses = graph.usesOf(result);
    if (uses.size() == 1 && weightOf(graph, uses.front().op, result, *m))
      continue;
    replaceWithRmsNorm(graph, op, *m);
    ++fused;
  }
  return fused;
}

int eraseUnused(Graph &graph) {
  int erased = 0;
  std::vector<Op *> ops = graph.ops();
  // Backwards, so an op whose only user dies is seen after that user.
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    bool live = false;
    for (const Value *r : (*it)->results())
      live = live || graph.isOutput(r) || !graph.usesOf(r).empty();
    if (live)
      continue;
    graph.eraseOp(*it);
    ++erased;
  }
  for (Value *c : graph.constants())
    if (!graph.isOutput(c) && graph.usesOf(c).empty())
      graph.eraseConstant(c);
  return erased;
}

} // namespace spyre::compiler
