// Device layouts against torch-spyre's SpyreTensorLayout test vectors
// (tests/tensor/test_tensor_layout.py, fp16: 64 elements per 128-byte
// stick), the examples of docs/hardware.md#device-layout, the stick-rule check
// and the annotation form.
#include "compiler/ir/Parser.h"
#include "compiler/plan/DeviceLayout.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

struct Vector {
  Shape host;
  std::vector<int64_t> dimOrder;
  Shape deviceSize;
  std::vector<int64_t> deviceStrides;
  std::vector<int64_t> dimMap;
};

TEST(DeviceLayout, MatchesSpyreTensorLayoutVectors) {
  const Vector vectors[] = {
      {{128}, {0}, {2, 64}, {64, 1}, {0, 0}},
      {{512, 256}, {0, 1}, {4, 512, 64}, {32768, 64, 1}, {1, 0, 1}},
      {{512, 8, 256},
       {0, 1, 2},
       {4, 512, 8, 64},
       {262144, 512, 64, 1},
       {2, 0, 1, 2}},
      {{512, 256}, {1, 0}, {8, 256, 64}, {16384, 64, 1}, {0, 1, 0}},
      {{512, 8, 256},
       {2, 1, 0},
       {8, 256, 8, 64},
       {131072, 512, 64, 1},
       {0, 2, 1, 0}},
  };
  for (const Vector &v : vectors) {
    DeviceLayout l = makeStickLayout(v.host, isa::DType::Dl16, v.dimOrder);
    EXPECT_EQ(l.deviceShape, v.deviceSize) << shapeStr(v.host);
    EXPECT_EQ(l.deviceStrides(), v.deviceStrides) << shapeStr(v.host);
    EXPECT_EQ(l.dimMap, v.dimMap) << shapeStr(v.host);
    EXPECT_EQ(l.stickDim, v.dimOrder.back());
    EXPECT_EQ(checkStickRule(l, {ElementType::F16, v.host}), "");
  }
}

TEST(DeviceLayout, DefaultOrderIsStickedOnTheLastDimension) {
  EXPECT_EQ(stickedOn({512, 8, 256}, isa::DType::Dl16, 2),
            makeStickLayout({512, 8, 256}, isa::DType::Dl16, {0, 1, 2}));
  EXPECT_EQ(stickedOn({512, 256}, isa::DType::Dl16, 0),
            makeStickLayout({512, 256}, isa::DType::Dl16, {1, 0}));
}

TEST(DeviceLayout, PadsTheStickDimensionToWholeSticks) {
  // docs/hardware.md#device-layout: host [3, 100] -> device [2, 3, 64], 6
  // sticks, of which 384 - 300 = 84 elements are padding.
  DeviceLayout l = stickedOn({3, 100}, isa::DType::Dl16, 1);
  EXPECT_EQ(l.deviceShape, (Shape{2, 3, 64}));
  EXPECT_EQ(l.dimMap, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(l.deviceElements(), 384);
  // FP32 holds 32 per stick, INT8 128.
  EXPECT_EQ(stickedOn({3, 100}, isa::DType::Fp32, 1).deviceShape,
            (Shape{4, 3, 32}));
  EXPECT_EQ(stickedOn({3, 100}, isa::DType::Int8, 1).deviceShape,
            (Shape{1, 3, 128}));
  // Sticked on the first dimension: 3 rows fit in one stick block.
  EXPECT_EQ(stickedOn({3, 100}, isa::DType::Dl16, 0).deviceShape,
            (Shape{1, 100, 64}));
}

TEST(DeviceLayout, AScalarIsOneStick) {
  DeviceLayout l = stickedOn({}, isa::DType::Dl16, -1);
  EXPECT_EQ(l.deviceShape, (Shape{1, 64}));
  EXPECT_EQ(l.dimMap, (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(l.stickDim, -1);
  EXPECT_EQ(checkStickRule(l, {ElementType::F32, {}}), "");
}

TEST(DeviceLayout, StickRuleNamesWhatIsWrong) {
  TensorType t{ElementType::F32, {3, 100}};
  DeviceLayout good = stickedOn(t.shape, isa::DType::Dl16, 1);
  EXPECT_EQ(checkStickRule(good, t), "");

  DeviceLayout shape = good;
  shape.deviceShape = {1, 3, 64};
  EXPECT_EQ(checkStickRule(shape, t),
            "device_shape [1, 3, 64] should be [2, 3, 64] by the stick rule");
  DeviceLayout map = good;
  map.dimMap = {1, 1, 1};
  EXPECT_EQ(checkStickRule(map, t),
            "dim_map [1, 1, 1] does not list each host dimension of f32[3, "
            "100] once");
  DeviceLayout ends = good;
  ends.dimMap = {0, 0, 1};
  EXPECT_EQ(
      checkStickRule(ends, t),
      "dim_map [0, 0, 1] must start with the stick dimension it ends with");
  DeviceLayout stick = good;
  stick.stickDim = 0;
  EXPECT_EQ(
      checkStickRule(stick, t),
      "stick_dim 0 differs from dim_map [1, 0, 1], which sticks dimension 1");
  DeviceLayout rank = good;
  rank.dimMap = {1, 1};
  EXPECT_EQ(checkStickRule(rank, t),
            "dim_map [1, 1] must have 3 entries for f32[3, 100]");
  DeviceLayout dtype = good;
  dtype.dtype = isa::DType::Int8;
  EXPECT_EQ(checkStickRule(dtype, t), "device dtype i8 cannot hold f32 values");
}

TEST(DeviceLayout, AnnotationRoundTripsThroughText) {
  DeviceLayout l = stickedOn({3, 100}, isa::DType::Dl16, 1);
  EXPECT_EQ(l.str(), "{device_shape = [2, 3, 64], dim_map = [1, 0, 1], dtype = "
                     "\"dl16\", stick_dim = 1}");
  DiagnosticEngine diags;
  std::optional<Attribute> parsed = parseAttribute(l.str(), "a", diags);
  ASSERT_TRUE(parsed.has_value()) << diags.str();
  std::string error;
  std::optional<DeviceLayout> back = layoutFromAttribute(*parsed, error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(*back, l);
}

TEST(DeviceLayout, AnnotationErrorsNameTheProblem) {
  std::string error;
  EXPECT_FALSE(layoutFromAttribute(Attribute(3), error));
  EXPECT_EQ(error, "a layout is a dictionary, got 3");
  EXPECT_FALSE(layoutFromAttribute(AttrDict{{"stick", 1}}, error));
  EXPECT_EQ(error, "unknown layout key 'stick'");
  EXPECT_FALSE(layoutFromAttribute(AttrDict{{"stick_dim", 1}}, error));
  EXPECT_EQ(
      error,
      "a layout needs device_shape and dim_map (int lists), dtype (a string) "
      "and stick_dim (an int), got {stick_dim = 1}");
  EXPECT_FALSE(
      layoutFromAttribute(AttrDict{{"device_shape", Attribute::ints({1, 64})},
                                   {"dim_map", Attribute::ints({-1, -1})},
                                   {"dtype", "bf16"},
                                   {"stick_dim", -1}},
                          error));
  EXPECT_EQ(error, "unknown device dtype 'bf16' (dl16, f32, i8 or i32)");
}

} // namespace
} // namespace spyre::compiler
