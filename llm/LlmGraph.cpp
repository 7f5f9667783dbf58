#include "llm/LlmGraph.h"

#include "compiler/ir/Attribute.h"
#include "compiler/ref/Evaluator.h"
#include "compiler/ref/Random.h"
#include "numerics/Half.h"
#include "support/Diagnostic.h"

#include <array>
#include <cmath>
#include <cstring>
#include <tuple>

namespace spyre::llm {

namespace {

using compiler::Attribute;
using compiler::AttrDict;
using compiler::ElementType;
using compiler::Graph;
using compiler::OpKind;
using compiler::Shape;
using compiler::TensorType;
using compiler::Value;

/// Largest head whose prefill attention is the fused op
/// (Builder::fusedAttention): codegen::planAttention turns heads of up to
/// two sticks; any number of keys fits LX, taken in chunks when they must.
constexpr int64_t kFusedAttentionMaxHeadDim = 128;

/// Largest batch, token count and context accepted on the command line:
/// far beyond one card's memory, small enough for every product of shapes.
constexpr int64_t kMaxStepDim = int64_t(1) << 20;

std::string layerPrefix(int64_t layer) {
  return "model.layers." + std::to_string(layer) + ".";
}

class Builder {
public:
  Builder(const LlmConfig &c, const StepShape &s)
      : c_(c), s_(s), g_(std::make_unique<Graph>(graphName(c, s))) {}

  std::unique_ptr<Graph> build() {
    const int64_t B = s_.batch, S = s_.tokens;
    Value *x = nullptr;
    if (s_.tokenIds) {
      x = lookUpTokens(*g_, c_, s_);
    } else {
      x = input("hidden", {B, S, c_.hiddenSize});
    }
    rotaryTables();
    if (s_.embedding && c_.embeddingMultiplier != 1.0)
      x = op(OpKind::Mul, "embed_scale",
             {x, scalar("embedding_multiplier", c_.embeddingMultiplier)});
    for (int64_t l = 0; l < s_.layers; ++l)
      x = layer(l, x);
    if (s_.lmHead)
      x = lmHead(x);
    outputs_.insert(outputs_.begin(), x);
    if (s_.lmHead && s_.greedy)
      outputs_.push_back(op(OpKind::Argmax, "next_token", {x}));
    g_->setOutputs(outputs_);
    return std::move(g_);
  }

  /// One rung alone, layer 0's part of the step, its operands inputs.
  std::unique_ptr<Graph> buildRung(Rung rung) {
    const int64_t B = s_.batch, S = s_.tokens, D = c_.hiddenSize,
                  H = c_.numHeads, KV = c_.numKvHeads, hd = c_.headDim,
                  I = c_.intermediateSize;
    const std::string p = layerPrefix(0), a = p + "self_attn.",
                      m = p + "mlp.";
    const bool attentionRung =
        rung == Rung::Attention || rung == Rung::PagedAttention;
    Value *x = attentionRung ? input("query", {B, S, H * hd})
                             : input("hidden", {B, S, D});
    switch (rung) {
    case Rung::ResidualAdd:
      outputs_.push_back(
          residual(p + "attn_residual", x, input("branch", {B, S, D})));
      break;
    case Rung::RmsNorm:
      outputs_.push_back(rmsnorm(p + "input_layernorm", x,
                                 input(p + "input_layernorm.weight", {D})));
      break;
    case Rung::QkvProj:
      for (const auto &[name, heads] :
           {std::pair{"q_proj", H}, {"k_proj", KV}, {"v_proj", KV}})
        outputs_.push_back(linear(
            a + name, x,
            input(a + name + ".weight.T", {D, heads * hd})));
      break;
    case Rung::OProj:
      outputs_.push_back(linear(a + "o_proj", input("context", {B, S, H * hd}),
                                input(a + "o_proj.weight.T", {H * hd, D})));
      break;
    case Rung::MlpProj: {
      Value *gated = input("gated", {B, S, I});
      outputs_.push_back(
          linear(m + "gate_proj", x, input(m + "gate_proj.weight.T", {D, I})));
      outputs_.push_back(
          linear(m + "up_proj", x, input(m + "up_proj.weight.T", {D, I})));
      outputs_.push_back(linear(m + "down_proj", gated,
                                input(m + "down_proj.weight.T", {I, D})));
      break;
    }
    case Rung::Attention:
    case Rung::PagedAttention: { // the step's shape says which cache
      Value *k = input("key", {B, S, KV * hd});
      Value *v = input("value", {B, S, KV * hd});
      rotaryTables();
      auto [pastKT, pastV] = cache(p);
      // attention() may add outputs of its own (the cache's new keys and
      // values): take begin() only after it has run.
      Value *context = attention(0, x, k, v, pastKT, pastV);
      outputs_.insert(outputs_.begin(), context);
      break;
    }
    case Rung::Mlp: {
      Value *wg = input(m + "gate_proj.weight.T", {D, I});
      Value *wu = input(m + "up_proj.weight.T", {D, I});
      Value *wd = input(m + "down_proj.weight.T", {I, D});
      outputs_.push_back(mlp(p, x, wg, wu, wd));
      break;
    }
    case Rung::Layer: {
      rotaryTables();
      Value *y = layer(0, x); // as for attention: begin() after it ran
      outputs_.insert(outputs_.begin(), y);
      break;
    }
    case Rung::LmHead:
      outputs_.push_back(lmHead(x));
      if (s_.greedy)
        outputs_.push_back(op(OpKind::Argmax, "next_token", {outputs_.back()}));
      break;
    }
    g_->setOutputs(outputs_);
    return std::move(g_);
  }

private:
  static std::string graphName(const LlmConfig &c, const StepShape &s) {
    return std::string(c.architecture == Architecture::Granite ? "granite"
                                                               : "llama") +
           (s.mode == Mode::Prefill ? "_prefill" : "_decode");
  }

  Value *input(const std::string &name, Shape shape) {
    return g_->addInput(name, TensorType{s_.elementType, std::move(shape)});
  }

  Value *scalar(const std::string &name, double value) {
    if (Value *v = g_->findValue(name))
      return v;
    return g_->addConstant(
        name, compiler::ConstantData::fromDoubles(
                  TensorType{s_.elementType, {}}, {value}));
  }

  Value *op(OpKind kind, const std::string &name, std::vector<Value *> operands,
            AttrDict attrs = {}, size_t result = 0) {
    compiler::Op *o =
        compiler::buildOp(*g_, kind, name, std::move(operands), std::move(attrs),
                          {name});
    return o->result(result);
  }

  std::vector<Value *> split(const std::string &name, Value *x, int64_t axis,
                             std::vector<int64_t> sizes) {
    std::vector<std::string> names;
    for (size_t i = 0; i < sizes.size(); ++i)
      names.push_back(name + "." + std::to_string(i));
    compiler::Op *o = compiler::buildOp(
        *g_, OpKind::Split, name, {x},
        {{"axis", axis}, {"sizes", Attribute::ints(sizes)}}, names);
    return o->results();
  }

  Value *reshape(const std::string &name, Value *x, Shape shape) {
    return op(OpKind::Reshape, name, {x}, {{"shape", Attribute::ints(shape)}});
  }

  Value *transpose(const std::string &name, Value *x,
                   std::vector<int64_t> perm) {
    return op(OpKind::Transpose, name, {x}, {{"perm", Attribute::ints(perm)}});
  }

  Value *matmul(const std::string &name, Value *a, Value *b, bool transB) {
    return op(OpKind::Matmul, name, {a, b},
              {{"transpose_a", false}, {"transpose_b", transB}});
  }

  Value *rmsnorm(const std::string &name, Value *x, Value *weight) {
    return op(OpKind::RmsNorm, name, {x, weight},
              {{"axis", int64_t(-1)}, {"epsilon", c_.rmsNormEps}});
  }

  /// x W^T with the weight given transposed, [in, out]: sticked on `out`,
  /// as the matmul kernel reads its B, so no relayout of the weight runs in
  /// every step (a checkpoint's [out, in] weight is transposed once, when it
  /// is loaded).
  Value *linear(const std::string &name, Value *x, Value *weightT) {
    return matmul(name, x, weightT, false);
  }

  /// x * cos + rotate_half(x) * sin over the last dim (the head), as
  /// Hugging Face's apply_rotary_pos_emb, with rotate_half(x) = [-x2, x1]:
  /// the sign is folded into the sin table (rope.sin_* holds -sin on the
  /// first half), so rotate_half is a swap of the two halves, one concat of
  /// two free stick-aligned views.
  Value *rotary(const std::string &name, Value *x, Value *cos, Value *sin) {
    const int64_t half = c_.headDim / 2;
    std::vector<Value *> halves = split(name + ".halves", x, -1, {half, half});
    Value *swapped = op(OpKind::Concat, name + ".swap", {halves[1], halves[0]},
                        {{"axis", int64_t(-1)}});
    Value *a = op(OpKind::Mul, name + ".cos", {x, cos});
    Value *b = op(OpKind::Mul, name + ".sin", {swapped, sin});
    return op(OpKind::Add, name, {a, b});
  }

  Value *residual(const std::string &name, Value *x, Value *branch) {
    if (c_.residualMultiplier != 1.0)
      branch = op(OpKind::Mul, name + ".scale",
                  {branch, scalar("residual_multiplier",
                                  c_.residualMultiplier)});
    return op(OpKind::Add, name, {x, branch});
  }

  /// The tables every layer shares, inputs in a fixed order.
  void rotaryTables() {
    const int64_t B = s_.batch, S = s_.tokens;
    if (s_.rotary != Rotary::Tables) {
      SPYRE_ASSERT(rotaryOp(), "rotary tables gathered on the device need "
                               "the rotary op (head_dim a multiple of 128)");
      if (s_.rotary == Rotary::Gathered) {
        cosQ_ = cosK_ = input("rope.cos", {B, S, c_.headDim});
        sinQ_ = sinK_ = input("rope.sin", {B, S, c_.headDim});
        return;
      }
      std::tie(cosQ_, sinQ_) = gatherRotaryRows(*g_, c_, s_);
      cosK_ = cosQ_;
      sinK_ = sinQ_;
      return;
    }
    // The rotary op takes one head's angles per token, the same for every
    // head: [B, S, hd].
    auto table = [&](const char *name, int64_t heads) {
      return rotaryOp() ? input(name, {B, S, c_.headDim})
                        : input(name, {B, S, heads, c_.headDim});
    };
    cosQ_ = table("rope.cos_q", c_.numHeads);
    sinQ_ = table("rope.sin_q", c_.numHeads);
    cosK_ = table("rope.cos_k", c_.numKvHeads);
    sinK_ = table("rope.sin_k", c_.numKvHeads);
  }

  /// Whether the rotary embedding is the one-pass `rotary` op: the halves
  /// of a head must be whole DL16 sticks (its swap is then a choice of
  /// blocks); otherwise split, concat, two mul and an add.
  bool rotaryOp() const { return c_.headDim % 128 == 0; }

  /// The cache: keys stored transposed, [B, KV, hd, L] (sticked on the
  /// positions), which is how Q K^T reads them; values as they come,
  /// [B, KV, L, hd]. Either way the step reads them in place. A prefill
  /// whose attention is the fused op takes the keys as they come too,
  /// `past_key` [B, KV, L, hd], which the op reads with the new ones. None
  /// in a prefill with nothing cached, nor with the cache resident on the
  /// device.
  std::pair<Value *, Value *> cache(const std::string &p) {
    if (s_.context == 0 || s_.residentCache)
      return {nullptr, nullptr};
    const int64_t B = s_.batch, L = s_.context, KV = c_.numKvHeads,
                  hd = c_.headDim;
    return {fusedAttention() ? input(p + "past_key", {B, KV, L, hd})
                             : input(p + "past_key.T", {B, KV, hd, L}),
            input(p + "past_value", {B, KV, L, hd})};
  }

  Value *layer(int64_t l, Value *x) {
    const std::string p = layerPrefix(l);
    const int64_t D = c_.hiddenSize, H = c_.numHeads, KV = c_.numKvHeads,
                  hd = c_.headDim, I = c_.intermediateSize;
    Value *inNorm = input(p + "input_layernorm.weight", {D});
    Value *wq = input(p + "self_attn.q_proj.weight.T", {D, H * hd});
    Value *wk = input(p + "self_attn.k_proj.weight.T", {D, KV * hd});
    Value *wv = input(p + "self_attn.v_proj.weight.T", {D, KV * hd});
    Value *wo = input(p + "self_attn.o_proj.weight.T", {H * hd, D});
    Value *postNorm = input(p + "post_attention_layernorm.weight", {D});
    Value *wg = input(p + "mlp.gate_proj.weight.T", {D, I});
    Value *wu = input(p + "mlp.up_proj.weight.T", {D, I});
    Value *wd = input(p + "mlp.down_proj.weight.T", {I, D});
    auto [pastKT, pastV] = cache(p);

    const std::string a = p + "self_attn.";
    Value *h = rmsnorm(p + "input_layernorm", x, inNorm);
    Value *q = linear(a + "q_proj", h, wq);
    Value *k = linear(a + "k_proj", h, wk);
    Value *v = linear(a + "v_proj", h, wv);
    Value *o = attention(l, q, k, v, pastKT, pastV);
    x = residual(p + "attn_residual", x, linear(a + "o_proj", o, wo));
    h = rmsnorm(p + "post_attention_layernorm", x, postNorm);
    return residual(p + "mlp_residual", x, mlp(p, h, wg, wu, wd));
  }

  /// The SwiGLU MLP of normed h: (silu(h Wg^T) * (h Wu^T)) Wd^T.
  Value *mlp(const std::string &p, Value *h, Value *wg, Value *wu, Value *wd) {
    const std::string m = p + "mlp.";
    Value *gate = op(OpKind::Silu, m + "act", {linear(m + "gate_proj", h, wg)});
    Value *up = linear(m + "up_proj", h, wu);
    Value *gated = op(OpKind::Mul, m + "gated", {gate, up});
    return linear(m + "down_proj", gated, wd);
  }

  /// Attention from the projections q [B, S, H*hd], k and v [B, S, KV*hd]
  /// to the context [B, S, H*hd] the output projection reads; the new keys
  /// and values become outputs.
  Value *attention(int64_t l, Value *qFlat, Value *kFlat, Value *vFlat,
                   Value *pastKT, Value *pastV) {
    const std::string p = layerPrefix(l);
    const int64_t B = s_.batch, S = s_.tokens, L = s_.context;
    const int64_t H = c_.numHeads, KV = c_.numKvHeads, hd = c_.headDim,
                  G = c_.groupSize();
    const std::string a = p + "self_attn.";
    Value *q = nullptr, *k = nullptr;
    if (rotaryOp()) {
      // One pass over q and one over k, on the projections as they are
      // ([B, S, heads x hd]); the head split after it is a view.
      q = reshape(a + "q_heads",
                  op(OpKind::Rotary, a + "q_rope", {qFlat, cosQ_, sinQ_},
                     {{"head_dim", hd}}),
                  {B, S, H, hd});
      k = reshape(a + "k_heads",
                  op(OpKind::Rotary, a + "k_rope", {kFlat, cosK_, sinK_},
                     {{"head_dim", hd}}),
                  {B, S, KV, hd});
    } else {
      q = rotary(a + "q_rope", reshape(a + "q_heads", qFlat, {B, S, H, hd}),
                 cosQ_, sinQ_);
      k = rotary(a + "k_rope", reshape(a + "k_heads", kFlat, {B, S, KV, hd}),
                 cosK_, sinK_);
    }
    Value *v = reshape(a + "v_heads", vFlat, {B, S, KV, hd});
    // Decode scales q (G rows per key/value head); prefill scales the
    // scores in the fused causal softmax, which reads them anyway.
    if (s_.mode == Mode::Decode)
      q = op(OpKind::Mul, a + "q_scale",
             {q, scalar("attention_scale", c_.attentionScale())});
    // [B, S, heads, hd] -> [B, heads, S, hd]; the new keys and values are
    // outputs: what the cache appends.
    q = transpose(a + "q_t", q, {0, 2, 1, 3});
    if (s_.residentCache)
      return residentAttention(l, q, k, v);
    k = transpose(p + "new_key", k, {0, 2, 1, 3});
    v = transpose(p + "new_value", v, {0, 2, 1, 3});
    outputs_.push_back(k);
    outputs_.push_back(v);
    if (fusedAttention()) {
      // After cached tokens the op reads the cache's keys and values and
      // the new ones, each where it lies (the scores never stored); its
      // causal mask hides key j from query i when j > L + i.
      if (L > 0)
        return mergeHeads(a, fused(a, q, pastKT, pastV, k, v));
      return mergeHeads(a, fused(a, q, k, v));
    }
    // Grouped-query attention: the G query heads of key/value head j are
    // heads jG .. jG+G-1, so [B, H, S, hd] is [B, KV, G*S, hd] as it
    // stands, and each key/value head is one batch of one product with
    // G*S rows: K and V are read once per group, never repeated.
    q = reshape(a + "q_groups", q, {B, KV, G * S, hd});

    Value *o = nullptr;
    if (s_.mode == Mode::Prefill && L > 0) {
      // After L cached tokens: each new token sees the cache and the new
      // tokens up to itself. The past and the new keys are scored apart
      // and joined, as in decode; the causal mask of [S, L + S] scores
      // hides key j from query i when j > L + i.
      Value *past = matmul(a + "scores_past", q, pastKT, false); // [.., G*S, L]
      Value *fresh = matmul(a + "scores_new", q, k, true);       // [.., G*S, S]
      Value *scores = op(OpKind::Concat, a + "scores", {past, fresh},
                         {{"axis", int64_t(-1)}});
      scores = reshape(a + "scores_heads", scores, {B, KV, G, S, L + S});
      Value *probs = op(OpKind::CausalSoftmax, a + "softmax", {scores},
                        {{"scale", c_.attentionScale()}});
      probs = reshape(a + "probs_groups", probs, {B, KV, G * S, L + S});
      std::vector<Value *> parts = split(a + "probs", probs, -1, {L, S});
      Value *oPast = matmul(a + "context_past", parts[0], pastV, false);
      Value *oNew = matmul(a + "context_new", parts[1], v, false);
      o = op(OpKind::Add, a + "context", {oPast, oNew});
    } else if (s_.mode == Mode::Prefill) {
      Value *scores = matmul(a + "scores", q, k, true); // [B, KV, G*S, S]
      scores = reshape(a + "scores_heads", scores, {B, KV, G, S, S});
      Value *probs = op(OpKind::CausalSoftmax, a + "softmax", {scores},
                        {{"scale", c_.attentionScale()}});
      probs = reshape(a + "probs_groups", probs, {B, KV, G * S, S});
      o = matmul(a + "context", probs, v, false); // [B, KV, G*S, hd]
    } else {
      // The past and the new token are scored apart and joined in the
      // scores (B x H x (L + 1) elements), so the cache is read in place
      // and never copied to append the new token.
      Value *past = matmul(a + "scores_past", q, pastKT, false); // [.., G, L]
      Value *fresh = matmul(a + "scores_new", q, k, true);     // [.., G, 1]
      Value *scores = op(OpKind::Concat, a + "scores", {past, fresh},
                         {{"axis", int64_t(-1)}});
      Value *probs = op(OpKind::Softmax, a + "softmax", {scores},
                        {{"axis", int64_t(-1)}});
      std::vector<Value *> parts = split(a + "probs", probs, -1, {L, 1});
      Value *oPast = matmul(a + "context_past", parts[0], pastV, false);
      Value *oNew = matmul(a + "context_new", parts[1], v, false);
      o = op(OpKind::Add, a + "context", {oPast, oNew});
    }
    return mergeHeads(a, o);
  }

  /// Whether prefill attention is the fused op (`attention`, the scores
  /// never stored).
  bool fusedAttention() const {
    return s_.mode == Mode::Prefill && c_.headDim <= kFusedAttentionMaxHeadDim;
  }

  /// Causal grouped-query attention of q [B, H, S, hd] over k and v
  /// [B, KV, S, hd] in one op: scores, mask, softmax and context.
  /// With kMore and vMore, the keys and values are k's and v's followed
  /// by theirs (a cache and the new tokens), each read where it lies.
  Value *fused(const std::string &a, Value *q, Value *k, Value *v,
               Value *kMore = nullptr, Value *vMore = nullptr) {
    std::vector<Value *> operands = {q, k, v};
    if (kMore) {
      operands.push_back(kMore);
      operands.push_back(vMore);
    }
    return op(OpKind::Attention, a + "attention", operands,
              {{"scale", c_.attentionScale()}, {"causal", true}});
  }

  /// The context [B, KV, G*S, hd] (or [B, H, S, hd]) as [B, S, H*hd].
  Value *mergeHeads(const std::string &a, Value *o) {
    const int64_t B = s_.batch, S = s_.tokens;
    if (o->type().shape != Shape{B, c_.numHeads, S, c_.headDim})
      o = reshape(a + "context_heads", o, {B, c_.numHeads, S, c_.headDim});
    o = transpose(a + "context_t", o, {0, 2, 1, 3});
    return reshape(a + "context_merged", o, {B, S, c_.numHeads * c_.headDim});
  }

  /// The runs of consecutive pages of sequence b's `pages` pages (in
  /// prefill, those its tokens fill; in decode, its full pages): one run
  /// without StepShape::pageRuns, none for no pages.
  std::vector<int64_t> pageRuns(int64_t b, int64_t pages) const {
    return runsOf(s_.pageRuns, b, pages);
  }

  /// The runs of sequence b's full pages before its first new token's page
  /// (StepShape::cachedRuns), as pageRuns.
  std::vector<int64_t> cachedRuns(int64_t b, int64_t pages) const {
    return runsOf(s_.cachedRuns, b, pages);
  }

  static std::vector<int64_t>
  runsOf(const std::vector<std::vector<int64_t>> &all, int64_t b,
         int64_t pages) {
    if (pages == 0)
      return {};
    if (all.empty())
      return {pages};
    const std::vector<int64_t> &runs = all[static_cast<size_t>(b)];
    int64_t sum = 0;
    for (int64_t r : runs) {
      SPYRE_ASSERT(r >= 1, "a run of no pages");
      sum += r;
    }
    SPYRE_ASSERT(sum == pages, "page runs of sequence " + std::to_string(b) +
                                   " do not cover its " +
                                   std::to_string(pages) + " pages");
    return runs;
  }

  /// The keys or values [B, S, KV, hd] of sequence b, transposed as the
  /// cache stores them: [KV, hd, S].
  Value *cacheLayout(const std::string &name, Value *kv, int64_t b) {
    const int64_t B = s_.batch, S = s_.tokens;
    Value *t = transpose(name + ".t", kv, {0, 2, 3, 1}); // [B, KV, hd, S]
    if (B > 1) {
      std::vector<int64_t> ones(static_cast<size_t>(B), 1);
      t = split(name + ".seq", t, 0, ones)[static_cast<size_t>(b)];
    }
    return reshape(name, t, {c_.numKvHeads, c_.headDim, S});
  }

  /// Attention against the cache in device memory (StepShape::residentCache):
  /// in prefill, over the step's own tokens, the keys and values written to
  /// each sequence's cache; in decode, per sequence, over the full pages
  /// before its position and its current page with the new token, that page
  /// written back in place. Keys and values are read as stored, [KV, hd, L]:
  /// q K^T as a plain product, p V with V given transposed.
  Value *residentAttention(int64_t l, Value *q, Value *k, Value *v) {
    const std::string p = layerPrefix(l), a = p + "self_attn.";
    const int64_t B = s_.batch, S = s_.tokens, KV = c_.numKvHeads,
                  hd = c_.headDim, G = c_.groupSize();
    const bool cached = std::any_of(s_.positions.begin(), s_.positions.end(),
                                    [](int64_t pos) { return pos > 0; });
    if (s_.mode == Mode::Prefill && cached)
      return prefillAfterCache(l, q, k, v);
    if (s_.mode == Mode::Prefill) {
      const int64_t pages = (S + kCachePageTokens - 1) / kCachePageTokens;
      for (int64_t b = 0; b < B; ++b)
        for (const std::string kind : {"key", "value"}) {
          // One output per run of consecutive pages, each a split of the
          // sequence's keys at whole pages (whole sticks: a view).
          const std::vector<int64_t> runs = pageRuns(b, pages);
          const std::string name = cacheTensorName(l, b, kind + ".T");
          if (runs.size() == 1) {
            outputs_.push_back(
                cacheLayout(name + ".0", kind == "key" ? k : v, b));
            continue;
          }
          std::vector<int64_t> sizes;
          int64_t left = S;
          for (int64_t run : runs) {
            sizes.push_back(std::min(left, run * kCachePageTokens));
            left -= sizes.back();
          }
          Value *all = cacheLayout(name + ".all", kind == "key" ? k : v, b);
          for (Value *part : split(name, all, -1, sizes))
            outputs_.push_back(part);
        }
      k = transpose(a + "k_t", k, {0, 2, 1, 3});
      v = transpose(a + "v_t", v, {0, 2, 1, 3});
      if (fusedAttention())
        return mergeHeads(a, fused(a, q, k, v));
      q = reshape(a + "q_groups", q, {B, KV, G * S, hd});
      Value *scores = matmul(a + "scores", q, k, true); // [B, KV, G*S, S]
      scores = reshape(a + "scores_heads", scores, {B, KV, G, S, S});
      Value *probs = op(OpKind::CausalSoftmax, a + "softmax", {scores},
                        {{"scale", c_.attentionScale()}});
      probs = reshape(a + "probs_groups", probs, {B, KV, G * S, S});
      return mergeHeads(a, matmul(a + "context", probs, v, false));
    }
    return perSequence(a, q, [&](int64_t b, const std::string &sp,
                                 int64_t pos, Value *qs) {
      const int64_t full = pos / kCachePageTokens * kCachePageTokens,
                    tail = pos - full;
      Value *qb = reshape(sp + "q", qs, {KV, G, hd});
      // The current page: the tokens already in it and the new one.
      auto page = [&](const std::string &kind, Value *fresh) {
        Value *t = cacheLayout(sp + "new_" + kind + ".T", fresh, b);
        const std::string name = cacheTensorName(l, b, kind + "_page.T");
        if (tail == 0)
          return reshape(name, t, {KV, hd, 1});
        Value *old =
            input(cacheTensorName(l, b, kind + "_tail.T"), {KV, hd, tail});
        return op(OpKind::Concat, name, {old, t}, {{"axis", int64_t(-1)}});
      };
      Value *kPage = page("key", k), *vPage = page("value", v);
      outputs_.push_back(kPage);
      outputs_.push_back(vPage);
      return overPages(sp, l, b, qb, pageRuns(b, full / kCachePageTokens),
                       kPage, vPage, /*causalTokens=*/0);
    });
  }

  /// Attention per sequence of the step, each at its own position:
  /// `attend(b, sp, position, q)` with sequence b's query heads q
  /// [1, H, S, hd] and its ops' name prefix sp gives its context, KV x G x S
  /// rows of hd; the contexts are joined as [B, KV, G * S, hd] and the
  /// heads merged.
  template <typename Attend>
  Value *perSequence(const std::string &a, Value *q, Attend attend) {
    const int64_t B = s_.batch, S = s_.tokens, KV = c_.numKvHeads,
                  hd = c_.headDim, G = c_.groupSize();
    std::vector<Value *> qs = {q};
    if (B > 1)
      qs = split(a + "q_seq", q, 0,
                 std::vector<int64_t>(static_cast<size_t>(B), 1));
    std::vector<Value *> contexts;
    for (int64_t b = 0; b < B; ++b) {
      const std::string sp = a + "seq" + std::to_string(b) + ".";
      Value *ctx = attend(b, sp, s_.positions[static_cast<size_t>(b)],
                          qs[static_cast<size_t>(b)]);
      contexts.push_back(reshape(sp + "context_b", ctx, {1, KV, G * S, hd}));
    }
    Value *o = B > 1 ? op(OpKind::Concat, a + "context_seq", contexts,
                          {{"axis", int64_t(0)}})
                     : contexts.front();
    return mergeHeads(a, o);
  }

  /// Attention of sequence b's queries qb [KV, rows, hd] over its cache:
  /// the runs of its full pages (`past_key.T.N`, `past_value.T.N`, `runs`
  /// in pages) and kCur, vCur [KV, hd, n] (its current page with the new
  /// tokens), scored run by run and joined for one softmax, the
  /// probabilities split again for the context [KV, rows, hd]. With
  /// causalTokens S > 0 the rows are the S new tokens of each query head
  /// and the softmax is causal (key j hidden from new token i when
  /// j > keys - S + i), scaled by the attention scale; with 0 the queries
  /// come scaled and see every key.
  Value *overPages(const std::string &sp, int64_t l, int64_t b, Value *qb,
                   const std::vector<int64_t> &runs, Value *kCur, Value *vCur,
                   int64_t causalTokens) {
    const int64_t KV = c_.numKvHeads, hd = c_.headDim;
    std::vector<Value *> vPast, scoreParts;
    std::vector<int64_t> sizes;
    for (size_t r = 0; r < runs.size(); ++r) {
      const std::string suffix = ".T." + std::to_string(r);
      const int64_t n = runs[r] * kCachePageTokens;
      Value *kPast =
          input(cacheTensorName(l, b, "past_key" + suffix), {KV, hd, n});
      vPast.push_back(
          input(cacheTensorName(l, b, "past_value" + suffix), {KV, hd, n}));
      scoreParts.push_back(
          matmul(sp + "scores_past." + std::to_string(r), qb, kPast, false));
      sizes.push_back(n);
    }
    scoreParts.push_back(matmul(sp + "scores_page", qb, kCur, false));
    sizes.push_back(kCur->type().shape.back());
    Value *scores = scoreParts.size() == 1
                        ? scoreParts.front()
                        : op(OpKind::Concat, sp + "scores", scoreParts,
                             {{"axis", int64_t(-1)}});
    Value *probs = nullptr;
    if (causalTokens > 0) {
      const Shape rows = scores->type().shape; // [KV, G * S, keys]
      const int64_t S = causalTokens, keys = rows[2], G = rows[1] / S;
      scores = reshape(sp + "scores_heads", scores, {KV, G, S, keys});
      probs = op(OpKind::CausalSoftmax, sp + "softmax", {scores},
                 {{"scale", c_.attentionScale()}});
      probs = reshape(sp + "probs_groups", probs, rows);
    } else {
      probs = op(OpKind::Softmax, sp + "softmax", {scores},
                 {{"axis", int64_t(-1)}});
    }
    if (runs.empty())
      return matmul(sp + "context", probs, vCur, true);
    std::vector<Value *> parts = split(sp + "probs", probs, -1, sizes);
    Value *ctx = matmul(sp + "context_page", parts.back(), vCur, true);
    for (size_t r = 0; r < runs.size(); ++r)
      ctx = op(OpKind::Add,
               sp + (r + 1 == runs.size() ? std::string("context")
                                          : "context." + std::to_string(r)),
               {matmul(sp + "context_past." + std::to_string(r), parts[r],
                       vPast[r], true),
                ctx});
    return ctx;
  }

  /// A prefill with a resident cache where some sequence has tokens in its
  /// cache already (a later chunk of its prompt), per sequence: the tokens
  /// of its current page (`key_tail.T`) and its new tokens' keys are one
  /// part, written over the tail page (`key_page.T`) and the pages after
  /// it run by run (`key.T.N`). With heads the fused op takes, its full
  /// pages (`past_key.T.N`) and the part are joined and turned for the
  /// fused op, whose causal mask is offset by the position; with wider
  /// ones, overPages scores them with a causal softmax.
  Value *prefillAfterCache(int64_t l, Value *q, Value *k, Value *v) {
    const std::string p = layerPrefix(l), a = p + "self_attn.";
    const int64_t S = s_.tokens, KV = c_.numKvHeads, hd = c_.headDim,
                  G = c_.groupSize();
    return perSequence(a, q, [&](int64_t b, const std::string &sp,
                                 int64_t pos, Value *qs) {
      const int64_t full = pos / kCachePageTokens * kCachePageTokens,
                    tail = pos - full;
      Value *qb = reshape(sp + "q", qs, {KV, G * S, hd});
      // The tail and the new tokens, [KV, hd, tail + S], and its writes:
      // with a tail, its page first (`key_page.T`, in the tail's sticks),
      // then the pages after it run by run (`key.T.N`).
      const int64_t pageTokens =
          tail > 0 ? std::min(kCachePageTokens, tail + S) : 0;
      const int64_t rest = tail + S - pageTokens;
      const PrefillPages pages = prefillPages(pos, S);
      const std::vector<int64_t> writes = pageRuns(b, pages.written);
      const std::vector<int64_t> cached = cachedRuns(b, pages.cached);
      auto part = [&](const std::string &kind, Value *fresh) {
        Value *t = cacheLayout(sp + "new_" + kind + ".T", fresh, b);
        if (tail > 0)
          t = op(
              OpKind::Concat, sp + kind + "_part.T",
              {input(cacheTensorName(l, b, kind + "_tail.T"), {KV, hd, tail}),
               t},
              {{"axis", int64_t(-1)}});
        std::vector<int64_t> sizes;
        if (pageTokens > 0)
          sizes.push_back(pageTokens);
        int64_t left = rest;
        for (int64_t run : writes) {
          sizes.push_back(std::min(left, run * kCachePageTokens));
          left -= sizes.back();
        }
        std::vector<Value *> pieces = {t};
        if (sizes.size() > 1)
          pieces = split(sp + kind + "_writes", t, -1, sizes);
        for (size_t i = 0; i < pieces.size(); ++i) {
          const bool page = pageTokens > 0 && i == 0;
          const std::string name = cacheTensorName(
              l, b,
              page ? kind + "_page.T"
                   : kind + ".T." + std::to_string(i - (pageTokens > 0)));
          outputs_.push_back(reshape(name, pieces[i], pieces[i]->type().shape));
        }
        return t;
      };
      Value *kPart = part("key", k), *vPart = part("value", v);
      if (hd <= kFusedAttentionMaxHeadDim) {
        // The fused op over the cache's keys and values and the new ones,
        // joined and turned to [KV, keys, hd] (copies of the cache).
        std::vector<Value *> ks, vs;
        const std::vector<int64_t> &runs = cached;
        for (size_t r = 0; r < runs.size(); ++r) {
          const std::string suffix = ".T." + std::to_string(r);
          const int64_t n = runs[r] * kCachePageTokens;
          ks.push_back(
              input(cacheTensorName(l, b, "past_key" + suffix), {KV, hd, n}));
          vs.push_back(
              input(cacheTensorName(l, b, "past_value" + suffix), {KV, hd, n}));
        }
        ks.push_back(kPart);
        vs.push_back(vPart);
        auto keys = [&](const std::string &name, std::vector<Value *> &parts) {
          Value *t = parts.size() == 1 ? parts.front()
                                       : op(OpKind::Concat, name + ".T", parts,
                                            {{"axis", int64_t(-1)}});
          t = transpose(name, t, {0, 2, 1});
          return reshape(name + "_b", t, {1, KV, pos + S, hd});
        };
        return fused(sp, qs, keys(sp + "keys", ks), keys(sp + "values", vs));
      }
      return overPages(sp, l, b, qb, cached, kPart, vPart, S);
    });
  }

  Value *lmHead(Value *x) {
    const int64_t S = s_.tokens;
    if (S > 1)
      x = split("last_token", x, 1, {S - 1, 1})[1];
    Value *norm = input("model.norm.weight", {c_.hiddenSize});
    Value *w = input(c_.tieWordEmbeddings ? "model.embed_tokens.weight.T"
                                          : "lm_head.weight.T",
                     {c_.hiddenSize, c_.vocabSize});
    x = rmsnorm("model.norm", x, norm);
    x = linear("lm_head", x, w);
    if (c_.logitsScaling != 1.0)
      x = op(OpKind::Mul, "logits",
             {x, scalar("inverse_logits_scaling", 1.0 / c_.logitsScaling)});
    return x;
  }

  const LlmConfig &c_;
  const StepShape &s_;
  std::unique_ptr<Graph> g_;
  Value *cosQ_ = nullptr, *sinQ_ = nullptr, *cosK_ = nullptr, *sinK_ = nullptr;
  std::vector<Value *> outputs_;
};

/// `values` (doubles) stored as an array of `type`.
NpyArray arrayOf(const TensorType &type, const std::vector<double> &values) {
  NpyArray a;
  a.dtype = compiler::toNpyDtype(type.elementType);
  a.shape = type.shape;
  a.data.resize(static_cast<size_t>(type.byteSize()));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type.elementType == ElementType::I32) {
      const auto v = static_cast<int32_t>(values[i]);
      std::memcpy(a.data.data() + 4 * i, &v, 4);
    } else if (type.elementType == ElementType::F16) {
      const uint16_t h = half::floatToHalf(static_cast<float>(values[i]));
      std::memcpy(a.data.data() + 2 * i, &h, 2);
    } else {
      const auto f = static_cast<float>(values[i]);
      std::memcpy(a.data.data() + 4 * i, &f, 4);
    }
  }
  return a;
}

bool endsWith(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() &&
         s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

} // namespace

void checkRange(const char *flag, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi)
    throw UserError(SourceLoc{flag},
                    "must be in [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "], got " + std::to_string(value),
                    ExitCode::Usage);
}

std::string cacheTensorName(int64_t layer, int64_t sequence,
                            const std::string &part) {
  return layerPrefix(layer) + "seq" + std::to_string(sequence) + "." + part;
}

// Frequency i (of hd/2) is theta^(-2i/hd), as Hugging Face's default
// rotary embedding, scaled as the config's rope_scaling says
// (LlmConfig::ropeInverseFrequency).
std::vector<double> rotaryTable(const TensorType &type, const LlmConfig &c,
                                const StepShape &shape, bool sine) {
  // [B, S, heads, hd], or [B, S, hd] for the rotary op (heads share it).
  const int64_t B = type.shape[0], S = type.shape[1], hd = c.headDim,
                heads = type.rank() == 4 ? type.shape[2] : type.shape[2] / hd,
                half = hd / 2;
  std::vector<double> out;
  out.reserve(static_cast<size_t>(type.elementCount()));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < hd; ++d) {
          const int64_t i = d % half;
          const double freq = c.ropeInverseFrequency(i);
          const int64_t first = shape.residentCache
                                    ? shape.positions[static_cast<size_t>(b)]
                                    : shape.context;
          const double angle = static_cast<double>(first + s) * freq;
          out.push_back(sine ? (d < half ? -1.0 : 1.0) * std::sin(angle)
                             : std::cos(angle));
        }
  return out;
}

Value *lookUpTokens(Graph &g, const LlmConfig &c, const StepShape &s) {
  Value *ids =
      g.addInput("input_ids", TensorType{ElementType::I32, {s.batch, s.tokens}});
  Value *table = g.addInput("model.embed_tokens.weight",
                            TensorType{s.elementType, {c.vocabSize, c.hiddenSize}});
  return compiler::buildOp(g, OpKind::Embedding, "embed_tokens", {table, ids},
                           {}, {"embed_tokens"})
      ->result(0);
}

std::pair<Value *, Value *> gatherRotaryRows(Graph &g, const LlmConfig &c,
                                             const StepShape &s) {
  Value *ids = g.addInput("position_ids",
                          TensorType{ElementType::I32, {s.batch, s.tokens}});
  std::array<Value *, 2> rows{};
  for (int k = 0; k < 2; ++k) {
    const std::string name = k == 0 ? "rope.cos" : "rope.sin";
    Value *table = g.addInput(name + ".table",
                              TensorType{s.elementType, {s.rotaryRows, c.headDim}});
    rows[static_cast<size_t>(k)] =
        compiler::buildOp(g, OpKind::Embedding, name, {table, ids}, {}, {name})
            ->result(0);
  }
  return {rows[0], rows[1]};
}

std::vector<double> rotaryRows(const LlmConfig &c, int64_t rows, bool sine) {
  const int64_t hd = c.headDim, half = hd / 2;
  std::vector<double> out;
  out.reserve(static_cast<size_t>(rows * hd));
  for (int64_t p = 0; p < rows; ++p)
    for (int64_t d = 0; d < hd; ++d) {
      const double angle =
          static_cast<double>(p) * c.ropeInverseFrequency(d % half);
      out.push_back(sine ? (d < half ? -1.0 : 1.0) * std::sin(angle)
                         : std::cos(angle));
    }
  return out;
}

std::vector<int64_t> positionIds(const StepShape &shape) {
  std::vector<int64_t> out;
  for (int64_t b = 0; b < shape.batch; ++b) {
    const int64_t first = shape.residentCache
                              ? shape.positions[static_cast<size_t>(b)]
                              : shape.context;
    for (int64_t s = 0; s < shape.tokens; ++s)
      out.push_back(first + s);
  }
  return out;
}

void checkStepShape(const LlmConfig &config, const StepShape &s) {
  checkRange("--batch", s.batch, 1, kMaxStepDim);
  checkRange("--layers", s.layers, 1, config.numLayers);
  if (s.residentCache) {
    SPYRE_ASSERT(s.positions.size() == static_cast<size_t>(s.batch),
                 "a step with a resident cache needs one position per "
                 "sequence");
    for (int64_t p : s.positions)
      SPYRE_ASSERT(s.mode == Mode::Prefill ? p >= 0 && p <= kMaxStepDim
                                           : p >= 1 && p <= kMaxStepDim,
                   "position of a sequence out of range");
  }
  if (s.mode == Mode::Prefill) {
    checkRange("--tokens", s.tokens, 1, kMaxStepDim);
    if (s.residentCache && s.context != 0)
      throw UserError(SourceLoc{"--context"},
                      "a prefill after cached tokens on the persistent "
                      "device is not built yet; its prefill takes "
                      "--context 0",
                      ExitCode::Usage);
    checkRange("--context", s.context, 0, kMaxStepDim - s.tokens);
    return;
  }
  if (s.tokens != 1)
    throw UserError(SourceLoc{"--tokens"},
                    "a decode step takes one new token per sequence",
                    ExitCode::Usage);
  checkRange("--context", s.context, 1, kMaxStepDim);
}

std::unique_ptr<Graph> buildLlmGraph(const LlmConfig &config,
                                     const StepShape &shape) {
  checkStepShape(config, shape);
  return Builder(config, shape).build();
}

/// Most pages the paged rung reads or writes, all sequences together: each
/// is an input or output of its own (Granite-3.3-8B's 16,384 are 8.6 GB of
/// cache per layer, beyond a card's memory).
constexpr int64_t kMaxRungPages = int64_t(1) << 14;

PrefillPages prefillPages(int64_t position, int64_t tokens) {
  PrefillPages p;
  p.cached = position / kCachePageTokens;
  p.firstWritten = p.cached + (position % kCachePageTokens > 0 ? 1 : 0);
  p.written = std::max<int64_t>(
      0, (position + tokens + kCachePageTokens - 1) / kCachePageTokens -
             p.firstWritten);
  return p;
}

StepShape pagedRungShape(const StepShape &shape) {
  StepShape s = shape;
  s.residentCache = true;
  const int64_t position = s.context;
  if (s.mode == Mode::Prefill)
    s.context = 0; // the positions say it
  s.positions.assign(static_cast<size_t>(s.batch), position);
  // Decode reads the full pages before the current one; prefill writes
  // the pages its tokens fill (after a partly filled current page, which
  // is one tensor of its own) and reads the full pages before them.
  const PrefillPages pp = prefillPages(position, s.tokens);
  const int64_t cached = pp.cached, written = pp.written;
  const int64_t pages = s.mode == Mode::Decode ? cached : written + cached;
  if (pages > kMaxRungPages / s.batch)
    throw UserError(SourceLoc{s.mode == Mode::Decode ? "--context" : "--tokens"},
                    "the paged rung reads every page apart: " +
                        std::to_string(s.batch) + " x " +
                        std::to_string(pages) + " pages, more than " +
                        std::to_string(kMaxRungPages),
                    ExitCode::Usage);
  s.pageRuns.assign(
      static_cast<size_t>(s.batch),
      std::vector<int64_t>(
          static_cast<size_t>(s.mode == Mode::Decode ? cached : written), 1));
  if (s.mode == Mode::Prefill)
    s.cachedRuns.assign(static_cast<size_t>(s.batch),
                        std::vector<int64_t>(static_cast<size_t>(cached), 1));
  return s;
}

std::unique_ptr<Graph> buildRungGraph(const LlmConfig &config,
                                      const StepShape &shape, Rung rung) {
  checkStepShape(config, shape);
  if (rung == Rung::PagedAttention) {
    const StepShape paged = pagedRungShape(shape);
    checkStepShape(config, paged);
    return Builder(config, paged).buildRung(rung);
  }
  return Builder(config, shape).buildRung(rung);
}

std::string_view rungName(Rung rung) {
  switch (rung) {
  case Rung::ResidualAdd:
    return "residual add";
  case Rung::RmsNorm:
    return "RMSNorm";
  case Rung::QkvProj:
    return "QKV matmuls";
  case Rung::OProj:
    return "O matmul";
  case Rung::MlpProj:
    return "MLP matmuls";
  case Rung::Attention:
    return "attention (contiguous)";
  case Rung::PagedAttention:
    return "attention (paged, one page per block)";
  case Rung::Mlp:
    return "MLP";
  case Rung::Layer:
    return "one layer";
  case Rung::LmHead:
    return "LM head";
  }
  SPYRE_UNREACHABLE("ladder rung");
}

run::ModelInputs llmInputs(const Graph &graph, const LlmConfig &config,
                           const StepShape &shape, uint64_t seed) {
  run::ModelInputs inputs;
  inputs.kind = run::InputsKind::Random;
  inputs.seed = seed;
  for (const Value *v : graph.inputs()) {
    const std::string &name = v->name();
    const TensorType &type = v->type();
    if (name == "rope.cos.table" || name == "rope.sin.table") {
      inputs.arrays[name] =
          arrayOf(type, rotaryRows(config, type.shape[0],
                                   name == "rope.sin.table"));
      continue;
    }
    if (name == "position_ids") {
      std::vector<double> ids;
      for (int64_t p : positionIds(shape))
        ids.push_back(static_cast<double>(p));
      inputs.arrays[name] = arrayOf(type, ids);
      continue;
    }
    if (name.rfind("rope.", 0) == 0) {
      inputs.arrays[name] =
          arrayOf(type, rotaryTable(type, config, shape,
                                    name.rfind("rope.sin", 0) == 0));
      continue;
    }
    if (name == "input_ids") {
      inputs.arrays[name] =
          compiler::ref::randomInput(type, seed, name, config.vocabSize);
      continue;
    }
    std::vector<double> values =
        compiler::ref::tensorFromNpy(compiler::ref::randomInput(type, seed,
                                                                name))
            .values;
    if (endsWith(name, "norm.weight")) {
      for (double &x : values)
        x = 1.0 + 0.5 * x;
    } else if (endsWith(name, ".weight.T")) {
      // Uniform in [-1, 1] has variance 1/3: scale to 1/fan-in ([in, out]).
      const double scale =
          std::sqrt(3.0 / static_cast<double>(type.shape.front()));
      for (double &x : values)
        x *= scale;
    }
    inputs.arrays[name] = arrayOf(type, values);
  }
  return inputs;
}

int64_t cachedTokens(const StepShape &s) {
  if (!s.residentCache)
    return s.batch * s.context;
  int64_t tokens = 0;
  for (int64_t p : s.positions)
    tokens += p;
  return tokens;
}

StepBytes stepBytes(const LlmConfig &c, const StepShape &s) {
  constexpr int64_t kDeviceBytes = 2; // DL16
  StepBytes b;
  b.weights = s.layers * c.layerParameters() * kDeviceBytes;
  if (s.lmHead)
    b.weights += (c.vocabSize + 1) * c.hiddenSize * kDeviceBytes;
  if (s.tokenIds) // the embedding table's rows the ids select
    b.weights += s.batch * s.tokens * c.hiddenSize * kDeviceBytes;
  b.cache =
      s.layers * 2 * cachedTokens(s) * c.numKvHeads * c.headDim * kDeviceBytes;
  return b;
}

int64_t stepMacs(const LlmConfig &c, const StepShape &s) {
  const int64_t rows = s.batch * s.tokens;
  const int64_t projections = rows * (c.layerParameters() - 2 * c.hiddenSize);
  // Scores and context: per query head, S x keys x hd twice.
  const int64_t keys = cachedTokens(s) + s.batch * s.tokens;
  const int64_t attention = 2 * c.numHeads * s.tokens * keys * c.headDim;
  int64_t macs = s.layers * (projections + attention);
  if (s.lmHead)
    macs += s.batch * c.vocabSize * c.hiddenSize;
  return macs;
}

} // namespace spyre::llm
