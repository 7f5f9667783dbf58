// The language-model patterns of ONNX exports (OnnxLlmPatterns.h) on graphs
// written in the IR, as the importer leaves them (Expand and Slice as host
// ops): what each rewrite makes, and that the rewritten graph computes on
// the host reference what the graph with the host ops computes.
#include "compiler/import/OnnxLlmPatterns.h"
#include "compiler/import/OnnxPatterns.h"
#include "compiler/ir/Parser.h"
#include "compiler/ir/Verifier.h"
#include "compiler/ref/Evaluator.h"
#include "compiler/ref/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace spyre::compiler {
namespace {

/// Attention of 2 new tokens over a past of 5 and themselves, 4 query heads
/// sharing 2 key/value heads through repeat_kv, with a padding mask (so no
/// attention op): the past and the new keys and values joined by concats
/// that are outputs when `presentOutputs`.
std::string decodeGraph(bool presentOutputs) {
  std::string mask;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 7; ++j)
      mask +=
          std::string(mask.empty() ? "" : ", ") + (j < 1 ? "-10000.0" : "0.0");
  auto repeat = [](const std::string &x) {
    return "  %" + x + "u = unsqueeze @" + x + "u(%" + x +
           ") {axes = [2]} : f32[1, 2, 1, 7, 16]\n"
           "  %" +
           x + "e = host @" + x + "e(%" + x +
           "u) {attrs = "
           "\"{\\\"shape\\\":[1,2,2,7,16]}\", op = \"Expand\"} : f32[1, 2, 2, "
           "7, 16]\n"
           "  %" +
           x + "r = reshape @" + x + "r(%" + x +
           "e) {shape = [1, 4, 7, 16]} : f32[1, 4, 7, 16]\n";
  };
  return "graph @t {\n"
         "  input %q : f32[1, 4, 2, 16]\n"
         "  input %past_k : f32[1, 2, 5, 16]\n"
         "  input %new_k : f32[1, 2, 2, 16]\n"
         "  input %past_v : f32[1, 2, 5, 16]\n"
         "  input %new_v : f32[1, 2, 2, 16]\n"
         "  const %mask : f32[2, 7] = dense<[" +
         mask +
         "]>\n"
         "  %k = concat @cat_k(%past_k, %new_k) {axis = 2} : f32[1, 2, 7, 16]\n"
         "  %v = concat @cat_v(%past_v, %new_v) {axis = 2} : f32[1, 2, 7, "
         "16]\n" +
         repeat("k") + repeat("v") +
         "  %kt = transpose @kt(%kr) {perm = [0, 1, 3, 2]} : f32[1, 4, 16, 7]\n"
         "  %s = matmul @scores(%q, %kt) {transpose_a = false, transpose_b = "
         "false} : f32[1, 4, 2, 7]\n"
         "  %m = add @mask_add(%s, %mask) : f32[1, 4, 2, 7]\n"
         "  %p = softmax @softmax(%m) {axis = -1} : f32[1, 4, 2, 7]\n"
         "  %o = matmul @context(%p, %vr) {transpose_a = false, transpose_b = "
         "false} : f32[1, 4, 2, 16]\n" +
         (presentOutputs ? "  return %o, %k, %v\n" : "  return %o\n") + "}\n";
}

std::unique_ptr<Graph> parse(const std::string &text) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = parseGraph(text, "test.ir", diags);
  EXPECT_TRUE(g) << diags.str() << text;
  return g;
}

void expectVerifies(const Graph &g) {
  DiagnosticEngine diags;
  EXPECT_TRUE(verifyGraph(g, diags)) << diags.str();
}

int countOps(const Graph &g, OpKind kind) {
  int n = 0;
  for (const Op *op : g.ops())
    n += op->kind() == kind;
  return n;
}

/// `rewritten` computes `original`'s outputs on random inputs.
void expectSameNumbers(const Graph &original, const Graph &rewritten) {
  ref::TensorMap inputs;
  for (const Value *v : original.inputs())
    inputs[v->name()] =
        ref::tensorFromNpy(ref::randomInput(v->type(), 3, v->name()));
  const std::vector<ref::RefTensor> want = ref::evaluateGraph(original, inputs);
  const std::vector<ref::RefTensor> got = ref::evaluateGraph(rewritten, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].shape, want[i].shape);
    for (size_t k = 0; k < want[i].values.size(); ++k)
      EXPECT_NEAR(got[i].values[k], want[i].values[k], 1e-12)
          << "output " << i << "[" << k << "]";
  }
}

TEST(OnnxLlmPatterns, ADecodeStepReadsThePastInPlace) {
  std::unique_ptr<Graph> original = parse(decodeGraph(false));
  ASSERT_TRUE(original);
  std::unique_ptr<Graph> g = original->clone();
  const LlmPatternCounts counts = fuseLlmPatterns(*g);
  eraseUnused(*g);
  expectVerifies(*g);
  EXPECT_EQ(counts.repeats, 2);
  EXPECT_EQ(counts.attention, 0);
  EXPECT_EQ(countOps(*g, OpKind::Host), 0);
  // Nothing copies the cache: the past keys and values are read by the
  // products only, the concat joins the scores [1, 2, 4, 5 + 2].
  for (const char *name : {"past_k", "past_v", "new_k", "new_v"})
    for (const OpUse &u : g->usesOf(g->findValue(name)))
      EXPECT_EQ(u.op->kind(), OpKind::Matmul)
          << name << " read by " << u.op->name();
  const Op *join = g->findOp("scores.join");
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->result()->type().str(), "f32[1, 2, 4, 7]");
  // The keys are the product's second operand, read transposed (the layout
  // pass then has the kernel turn them in LX: turnsBInKernel).
  const Op *scores = g->usesOf(g->findValue("past_k")).front().op;
  EXPECT_EQ(scores->operand(1)->name(), "past_k");
  EXPECT_TRUE(scores->boolAttr("transpose_b"));
  expectSameNumbers(*original, *g);
}

TEST(OnnxLlmPatterns, PresentOutputsKeepTheirConcat) {
  std::unique_ptr<Graph> original = parse(decodeGraph(true));
  ASSERT_TRUE(original);
  std::unique_ptr<Graph> g = original->clone();
  EXPECT_EQ(fuseLlmPatterns(*g).repeats, 2);
  eraseUnused(*g);
  expectVerifies(*g);
  EXPECT_EQ(countOps(*g, OpKind::Host), 0);
  // The outputs are the concats, read by no op: the products read the past
  // and the new keys and values apart, as without present outputs (which
  // lets append-outputs make each output the new token's append).
  EXPECT_EQ(g->outputs()[1]->definingOp()->kind(), OpKind::Concat);
  EXPECT_TRUE(g->usesOf(g->outputs()[1]).empty());
  for (const char *name : {"past_k", "past_v", "new_k", "new_v"})
    for (const OpUse &u : g->usesOf(g->findValue(name)))
      EXPECT_TRUE(u.op->kind() == OpKind::Matmul ||
                  u.op->kind() == OpKind::Concat)
          << name << " read by " << u.op->name();
  expectSameNumbers(*original, *g);
}

TEST(OnnxLlmPatterns, SlicesTilingAnAxisBecomeOneSplit) {
  std::unique_ptr<Graph> original =
      parse("graph @s {\n"
            "  input %x : f32[2, 3, 10]\n"
            "  %hi = host @hi(%x) {attrs = "
            "\"{\\\"axes\\\":[-1],\\\"ends\\\":[9223372036854775807],"
            "\\\"starts\\\":[4]}\", op = \"Slice\"} : f32[2, 3, 6]\n"
            "  %lo = host @lo(%x) {attrs = "
            "\"{\\\"axes\\\":[2],\\\"ends\\\":[4],\\\"starts\\\":[0]}\", op = "
            "\"Slice\"} : f32[2, 3, 4]\n"
            "  %n = neg @n(%hi) : f32[2, 3, 6]\n"
            "  %one = host @one(%x) {attrs = "
            "\"{\\\"axes\\\":[1],\\\"ends\\\":[2],\\\"starts\\\":[1]}\", op = "
            "\"Slice\"} : f32[2, 1, 10]\n"
            "  return %lo, %n, %one\n"
            "}\n");
  ASSERT_TRUE(original);
  std::unique_ptr<Graph> g = original->clone();
  EXPECT_EQ(fuseLlmPatterns(*g).slices, 2);
  expectVerifies(*g);
  // The two slices of the last axis are one split whose results keep their
  // names; a lone slice stays on the host.
  const Op *split = g->outputs()[0]->definingOp();
  ASSERT_EQ(split->kind(), OpKind::Split);
  EXPECT_EQ(g->outputs()[0]->name(), "lo");
  EXPECT_EQ(split->intsAttr("sizes"), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(g->findValue("hi")->definingOp(), split);
  EXPECT_EQ(g->outputs()[2]->definingOp()->kind(), OpKind::Host);
  expectSameNumbers(*original, *g);
}

TEST(OnnxLlmPatterns, HostOpsOfConstantsAreFolded) {
  // cos_cached[position_ids] with constant positions: the rows of
  // positions 2 and 0 of a table of 3, computed once.
  std::unique_ptr<Graph> original =
      parse("graph @g {\n"
            "  input %x : f32[2, 4]\n"
            "  const %table : f32[3, 4] = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, "
            "6.0, 7.0, 8.0, 9.0, 10.0, 11.0]>\n"
            "  %rows = host @gather(%table) {attrs = "
            "\"{\\\"axis\\\":0,\\\"indices\\\":[2,0],\\\"indices_shape\\\":[2]}"
            "\", op = \"Gather\"} : f32[2, 4]\n"
            "  %y = mul @y(%x, %rows) : f32[2, 4]\n"
            "  return %y\n"
            "}\n");
  ASSERT_TRUE(original);
  std::unique_ptr<Graph> g = original->clone();
  EXPECT_EQ(fuseLlmPatterns(*g).folded, 1);
  expectVerifies(*g);
  EXPECT_EQ(countOps(*g, OpKind::Host), 0);
  const Value *rows = g->findOp("y")->operand(1);
  ASSERT_TRUE(rows->isConstant());
  EXPECT_EQ(rows->constantData().toDoubles(),
            (std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3}));
  expectSameNumbers(*original, *g);
}

} // namespace
} // namespace spyre::compiler
