// The reference evaluator op by op, against values worked out by hand (or,
// for the transcendental ones, with Python's math module), including the
// IEEE corner cases the semantics text promises.
#include "compiler/ref/Evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace spyre::compiler::ref {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

RefTensor t(Shape shape, std::vector<double> values) {
  return {std::move(shape), std::move(values)};
}

/// Runs one op on the given operand tensors (all graph inputs) and returns
/// its results.
std::vector<RefTensor> run(OpKind kind, const std::vector<RefTensor> &operands,
                           AttrDict attrs = {}) {
  Graph g("one");
  std::vector<Value *> values;
  TensorMap inputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    values.push_back(g.addInput(name, {ElementType::F32, operands[i].shape}));
    inputs[name] = operands[i];
  }
  Op *op = buildOp(g, kind, "op", values, std::move(attrs));
  g.setOutputs(op->results());
  return evaluateGraph(g, inputs);
}

RefTensor run1(OpKind kind, const std::vector<RefTensor> &operands,
               AttrDict attrs = {}) {
  std::vector<RefTensor> r = run(kind, operands, std::move(attrs));
  EXPECT_EQ(r.size(), 1u);
  return r.front();
}

/// Element-wise equality where NaN equals NaN.
void expectValues(const RefTensor &actual, const Shape &shape,
                  const std::vector<double> &expected, double tolerance = 0) {
  EXPECT_EQ(actual.shape, shape);
  ASSERT_EQ(actual.values.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual.values[i])) << "element " << i;
      continue;
    }
    if (tolerance == 0 || std::isinf(expected[i]))
      EXPECT_EQ(actual.values[i], expected[i]) << "element " << i;
    else
      EXPECT_NEAR(actual.values[i], expected[i], tolerance) << "element " << i;
  }
}

TEST(RefMatmul, TwoByTwoAndTransposes) {
  RefTensor a = t({2, 2}, {1, 2, 3, 4}), b = t({2, 2}, {5, 6, 7, 8});
  expectValues(run1(OpKind::Matmul, {a, b}), {2, 2}, {19, 22, 43, 50});
  // a^T b: [[1,3],[2,4]] x [[5,6],[7,8]].
  expectValues(run1(OpKind::Matmul, {a, b}, {{"transpose_a", true}}), {2, 2},
               {26, 30, 38, 44});
  // a b^T: [[1,2],[3,4]] x [[5,7],[6,8]].
  expectValues(run1(OpKind::Matmul, {a, b}, {{"transpose_b", true}}), {2, 2},
               {17, 23, 39, 53});
}

TEST(RefMatmul, BroadcastsBatchDimensions) {
  // a: two 1x2 matrices; b: one 2x1 matrix shared by both.
  RefTensor a = t({2, 1, 2}, {1, 2, 3, 4});
  RefTensor b = t({2, 1}, {10, 100});
  expectValues(run1(OpKind::Matmul, {a, b}), {2, 1, 1}, {210, 430});
  // a [1, 1, 2] against b [3, 2, 1]: result [3, 1, 1].
  RefTensor c = t({1, 1, 2}, {1, 1});
  RefTensor d = t({3, 2, 1}, {1, 2, 3, 4, 5, 6});
  expectValues(run1(OpKind::Matmul, {c, d}), {3, 1, 1}, {3, 7, 11});
}

TEST(RefLinear, UsesPyTorchWeightLayoutAndBias) {
  RefTensor x = t({1, 2}, {1, 2});
  RefTensor w = t({3, 2}, {1, 0, 0, 1, 1, 1});
  RefTensor b = t({3}, {10, 20, 30});
  expectValues(run1(OpKind::Linear, {x, w, b}), {1, 3}, {11, 22, 33});
  expectValues(run1(OpKind::Linear, {x, w}), {1, 3}, {1, 2, 3});
  // 3-D input: every row of every batch.
  RefTensor x3 = t({2, 1, 2}, {1, 2, 3, 4});
  expectValues(run1(OpKind::Linear, {x3, w, b}), {2, 1, 3}, {11, 22, 33, 13, 24, 37});
}

TEST(RefElementwise, BroadcastsLikeNumPy) {
  RefTensor col = t({2, 1}, {1, 2}), row = t({3}, {10, 20, 30});
  expectValues(run1(OpKind::Add, {col, row}), {2, 3}, {11, 21, 31, 12, 22, 32});
  expectValues(run1(OpKind::Sub, {col, row}), {2, 3}, {-9, -19, -29, -8, -18, -28});
  expectValues(run1(OpKind::Mul, {row, col}), {2, 3}, {10, 20, 30, 20, 40, 60});
  RefTensor num = t({4}, {1, -1, 0, 6}), den = t({4}, {0, 0, 0, 4});
  expectValues(run1(OpKind::Div, {num, den}), {4}, {kInf, -kInf, NAN, 1.5});
  RefTensor scalar = t({}, {2});
  expectValues(run1(OpKind::Mul, {scalar, row}), {3}, {20, 40, 60});
}

TEST(RefUnary, SimpleOps) {
  RefTensor x = t({4}, {-1, 0, 2, NAN});
  expectValues(run1(OpKind::Relu, {x}), {4}, {0, 0, 2, NAN});
  expectValues(run1(OpKind::Neg, {x}), {4}, {1, -0.0, -2, NAN});
  expectValues(run1(OpKind::Abs, {x}), {4}, {1, 0, 2, NAN});
  RefTensor p = t({4}, {4, 0.25, 0, -1});
  expectValues(run1(OpKind::Sqrt, {p}), {4}, {2, 0.5, 0, NAN});
  expectValues(run1(OpKind::Rsqrt, {p}), {4}, {0.5, 2, kInf, NAN});
  expectValues(run1(OpKind::Reciprocal, {p}), {4}, {0.25, 4, kInf, -1});
  expectValues(run1(OpKind::Pow, {p}, {{"exponent", 3.0}}), {4}, {64, 1.0 / 64, 0, -1});
  expectValues(run1(OpKind::Pow, {t({1}, {-8})}, {{"exponent", 1.0 / 3}}), {1}, {NAN});
}

TEST(RefUnary, Transcendentals) {
  // Reference values from Python's math module.
  RefTensor x = t({2}, {1, -1});
  expectValues(run1(OpKind::Gelu, {x}), {2},
               {0.8413447460685429, -0.15865525393145707}, 1e-15);
  expectValues(run1(OpKind::Gelu, {x}, {{"approximate", "tanh"}}), {2},
               {0.8411919906082768, -0.15880800939172324}, 1e-15);
  expectValues(run1(OpKind::Silu, {x}), {2},
               {0.7310585786300049, -0.2689414213699951}, 1e-15);
  expectValues(run1(OpKind::Exp, {x}), {2}, {M_E, 1 / M_E}, 1e-15);
  expectValues(run1(OpKind::Tanh, {t({1}, {0.5})}), {1}, {0.46211715726000974}, 1e-15);
  // The sigmoid never overflows, whatever the sign.
  expectValues(run1(OpKind::Sigmoid, {t({3}, {0, -1000, 1000})}), {3}, {0.5, 0, 1});
}

TEST(RefSoftmax, NormalisesAlongTheAxis) {
  RefTensor x = t({3}, {0, std::log(2.0), std::log(3.0)});
  expectValues(run1(OpKind::Softmax, {x}), {3}, {1.0 / 6, 2.0 / 6, 3.0 / 6}, 1e-16);
  // Huge logits do not overflow: the maximum is subtracted first.
  expectValues(run1(OpKind::Softmax, {t({2}, {1000, 1000})}), {2}, {0.5, 0.5});
  // Along axis 0 of a 2x2: columns [0, ln 3] and [5, 5].
  RefTensor m = t({2, 2}, {0, 5, std::log(3.0), 5});
  expectValues(run1(OpKind::Softmax, {m}, {{"axis", 0}}), {2, 2}, {0.25, 0.5, 0.75, 0.5},
               1e-16);
  // A fully masked row has no answer.
  expectValues(run1(OpKind::Softmax, {t({2}, {-kInf, -kInf})}), {2}, {NAN, NAN});
}

TEST(RefNorms, LayerNormAndRmsNorm) {
  RefTensor x = t({4}, {1, 2, 3, 4});
  // mean 2.5, biased variance 1.25.
  double a = 1.3416407864998738, b = 0.4472135954999579;
  expectValues(run1(OpKind::LayerNorm, {x}, {{"epsilon", 0.0}}), {4}, {-a, -b, b, a}, 1e-15);
  RefTensor w = t({4}, {2, 2, 2, 2}), bias = t({4}, {1, 1, 1, 1});
  expectValues(run1(OpKind::LayerNorm, {x, w, bias}, {{"epsilon", 0.0}}), {4},
               {1 - 2 * a, 1 - 2 * b, 1 + 2 * b, 1 + 2 * a}, 1e-15);
  // epsilon is added to the variance: var + eps = 1.25 + 2.75 = 4.
  expectValues(run1(OpKind::LayerNorm, {x}, {{"epsilon", 2.75}}), {4},
               {-0.75, -0.25, 0.25, 0.75}, 1e-15);
  // Over the last two dimensions of [2, 2]: all four elements together.
  expectValues(run1(OpKind::LayerNorm, {t({2, 2}, {1, 2, 3, 4})},
                    {{"axis", 0}, {"epsilon", 0.0}}),
               {2, 2}, {-a, -b, b, a}, 1e-15);
  // rms of [3, 4] is sqrt(12.5).
  expectValues(run1(OpKind::RmsNorm, {t({2}, {3, 4})}, {{"epsilon", 0.0}}), {2},
               {0.848528137423857, 1.131370849898476}, 1e-15);
  expectValues(run1(OpKind::RmsNorm, {t({2}, {3, 4}), t({2}, {2, -1})},
                    {{"epsilon", 0.0}}),
               {2}, {2 * 0.848528137423857, -1.131370849898476}, 1e-15);
}

TEST(RefReduce, SumMeanMax) {
  RefTensor x = t({2, 3}, {1, 2, 3, 4, 5, 6});
  AttrDict axis0{{"axes", Attribute::ints({0})}};
  AttrDict axis1Keep{{"axes", Attribute::ints({-1})}, {"keepdims", true}};
  expectValues(run1(OpKind::ReduceSum, {x}, axis0), {3}, {5, 7, 9});
  expectValues(run1(OpKind::ReduceSum, {x}, axis1Keep), {2, 1}, {6, 15});
  expectValues(run1(OpKind::ReduceMean, {x}, axis1Keep), {2, 1}, {2, 5});
  expectValues(run1(OpKind::ReduceMax, {x}, axis0), {3}, {4, 5, 6});
  expectValues(run1(OpKind::ReduceSum, {x}, {{"axes", Attribute::ints({0, 1})}}), {}, {21});
  expectValues(run1(OpKind::ReduceMax, {t({3}, {1, NAN, 3})}, axis0), {}, {NAN});
  // Compensated: 1 + 1e-16 + ... does not lose the small terms.
  std::vector<double> v(1001, 1e-16);
  v[0] = 1;
  expectValues(run1(OpKind::ReduceSum, {t({1001}, v)}, axis0), {}, {1 + 1e-13}, 1e-15);
}

TEST(RefMovement, TransposeReshapeSqueeze) {
  RefTensor x = t({2, 3}, {1, 2, 3, 4, 5, 6});
  expectValues(run1(OpKind::Transpose, {x}, {{"perm", Attribute::ints({1, 0})}}), {3, 2},
               {1, 4, 2, 5, 3, 6});
  expectValues(run1(OpKind::Reshape, {x}, {{"shape", Attribute::ints({3, -1})}}), {3, 2},
               {1, 2, 3, 4, 5, 6});
  expectValues(run1(OpKind::Unsqueeze, {x}, {{"axes", Attribute::ints({1})}}), {2, 1, 3},
               {1, 2, 3, 4, 5, 6});
  expectValues(run1(OpKind::Squeeze, {t({1, 3, 1}, {7, 8, 9})},
                    {{"axes", Attribute::ints({0, 2})}}),
               {3}, {7, 8, 9});
  // [2, 1, 3] -> perm [2, 0, 1] -> [3, 2, 1].
  RefTensor y = t({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  expectValues(run1(OpKind::Transpose, {y}, {{"perm", Attribute::ints({2, 0, 1})}}),
               {3, 2, 1}, {1, 4, 2, 5, 3, 6});
}

TEST(RefMovement, SplitAndConcat) {
  std::vector<RefTensor> pieces =
      run(OpKind::Split, {t({6}, {1, 2, 3, 4, 5, 6})},
          {{"axis", 0}, {"sizes", Attribute::ints({1, 2, 3})}});
  ASSERT_EQ(pieces.size(), 3u);
  expectValues(pieces[0], {1}, {1});
  expectValues(pieces[1], {2}, {2, 3});
  expectValues(pieces[2], {3}, {4, 5, 6});
  std::vector<RefTensor> cols = run(OpKind::Split, {t({2, 3}, {1, 2, 3, 4, 5, 6})},
                                    {{"axis", 1}, {"sizes", Attribute::ints({2, 1})}});
  expectValues(cols[0], {2, 2}, {1, 2, 4, 5});
  expectValues(cols[1], {2, 1}, {3, 6});
  expectValues(run1(OpKind::Concat, {t({2, 1}, {1, 2}), t({2, 2}, {3, 4, 5, 6})},
                    {{"axis", 1}}),
               {2, 3}, {1, 3, 4, 2, 5, 6});
  expectValues(run1(OpKind::Concat, {t({1, 2}, {1, 2}), t({1, 2}, {3, 4})}, {{"axis", 0}}),
               {2, 2}, {1, 2, 3, 4});
}

TEST(RefCausalMask, HidesKeysAfterTheQuery) {
  expectValues(run1(OpKind::CausalMaskAdd, {t({3, 3}, std::vector<double>(9, 0))}), {3, 3},
               {0, -kInf, -kInf, 0, 0, -kInf, 0, 0, 0});
  // Two queries that are the last two of three keys: the mask is aligned to
  // the bottom right.
  expectValues(run1(OpKind::CausalMaskAdd, {t({2, 3}, {1, 2, 3, 4, 5, 6})}), {2, 3},
               {1, 2, -kInf, 4, 5, 6});
  // More queries than keys: the first rows see nothing.
  expectValues(run1(OpKind::CausalMaskAdd, {t({3, 2}, {1, 2, 3, 4, 5, 6})}), {3, 2},
               {-kInf, -kInf, 3, -kInf, 5, 6});
  // IEEE addition: a masked NaN stays NaN, a masked +inf becomes NaN.
  expectValues(run1(OpKind::CausalMaskAdd, {t({2, 2}, {0, NAN, kInf, 0})}), {2, 2},
               {0, NAN, kInf, 0});
  expectValues(run1(OpKind::CausalMaskAdd, {t({2, 2}, {0, kInf, 0, 0})}), {2, 2},
               {0, NAN, 0, 0});
  // Batched: each [Q, K] matrix is masked the same way.
  expectValues(run1(OpKind::CausalMaskAdd, {t({2, 2, 2}, std::vector<double>(8, 1))}),
               {2, 2, 2}, {1, -kInf, 1, 1, 1, -kInf, 1, 1});
}

TEST(RefGraph, ReadsConstantsAndKeepsIntermediatesOnRequest) {
  Graph g("g");
  Value *x = g.addInput("x", {ElementType::F16, {2}});
  Value *c = g.addConstant("c", ConstantData::fromDoubles({ElementType::F16, {2}}, {0.1, 2}));
  Op *m = buildOp(g, OpKind::Mul, "m", {x, c}, {}, {"p"});
  Op *n = buildOp(g, OpKind::Neg, "n", {m->result()}, {}, {"y"});
  g.setOutputs({n->result()});
  TensorMap all;
  std::vector<RefTensor> out = evaluateGraph(g, {{"x", t({2}, {10, 3})}}, &all);
  // 0.1 as f16 is 0.0999755859375; products are not rounded back to f16.
  expectValues(out[0], {2}, {-0.999755859375, -6});
  expectValues(all.at("p"), {2}, {0.999755859375, 6});
  expectValues(all.at("c"), {2}, {0.0999755859375, 2});
  EXPECT_EQ(all.size(), 4u);
}

TEST(RefGraph, RejectsMissingWrongOrUnknownInputs) {
  Graph g("g");
  Value *x = g.addInput("x", {ElementType::F32, {2}});
  g.setOutputs({buildOp(g, OpKind::Relu, "r", {x})->result()});
  try {
    evaluateGraph(g, {});
    FAIL() << "missing input accepted";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(), "<graph g>: error: no value given for input 'x'");
  }
  try {
    evaluateGraph(g, {{"x", t({3}, {1, 2, 3})}});
    FAIL() << "wrong shape accepted";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              "<graph g>: error: input 'x' has shape [3], expected [2]");
  }
  try {
    evaluateGraph(g, {{"x", t({2}, {1, 2})}, {"r", t({2}, {1, 2})}});
    FAIL() << "unknown input accepted";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(), "<graph g>: error: the graph has no input named 'r'");
  }
}

TEST(RefTensors, ConvertExactly) {
  NpyArray f16;
  f16.dtype = NpyDtype::F16;
  f16.shape = {2};
  f16.data = std::string("\x00\x3c\xff\x7b", 4); // 1.0, 65504
  expectValues(tensorFromNpy(f16), {2}, {1, 65504});
  NpyArray out = toNpyF32(t({2}, {1.0 / 3, 1e40}));
  std::vector<float> values = npyF32Values(out, "out");
  EXPECT_EQ(values[0], 1.0f / 3);
  EXPECT_TRUE(std::isinf(values[1]));
}

} // namespace
} // namespace spyre::compiler::ref
