// The host library against hand-computed values (ONNX operator spec
// examples and arithmetic done by hand), and its refusals.
#include "host/HostOp.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>

namespace spyre::host {
namespace {

HostOp op(std::string type, std::string attrs = "{}") {
  std::string why;
  std::optional<nlohmann::json> j = parseHostAttrs(attrs, why);
  EXPECT_TRUE(j) << why;
  return {std::move(type), j.value_or(nlohmann::json::object())};
}

HostTensor run1(const HostOp &o, std::vector<HostTensor> in) {
  std::vector<HostTensor> out = runHostOp(o, in);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

TEST(HostOp, SliceWithNegativeStepAndClampedEnds) {
  // ONNX Slice example "slice_neg_steps" shape rule: x[3, 4], axis 1 from
  // -1 down to (but not) -5 step -2 -> columns 3, 1.
  HostTensor x{{3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}};
  HostTensor y =
      run1(op("Slice", R"({"starts":[-1],"ends":[-1000],"axes":[1],"steps":[-2]})"),
           {x});
  EXPECT_EQ(y.shape, (HostShape{3, 2}));
  EXPECT_EQ(y.data, (std::vector<double>{3, 1, 7, 5, 11, 9}));
}

TEST(HostOp, GatherWithTwoDimensionalIndices) {
  // data [3, 2], indices [[0, 1], [1, 2]] on axis 0 -> [2, 2, 2] (ONNX
  // Gather example 1).
  HostTensor x{{3, 2}, {1.0, 1.2, 2.3, 3.4, 4.5, 5.7}};
  HostTensor y = run1(
      op("Gather", R"({"indices":[0,1,1,2],"indices_shape":[2,2],"axis":0})"), {x});
  EXPECT_EQ(y.shape, (HostShape{2, 2, 2}));
  EXPECT_EQ(y.data,
            (std::vector<double>{1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7}));
}

TEST(HostOp, PadConstantAndCumSumExclusiveReverse) {
  HostTensor x{{1, 3}, {1, 2, 3}};
  HostTensor p =
      run1(op("Pad", R"({"pads":[0,1,1,0],"constant_value":-1})"), {x});
  EXPECT_EQ(p.shape, (HostShape{2, 4}));
  EXPECT_EQ(p.data, (std::vector<double>{-1, 1, 2, 3, -1, -1, -1, -1}));
  // exclusive reverse cumsum of [1, 2, 3] = [2 + 3, 3, 0].
  HostTensor c = run1(op("CumSum", R"({"axis":1,"exclusive":1,"reverse":1})"), {x});
  EXPECT_EQ(c.data, (std::vector<double>{5, 3, 0}));
}

TEST(HostOp, MinBroadcastsAndPropagatesNan) {
  HostTensor a{{2, 2}, {1, 5, NAN, -2}};
  HostTensor b{{2}, {3, 0}};
  HostTensor y = run1(op("Min"), {a, b});
  EXPECT_EQ(y.shape, (HostShape{2, 2}));
  EXPECT_EQ(y.data[0], 1);
  EXPECT_EQ(y.data[1], 0);
  EXPECT_TRUE(std::isnan(y.data[2]));
  EXPECT_EQ(y.data[3], -2);
}

TEST(HostOp, PowBroadcastsATensorExponent) {
  // ONNX Pow example "pow_bcast_array": x [2, 3] to the power [1, 2, 3].
  HostTensor x{{2, 3}, {1, 2, 3, 4, 5, 6}};
  HostTensor e{{3}, {1, 2, 3}};
  HostTensor y = run1(op("Pow"), {x, e});
  EXPECT_EQ(y.shape, (HostShape{2, 3}));
  EXPECT_EQ(y.data, (std::vector<double>{1, 4, 27, 4, 25, 216}));
  // A negative base to a fractional power is NaN, as in C and NumPy.
  HostTensor n = run1(op("Pow"), {HostTensor{{1}, {-8}}, HostTensor{{}, {0.5}}});
  EXPECT_TRUE(std::isnan(n.data[0]));
  EXPECT_EQ(hostOpFlops(op("Pow"), std::array{HostShape{2, 3}, HostShape{3}}), 6u);
  EXPECT_NE(hostOpUnsupported(op("Pow"), std::array{HostShape{2, 3}, HostShape{2}}),
            std::nullopt);
}

TEST(HostOp, RoundsHalvesToEvenAndElementwiseFormulas) {
  HostTensor x{{4}, {0.5, 1.5, 2.5, -2.5}};
  EXPECT_EQ(run1(op("Round"), {x}).data, (std::vector<double>{0, 2, 2, -2}));
  HostTensor l = run1(op("LeakyRelu", R"({"alpha":0.1})"), {x});
  EXPECT_DOUBLE_EQ(l.data[3], -0.25);
  HostTensor h = run1(op("HardSigmoid"), {HostTensor{{2}, {1, -10}}});
  EXPECT_DOUBLE_EQ(h.data[0], 0.7); // 0.2 * 1 + 0.5
  EXPECT_EQ(h.data[1], 0.0);
  HostTensor c = run1(op("Clip", R"({"min":-1,"max":2})"), {x});
  EXPECT_EQ(c.data, (std::vector<double>{0.5, 1.5, 2, -1}));
}

TEST(HostOp, LogSoftmaxAndLogSumExpAreStableForLargeInputs) {
  // log(e^1000 + e^1000) = 1000 + log 2; log-softmax of equal values -log 2.
  HostTensor x{{1, 2}, {1000, 1000}};
  HostTensor r = run1(op("ReduceLogSumExp", R"({"axes":[1],"keepdims":0})"), {x});
  EXPECT_EQ(r.shape, (HostShape{1}));
  EXPECT_DOUBLE_EQ(r.data[0], 1000 + std::log(2.0));
  HostTensor s = run1(op("LogSoftmax"), {x});
  EXPECT_DOUBLE_EQ(s.data[0], -std::log(2.0));
  HostTensor l2 = run1(op("ReduceL2"), {HostTensor{{2}, {3, 4}}});
  EXPECT_EQ(l2.shape, (HostShape{1}));
  EXPECT_DOUBLE_EQ(l2.data[0], 5);
}

TEST(HostOp, FlopsCountElementsOfComputingOpsOnly) {
  const std::array<HostShape, 1> in{HostShape{8, 64}};
  EXPECT_EQ(hostOpFlops(op("Sin"), in), 512u);
  EXPECT_EQ(hostOpFlops(op("Slice", R"({"starts":[0],"ends":[4]})"), in), 0u);
  EXPECT_EQ(hostOpFlops(op("LogSoftmax"), in), 4u * 512u);
}

TEST(HostOp, ShapeArithmeticPast64BitsIsRefusedNotWrapped) {
  const std::array<HostShape, 1> in{HostShape{4, 64}};
  // 4 x (2^62 + 1) wraps to 4 in 64 bits.
  EXPECT_EQ(hostOpUnsupported(
                op("Tile", R"({"repeats":[4611686018427387905,1]})"), in),
            "repeats [4611686018427387905, 1] make dimension 0 overflow 64 "
            "bits");
  EXPECT_EQ(
      hostOpUnsupported(
          op("Pad", R"({"pads":[0,9223372036854775807,0,1]})"), in),
      "pads [0, 9223372036854775807, 0, 1] make dimension 1 overflow 64 bits");
}

TEST(HostOp, SliceStepsAtTheEndsOfInt64TakeOneElement) {
  HostTensor x{{1, 4}, {0, 1, 2, 3}};
  HostTensor up = run1(
      op("Slice",
         R"({"starts":[1],"ends":[4],"axes":[1],"steps":[9223372036854775807]})"),
      {x});
  EXPECT_EQ(up.shape, (HostShape{1, 1}));
  EXPECT_EQ(up.data, (std::vector<double>{1}));
  HostTensor down = run1(
      op("Slice",
         R"({"starts":[3],"ends":[-5],"axes":[1],"steps":[-9223372036854775808]})"),
      {x});
  EXPECT_EQ(down.shape, (HostShape{1, 1}));
  EXPECT_EQ(down.data, (std::vector<double>{3}));
}

TEST(HostOp, RefusalsNameTheProblem) {
  const std::array<HostShape, 1> in{HostShape{2, 3}};
  EXPECT_EQ(hostOpUnsupported(op("Det"), in),
            "op type 'Det' has no host implementation");
  EXPECT_EQ(hostOpUnsupported(op("Sin", R"({"alpha":1})"), in),
            "unknown attribute 'alpha' (Sin takes none)");
  EXPECT_EQ(hostOpUnsupported(op("CumSum", R"({"axis":2})"), in),
            "axis 2 is out of range for rank 2");
  EXPECT_EQ(hostOpUnsupported(op("Gather", R"({"indices":[2]})"), in),
            "index 2 is out of range for dimension 0 of size 2");
  EXPECT_EQ(hostOpUnsupported(op("Pad", R"({"pads":[0,0,0,0],"mode":"edge"})"), in),
            "mode 'edge' is not supported (only constant)");
  EXPECT_EQ(hostOpUnsupported(op("Slice", R"({"starts":"x","ends":[1]})"), in),
            "attribute 'starts' must be a list of integers");
  std::string why;
  EXPECT_FALSE(parseHostAttrs("[1]", why));
  EXPECT_EQ(why, "the attributes must be a JSON object");
  EXPECT_FALSE(parseHostAttrs("{", why));
  EXPECT_EQ(why, "the attributes are not valid JSON");
}

} // namespace
} // namespace spyre::host
