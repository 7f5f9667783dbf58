#include "compiler/ir/Types.h"

#include "support/Diagnostic.h"
#include "support/Npy.h"

#include <algorithm>

namespace spyre::compiler {

std::string_view elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::I8:
    return "i8";
  case ElementType::I32:
    return "i32";
  }
  SPYRE_UNREACHABLE("bad element type");
}

std::optional<ElementType> parseElementType(std::string_view name) {
  for (int i = 0; i < kNumElementTypes; ++i) {
    auto t = static_cast<ElementType>(i);
    if (elementTypeName(t) == name)
      return t;
  }
  return std::nullopt;
}

std::string elementTypeChoices() { return "f32, f16, i8 or i32"; }

int elementTypeBytes(ElementType type) {
  switch (type) {
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F16:
    return 2;
  case ElementType::I8:
    return 1;
  }
  SPYRE_UNREACHABLE("bad element type");
}

bool isFloatType(ElementType type) {
  return type == ElementType::F32 || type == ElementType::F16;
}

NpyDtype toNpyDtype(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return NpyDtype::F32;
  case ElementType::F16:
    return NpyDtype::F16;
  case ElementType::I8:
    return NpyDtype::I8;
  case ElementType::I32:
    return NpyDtype::I32;
  }
  SPYRE_UNREACHABLE("bad element type");
}

ElementType fromNpyDtype(NpyDtype dtype) {
  switch (dtype) {
  case NpyDtype::F32:
    return ElementType::F32;
  case NpyDtype::F16:
    return ElementType::F16;
  case NpyDtype::I8:
    return ElementType::I8;
  case NpyDtype::I32:
    return ElementType::I32;
  }
  SPYRE_UNREACHABLE("bad npy dtype");
}

std::string elementTypeSetText(ElementTypeSet set) {
  std::vector<std::string_view> names;
  for (int i = 0; i < kNumElementTypes; ++i)
    if (set & elementTypeBit(static_cast<ElementType>(i)))
      names.push_back(elementTypeName(static_cast<ElementType>(i)));
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0)
      out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

std::string shapeStr(const Shape &shape) { return shapeText(shape); }

int64_t shapeElementCount(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string checkShape(const Shape &shape) {
  if (shape.size() > static_cast<size_t>(kMaxRank))
    return "rank " + std::to_string(shape.size()) + " exceeds the limit of " +
           std::to_string(kMaxRank);
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1)
      return "dimension " + std::to_string(i) + " is " +
             std::to_string(shape[i]) + "; every dimension must be at least 1";
    // Checked before multiplying, so the product itself never overflows.
    if (shape[i] > kMaxElements || n > kMaxElements / shape[i])
      return "shape " + shapeStr(shape) + " has more than 2^40 elements";
    n *= shape[i];
  }
  return "";
}

std::string TensorType::str() const {
  return std::string(elementTypeName(elementType)) + shapeStr(shape);
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> rowMajorStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

} // namespace spyre::compiler
