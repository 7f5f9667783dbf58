// Device layouts: the stick rule, its check, and the annotation form.
#include "compiler/plan/DeviceLayout.h"

#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::compiler {

std::string_view deviceDTypeName(isa::DType dtype) {
  switch (dtype) {
  case isa::DType::Dl16:
    return "dl16";
  case isa::DType::Fp32:
    return "f32";
  case isa::DType::Int8:
    return "i8";
  case isa::DType::Int32:
    return "i32";
  }
  SPYRE_UNREACHABLE("bad device dtype");
}

std::optional<isa::DType> parseDeviceDType(std::string_view name) {
  for (isa::DType d :
       {isa::DType::Dl16, isa::DType::Fp32, isa::DType::Int8, isa::DType::Int32})
    if (deviceDTypeName(d) == name)
      return d;
  return std::nullopt;
}

int64_t elementsPerStick(isa::DType dtype) {
  return isa::kStickBytes / isa::dtypeBytes(dtype);
}

bool deviceDTypeFits(ElementType type, isa::DType dtype) {
  switch (type) {
  case ElementType::F32:
  case ElementType::F16:
    return dtype == isa::DType::Dl16 || dtype == isa::DType::Fp32;
  case ElementType::I8:
    return dtype == isa::DType::Int8;
  case ElementType::I32:
    return dtype == isa::DType::Int32;
  }
  SPYRE_UNREACHABLE("bad element type");
}

std::vector<int64_t> DeviceLayout::deviceStrides() const {
  return rowMajorStrides(deviceShape);
}

int64_t DeviceLayout::deviceElements() const {
  int64_t n = 1;
  for (int64_t d : deviceShape)
    n *= d;
  return n;
}

Attribute DeviceLayout::toAttribute() const {
  return AttrDict{{"device_shape", Attribute::ints(deviceShape)},
                  {"dim_map", Attribute::ints(dimMap)},
                  {"dtype", deviceDTypeName(dtype)},
                  {"stick_dim", stickDim}};
}

std::string DeviceLayout::str() const { return toAttribute().str(); }

DeviceLayout makeStickLayout(const Shape &hostShape, isa::DType dtype,
                             const std::vector<int64_t> &dimOrder) {
  int64_t perStick = elementsPerStick(dtype);
  DeviceLayout layout;
  layout.dtype = dtype;
  if (hostShape.empty()) {
    SPYRE_ASSERT(dimOrder.empty(), "a scalar has no dimension order");
    layout.deviceShape = {1, perStick};
    layout.dimMap = {-1, -1};
    return layout;
  }
  SPYRE_ASSERT(dimOrder.size() == hostShape.size(),
               "dimension order " + shapeStr(dimOrder) +
                   " does not fit host shape " + shapeStr(hostShape));
  int64_t stick = dimOrder.back();
  SPYRE_ASSERT(stick >= 0 && stick < static_cast<int64_t>(hostShape.size()),
               "stick dimension out of range");
  layout.stickDim = stick;
  int64_t n = hostShape[static_cast<size_t>(stick)];
  layout.deviceShape.push_back((n + perStick - 1) / perStick);
  layout.dimMap.push_back(stick);
  for (size_t i = 0; i + 1 < dimOrder.size(); ++i) {
    layout.deviceShape.push_back(hostShape[static_cast<size_t>(dimOrder[i])]);
    layout.dimMap.push_back(dimOrder[i]);
  }
  layout.deviceShape.push_back(perStick);
  layout.dimMap.push_back(stick);
  return layout;
}

DeviceLayout stickedOn(const Shape &hostShape, isa::DType dtype,
                       int64_t stickDim) {
  std::vector<int64_t> order;
  if (!hostShape.empty()) {
    for (int64_t d = 0; d < static_cast<int64_t>(hostShape.size()); ++d)
      if (d != stickDim)
        order.push_back(d);
    order.push_back(stickDim);
  }
  return makeStickLayout(hostShape, dtype, order);
}

std::string checkStickRule(const DeviceLayout &layout, const TensorType &type) {
  if (!deviceDTypeFits(type.elementType, layout.dtype))
    return "device dtype " + std::string(deviceDTypeName(layout.dtype)) +
           " cannot hold " + std::string(elementTypeName(type.elementType)) +
           " values";
  int64_t rank = type.rank();
  std::vector<int64_t> order;
  if (rank > 0) {
    if (static_cast<int64_t>(layout.dimMap.size()) != rank + 1)
      return "dim_map " + shapeStr(layout.dimMap) + " must have " +
             std::to_string(rank + 1) + " entries for " + type.str();
    order.assign(layout.dimMap.begin() + 1, layout.dimMap.end());
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t d = 0; d < rank; ++d)
      if (sorted[static_cast<size_t>(d)] != d)
        return "dim_map " + shapeStr(layout.dimMap) +
               " does not list each host dimension of " + type.str() + " once";
    if (layout.dimMap.front() != layout.dimMap.back())
      return "dim_map " + shapeStr(layout.dimMap) +
             " must start with the stick dimension it ends with";
  }
  DeviceLayout expected = makeStickLayout(type.shape, layout.dtype, order);
  if (layout.stickDim != expected.stickDim)
    return "stick_dim " + std::to_string(layout.stickDim) +
           " differs from dim_map " + shapeStr(layout.dimMap) +
           ", which sticks dimension " + std::to_string(expected.stickDim);
  if (layout.dimMap != expected.dimMap)
    return "dim_map " + shapeStr(layout.dimMap) + " should be " +
           shapeStr(expected.dimMap);
  if (layout.deviceShape != expected.deviceShape)
    return "device_shape " + shapeStr(layout.deviceShape) + " should be " +
           shapeStr(expected.deviceShape) + " by the stick rule";
  return "";
}

std::optional<DeviceLayout> layoutFromAttribute(const Attribute &attr,
                                                std::string &error) {
  if (!attr.isDict()) {
    error = "a layout is a dictionary, got " + attr.str();
    return std::nullopt;
  }
  const AttrDict &d = attr.asDict();
  for (const NamedAttribute &e : d)
    if (e.name != "device_shape" && e.name != "dim_map" && e.name != "dtype" &&
        e.name != "stick_dim") {
      error = "unknown layout key '" + e.name + "'";
      return std::nullopt;
    }
  const Attribute *shape = d.find("device_shape");
  const Attribute *map = d.find("dim_map");
  const Attribute *dtype = d.find("dtype");
  const Attribute *stick = d.find("stick_dim");
  if (!shape || !shape->isIntList() || !map || !map->isIntList() || !dtype ||
      !dtype->isString() || !stick || !stick->isInt()) {
    error = "a layout needs device_shape and dim_map (int lists), dtype (a "
            "string) and stick_dim (an int), got " +
            attr.str();
    return std::nullopt;
  }
  std::optional<isa::DType> dt = parseDeviceDType(dtype->asString());
  if (!dt) {
    error = "unknown device dtype '" + dtype->asString() +
            "' (dl16, f32, i8 or i32)";
    return std::nullopt;
  }
  DeviceLayout layout;
  layout.dtype = *dt;
  layout.stickDim = stick->asInt();
  layout.deviceShape = shape->asInts();
  layout.dimMap = map->asInts();
  return layout;
}

std::optional<DeviceLayout> valueLayout(const Value &value,
                                        std::string &error) {
  const Attribute *a = value.annotations().find(kLayoutAnnotation);
  if (!a) {
    error = "no layout";
    return std::nullopt;
  }
  return layoutFromAttribute(*a, error);
}

DeviceLayout requireLayout(const Value &value) {
  std::string error;
  std::optional<DeviceLayout> l = valueLayout(value, error);
  SPYRE_ASSERT(l, "value '" + value.name() + "' has no layout: " + error);
  return *l;
}

} // namespace spyre::compiler
