// The layout pass: default layouts, the matmul stick rules, relayout
// insertion and sharing, the dtype options, idempotence, and the
// postcondition catching layouts that break the rules.
#include "PassTestUtil.h"

#include "compiler/ir/Printer.h"
#include "compiler/passes/Layout.h"
#include "compiler/plan/KernelChoice.h"

#include <gtest/gtest.h>

namespace spyre::compiler::test {
namespace {

/// The layout annotation of value `name` as text.
std::string layoutText(const Graph &g, const std::string &name) {
  const Value *v = g.findValue(name);
  if (!v)
    return "no value " + name;
  const Attribute *a = v->annotations().find(kLayoutAnnotation);
  return a ? a->str() : "no layout";
}

std::string layout(std::vector<int64_t> deviceShape,
                   std::vector<int64_t> dimMap, const char *dtype,
                   int64_t stickDim) {
  return DeviceLayout{*parseDeviceDType(dtype), stickDim,
                      std::move(deviceShape), std::move(dimMap)}
      .str();
}

int64_t statOf(const std::string &report, const std::string &name) {
  size_t at = report.find("  " + name + " ");
  return at == std::string::npos
             ? -1
             : std::stoll(report.substr(at + name.size() + 2));
}

bool postconditionHolds(const Graph &g, std::string &messages) {
  DiagnosticEngine diags;
  PassOptions options(layoutPass());
  PassContext context(layoutPass(), options, hw::builtinConfig(), diags);
  DiagnosticEngine check;
  bool ok = layoutPass().postcondition(g, context, check);
  messages = check.str();
  return ok;
}

TEST(Layout, ValuesAreStickedOnTheirLastDimensionInDl16) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[3, 100]
  const %s : f32[] = dense<[0.5]>
  %y = mul @m(%x, %s) : f32[3, 100]
  return %y
})");
  std::string stats = runPasses(*g, "layout");
  EXPECT_EQ(layoutText(*g, "x"), layout({2, 3, 64}, {1, 0, 1}, "dl16", 1));
  EXPECT_EQ(layoutText(*g, "y"), layout({2, 3, 64}, {1, 0, 1}, "dl16", 1));
  EXPECT_EQ(layoutText(*g, "s"), layout({1, 64}, {-1, -1}, "dl16", -1));
  EXPECT_EQ(statOf(stats, "values-laid-out"), 3);
  // 84 padding elements for each [3, 100] value, 63 for the scalar.
  EXPECT_EQ(statOf(stats, "padded-elements"), 84 + 84 + 63);
  EXPECT_EQ(statOf(stats, "relayouts-inserted"), 0);
}

TEST(Layout, MatmulOperandStickedOnTheWrongDimensionGetsOneSharedRelayout) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %q : f32[2, 80, 16]
  input %k : f32[2, 80, 16]
  %s = matmul @mm(%q, %k) {transpose_b = true} : f32[2, 80, 80]
  %t = matmul @mm2(%q, %k) {transpose_b = true} : f32[2, 80, 80]
  %u = add @sum(%s, %t) : f32[2, 80, 80]
  %v = add @k.use(%k, %k) : f32[2, 80, 16]
  return %u, %v
})");
  std::string stats = runPasses(*g, "layout");
  // b = k is [..., N, K] with transpose_b and the products have more rows
  // than one tile (80): it must be sticked on N, the dimension before last;
  // the add still reads k as it is.
  std::string sticked2 = layout({1, 2, 80, 64}, {2, 0, 1, 2}, "dl16", 2);
  std::string sticked1 = layout({2, 2, 16, 64}, {1, 0, 2, 1}, "dl16", 1);
  std::string scores = layout({2, 2, 80, 64}, {2, 0, 1, 2}, "dl16", 2);
  EXPECT_EQ(printGraph(*g), R"(graph @g {
  input %q : f32[2, 80, 16] #{layout = )" +
                                sticked2 + R"(}
  input %k : f32[2, 80, 16] #{layout = )" +
                                sticked2 + R"(}
  %k.relayout = relayout @k.relayout(%k) : f32[2, 80, 16] #{layout = )" +
                                sticked1 + R"(}
  %s = matmul @mm(%q, %k.relayout) {transpose_a = false, transpose_b = true} : f32[2, 80, 80] #{layout = )" +
                                scores + R"(}
  %t = matmul @mm2(%q, %k.relayout) {transpose_a = false, transpose_b = true} : f32[2, 80, 80] #{layout = )" +
                                scores + R"(}
  %u = add @sum(%s, %t) : f32[2, 80, 80] #{layout = )" +
                                scores + R"(}
  %v = add @k.use(%k, %k) : f32[2, 80, 16] #{layout = )" +
                                sticked2 + R"(}
  return %u, %v
}
)");
  EXPECT_EQ(statOf(stats, "relayouts-inserted"), 1);
}

TEST(Layout, AFewRowsReadAComputedTransposedOperandAsStored) {
  // Decode's q K^T: 4 rows per product, the keys a graph input. The kernel
  // turns each block of k in LX (turnsBInKernel), so k keeps its layout; a
  // constant B with as few rows still takes the transposed layout, once,
  // when it is loaded.
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %q : f32[2, 4, 4]
  input %k : f32[2, 80, 4]
  const %w : f32[2, 4] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]>
  %s = matmul @mm(%q, %k) {transpose_b = true} : f32[2, 4, 80]
  %y = matmul @fc(%q, %w) {transpose_b = true} : f32[2, 4, 2]
  return %s, %y
})");
  std::string stats = runPasses(*g, "layout");
  EXPECT_EQ(layoutText(*g, "k"),
            layout({1, 2, 80, 64}, {2, 0, 1, 2}, "dl16", 2));
  EXPECT_EQ(layoutText(*g, "w"), layout({1, 4, 64}, {0, 1, 0}, "dl16", 0));
  EXPECT_EQ(statOf(stats, "relayouts-inserted"), 0);
  EXPECT_TRUE(turnsBInKernel(*g->findOp("mm")));
  EXPECT_TRUE(readsBTurned(*g->findOp("mm")));
  EXPECT_FALSE(turnsBInKernel(*g->findOp("fc")));
  EXPECT_FALSE(readsBTurned(*g->findOp("fc")));
}

TEST(Layout, TransposedAOperandIsStickedOnK) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %a : f32[8, 3]
  input %b : f32[8, 5]
  %y = matmul @mm(%a, %b) {transpose_a = true} : f32[3, 5]
  return %y
})");
  std::string stats = runPasses(*g, "layout");
  // a is [K, M] = [8, 3]: sticked on K = dimension 0.
  EXPECT_EQ(layoutText(*g, "a.relayout"),
            layout({1, 3, 64}, {0, 1, 0}, "dl16", 0));
  EXPECT_EQ(layoutText(*g, "b"), layout({1, 8, 64}, {1, 0, 1}, "dl16", 1));
  EXPECT_EQ(statOf(stats, "relayouts-inserted"), 1);
}

TEST(Layout, WeightsTakeTheLayoutTheirMatmulNeeds) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[2, 3]
  const %w : f32[4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %y = matmul @fc(%x, %w) {transpose_b = true} : f32[2, 4]
  return %y
})");
  std::string stats = runPasses(*g, "layout");
  // w is [N, K] = [4, 3] read with transpose_b: sticked on N = dimension 0.
  EXPECT_EQ(layoutText(*g, "w"), layout({1, 3, 64}, {0, 1, 0}, "dl16", 0));
  EXPECT_EQ(statOf(stats, "relayouts-inserted"), 0);
}

TEST(Layout, F32DefaultStillFeedsTheMatrixUnitDl16) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[2, 3]
  const %w : f32[3, 4] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %y = matmul @fc(%x, %w) : f32[2, 4]
  %z = relu @r(%y) : f32[2, 4]
  return %z
})");
  std::string stats = runPasses(*g, "layout{default-dtype=f32}");
  EXPECT_EQ(layoutText(*g, "x"), layout({1, 2, 32}, {1, 0, 1}, "f32", 1));
  EXPECT_EQ(layoutText(*g, "x.relayout"),
            layout({1, 2, 64}, {1, 0, 1}, "dl16", 1));
  EXPECT_EQ(layoutText(*g, "w"), layout({1, 3, 64}, {1, 0, 1}, "dl16", 1));
  EXPECT_EQ(layoutText(*g, "y"), layout({1, 2, 32}, {1, 0, 1}, "f32", 1));
  EXPECT_EQ(layoutText(*g, "z"), layout({1, 2, 32}, {1, 0, 1}, "f32", 1));
  EXPECT_EQ(statOf(stats, "relayouts-inserted"), 1);
}

TEST(Layout, F32OpsKeepTheirResultsInF32) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[2, 40]
  input %v : f32[40, 8]
  %p = softmax @sm(%x) : f32[2, 40]
  %q = relu @r(%p) : f32[2, 40]
  %c = matmul @mm(%p, %v) : f32[2, 8]
  return %q, %c
})");
  std::string stats = runPasses(*g, "layout{f32-ops=softmax,layernorm}");
  EXPECT_EQ(layoutText(*g, "x"), layout({1, 2, 64}, {1, 0, 1}, "dl16", 1));
  EXPECT_EQ(layoutText(*g, "p"), layout({2, 2, 32}, {1, 0, 1}, "f32", 1));
  // relu reads FP32 as it is; the PT needs DL16.
  EXPECT_EQ(layoutText(*g, "q"), layout({1, 2, 64}, {1, 0, 1}, "dl16", 1));
  EXPECT_EQ(layoutText(*g, "p.relayout"),
            layout({1, 2, 64}, {1, 0, 1}, "dl16", 1));
  EXPECT_EQ(g->findOp("mm")->operand(0)->name(), "p.relayout");
  EXPECT_EQ(g->findOp("r")->operand(0)->name(), "p");
  EXPECT_EQ(statOf(stats, "relayouts-inserted"), 1);
}

TEST(Layout, RunningTwiceChangesNothing) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %a : f32[8, 3]
  input %b : f32[8, 5]
  %y = matmul @mm(%a, %b) {transpose_a = true} : f32[3, 5]
  return %y
})");
  runPasses(*g, "layout");
  std::string once = printGraph(*g);
  std::string stats = runPasses(*g, "layout");
  EXPECT_EQ(printGraph(*g), once);
  EXPECT_EQ(statOf(stats, "relayouts-inserted"), 0);
}

TEST(Layout, PostconditionCatchesABrokenStickRule) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[3, 100]
  %y = relu @r(%x) : f32[3, 100]
  return %y
})");
  runPasses(*g, "layout");
  std::string messages;
  ASSERT_TRUE(postconditionHolds(*g, messages)) << messages;
  g->findValue("y")->annotations().set(
      kLayoutAnnotation,
      DeviceLayout{isa::DType::Dl16, 1, {1, 3, 64}, {1, 0, 1}}.toAttribute());
  EXPECT_FALSE(postconditionHolds(*g, messages));
  EXPECT_EQ(messages,
            "test.ir:3:3: error: value %y: device_shape [1, 3, 64] should be "
            "[2, 3, 64] by the stick rule\n");
  g->findValue("y")->annotations().erase(kLayoutAnnotation);
  EXPECT_FALSE(postconditionHolds(*g, messages));
  EXPECT_EQ(messages, "test.ir:3:3: error: value %y: no layout\n");
}

TEST(Layout, PostconditionCatchesAConsumerReadingTheWrongLayout) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[3, 100]
  %y = relu @r(%x) : f32[3, 100]
  return %y
})");
  runPasses(*g, "layout");
  // A valid layout, but sticked on the rows: relu needs the last dimension.
  g->findValue("x")->annotations().set(
      kLayoutAnnotation,
      stickedOn({3, 100}, isa::DType::Dl16, 0).toAttribute());
  std::string messages;
  EXPECT_FALSE(postconditionHolds(*g, messages));
  EXPECT_EQ(messages, "test.ir:3:3: error: op 'r' (relu): operand 0 %x has "
                      "layout {device_shape = [1, "
                      "100, 64], dim_map = [0, 1, 0], dtype = \"dl16\", "
                      "stick_dim = 0}, but relu "
                      "needs {device_shape = [2, 3, 64], dim_map = [1, 0, 1], "
                      "dtype = \"dl16\", "
                      "stick_dim = 1}\n");
}

TEST(Layout, RequiredLayoutsFollowTheMatmulRules) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %a : f32[2, 5, 70]
  input %b : f32[90, 70]
  %y = matmul @mm(%a, %b) {transpose_b = true} : f32[2, 5, 90]
  return %y
})");
  const Op &mm = *g->findOp("mm");
  DeviceLayout f32Last = stickedOn({2, 5, 70}, isa::DType::Fp32, 2);
  // K = 70 is two DL16 sticks (58 padding elements in the second).
  EXPECT_EQ(requiredOperandLayout(mm, 0, f32Last).str(),
            layout({2, 2, 5, 64}, {2, 0, 1, 2}, "dl16", 2));
  // Ten rows (A's batch dims fold into M): b is read as stored.
  DeviceLayout bLast = stickedOn({90, 70}, isa::DType::Dl16, 1);
  EXPECT_EQ(requiredOperandLayout(mm, 1, bLast), bLast);
  // 130 rows: b sticked on N, the dimension before last.
  std::unique_ptr<Graph> tall = parseIr(R"(graph @g {
  input %a : f32[2, 65, 70]
  input %b : f32[90, 70]
  %y = matmul @mm(%a, %b) {transpose_b = true} : f32[2, 65, 90]
  return %y
})");
  EXPECT_EQ(requiredOperandLayout(*tall->findOp("mm"), 1, bLast).str(),
            layout({2, 70, 64}, {0, 1, 0}, "dl16", 0));
}

} // namespace
} // namespace spyre::compiler::test
