// Tensor types of the graph IR: an element type and a static shape.
//
// At graph level a tensor is stored as f32, f16, i8 or i32 (the device's DL16
// appears only after layout, as a property of a value's placement). Shapes are
// static: every dimension is at least 1 and the element count fits in 2^40,
// so products of dimensions never overflow int64. A rank-0 shape `[]` is a
// scalar with one element.
#pragma once

#include "support/Npy.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

/// A tensor's element type at graph level, as the host holds it. Its format
/// on the device (DL16, FP32, ...) is another concept, an isa::DType chosen
/// by the layout pass (compiler/plan/DeviceLayout.h).
enum class ElementType : uint8_t { F32, F16, I8, I32 };
constexpr int kNumElementTypes = 4;

/// `f32`, `f16`, `i8`, `i32`: the one spelling used by graph JSON and the IR.
std::string_view elementTypeName(ElementType type);
/// The element type spelled `name`, or nullopt.
std::optional<ElementType> parseElementType(std::string_view name);
/// `f32, f16, i8 or i32`, for messages.
std::string elementTypeChoices();
int elementTypeBytes(ElementType type);
bool isFloatType(ElementType type);
NpyDtype toNpyDtype(ElementType type);
ElementType fromNpyDtype(NpyDtype dtype);

/// A set of element types, bit (1 << ElementType).
using ElementTypeSet = uint8_t;
constexpr ElementTypeSet elementTypeBit(ElementType t) {
  return static_cast<ElementTypeSet>(1u << static_cast<unsigned>(t));
}
constexpr ElementTypeSet kFloatTypes =
    elementTypeBit(ElementType::F32) | elementTypeBit(ElementType::F16);
constexpr ElementTypeSet kAllTypes = (1u << kNumElementTypes) - 1;
/// `f32 or f16`, for messages.
std::string elementTypeSetText(ElementTypeSet set);

using Shape = std::vector<int64_t>;

/// Limits that keep every size computation in range.
constexpr int kMaxRank = 16;
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// `[3, 64]`, `[]`.
std::string shapeStr(const Shape &shape);
/// Product of the dimensions (1 for a scalar). The shape must be valid.
int64_t shapeElementCount(const Shape &shape);
/// Empty when `shape` is valid, else what is wrong with it (dimension below
/// 1, rank above kMaxRank, too many elements).
std::string checkShape(const Shape &shape);

struct TensorType {
  ElementType elementType = ElementType::F32;
  Shape shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t elementCount() const { return shapeElementCount(shape); }
  int64_t byteSize() const {
    return elementCount() * elementTypeBytes(elementType);
  }
  /// `f32[3, 64]`: how the IR prints a type.
  std::string str() const;

  bool operator==(const TensorType &other) const = default;
};

/// `axis` in [-rank, rank) as an index in [0, rank), or nullopt when out of
/// range. Negative axes count from the end, as in NumPy.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// NumPy broadcasting of two shapes: dimensions are aligned from the right and
/// each pair must be equal or contain a 1. Nullopt when they are incompatible.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);

/// Row-major strides of a shape, in elements.
std::vector<int64_t> rowMajorStrides(const Shape &shape);

} // namespace spyre::compiler
