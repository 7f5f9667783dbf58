// The step graphs of the tiny Granite config: one layer of prefill (S = 4)
// and of decode (B = 2, L = 8) as golden IR text, the shapes of inputs and
// outputs for more layers and the LM head, and only device ops.
#include "compiler/ir/Printer.h"
#include "compiler/ir/Verifier.h"
#include "compiler/ref/Evaluator.h"
#include "llm/LlmGraph.h"
#include "support/Diagnostic.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

namespace spyre::llm {
namespace {

LlmConfig tiny() {
  return loadLlmConfig(test::srcPath("examples/llm/tiny-granite.json"));
}

std::string shapeOf(const compiler::Graph &g, const std::string &name) {
  const compiler::Value *v = g.findValue(name);
  return v ? v->type().str() : "missing";
}

void expectDeviceOnly(const compiler::Graph &g) {
  DiagnosticEngine diags;
  EXPECT_TRUE(compiler::verifyGraph(g, diags)) << diags.str();
  for (const compiler::Op *op : g.ops())
    EXPECT_NE(op->kind(), compiler::OpKind::Host) << op->name();
}

TEST(LlmGraph, RotaryTablesFollowTheRopeScaling) {
  // Linear scaling by 2 turns position p's angles into those of p / 2: a
  // decode step at context 8 (position 8) has the unscaled table of
  // position 4, entry for entry; llama3 scaling keeps the highest
  // frequencies (pair 0) and changes the lowest.
  LlmConfig plain = tiny(), linear = tiny(), llama3 = tiny();
  linear.ropeScaling.type = RopeScaling::Type::Linear;
  linear.ropeScaling.factor = 2;
  llama3.ropeScaling.type = RopeScaling::Type::Llama3;
  llama3.ropeScaling.factor = 8;
  llama3.ropeScaling.originalMaxPositions = 64;
  const compiler::TensorType type{compiler::ElementType::F32,
                                  {1, 1, plain.headDim}};
  StepShape at8, at4;
  at8.mode = at4.mode = Mode::Decode;
  at8.context = 8;
  at4.context = 4;
  for (bool sine : {false, true}) {
    EXPECT_EQ(rotaryTable(type, linear, at8, sine),
              rotaryTable(type, plain, at4, sine));
    const std::vector<double> a = rotaryTable(type, plain, at8, sine),
                              b = rotaryTable(type, llama3, at8, sine);
    const size_t last = static_cast<size_t>(plain.headDim / 2 - 1);
    EXPECT_EQ(a[0], b[0]);
    EXPECT_NE(a[last], b[last]);
  }
}

TEST(LlmGraph, RotaryRowsGatheredByPositionAreTheStepsTables) {
  // A step that gathers its rotary tables on the device (Rotary::Ids)
  // computes, on the reference, exactly what the step given its tables
  // computes: prefill after no context and decode at context 8, the
  // positions and the tables' rows from llmInputs.
  const LlmConfig c = tiny();
  for (Mode mode : {Mode::Prefill, Mode::Decode}) {
    StepShape tables;
    tables.mode = mode;
    tables.layers = 2;
    tables.lmHead = true;
    tables.batch = mode == Mode::Prefill ? 1 : 2;
    tables.tokens = mode == Mode::Prefill ? 5 : 1;
    tables.context = mode == Mode::Prefill ? 0 : 8;
    StepShape ids = tables;
    ids.rotary = Rotary::Ids;
    ids.rotaryRows = 16;
    const auto a = buildLlmGraph(c, tables), b = buildLlmGraph(c, ids);
    expectDeviceOnly(*b);
    EXPECT_EQ(shapeOf(*b, "position_ids"), "i32[" +
                                               std::to_string(tables.batch) +
                                               ", " +
                                               std::to_string(tables.tokens) +
                                               "]");
    EXPECT_EQ(shapeOf(*b, "rope.cos.table"), "f16[16, 128]");
    EXPECT_EQ(shapeOf(*b, "rope.cos_q"), "missing");
    const run::ModelInputs ia = llmInputs(*a, c, tables, 3),
                           ib = llmInputs(*b, c, ids, 3);
    compiler::ref::TensorMap ma, mb;
    for (const auto &[name, array] : ia.arrays)
      ma[name] = compiler::ref::tensorFromNpy(array);
    for (const auto &[name, array] : ib.arrays)
      mb[name] = compiler::ref::tensorFromNpy(array);
    const std::vector<compiler::ref::RefTensor> ra =
        compiler::ref::evaluateGraph(*a, ma);
    const std::vector<compiler::ref::RefTensor> rb =
        compiler::ref::evaluateGraph(*b, mb);
    ASSERT_EQ(ra.size(), rb.size());
    for (size_t i = 0; i < ra.size(); ++i)
      EXPECT_EQ(ra[i].values, rb[i].values) << "output " << i;
  }
}

TEST(LlmGraph, PrefillOneLayerGolden) {
  StepShape s;
  s.mode = Mode::Prefill;
  s.tokens = 4;
  auto g = buildLlmGraph(tiny(), s);
  expectDeviceOnly(*g);
  test::expectGolden(compiler::printGraph(*g), "llm/tiny-prefill-1layer.ir");
}

TEST(LlmGraph, DecodeOneLayerGolden) {
  StepShape s;
  s.mode = Mode::Decode;
  s.batch = 2;
  s.context = 8;
  auto g = buildLlmGraph(tiny(), s);
  expectDeviceOnly(*g);
  test::expectGolden(compiler::printGraph(*g), "llm/tiny-decode-1layer.ir");
}

TEST(LlmGraph, DecodeShapesWithLmHead) {
  StepShape s;
  s.mode = Mode::Decode;
  s.batch = 3;
  s.context = 100;
  s.layers = 2;
  s.lmHead = true;
  s.embedding = true;
  auto g = buildLlmGraph(tiny(), s);
  expectDeviceOnly(*g);
  EXPECT_EQ(shapeOf(*g, "hidden"), "f16[3, 1, 256]");
  EXPECT_EQ(shapeOf(*g, "model.layers.1.past_key.T"), "f16[3, 2, 128, 100]");
  EXPECT_EQ(shapeOf(*g, "model.layers.1.self_attn.q_proj.weight.T"),
            "f16[256, 512]");
  EXPECT_EQ(shapeOf(*g, "model.layers.1.self_attn.scores"),
            "f16[3, 2, 2, 101]"); // 2 query heads per KV head, L + 1 keys
  // Tied embeddings: the LM head is the embedding table.
  EXPECT_EQ(shapeOf(*g, "model.embed_tokens.weight.T"), "f16[256, 250]");
  ASSERT_EQ(g->outputs().size(), 5u);
  EXPECT_EQ(g->outputs()[0]->name(), "logits");
  EXPECT_EQ(g->outputs()[0]->type().str(), "f16[3, 1, 250]");
  EXPECT_EQ(g->outputs()[4]->name(), "model.layers.1.new_value");
  EXPECT_EQ(g->outputs()[4]->type().str(), "f16[3, 2, 1, 128]");
}

TEST(LlmGraph, PrefillLmHeadTakesTheLastToken) {
  StepShape s;
  s.mode = Mode::Prefill;
  s.tokens = 6;
  s.lmHead = true;
  auto g = buildLlmGraph(tiny(), s);
  expectDeviceOnly(*g);
  EXPECT_EQ(g->outputs()[0]->type().str(), "f16[1, 1, 250]");
  // Prefill attention is one op over q [B, H, S, hd]; the scores are
  // never a value.
  EXPECT_EQ(shapeOf(*g, "model.layers.0.self_attn.attention"),
            "f16[1, 4, 6, 128]");
  EXPECT_EQ(g->findValue("model.layers.0.self_attn.scores"), nullptr);
}

TEST(LlmGraph, BytesAndMacs) {
  const LlmConfig c = tiny();
  StepShape s;
  s.mode = Mode::Decode;
  s.batch = 2;
  s.context = 8;
  s.layers = 2;
  const StepBytes b = stepBytes(c, s);
  // Per layer: 256 x (512 + 256 + 256) + 512 x 256 + 3 x 256 x 512 + 512.
  EXPECT_EQ(b.weights, 2 * 2 * (262144 + 131072 + 393216 + 512));
  EXPECT_EQ(b.cache, 2 * 2 * 2 * 2 * 8 * 128 * 2);
  // Rows x projection weights + 2 x B x H x keys x hd, per layer.
  EXPECT_EQ(stepMacs(c, s),
            2 * (2 * (262144 + 131072 + 393216) + 2 * 2 * 4 * 9 * 128));
  // A prefill of 3 tokens after 8 cached reads the cache too, and each of
  // its tokens' scores and context run over 8 + 3 keys per sequence.
  s.mode = Mode::Prefill;
  s.tokens = 3;
  EXPECT_EQ(stepBytes(c, s).cache, b.cache);
  EXPECT_EQ(stepMacs(c, s),
            2 * (6 * (262144 + 131072 + 393216) + 2 * 4 * 3 * 22 * 128));
}

TEST(LlmGraph, RejectsImpossibleSteps) {
  StepShape s;
  s.mode = Mode::Decode;
  s.context = 0;
  EXPECT_THROW(buildLlmGraph(tiny(), s), UserError);
  s.context = 8;
  s.layers = 3; // the tiny config has 2
  EXPECT_THROW(buildLlmGraph(tiny(), s), UserError);
  s.layers = 1;
  s.mode = Mode::Prefill;
  s.tokens = 4;
  s.residentCache = true;
  s.positions = {0};
  // A prefill after cached tokens on the persistent device.
  EXPECT_THROW(buildLlmGraph(tiny(), s), UserError);
}

/// A prefill of S tokens after L cached ones computes, on the reference,
/// what the prefill of all L + S tokens computes for its last S, given as
/// its cache the keys and values that prefill made for its first L.
void expectPrefillAfterCacheContinuesTheWhole(const LlmConfig &c, bool fused) {
  const int64_t B = 2, L = 5, S = 3, KV = c.numKvHeads, hd = c.headDim,
                D = c.hiddenSize;
  StepShape whole;
  whole.mode = Mode::Prefill;
  whole.batch = B;
  whole.tokens = L + S;
  whole.layers = 2;
  StepShape after = whole;
  after.tokens = S;
  after.context = L;
  const auto a = buildLlmGraph(c, whole), b = buildLlmGraph(c, after);
  expectDeviceOnly(*b);
  const std::string kv = std::to_string(B) + ", " + std::to_string(KV);
  if (fused) {
    // One op over the cache's keys and the new ones, each where it lies:
    // nothing joins them.
    EXPECT_EQ(shapeOf(*b, "model.layers.1.past_key"),
              "f16[" + kv + ", 5, " + std::to_string(hd) + "]");
    EXPECT_EQ(shapeOf(*b, "model.layers.0.self_attn.keys"), "missing");
    const compiler::Op *op = nullptr;
    for (const compiler::Op *o : b->ops())
      if (o->kind() == compiler::OpKind::Attention && !op)
        op = o;
    ASSERT_TRUE(op);
    ASSERT_EQ(op->numOperands(), 5u);
    EXPECT_EQ(op->operand(1)->name(), "model.layers.0.past_key");
    EXPECT_EQ(op->operand(3)->type().shape, (compiler::Shape{B, KV, S, hd}));
  } else {
    // S queries against L + S keys in the causal softmax.
    EXPECT_EQ(shapeOf(*b, "model.layers.1.past_key.T"),
              "f16[" + kv + ", " + std::to_string(hd) + ", 5]");
    EXPECT_EQ(shapeOf(*b, "model.layers.0.self_attn.softmax"),
              "f16[" + kv + ", " + std::to_string(c.groupSize()) + ", 3, 8]");
  }

  compiler::ref::TensorMap ma, mb;
  for (const auto &[name, array] : llmInputs(*a, c, whole, 3).arrays)
    ma[name] = compiler::ref::tensorFromNpy(array);
  compiler::ref::TensorMap all;
  const std::vector<compiler::ref::RefTensor> ra =
      compiler::ref::evaluateGraph(*a, ma, &all);
  // The rotary tables for positions L .. L + S - 1; the weights and the
  // last S rows of each sequence as the whole prefill had them.
  for (const auto &[name, array] : llmInputs(*b, c, after, 3).arrays)
    mb[name] = name.rfind("rope.", 0) == 0 ? compiler::ref::tensorFromNpy(array)
               : ma.count(name)            ? ma.at(name)
                                           : compiler::ref::RefTensor{};
  compiler::ref::RefTensor &hidden = mb.at("hidden");
  hidden = {{B, S, D}, {}};
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t t = L; t < L + S; ++t)
      for (int64_t d = 0; d < D; ++d)
        hidden.values.push_back(
            ma.at("hidden")
                .values[static_cast<size_t>((bi * (L + S) + t) * D + d)]);
  for (int64_t l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    // new_key / new_value [B, KV, L + S, hd]: the cache's first L tokens,
    // as they come [B, KV, L, hd] or keys transposed [B, KV, hd, L].
    const compiler::ref::RefTensor &k = all.at(p + "new_key"),
                                   &v = all.at(p + "new_value");
    compiler::ref::RefTensor kt{{B, KV, hd, L}, {}}, kp{{B, KV, L, hd}, {}},
        vp{{B, KV, L, hd}, {}};
    for (int64_t h = 0; h < B * KV; ++h) {
      for (int64_t d = 0; d < hd; ++d)
        for (int64_t t = 0; t < L; ++t)
          kt.values.push_back(
              k.values[static_cast<size_t>((h * (L + S) + t) * hd + d)]);
      for (int64_t t = 0; t < L; ++t)
        for (int64_t d = 0; d < hd; ++d) {
          const auto at = static_cast<size_t>((h * (L + S) + t) * hd + d);
          kp.values.push_back(k.values[at]);
          vp.values.push_back(v.values[at]);
        }
    }
    if (fused)
      mb.at(p + "past_key") = kp;
    else
      mb.at(p + "past_key.T") = kt;
    mb.at(p + "past_value") = vp;
  }
  const std::vector<compiler::ref::RefTensor> rb =
      compiler::ref::evaluateGraph(*b, mb);
  // The layers' output and each layer's new keys and values: the last S
  // tokens' of the whole prefill.
  ASSERT_EQ(ra.size(), rb.size());
  for (size_t o = 0; o < ra.size(); ++o) {
    const int64_t inner = o == 0 ? D : hd, outer = o == 0 ? B : B * KV;
    ASSERT_EQ(rb[o].values.size(), static_cast<size_t>(outer * S * inner));
    for (int64_t r = 0; r < outer; ++r)
      for (int64_t t = 0; t < S; ++t)
        for (int64_t e = 0; e < inner; ++e) {
          const double want = ra[o].values[static_cast<size_t>(
              (r * (L + S) + L + t) * inner + e)];
          const double got =
              rb[o].values[static_cast<size_t>((r * S + t) * inner + e)];
          ASSERT_NEAR(got, want, 1e-9 * (1 + std::abs(want)))
              << "output " << o << ", row " << r << ", token " << t;
        }
  }
}

TEST(LlmGraph, PrefillAfterCachedTokensContinuesTheWholePrefill) {
  expectPrefillAfterCacheContinuesTheWhole(tiny(), /*fused=*/true);
  // Heads of 256 keep the scores (the fused op takes heads up to 128).
  LlmConfig wide = tiny();
  wide.headDim = 256;
  expectPrefillAfterCacheContinuesTheWhole(wide, /*fused=*/false);
}

TEST(LlmGraph, InputsAreSeededAndScaled) {
  const LlmConfig c = tiny();
  StepShape s;
  s.mode = Mode::Decode;
  s.context = 8;
  auto g = buildLlmGraph(c, s);
  const run::ModelInputs a = llmInputs(*g, c, s, 7);
  const run::ModelInputs b = llmInputs(*g, c, s, 7);
  ASSERT_EQ(a.arrays.size(), g->inputs().size());
  for (const auto &[name, array] : a.arrays)
    EXPECT_EQ(array.data, b.arrays.at(name).data) << name;
  EXPECT_NE(a.arrays.at("hidden").data, llmInputs(*g, c, s, 8).arrays.at("hidden").data);
}

} // namespace
} // namespace spyre::llm
