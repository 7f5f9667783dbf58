// Device layouts of tensors: how a host tensor's elements sit in sticks in
// device memory, as torch-spyre's SpyreTensorLayout describes them
// (docs/hardware.md#device-layout; torch-spyre `spyre_tensor_impl.cpp` and the
// vectors of its `tests/tensor/test_tensor_layout.py`, which our tests reuse).
//
// A layout is row-major over a device shape whose last dimension is one
// stick (128 bytes: 64 DL16, 32 FP32, 128 INT8 elements). One host
// dimension, the stick dimension, is cut into ceil(n / per-stick) stick
// blocks; the blocks are the outermost device dimension, then come the
// other host dimensions in the layout's dimension order, then the stick.
// Padding cells (the last block's tail) are zero. `dim_map` names, for each
// device dimension, the host dimension it walks (-1 for a synthetic one).
// Example: host [3, 100] in DL16 sticked on dimension 1 gives device shape
// [2, 3, 64] and dim_map [1, 0, 1], 6 sticks. A scalar is one stick:
// device [1, 64], dim_map [-1, -1], stick dimension -1.
//
// The layout pass stores a layout on every value as the annotation
//   #{layout = {device_shape = [2, 3, 64], dim_map = [1, 0, 1],
//               dtype = "dl16", stick_dim = 1}}
// and later passes read it back with layoutFromAttribute.
#pragma once

#include "compiler/ir/Attribute.h"
#include "compiler/ir/Graph.h"
#include "compiler/ir/Types.h"
#include "isa/Program.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

// A tensor's element format on the device is an isa::DType, the one enum
// the compiler, the program file and the simulator share.

/// `dl16`, `f32`, `i8`, `i32`: how the IR's layout annotation spells a
/// device dtype.
std::string_view deviceDTypeName(isa::DType dtype);
std::optional<isa::DType> parseDeviceDType(std::string_view name);
/// Elements of `dtype` in one stick.
int64_t elementsPerStick(isa::DType dtype);
/// Whether values of host element type `type` may live on the device as
/// `dtype`: floats as DL16 or FP32, integers as themselves.
bool deviceDTypeFits(ElementType type, isa::DType dtype);

/// The annotation key of a value's layout.
inline constexpr const char *kLayoutAnnotation = "layout";

struct DeviceLayout {
  isa::DType dtype = isa::DType::Dl16;
  /// The host dimension cut into sticks; -1 for a scalar.
  int64_t stickDim = -1;
  Shape deviceShape;
  /// For each device dimension, the host dimension it walks (-1: synthetic).
  std::vector<int64_t> dimMap;

  bool operator==(const DeviceLayout &other) const = default;

  /// Row-major strides of the device shape, in elements.
  std::vector<int64_t> deviceStrides() const;
  /// Elements the device holds, padding included.
  int64_t deviceElements() const;
  /// The annotation form `{device_shape = ..., dim_map = ..., dtype = ...,
  /// stick_dim = ...}`.
  Attribute toAttribute() const;
  /// The annotation text, for messages.
  std::string str() const;
};

/// SpyreTensorLayout's generic stick layout: `dimOrder` lists every host
/// dimension once, the last of them the stick dimension; the device shape is
/// [stick blocks, host[dimOrder[0]], ..., host[dimOrder[n-2]], per-stick].
/// For a scalar `dimOrder` is empty.
DeviceLayout makeStickLayout(const Shape &hostShape, isa::DType dtype,
                             const std::vector<int64_t> &dimOrder);

/// The layout sticked on `stickDim` (-1 only for a scalar) with the other
/// host dimensions in their host order.
DeviceLayout stickedOn(const Shape &hostShape, isa::DType dtype,
                       int64_t stickDim);

/// Empty when `layout` is a stick layout of a tensor of `type` (dimension
/// map a stick order of the host dimensions, device shape as the stick rule
/// gives it, dtype fitting the element type), else what is wrong.
std::string checkStickRule(const DeviceLayout &layout, const TensorType &type);

/// Reads the annotation form; nullopt with `error` set when it is not one.
std::optional<DeviceLayout> layoutFromAttribute(const Attribute &attr,
                                                std::string &error);

/// The layout annotated on `value`; nullopt with `error` set when there is
/// none or it does not read.
std::optional<DeviceLayout> valueLayout(const Value &value, std::string &error);

/// The layout of a value of a laid-out graph (the layout pass ran); a
/// missing one is a bug and asserts.
DeviceLayout requireLayout(const Value &value);

} // namespace spyre::compiler
