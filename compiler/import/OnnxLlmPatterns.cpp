// Language-model patterns of ONNX exports (which ones: OnnxLlmPatterns.h).
#include "compiler/import/OnnxLlmPatterns.h"

#include "compiler/pm/Rewrite.h"
#include "host/HostOp.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace spyre::compiler {

namespace {

/// Largest head the fused attention kernel takes (codegen::planAttention;
/// any number of keys, in chunks when one head's do not fit LX at once).
/// llm/LlmGraph.cpp uses the op under the same bound.
constexpr int64_t kFusedAttentionMaxHeadDim = 128;
/// Keys one head's K^T and V hold in LX at once (2048 of 128). Past them a
/// step with fewer score rows per key/value head than the head's size (a
/// decode step) keeps its products, which read a cache joined to the new
/// keys where each part lies: its scores are then smaller than the copy
/// of the cache the op would read.
constexpr int64_t kFusedAttentionKeysAtOnce = 2048;

/// The rotary op swaps the halves of a head as a choice of blocks: each half
/// must be whole DL16 sticks of 64 elements (docs/kernels.md).
constexpr int64_t kRotaryHeadDimMultiple = 128;

Op *definedBy(const Value *v, OpKind kind) {
  Op *op = v->definingOp();
  return op && op->kind() == kind ? op : nullptr;
}

/// The host op of ONNX type `type` defining `v`, or nullptr.
Op *hostDefining(const Value *v, std::string_view type) {
  Op *op = definedBy(v, OpKind::Host);
  return op && op->stringAttr("op") == type ? op : nullptr;
}

/// `v` is an op result read once, by `user`, and not a graph output.
bool onlyFeeds(const Graph &graph, const Value *v, const Op *user) {
  std::vector<OpUse> uses = graph.usesOf(v);
  return v->isOpResult() && !graph.isOutput(v) && uses.size() == 1 &&
         uses.front().op == user;
}

bool isLastAxis(int64_t axis, int64_t rank) {
  std::optional<int64_t> a = normalizeAxis(axis, rank);
  return a && *a == rank - 1;
}

/// `t` is transpose(x) swapping the last two axes and nothing else.
Op *swapOfLastTwo(const Value *t) {
  Op *op = definedBy(t, OpKind::Transpose);
  if (!op)
    return nullptr;
  std::vector<int64_t> perm = op->intsAttr("perm");
  const auto r = static_cast<int64_t>(perm.size());
  if (r < 2)
    return nullptr;
  for (int64_t i = 0; i < r - 2; ++i)
    if (perm[static_cast<size_t>(i)] != i)
      return nullptr;
  return perm[static_cast<size_t>(r - 2)] == r - 1 &&
                 perm[static_cast<size_t>(r - 1)] == r - 2
             ? op
             : nullptr;
}

/// A one-axis slice with step 1: [start, end) of `axis`, clamped as ONNX
/// does.
struct SliceRange {
  int64_t axis = 0;
  int64_t start = 0;
  int64_t end = 0;
};

std::optional<SliceRange> sliceRange(const Op *slice) {
  std::string why;
  std::optional<nlohmann::json> attrs =
      host::parseHostAttrs(slice->stringAttr("attrs"), why);
  if (!attrs || slice->numOperands() != 1 || !attrs->contains("starts") ||
      !attrs->contains("ends"))
    return std::nullopt;
  auto ints = [&](const char *key) {
    return attrs->contains(key) ? (*attrs)[key].get<std::vector<int64_t>>()
                                : std::vector<int64_t>{};
  };
  std::vector<int64_t> starts = ints("starts"), ends = ints("ends"),
                       axes = ints("axes"), steps = ints("steps");
  const TensorType &x = slice->operand(0)->type();
  if (axes.empty() && x.rank() == 1)
    axes = {0};
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 ||
      (!steps.empty() && (steps.size() != 1 || steps[0] != 1)))
    return std::nullopt;
  std::optional<int64_t> axis = normalizeAxis(axes[0], x.rank());
  if (!axis)
    return std::nullopt;
  const int64_t n = x.shape[static_cast<size_t>(*axis)];
  auto clamp = [n](int64_t i) {
    if (i < 0)
      i = i < -n ? 0 : i + n;
    return std::min(i, n);
  };
  SliceRange r{*axis, clamp(starts[0]), clamp(ends[0])};
  if (r.end <= r.start)
    return std::nullopt;
  return r;
}

/// `v` is a slice of `x`'s last axis over [start, end), read only by `user`.
bool isHalfOf(const Graph &graph, const Value *v, const Value *x, int64_t start,
              int64_t end, const Op *user) {
  Op *s = hostDefining(v, "Slice");
  if (!s || s->operand(0) != x || !onlyFeeds(graph, v, user))
    return false;
  std::optional<SliceRange> r = sliceRange(s);
  return r && r->axis == x->type().rank() - 1 && r->start == start &&
         r->end == end;
}

// ---- Rotary ----

struct RotaryMatch {
  Value *x = nullptr;
  Value *cos = nullptr;
  Value *sin = nullptr;
};

/// `add` = x * cos + concat(-x2, x1) * sin over x's last axis.
std::optional<RotaryMatch> matchRotary(const Graph &graph, const Op *add) {
  if (add->kind() != OpKind::Add)
    return std::nullopt;
  for (size_t i = 0; i < 2; ++i) {
    Op *mulCos = definedBy(add->operand(i), OpKind::Mul);
    Op *mulSin = definedBy(add->operand(1 - i), OpKind::Mul);
    if (!mulCos || !mulSin || !onlyFeeds(graph, add->operand(i), add) ||
        !onlyFeeds(graph, add->operand(1 - i), add))
      continue;
    for (size_t j = 0; j < 2; ++j) {
      Value *rot = mulSin->operand(j), *sin = mulSin->operand(1 - j);
      Op *cat = definedBy(rot, OpKind::Concat);
      if (!cat || cat->numOperands() != 2 || !onlyFeeds(graph, rot, mulSin) ||
          !isLastAxis(cat->intAttr("axis"), rot->type().rank()))
        continue;
      Op *neg = definedBy(cat->operand(0), OpKind::Neg);
      if (!neg || !onlyFeeds(graph, cat->operand(0), cat))
        continue;
      Op *slice = hostDefining(neg->operand(0), "Slice");
      if (!slice)
        continue;
      Value *x = slice->operand(0);
      const int64_t hd = x->type().shape.empty() ? 0 : x->type().shape.back();
      if (hd < 2 || hd % 2 != 0 ||
          !isHalfOf(graph, neg->operand(0), x, hd / 2, hd, neg) ||
          !isHalfOf(graph, cat->operand(1), x, 0, hd / 2, cat))
        continue;
      Value *cos = nullptr;
      if (mulCos->operand(0) == x)
        cos = mulCos->operand(1);
      else if (mulCos->operand(1) == x)
        cos = mulCos->operand(0);
      if (!cos || add->result()->type() != x->type() ||
          mulCos->result()->type() != x->type() ||
          mulSin->result()->type() != x->type() || cos->type().rank() < 1 ||
          cos->type().shape.back() != hd ||
          sin->type().shape != cos->type().shape)
        continue;
      return RotaryMatch{x, cos, sin};
    }
  }
  return std::nullopt;
}

/// The projection p [B, S, N x hd] of which x = transpose(reshape(p, [B, S,
/// N, hd]), [0, 2, 1, 3]) is the head split, or nullptr.
Value *projectionOfHeads(const Value *x) {
  Op *t = definedBy(x, OpKind::Transpose);
  if (!t || t->intsAttr("perm") != std::vector<int64_t>{0, 2, 1, 3})
    return nullptr;
  Op *r = definedBy(t->operand(0), OpKind::Reshape);
  if (!r)
    return nullptr;
  Value *p = r->operand(0);
  const Shape &heads = r->result()->type().shape;
  const Shape &flat = p->type().shape;
  if (flat.size() != 3 || heads.size() != 4 || heads[0] != flat[0] ||
      heads[1] != flat[1] || heads[2] * heads[3] != flat[2])
    return nullptr;
  return p;
}

class RotaryRewriter {
public:
  explicit RotaryRewriter(Graph &graph) : graph_(graph) {}

  /// Replaces `add` by the rotary op when the form allows (header).
  bool rewrite(Op *add) {
    std::optional<RotaryMatch> m = matchRotary(graph_, add);
    if (!m)
      return false;
    Value *p = projectionOfHeads(m->x);
    const Shape &xs = m->x->type().shape; // [B, N, S, hd]
    const Shape &cs = m->cos->type().shape;
    if (!p || xs[3] % kRotaryHeadDimMultiple != 0 || cs.size() != 4 ||
        cs[0] != xs[0] || cs[1] != 1 || cs[2] != xs[2])
      return false;
    const int64_t B = xs[0], N = xs[1], S = xs[2], hd = xs[3];
    const Op *next = graph_.nextOp(add);
    replaceOpInPlace(graph_, add, [&](OpBuilder &b, const ReplacedNames &n) {
      auto name = [&](const std::string &suffix) {
        return graph_.uniqueOpName(n.opName + suffix);
      };
      Value *cos = b.create(OpKind::Reshape, name(".cos"), {m->cos},
                            {{"shape", Attribute::ints({B, S, hd})}});
      Value *sin = signedSines(m->sin, Shape{B, S, hd}, n.opName, next);
      Value *r = b.create(OpKind::Rotary, name(".rotary"), {p, cos, sin},
                          {{"head_dim", hd}});
      Value *heads = b.create(OpKind::Reshape, name(".heads"), {r},
                              {{"shape", Attribute::ints({B, S, N, hd})}});
      return b.create(OpKind::Transpose, n.opName, {heads},
                      {{"perm", Attribute::ints({0, 2, 1, 3})}}, n.resultName);
    });
    return true;
  }

private:
  /// sin viewed as `shape`, its first half negated: made once per table,
  /// before `before` (where the table is first needed).
  Value *signedSines(Value *sin, const Shape &shape, const std::string &base,
                     const Op *before) {
    auto it = signed_.find(sin);
    if (it != signed_.end())
      return it->second;
    const int64_t hd = shape.back();
    std::vector<double> signs(static_cast<size_t>(hd), 1.0);
    for (int64_t i = 0; i < hd / 2; ++i)
      signs[static_cast<size_t>(i)] = -1.0;
    const TensorType signType{sin->type().elementType, {hd}};
    Value *c = graph_.addConstant(graph_.uniqueValueName(base + ".sin_sign"),
                                  ConstantData::fromDoubles(signType, signs));
    SourceLoc loc = sin->isOpResult() ? sin->definingOp()->loc() : SourceLoc{};
    OpBuilder b(graph_, before, loc);
    Value *view = b.create(OpKind::Reshape, graph_.uniqueOpName(base + ".sin"),
                           {sin}, {{"shape", Attribute::ints(shape)}});
    Value *s = b.create(OpKind::Mul, graph_.uniqueOpName(base + ".sin_signed"),
                        {view, c});
    signed_[sin] = s;
    return s;
  }

  Graph &graph_;
  std::map<const Value *, Value *> signed_;
};

// ---- Key/value repeat ----

struct Repeat {
  Value *source = nullptr; // [B, KV, L, D]
  int64_t group = 1;       // G: query heads per key/value head
  Op *expand = nullptr;
};

/// `r` = reshape(expand(unsqueeze(t, 2), [B, KV, G, L, D]), [B, KV x G, L,
/// D]) with every step read only by the next; the Expand is a host op.
std::optional<Repeat> matchRepeat(const Graph &graph, const Value *r) {
  Op *reshape = definedBy(r, OpKind::Reshape);
  if (!reshape)
    return std::nullopt;
  Op *expand = hostDefining(reshape->operand(0), "Expand");
  if (!expand || expand->numOperands() != 1 ||
      !onlyFeeds(graph, reshape->operand(0), reshape))
    return std::nullopt;
  const Value *u = expand->operand(0);
  Op *unsq = u->definingOp();
  if (!unsq || !onlyFeeds(graph, u, expand) ||
      (unsq->kind() != OpKind::Unsqueeze && unsq->kind() != OpKind::Reshape))
    return std::nullopt;
  Value *t = unsq->operand(0);
  const Shape &ts = t->type().shape, &us = u->type().shape,
              &es = expand->result()->type().shape, &rs = r->type().shape;
  if (ts.size() != 4 || us != Shape{ts[0], ts[1], 1, ts[2], ts[3]} ||
      es.size() != 5 || es[0] != ts[0] || es[1] != ts[1] || es[3] != ts[2] ||
      es[4] != ts[3] || es[2] < 1 ||
      rs != Shape{ts[0], ts[1] * es[2], ts[2], ts[3]})
    return std::nullopt;
  return Repeat{t, es[2], expand};
}

/// The keys or values a matmul operand reads: through a repeat, or as they
/// are ([B, H, L, D], one key/value head per query head).
Repeat unrepeat(const Graph &graph, Value *v, const Op *user) {
  if (std::optional<Repeat> r = matchRepeat(graph, v);
      r && onlyFeeds(graph, v, user))
    return *r;
  return Repeat{v, 1, nullptr};
}

/// The product of a matmul that read a repeat, rebuilt over its source:
/// `grouped` [B, KV, G x S, X] (the other operand viewed by key/value
/// head) times each part of the source [B, KV, L_i, D] (transposed for the
/// keys, `transB`), the parts' results joined (scores) or summed (context).
struct GroupedProduct {
  Graph &graph;
  OpBuilder &b;
  const std::string &base; ///< the replaced matmul's name
  bool transB;

  std::string name(const std::string &suffix) const {
    return graph.uniqueOpName(base + suffix);
  }

  /// lhs x part, or lhs x part^T (decode's few score rows read the keys
  /// as stored, turned in LX: turnsBInKernel).
  Value *product(Value *lhs, Value *part) const {
    return b.create(OpKind::Matmul, name(".gqa"), {lhs, part},
                    {{"transpose_a", false}, {"transpose_b", transB}});
  }

  Value *overParts(Value *grouped, const std::vector<Value *> &parts) const {
    if (parts.size() == 1)
      return product(grouped, parts.front());
    if (transB) {
      // Scores against each part, joined along the positions.
      std::vector<Value *> scores;
      for (Value *part : parts)
        scores.push_back(product(grouped, part));
      return b.create(OpKind::Concat, name(".join"), scores,
                      {{"axis", int64_t(-1)}});
    }
    // The probabilities split by part, each times its values, summed.
    std::vector<int64_t> sizes;
    std::vector<std::string> names;
    for (Value *part : parts) {
      sizes.push_back(part->type().shape[2]);
      names.push_back(graph.uniqueValueName(base + ".probs." +
                                            std::to_string(sizes.size() - 1)));
    }
    Op *split =
        buildOp(graph, OpKind::Split, name(".split"), {grouped},
                {{"axis", int64_t(-1)}, {"sizes", Attribute::ints(sizes)}},
                names, graph.nextOp(grouped->definingOp()));
    split->setLoc(grouped->definingOp()->loc());
    Value *sum = nullptr;
    for (size_t i = 0; i < parts.size(); ++i) {
      Value *c = product(split->result(i), parts[i]);
      sum = sum ? b.create(OpKind::Add, name(".sum"), {sum, c}) : c;
    }
    return sum;
  }
};

/// Rewrites every matmul reading the repeat `r` (its result `rep`) to read
/// the source: [B, H, S, X] x rep -> view [B, KV, G*S, X] x source -> view
/// back. Nothing is done unless every reader is such a matmul.
bool rewriteRepeatReaders(Graph &graph, Value *rep, const Repeat &r) {
  struct Reader {
    Op *matmul;
    bool transB; // reads the source transposed
  };
  std::vector<Reader> readers;
  const Shape &src = r.source->type().shape; // [B, KV, L, D]
  auto take = [&](Op *m, size_t index, bool viaTranspose) {
    if (m->kind() != OpKind::Matmul || index != 1 || m->boolAttr("transpose_a"))
      return false;
    const Shape &a = m->operand(0)->type().shape;
    if (a.size() != 4 || a[0] != src[0] || a[1] != src[1] * r.group)
      return false;
    readers.push_back({m, m->boolAttr("transpose_b") != viaTranspose});
    return true;
  };
  for (const OpUse &u : graph.usesOf(rep)) {
    if (take(u.op, u.operandIndex, false))
      continue;
    if (!swapOfLastTwo(u.op->result()) || graph.isOutput(u.op->result()))
      return false;
    for (const OpUse &t : graph.usesOf(u.op->result()))
      if (!take(t.op, t.operandIndex, true))
        return false;
  }
  if (readers.empty() || graph.isOutput(rep))
    return false;
  // A source that is a concat of the past and the new keys or values along
  // the positions, read by no other op, is read part by part: nothing joins
  // the cache and the new token but the scores. A concat that is also a
  // graph output (an export's `present`) stays for it, which the
  // append-outputs pass then makes the new token's append.
  std::vector<Value *> parts{r.source};
  Op *cat = definedBy(r.source, OpKind::Concat);
  const std::vector<OpUse> sourceUses = graph.usesOf(r.source);
  if (cat && cat->numOperands() >= 2 &&
      normalizeAxis(cat->intAttr("axis"), 4) == 2 && sourceUses.size() == 1 &&
      sourceUses.front().op == r.expand->operand(0)->definingOp())
    parts = cat->operands();
  const int64_t B = src[0], KV = src[1], G = r.group;
  for (const Reader &rd : readers) {
    Value *a = rd.matmul->operand(0);
    const Shape as = a->type().shape, ys = rd.matmul->result()->type().shape;
    replaceOpInPlace(
        graph, rd.matmul, [&](OpBuilder &b, const ReplacedNames &n) {
          GroupedProduct gp{graph, b, n.opName, rd.transB};
          Value *grouped =
              b.create(OpKind::Reshape, gp.name(".groups"), {a},
                       {{"shape", Attribute::ints({B, KV, G * as[2], as[3]})}});
          return b.create(OpKind::Reshape, n.opName,
                          {gp.overParts(grouped, parts)},
                          {{"shape", Attribute::ints(ys)}}, n.resultName);
        });
  }
  return true;
}

// ---- Attention ----

struct AttentionMatch {
  Value *q = nullptr;
  Repeat k, v;
  double scale = 1.0;
  bool causal = false;
};

/// A positive finite scalar constant's value.
std::optional<double> positiveScalar(const Value *v) {
  if (!v->isConstant() || v->type().elementCount() != 1)
    return std::nullopt;
  double c = v->constantData().element(0);
  if (!std::isfinite(c) || c <= 0)
    return std::nullopt;
  return c;
}

/// `ctx` = matmul(softmax([causal_mask_add](scale(matmul(q, k^T)))), v).
std::optional<AttentionMatch> matchAttention(const Graph &graph,
                                             const Op *ctx) {
  if (ctx->kind() != OpKind::Matmul || ctx->boolAttr("transpose_a") ||
      ctx->boolAttr("transpose_b"))
    return std::nullopt;
  AttentionMatch m;
  Value *probs = ctx->operand(0);
  Op *softmax = definedBy(probs, OpKind::Softmax);
  if (!softmax || !onlyFeeds(graph, probs, ctx) ||
      !isLastAxis(softmax->intAttr("axis"), probs->type().rank()))
    return std::nullopt;
  Value *z = softmax->operand(0);
  const Op *zUser = softmax;
  if (Op *mask = definedBy(z, OpKind::CausalMaskAdd)) {
    if (!onlyFeeds(graph, z, softmax))
      return std::nullopt;
    m.causal = true;
    zUser = mask;
    z = mask->operand(0);
  }
  Op *scaleOp = z->definingOp();
  if (scaleOp && onlyFeeds(graph, z, zUser) &&
      (scaleOp->kind() == OpKind::Mul || scaleOp->kind() == OpKind::Div)) {
    const bool div = scaleOp->kind() == OpKind::Div;
    for (size_t c = div ? 1 : 0; c < 2; ++c)
      if (std::optional<double> s = positiveScalar(scaleOp->operand(c))) {
        m.scale = div ? 1.0 / *s : *s;
        zUser = scaleOp;
        z = scaleOp->operand(1 - c);
        break;
      }
  }
  Op *scores = definedBy(z, OpKind::Matmul);
  if (!scores || !onlyFeeds(graph, z, zUser) || scores->boolAttr("transpose_a"))
    return std::nullopt;
  Value *keys = scores->operand(1);
  const Op *keysUser = scores;
  if (!scores->boolAttr("transpose_b")) {
    Op *t = swapOfLastTwo(keys);
    if (!t || !onlyFeeds(graph, keys, scores))
      return std::nullopt;
    keysUser = t;
    keys = t->operand(0);
  }
  m.q = scores->operand(0);
  m.k = unrepeat(graph, keys, keysUser);
  m.v = unrepeat(graph, ctx->operand(1), ctx);
  const Shape &q = m.q->type().shape, &k = m.k.source->type().shape,
              &v = m.v.source->type().shape;
  if (q.size() != 4 || k.size() != 4 || v != k || m.k.group != m.v.group ||
      q[0] != k[0] || q[1] != k[1] * m.k.group || q[3] != k[3] ||
      k[3] > kFusedAttentionMaxHeadDim ||
      (k[2] > kFusedAttentionKeysAtOnce && q[2] * m.k.group < k[3]) ||
      (m.causal && k[2] < q[2]) ||
      m.k.source->type().elementType != m.q->type().elementType ||
      m.v.source->type().elementType != m.q->type().elementType ||
      !std::isfinite(m.scale))
    return std::nullopt;
  return m;
}

/// Replaces `slices` (one-axis slices of one value whose ranges tile the
/// axis, in order) by one split, whose results take their names, uses and
/// output places.
void splitFromSlices(Graph &graph, const std::vector<Op *> &slices,
                     int64_t axis) {
  Value *x = slices.front()->operand(0);
  // The split goes where the first slice was (every slice reads x, defined
  // before each; every reader of a slice comes after it).
  const Op *first = slices.front();
  for (Op *sl : slices)
    if (graph.opIndex(sl) < graph.opIndex(first))
      first = sl;
  const Op *next = graph.nextOp(first);
  while (next && std::find(slices.begin(), slices.end(), next) != slices.end())
    next = graph.nextOp(next);
  struct Moved {
    std::vector<OpUse> uses;
    std::vector<size_t> outputs;
  };
  std::vector<Moved> moved;
  std::vector<Value *> outputs = graph.outputs();
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  const std::string opName = slices.front()->name();
  const SourceLoc loc = slices.front()->loc();
  for (Op *sl : slices) {
    Value *old = sl->result();
    Moved m{graph.usesOf(old), {}};
    // Parked on x while the slices are gone, as replaceOpInPlace does.
    for (const OpUse &u : m.uses)
      u.op->setOperand(u.operandIndex, x);
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i] == old) {
        m.outputs.push_back(i);
        outputs[i] = x;
      }
    moved.push_back(std::move(m));
    names.push_back(old->name());
    sizes.push_back(old->type().shape[static_cast<size_t>(axis)]);
  }
  graph.setOutputs(outputs);
  for (Op *sl : slices)
    graph.eraseOp(sl);
  Op *split =
      buildOp(graph, OpKind::Split, opName, {x},
              {{"axis", axis}, {"sizes", Attribute::ints(sizes)}}, names, next);
  split->setLoc(loc);
  for (size_t k = 0; k < moved.size(); ++k) {
    for (const OpUse &u : moved[k].uses)
      u.op->setOperand(u.operandIndex, split->result(k));
    for (size_t i : moved[k].outputs)
      outputs[i] = split->result(k);
  }
  graph.setOutputs(outputs);
}

/// Groups the one-axis slices (host ops) of each value and axis; a group
/// whose ranges tile the axis (the halves of a rotary embedding) becomes
/// one split. Returns the slices replaced.
int splitSliceGroups(Graph &graph, const std::vector<Op *> &slices) {
  std::map<std::pair<const Value *, int64_t>,
           std::vector<std::pair<SliceRange, Op *>>>
      groups;
  std::vector<std::pair<const Value *, int64_t>> order;
  for (Op *sl : slices)
    if (std::optional<SliceRange> r = sliceRange(sl)) {
      auto key =
          std::make_pair(static_cast<const Value *>(sl->operand(0)), r->axis);
      if (!groups.contains(key))
        order.push_back(key);
      groups[key].emplace_back(*r, sl);
    }
  int replaced = 0;
  for (const auto &key : order) {
    std::vector<std::pair<SliceRange, Op *>> &g = groups[key];
    if (g.size() < 2)
      continue;
    std::sort(g.begin(), g.end(), [](const auto &a, const auto &b) {
      return a.first.start < b.first.start;
    });
    const int64_t n = key.first->type().shape[static_cast<size_t>(key.second)];
    int64_t at = 0;
    std::vector<Op *> ops;
    for (const auto &[r, op] : g) {
      if (r.start != at)
        break;
      at = r.end;
      ops.push_back(op);
    }
    if (at != n || ops.size() != g.size())
      continue;
    splitFromSlices(graph, ops, key.second);
    replaced += static_cast<int>(ops.size());
  }
  return replaced;
}

// ---- Host ops of constants ----

/// Largest host op of constants computed at import: its inputs and its
/// result each up to this many elements (a rotary table of 4096 positions
/// of 128 is 524,288).
constexpr int64_t kFoldMaxElements = int64_t{1} << 22;

/// Replaces a host op whose operands are all constants (a Gather of a
/// rotary table by constant positions) by its result, computed by the
/// host library as the host would compute it in every run.
bool foldHostOp(Graph &graph, Op *op) {
  Value *result = op->result();
  if (op->numResults() != 1 || graph.isOutput(result) ||
      result->type().elementCount() > kFoldMaxElements)
    return false;
  std::string why;
  std::optional<nlohmann::json> attrs =
      host::parseHostAttrs(op->stringAttr("attrs"), why);
  if (!attrs)
    return false;
  std::vector<host::HostTensor> inputs;
  std::vector<host::HostShape> shapes;
  for (const Value *v : op->operands()) {
    if (!v->isConstant() || v->type().elementCount() > kFoldMaxElements)
      return false;
    inputs.push_back({v->type().shape, v->constantData().toDoubles()});
    shapes.push_back(v->type().shape);
  }
  const host::HostOp hostOp{op->stringAttr("op"), *attrs};
  if (!host::inferHostOp(hostOp, shapes).ok())
    return false;
  std::vector<host::HostTensor> out = host::runHostOp(hostOp, inputs);
  if (out.size() != 1 || out[0].shape != result->type().shape)
    return false;
  Value *c =
      graph.addConstant(graph.uniqueValueName(result->name() + ".folded"),
                        ConstantData::fromDoubles(result->type(), out[0].data));
  graph.replaceAllUsesWith(result, c);
  graph.eraseOp(op);
  return true;
}

} // namespace

LlmPatternCounts fuseLlmPatterns(Graph &graph) {
  // Each phase walks a snapshot of the ops and erases only the op it looks
  // at; what dies is erased between phases.
  auto ofKind = [&](OpKind kind, std::string_view hostType = {}) {
    std::vector<Op *> ops;
    for (Op *op : graph.ops())
      if (op->kind() == kind &&
          (hostType.empty() || op->stringAttr("op") == hostType))
        ops.push_back(op);
    return ops;
  };
  LlmPatternCounts counts;
  for (Op *op : ofKind(OpKind::Host))
    if (foldHostOp(graph, op))
      ++counts.folded;

  RotaryRewriter rotary(graph);
  for (Op *op : ofKind(OpKind::Add))
    if (rotary.rewrite(op))
      ++counts.rotary;
  eraseDeadOps(graph);

  for (Op *op : ofKind(OpKind::Matmul)) {
    std::optional<AttentionMatch> m = matchAttention(graph, op);
    if (!m)
      continue;
    // Keys and values that are each a concat of two parts along the
    // positions (the past and the new ones) are read part by part: the
    // concat stays only for a graph output (an export's `present`), which
    // the append-outputs pass makes the new token's append.
    std::vector<Value *> operands = {m->q, m->k.source, m->v.source};
    const Op *kCat = definedBy(m->k.source, OpKind::Concat),
             *vCat = definedBy(m->v.source, OpKind::Concat);
    auto halves = [](const Op *cat) {
      return cat && cat->numOperands() == 2 &&
             normalizeAxis(cat->intAttr("axis"), 4) == 2;
    };
    if (halves(kCat) && halves(vCat) &&
        kCat->operand(0)->type().shape == vCat->operand(0)->type().shape)
      operands = {m->q, kCat->operand(0), vCat->operand(0), kCat->operand(1),
                  vCat->operand(1)};
    replaceOpInPlace(graph, op, [&](OpBuilder &b, const ReplacedNames &n) {
      return b.create(OpKind::Attention, n.opName, operands,
                      {{"scale", m->scale}, {"causal", m->causal}},
                      n.resultName);
    });
    ++counts.attention;
  }
  eraseDeadOps(graph);

  // Rewriting a repeat's readers erases matmuls, never an Expand.
  for (Op *expand : ofKind(OpKind::Host, "Expand")) {
    std::vector<OpUse> uses = graph.usesOf(expand->result());
    if (uses.size() != 1 || uses.front().op->kind() != OpKind::Reshape)
      continue;
    Value *rep = uses.front().op->result();
    std::optional<Repeat> r = matchRepeat(graph, rep);
    if (r && rewriteRepeatReaders(graph, rep, *r))
      ++counts.repeats;
  }
  eraseDeadOps(graph);

  counts.slices = splitSliceGroups(graph, ofKind(OpKind::Host, "Slice"));
  return counts;
}

std::set<std::string> hostOpsTakenToDevice(Graph &graph) {
  auto hostOps = [&] {
    std::set<std::string> paths;
    for (const Op *op : graph.ops())
      if (op->kind() == OpKind::Host)
        paths.insert(op->loc().keyPath);
    return paths;
  };
  std::vector<Value *> sinks;
  for (Op *op : graph.ops())
    for (Value *r : op->results())
      if (graph.usesOf(r).empty())
        sinks.push_back(r);
  graph.setOutputs(sinks);
  const std::set<std::string> before = hostOps();
  fuseLlmPatterns(graph);
  eraseDeadOps(graph);
  const std::set<std::string> after = hostOps();
  std::set<std::string> taken;
  for (const std::string &path : before)
    if (!after.contains(path))
      taken.insert(path);
  return taken;
}

} // namespace spyre::compiler
