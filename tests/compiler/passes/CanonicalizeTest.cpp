// The canonicalize pass, rule by rule: IR text in, the expected IR text out,
// the statistic of the rule, and the reference evaluator giving the same
// outputs before and after on random inputs.
#include "PassTestUtil.h"

#include "compiler/ir/Printer.h"
#include "compiler/passes/Canonicalize.h"

#include <gtest/gtest.h>

namespace spyre::compiler::test {
namespace {

struct Canonicalized {
  std::string ir;
  std::string stats;
};

/// Canonicalizes `text`, checks that the outputs did not change (within
/// `ulps`), and returns the printed result and the statistics report.
Canonicalized canonicalize(const std::string &text, int64_t ulps = 0) {
  std::unique_ptr<Graph> g = parseIr(text);
  if (!g)
    return {};
  std::vector<ref::RefTensor> before = evaluateOnRandomInputs(*g, 7);
  std::string stats = runPasses(*g, "canonicalize");
  expectSameOutputs(before, evaluateOnRandomInputs(*g, 7), ulps);
  return {printGraph(*g), stats};
}

/// The count of one statistic in a report line `  name  count  description`.
int64_t stat(const std::string &report, const std::string &name) {
  size_t at = report.find("  " + name + " ");
  if (at == std::string::npos)
    return -1;
  return std::stoll(report.substr(at + name.size() + 2));
}

TEST(Canonicalize, LinearBecomesMatmulWithTransposedWeightPlusBias) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  const %w : f32[4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  const %b : f32[4] = dense<[0.5, -1.0, 2.0, 0.25]>
  %y = linear @fc(%x, %w, %b) : f32[2, 4]
  %z = relu @act(%y) : f32[2, 4]
  return %z
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[2, 3]
  const %w : f32[4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  const %b : f32[4] = dense<[0.5, -1.0, 2.0, 0.25]>
  %y.matmul = matmul @fc(%x, %w) {transpose_a = false, transpose_b = true} : f32[2, 4]
  %y = add @fc.bias(%y.matmul, %b) : f32[2, 4]
  %z = relu @act(%y) : f32[2, 4]
  return %z
}
)");
  EXPECT_EQ(stat(c.stats, "linear-to-matmul"), 1);
}

TEST(Canonicalize, LinearWithoutBiasIsOneMatmulKeepingTheOutputName) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[2, 5, 3]
  const %w : f32[2, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  %y = linear @fc(%x, %w) : f32[2, 5, 2]
  return %y
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[2, 5, 3]
  const %w : f32[2, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  %y = matmul @fc(%x, %w) {transpose_a = false, transpose_b = true} : f32[2, 5, 2]
  return %y
}
)");
}

TEST(Canonicalize, LinearOfAVectorGoesThroughARow) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[3]
  const %w : f32[2, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  const %b : f32[2] = dense<[0.5, -1.0]>
  %y = linear @fc(%x, %w, %b) : f32[2]
  return %y
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[3]
  const %w : f32[2, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  const %b : f32[2] = dense<[0.5, -1.0]>
  %y.in = reshape @fc.in(%x) {shape = [1, 3]} : f32[1, 3]
  %y.matmul = matmul @fc(%y.in, %w) {transpose_a = false, transpose_b = true} : f32[1, 2]
  %y.bias = add @fc.bias(%y.matmul, %b) : f32[1, 2]
  %y = reshape @fc.out(%y.bias) {shape = [2]} : f32[2]
  return %y
}
)");
}

TEST(Canonicalize, TransposedConstantFoldsIntoTheMatmulAttribute) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  input %a : f32[3, 2]
  const %w : f32[4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %wt = transpose @t(%w) {perm = [1, 0]} : f32[3, 4]
  %y = matmul @mm(%x, %wt) : f32[2, 4]
  %at = transpose @ta(%a) {perm = [1, 0]} : f32[2, 3]
  %z = matmul @mm2(%at, %wt) : f32[2, 4]
  return %y, %z
})");
  // The transpose of an activation stays: folding it would only move the
  // work into a relayout.
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[2, 3]
  input %a : f32[3, 2]
  const %w : f32[4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %y = matmul @mm(%x, %w) {transpose_a = false, transpose_b = true} : f32[2, 4]
  %at = transpose @ta(%a) {perm = [1, 0]} : f32[2, 3]
  %z = matmul @mm2(%at, %w) {transpose_a = false, transpose_b = true} : f32[2, 4]
  return %y, %z
}
)");
  EXPECT_EQ(stat(c.stats, "transpose-folded"), 2);
  EXPECT_EQ(stat(c.stats, "dead-ops-erased"), 1);
}

TEST(Canonicalize, TransposeOfABatchedConstantFlipsASetAttributeBack) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[1, 2, 4]
  const %w : f32[1, 4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %wt = transpose @t(%w) {perm = [0, 2, 1]} : f32[1, 3, 4]
  %y = matmul @mm(%x, %wt) {transpose_b = true} : f32[1, 2, 3]
  return %y
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[1, 2, 4]
  const %w : f32[1, 4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %y = matmul @mm(%x, %w) {transpose_a = false, transpose_b = false} : f32[1, 2, 3]
  return %y
}
)");
}

TEST(Canonicalize, TransposeOtherThanTheLastTwoDimsStays) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[3, 2, 2]
  const %w : f32[2, 3, 2] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %wt = transpose @t(%w) {perm = [1, 0, 2]} : f32[3, 2, 2]
  %y = matmul @mm(%x, %wt) : f32[3, 2, 2]
  return %y
})");
  EXPECT_NE(c.ir.find("transpose @t"), std::string::npos) << c.ir;
  EXPECT_EQ(stat(c.stats, "transpose-folded"), 0);
}

TEST(Canonicalize, ViewChainsThatComeBackDisappear) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[4, 6]
  %a = reshape @r1(%x) {shape = [2, 12]} : f32[2, 12]
  %b = reshape @r2(%a) {shape = [4, 6]} : f32[4, 6]
  %c = unsqueeze @u(%b) {axes = [0]} : f32[1, 4, 6]
  %d = squeeze @s(%c) {axes = [0]} : f32[4, 6]
  %e = relu @act(%d) : f32[4, 6]
  %f = reshape @same(%e) {shape = [4, -1]} : f32[4, 6]
  %y = neg @n(%f) : f32[4, 6]
  return %y
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[4, 6]
  %e = relu @act(%x) : f32[4, 6]
  %y = neg @n(%e) : f32[4, 6]
  return %y
}
)");
  EXPECT_EQ(stat(c.stats, "views-cancelled"), 3);
  EXPECT_EQ(stat(c.stats, "dead-ops-erased"), 5);
}

TEST(Canonicalize, OtherViewChainsBecomeOneReshape) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[4, 6]
  %a = reshape @r1(%x) {shape = [2, 12]} : f32[2, 12]
  %b = unsqueeze @u(%a) {axes = [1]} : f32[2, 1, 12]
  %c = reshape @r2(%b) {shape = [-1, 3]} : f32[8, 3]
  %d = unsqueeze @u2(%c) {axes = [0]} : f32[1, 8, 3]
  return %d
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[4, 6]
  %d = reshape @u2(%x) {shape = [1, 8, 3]} : f32[1, 8, 3]
  return %d
}
)");
  EXPECT_EQ(stat(c.stats, "views-merged"), 3);
}

TEST(Canonicalize, OutputsKeepTheirNames) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[4, 6]
  %a = reshape @r1(%x) {shape = [24]} : f32[24]
  %b = reshape @r2(%a) {shape = [4, 6]} : f32[4, 6]
  %p = pow @p(%x) {exponent = 1} : f32[4, 6]
  %n1 = neg @n1(%x) : f32[4, 6]
  %n2 = neg @n2(%n1) : f32[4, 6]
  return %b, %p, %n2
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[4, 6]
  %b = reshape @r2(%x) {shape = [4, 6]} : f32[4, 6]
  %p = pow @p(%x) {exponent = 1.0} : f32[4, 6]
  %n1 = neg @n1(%x) : f32[4, 6]
  %n2 = neg @n2(%n1) : f32[4, 6]
  return %b, %p, %n2
}
)");
}

TEST(Canonicalize, PowWithSpecialExponentsBecomesItsOp) {
  // Inputs are in [-1, 1]: sqrt and rsqrt of the negative ones are NaN on
  // both sides. pow and these ops are each within half an ulp of the exact
  // value, so they may differ by one ulp.
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[3, 5]
  %p1 = pow @p1(%x) {exponent = 1.0} : f32[3, 5]
  %p2 = pow @p2(%p1) {exponent = 2.0} : f32[3, 5]
  %p3 = pow @p3(%x) {exponent = 0.5} : f32[3, 5]
  %p4 = pow @p4(%x) {exponent = -0.5} : f32[3, 5]
  %p5 = pow @p5(%x) {exponent = -1.0} : f32[3, 5]
  %p6 = pow @p6(%x) {exponent = 3.0} : f32[3, 5]
  return %p2, %p3, %p4, %p5, %p6
})",
                                 1);
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[3, 5]
  %p2 = mul @p2(%x, %x) : f32[3, 5]
  %p3 = sqrt @p3(%x) : f32[3, 5]
  %p4 = rsqrt @p4(%x) : f32[3, 5]
  %p5 = reciprocal @p5(%x) : f32[3, 5]
  %p6 = pow @p6(%x) {exponent = 3.0} : f32[3, 5]
  return %p2, %p3, %p4, %p5, %p6
}
)");
  for (const char *s : {"pow-removed", "pow-to-mul", "pow-to-sqrt",
                        "pow-to-rsqrt", "pow-to-reciprocal"})
    EXPECT_EQ(stat(c.stats, s), 1) << s;
}

TEST(Canonicalize, DoubleNegationDisappears) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[3]
  %a = neg @a(%x) : f32[3]
  %b = neg @b(%a) : f32[3]
  %c = neg @c(%b) : f32[3]
  %d = exp @d(%c) : f32[3]
  %e = neg @e(%d) : f32[3]
  %f = neg @f(%e) : f32[3]
  %g = abs @g(%f) : f32[3]
  return %g
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[3]
  %c = neg @c(%x) : f32[3]
  %d = exp @d(%c) : f32[3]
  %g = abs @g(%d) : f32[3]
  return %g
}
)");
  EXPECT_EQ(stat(c.stats, "double-neg-removed"), 2);
}

// The float32 constants of the decomposition are 1e-8 away from sqrt 2 and
// 1 / sqrt 2, so the fused gelu differs from it by a few parts in 1e8.
constexpr int64_t kErfConstantUlps = int64_t(1) << 28;

TEST(Canonicalize, ErfGeluInEveryGroupingBecomesGelu) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  const %half : f32[] = dense<[0.5]>
  const %one : f32[] = dense<[1.0]>
  const %sqrt2 : f32[] = dense<[1.4142135]>
  const %rsqrt2 : f32[1] = dense<[0.70710677]>
  // (x * 0.5) * (1 + erf(x / sqrt 2)): torch.onnx's export of nn.GELU.
  %a1 = div @d1(%x, %sqrt2) : f32[2, 3]
  %e1 = erf @e1(%a1) : f32[2, 3]
  %p1 = add @p1(%e1, %one) : f32[2, 3]
  %h1 = mul @h1(%x, %half) : f32[2, 3]
  %y1 = mul @g1(%h1, %p1) : f32[2, 3]
  // 0.5 last, 1 / sqrt 2 as a product, operands swapped.
  %a2 = mul @d2(%rsqrt2, %x) : f32[2, 3]
  %e2 = erf @e2(%a2) : f32[2, 3]
  %p2 = add @p2(%one, %e2) : f32[2, 3]
  %m2 = mul @m2(%p2, %x) : f32[2, 3]
  %y2 = mul @g2(%m2, %half) : f32[2, 3]
  // x * ((1 + erf(x * 0.70710677)) * 0.5)
  %a3 = mul @d3(%x, %rsqrt2) : f32[2, 3]
  %e3 = erf @e3(%a3) : f32[2, 3]
  %p3 = add @p3(%e3, %one) : f32[2, 3]
  %m3 = mul @m3(%half, %p3) : f32[2, 3]
  %y3 = mul @g3(%x, %m3) : f32[2, 3]
  return %y1, %y2, %y3
})",
                                 kErfConstantUlps);
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[2, 3]
  const %half : f32[] = dense<[0.5]>
  const %one : f32[] = dense<[1.0]>
  const %sqrt2 : f32[] = dense<[1.4142135]>
  const %rsqrt2 : f32[1] = dense<[0.70710677]>
  %y1 = gelu @g1(%x) {approximate = "none"} : f32[2, 3]
  %y2 = gelu @g2(%x) {approximate = "none"} : f32[2, 3]
  %y3 = gelu @g3(%x) {approximate = "none"} : f32[2, 3]
  return %y1, %y2, %y3
}
)");
  EXPECT_EQ(stat(c.stats, "erf-gelu-fused"), 3);
  EXPECT_EQ(stat(c.stats, "dead-ops-erased"), 12);
}

TEST(Canonicalize, ErfGeluLookalikesStay) {
  // Each differs from the pattern in one way: a step also read elsewhere,
  // 0.6 for 0.5, sqrt 3 for sqrt 2, erf of another tensor, and a scalar
  // constant of shape [1] that would broadcast a scalar x to [1].
  const std::string text = R"(graph @g {
  input %x : f32[4]
  input %z : f32[4]
  input %s : f32[]
  const %half : f32[] = dense<[0.5]>
  const %half1 : f32[1] = dense<[0.5]>
  const %point6 : f32[] = dense<[0.6]>
  const %one : f32[] = dense<[1.0]>
  const %sqrt2 : f32[] = dense<[1.4142135]>
  const %sqrt3 : f32[] = dense<[1.7320508]>
  %a1 = div @d1(%x, %sqrt2) : f32[4]
  %e1 = erf @e1(%a1) : f32[4]
  %p1 = add @p1(%e1, %one) : f32[4]
  %h1 = mul @h1(%x, %half) : f32[4]
  %y1 = mul @g1(%h1, %p1) : f32[4]
  %h2 = mul @h2(%x, %point6) : f32[4]
  %y2 = mul @g2(%h2, %p1) : f32[4]
  %a3 = div @d3(%x, %sqrt3) : f32[4]
  %e3 = erf @e3(%a3) : f32[4]
  %p3 = add @p3(%e3, %one) : f32[4]
  %h3 = mul @h3(%x, %half) : f32[4]
  %y3 = mul @g3(%h3, %p3) : f32[4]
  %a4 = div @d4(%z, %sqrt2) : f32[4]
  %e4 = erf @e4(%a4) : f32[4]
  %p4 = add @p4(%e4, %one) : f32[4]
  %h4 = mul @h4(%x, %half) : f32[4]
  %y4 = mul @g4(%h4, %p4) : f32[4]
  %a5 = div @d5(%s, %sqrt2) : f32[]
  %e5 = erf @e5(%a5) : f32[]
  %p5 = add @p5(%e5, %one) : f32[]
  %h5 = mul @h5(%s, %half1) : f32[1]
  %y5 = mul @g5(%h5, %p5) : f32[1]
  return %y1, %y2, %y3, %y4, %y5
}
)";
  Canonicalized c = canonicalize(text);
  EXPECT_EQ(c.ir, text);
  EXPECT_EQ(stat(c.stats, "erf-gelu-fused"), 0);
}

// The written-out tanh form carries sqrt(2 / pi) as a float32 constant,
// 1e-7 away from the value the fused gelu uses: a few parts in 1e7.
constexpr int64_t kTanhConstantUlps = int64_t(1) << 31;

TEST(Canonicalize, TanhGeluAsExportersWriteItBecomesGelu) {
  // y1 as torch.onnx writes GELU(approximate="tanh"): 0.5 * (x * (1 +
  // tanh(beta * (x + kappa * (x * (x * x)))))); y2 groups the product the
  // other way and cubes with pow; y3 has 0.05 for kappa and stays.
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  const %half : f32[] = dense<[0.5]>
  const %one : f32[] = dense<[1.0]>
  const %beta : f32[] = dense<[0.7978845]>
  const %kappa : f32[] = dense<[0.044715]>
  const %notkappa : f32[] = dense<[0.05]>
  %sq1 = mul @sq1(%x, %x) : f32[2, 3]
  %cb1 = mul @cb1(%x, %sq1) : f32[2, 3]
  %k1 = mul @k1(%kappa, %cb1) : f32[2, 3]
  %s1 = add @s1(%x, %k1) : f32[2, 3]
  %i1 = mul @i1(%beta, %s1) : f32[2, 3]
  %t1 = tanh @t1(%i1) : f32[2, 3]
  %p1 = add @p1(%one, %t1) : f32[2, 3]
  %m1 = mul @m1(%x, %p1) : f32[2, 3]
  %y1 = mul @g1(%half, %m1) : f32[2, 3]
  %cb2 = pow @cb2(%x) {exponent = 3.0} : f32[2, 3]
  %k2 = mul @k2(%cb2, %kappa) : f32[2, 3]
  %s2 = add @s2(%k2, %x) : f32[2, 3]
  %i2 = mul @i2(%s2, %beta) : f32[2, 3]
  %t2 = tanh @t2(%i2) : f32[2, 3]
  %p2 = add @p2(%t2, %one) : f32[2, 3]
  %h2 = mul @h2(%x, %half) : f32[2, 3]
  %y2 = mul @g2(%h2, %p2) : f32[2, 3]
  %cb3 = pow @cb3(%x) {exponent = 3.0} : f32[2, 3]
  %k3 = mul @k3(%cb3, %notkappa) : f32[2, 3]
  %s3 = add @s3(%k3, %x) : f32[2, 3]
  %i3 = mul @i3(%s3, %beta) : f32[2, 3]
  %t3 = tanh @t3(%i3) : f32[2, 3]
  %p3 = add @p3(%t3, %one) : f32[2, 3]
  %h3 = mul @h3(%x, %half) : f32[2, 3]
  %y3 = mul @g3(%h3, %p3) : f32[2, 3]
  return %y1, %y2, %y3
}
)",
                                 kTanhConstantUlps);
  EXPECT_EQ(stat(c.stats, "tanh-gelu-fused"), 2);
  EXPECT_EQ(stat(c.stats, "erf-gelu-fused"), 0);
  EXPECT_NE(c.ir.find("%y1 = gelu @g1(%x) {approximate = \"tanh\"}"),
            std::string::npos)
      << c.ir;
  EXPECT_NE(c.ir.find("%y2 = gelu @g2(%x) {approximate = \"tanh\"}"),
            std::string::npos)
      << c.ir;
  EXPECT_NE(c.ir.find("%y3 = mul @g3(%h3, %p3)"), std::string::npos) << c.ir;
}

TEST(Canonicalize, SiluInEitherOrderBecomesSilu) {
  // y1 and y2 are x * sigmoid(x); y3 multiplies by the sigmoid of another
  // tensor and y4's sigmoid is also an output, so both stay.
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  input %z : f32[2, 3]
  %s1 = sigmoid @s1(%x) : f32[2, 3]
  %y1 = mul @m1(%x, %s1) : f32[2, 3]
  %s2 = sigmoid @s2(%x) : f32[2, 3]
  %y2 = mul @m2(%s2, %x) : f32[2, 3]
  %s3 = sigmoid @s3(%z) : f32[2, 3]
  %y3 = mul @m3(%x, %s3) : f32[2, 3]
  %s4 = sigmoid @s4(%x) : f32[2, 3]
  %y4 = mul @m4(%x, %s4) : f32[2, 3]
  return %y1, %y2, %y3, %y4, %s4
}
)");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[2, 3]
  input %z : f32[2, 3]
  %y1 = silu @m1(%x) : f32[2, 3]
  %y2 = silu @m2(%x) : f32[2, 3]
  %s3 = sigmoid @s3(%z) : f32[2, 3]
  %y3 = mul @m3(%x, %s3) : f32[2, 3]
  %s4 = sigmoid @s4(%x) : f32[2, 3]
  %y4 = mul @m4(%x, %s4) : f32[2, 3]
  return %y1, %y2, %y3, %y4, %s4
}
)");
  EXPECT_EQ(stat(c.stats, "silu-fused"), 2);
}

TEST(Canonicalize, ScaledMaskedSoftmaxBecomesCausalSoftmax) {
  // y1: scores * 0.5, masked, softmax (as PyTorch writes attention); y2:
  // scores / 4 and a softmax of the mask alone; y3's masked scores are an
  // output too, y4 has more queries than keys, y5's softmax is over
  // another axis: those three stay. A negative scale is no scale.
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[2, 3, 5]
  input %t : f32[5, 3]
  const %half : f32[] = dense<[0.5]>
  const %four : f32[] = dense<[4.0]>
  const %minus : f32[] = dense<[-2.0]>
  %s1 = mul @s1(%x, %half) : f32[2, 3, 5]
  %m1 = causal_mask_add @m1(%s1) : f32[2, 3, 5]
  %y1 = softmax @p1(%m1) {axis = -1} : f32[2, 3, 5]
  %s2 = div @s2(%x, %four) : f32[2, 3, 5]
  %m2 = causal_mask_add @m2(%s2) : f32[2, 3, 5]
  %y2 = softmax @p2(%m2) {axis = 2} : f32[2, 3, 5]
  %m3 = causal_mask_add @m3(%x) : f32[2, 3, 5]
  %y3 = softmax @p3(%m3) {axis = -1} : f32[2, 3, 5]
  %m4 = causal_mask_add @m4(%t) : f32[5, 3]
  %y4 = softmax @p4(%m4) {axis = -1} : f32[5, 3]
  %m5 = causal_mask_add @m5(%x) : f32[2, 3, 5]
  %y5 = softmax @p5(%m5) {axis = 1} : f32[2, 3, 5]
  %s6 = mul @s6(%minus, %x) : f32[2, 3, 5]
  %m6 = causal_mask_add @m6(%s6) : f32[2, 3, 5]
  %y6 = softmax @p6(%m6) {axis = -1} : f32[2, 3, 5]
  return %y1, %y2, %y3, %m3, %y4, %y5, %y6
}
)");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[2, 3, 5]
  input %t : f32[5, 3]
  const %half : f32[] = dense<[0.5]>
  const %four : f32[] = dense<[4.0]>
  const %minus : f32[] = dense<[-2.0]>
  %y1 = causal_softmax @p1(%x) {scale = 0.5} : f32[2, 3, 5]
  %y2 = causal_softmax @p2(%x) {scale = 0.25} : f32[2, 3, 5]
  %m3 = causal_mask_add @m3(%x) : f32[2, 3, 5]
  %y3 = softmax @p3(%m3) {axis = -1} : f32[2, 3, 5]
  %m4 = causal_mask_add @m4(%t) : f32[5, 3]
  %y4 = softmax @p4(%m4) {axis = -1} : f32[5, 3]
  %m5 = causal_mask_add @m5(%x) : f32[2, 3, 5]
  %y5 = softmax @p5(%m5) {axis = 1} : f32[2, 3, 5]
  %s6 = mul @s6(%minus, %x) : f32[2, 3, 5]
  %y6 = causal_softmax @p6(%s6) {scale = 1.0} : f32[2, 3, 5]
  return %y1, %y2, %y3, %m3, %y4, %y5, %y6
}
)");
  EXPECT_EQ(stat(c.stats, "causal-softmax-fused"), 3);
  EXPECT_EQ(stat(c.stats, "softmax-scale-folded"), 2);
}

TEST(Canonicalize, NormOverSeveralDimsBecomesANormOfRows) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[2, 3, 4]
  input %w : f32[3, 4]
  input %b : f32[3, 4]
  %y = layernorm @ln(%x, %w, %b) {axis = 1, epsilon = 1e-05} : f32[2, 3, 4]
  %r = rmsnorm @rn(%x) {axis = -3, epsilon = 1e-06} : f32[2, 3, 4]
  %k = layernorm @last(%x) {axis = -1, epsilon = 1e-05} : f32[2, 3, 4]
  return %y, %r, %k
}
)");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[2, 3, 4]
  input %w : f32[3, 4]
  input %b : f32[3, 4]
  %y.rows = reshape @ln.rows(%x) {shape = [2, 12]} : f32[2, 12]
  %y.param1 = reshape @ln.param1(%w) {shape = [12]} : f32[12]
  %y.param2 = reshape @ln.param2(%b) {shape = [12]} : f32[12]
  %y.flat = layernorm @ln(%y.rows, %y.param1, %y.param2) {axis = -1, epsilon = 1e-05} : f32[2, 12]
  %y = reshape @ln.unflatten(%y.flat) {shape = [2, 3, 4]} : f32[2, 3, 4]
  %r.rows = reshape @rn.rows(%x) {shape = [1, 24]} : f32[1, 24]
  %r.flat = rmsnorm @rn(%r.rows) {axis = -1, epsilon = 1e-06} : f32[1, 24]
  %r = reshape @rn.unflatten(%r.flat) {shape = [2, 3, 4]} : f32[2, 3, 4]
  %k = layernorm @last(%x) {axis = -1, epsilon = 1e-05} : f32[2, 3, 4]
  return %y, %r, %k
}
)");
  EXPECT_EQ(stat(c.stats, "norm-flattened"), 2);
}

TEST(Canonicalize, DeadOpsAreErasedAndLiveOnesKept) {
  Canonicalized c = canonicalize(R"(graph @g {
  input %x : f32[3]
  %unused = exp @e(%x) : f32[3]
  %unused2 = neg @n(%unused) : f32[3]
  %y = relu @r(%x) : f32[3]
  return %y
})");
  EXPECT_EQ(c.ir, R"(graph @g {
  input %x : f32[3]
  %y = relu @r(%x) : f32[3]
  return %y
}
)");
  EXPECT_EQ(stat(c.stats, "dead-ops-erased"), 2);
}

TEST(Canonicalize, AlreadyCanonicalIrIsUnchanged) {
  const std::string text = R"(graph @g {
  input %x : f32[2, 3]
  const %w : f32[4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %y = matmul @fc(%x, %w) {transpose_a = false, transpose_b = true} : f32[2, 4]
  return %y
}
)";
  Canonicalized c = canonicalize(text);
  EXPECT_EQ(c.ir, text);
  EXPECT_EQ(c.stats, R"(canonicalize
  linear-to-matmul      0  linear ops rewritten as matmul {transpose_b} (+ add of the bias)
  transpose-folded      0  transposes of constants folded into a matmul's transpose attribute
  views-cancelled       0  reshape/squeeze/unsqueeze results replaced by an earlier value of the same shape
  views-merged          0  view chains collapsed into one reshape of their source
  pow-removed           0  pow with exponent 1 removed
  pow-to-mul            0  pow with exponent 2 rewritten as mul x x
  pow-to-sqrt           0  pow with exponent 0.5 rewritten as sqrt
  pow-to-rsqrt          0  pow with exponent -0.5 rewritten as rsqrt
  pow-to-reciprocal     0  pow with exponent -1 rewritten as reciprocal
  double-neg-removed    0  neg of a neg removed
  erf-gelu-fused        0  x * 0.5 * (1 + erf(x / sqrt 2)) rewritten as gelu {approximate = "none"}
  tanh-gelu-fused       0  x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) rewritten as gelu {approximate = "tanh"}
  silu-fused            0  x * sigmoid(x) rewritten as silu
  norm-flattened        0  layernorm/rmsnorm over several trailing dims rewritten as the norm of x reshaped to [rows, elements normalised]
  causal-softmax-fused  0  softmax of causal_mask_add rewritten as causal_softmax
  softmax-scale-folded  0  a scalar mul or div before causal_softmax taken into its scale
  dead-ops-erased       0  ops erased because nothing used their results
)");
}

TEST(Canonicalize, PostconditionRejectsALinear) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[2, 3]
  const %w : f32[4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %y = linear @fc(%x, %w) : f32[2, 4]
  %z = pow @p(%y) {exponent = 2.0} : f32[2, 4]
  return %z
})");
  ASSERT_NE(g, nullptr);
  DiagnosticEngine diags;
  PassOptions options(canonicalizePass());
  PassContext context(canonicalizePass(), options, hw::builtinConfig(), diags);
  DiagnosticEngine check;
  EXPECT_FALSE(canonicalizePass().postcondition(*g, context, check));
  EXPECT_EQ(
      check.str(),
      "test.ir:4:3: error: op 'fc' (linear): linear remains after "
      "canonicalize\n"
      "test.ir:5:3: error: op 'p' (pow): pow with exponent 2.0 remains after "
      "canonicalize\n");
}

} // namespace
} // namespace spyre::compiler::test
