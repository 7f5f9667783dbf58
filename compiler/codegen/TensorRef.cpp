// Stick layouts of tensors and their 2-D views (TensorRef.h).
#include "compiler/codegen/TensorRef.h"

#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::codegen {

TensorRef TensorRef::of(const isa::TensorDecl &t) {
  TensorRef r;
  r.name = t.name;
  r.address = t.address;
  r.dtype = t.dtype;
  r.shape = t.hostShape;
  return r;
}

int64_t TensorRef::paddedDim(int i) const {
  SPYRE_ASSERT(i >= 0 && i + 1 < rank(), "leading dim index out of range");
  if (std::find(broadcast.begin(), broadcast.end(), i) != broadcast.end())
    return 1;
  if (padded.empty())
    return shape[static_cast<size_t>(i)];
  SPYRE_ASSERT(padded.size() + 1 == shape.size(),
               "tensor '" + name + "': padded extents need rank - 1 values");
  SPYRE_ASSERT(padded[static_cast<size_t>(i)] >= shape[static_cast<size_t>(i)],
               "tensor '" + name + "': padded extent below the host extent");
  return padded[static_cast<size_t>(i)];
}

namespace {

/// The device order of the leading host dims.
std::vector<int> orderOf(const TensorRef &t) {
  std::vector<int> order = t.dimOrder;
  if (order.empty())
    for (int i = 0; i + 1 < t.rank(); ++i)
      order.push_back(i);
  std::vector<bool> seen(static_cast<size_t>(t.rank()), false);
  SPYRE_ASSERT(static_cast<int>(order.size()) + 1 == t.rank(),
               "tensor '" + t.name + "': dim order needs rank - 1 entries");
  for (int d : order) {
    SPYRE_ASSERT(d >= 0 && d + 1 < t.rank() && !seen[static_cast<size_t>(d)],
                 "tensor '" + t.name + "': dim order is not a permutation");
    seen[static_cast<size_t>(d)] = true;
  }
  return order;
}

} // namespace

std::vector<int64_t> TensorRef::deviceDims() const {
  SPYRE_ASSERT(blockPos >= 0 && blockPos < rank(),
               "tensor '" + name + "': block position out of range");
  std::vector<int64_t> dims;
  for (int i : orderOf(*this))
    dims.push_back(paddedDim(i));
  dims.insert(dims.begin() + blockPos, blocks());
  return dims;
}

int TensorRef::hostDimAt(int pos) const {
  if (pos == blockPos)
    return -1;
  return orderOf(*this)[static_cast<size_t>(pos < blockPos ? pos : pos - 1)];
}

uint64_t TensorRef::sizeSticks() const {
  uint64_t n = 1;
  for (int64_t d : deviceDims())
    n *= static_cast<uint64_t>(d);
  return n;
}

namespace {

/// Stride of device dim `pos` in a row-major list of dims.
int64_t strideOf(const std::vector<int64_t> &dims, int pos) {
  int64_t s = 1;
  for (size_t i = static_cast<size_t>(pos) + 1; i < dims.size(); ++i)
    s *= dims[i];
  return s;
}

} // namespace

int64_t TensorRef::dimStride(int i) const {
  if (std::find(broadcast.begin(), broadcast.end(), i) != broadcast.end())
    return 0;
  std::vector<int> order = orderOf(*this);
  auto p = static_cast<int>(std::find(order.begin(), order.end(), i) -
                            order.begin());
  SPYRE_ASSERT(p < static_cast<int>(order.size()),
               "leading dim index out of range");
  return strideOf(deviceDims(), p < blockPos ? p : p + 1);
}

int64_t TensorRef::blockStride() const {
  return strideOf(deviceDims(), blockPos);
}

uint64_t TensorRef::stickOf(const std::vector<int64_t> &index) const {
  SPYRE_ASSERT(static_cast<int>(index.size()) == rank(), "index rank");
  int64_t s =
      static_cast<int64_t>(address) + index.back() / lanes() * blockStride();
  for (int i = 0; i + 1 < rank(); ++i)
    s += index[static_cast<size_t>(i)] * dimStride(i);
  return static_cast<uint64_t>(s);
}

bool TensorRef::isDefault() const {
  if (blockPos != 0 || !broadcast.empty() || window ||
      orderOf(*this) != orderOf(TensorRef{name, 0, dtype, shape}))
    return false;
  for (int i = 0; i + 1 < rank(); ++i)
    if (paddedDim(i) != shape[static_cast<size_t>(i)])
      return false;
  return true;
}

std::string TensorRef::str() const {
  auto list = [](const std::vector<int64_t> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  std::string s = name + " " + std::string(isa::dtypeName(dtype)) + " " +
                  list(shape) + " @" +
                  isa::hexText(static_cast<int64_t>(address));
  if (isDefault())
    return s;
  s += " device " + list(deviceDims()) + " (blocks at dim " +
       std::to_string(blockPos);
  if (!dimOrder.empty()) {
    std::vector<int64_t> order(dimOrder.begin(), dimOrder.end());
    s += ", host dims in order " + list(order);
  }
  if (window)
    s += ", a window";
  return s + ")";
}

std::optional<TensorRef> TensorRef::matrix(int64_t i) const {
  SPYRE_ASSERT(rank() >= 2, "tensor '" + name + "': a matrix needs rank >= 2");
  std::vector<int64_t> index(static_cast<size_t>(rank()), 0);
  int64_t rest = i;
  for (int d = rank() - 3; d >= 0 && rest >= 0; --d) {
    index[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
    rest /= shape[static_cast<size_t>(d)];
  }
  SPYRE_ASSERT(rest == 0, "tensor '" + name + "': matrix " +
                              std::to_string(i) + " is out of range");
  if (rank() == 2)
    return *this;
  const int64_t rows = shape[static_cast<size_t>(rank() - 2)];
  const int64_t rowStride = dimStride(rank() - 2), blockStep = blockStride();
  TensorRef m;
  m.name = name;
  m.dtype = dtype;
  m.shape = {rows, cols()};
  m.address = stickOf(index);
  // Rows consecutive, the blocks a stride apart: a [rows, cols] tensor whose
  // row dim is padded to that stride with the other matrices' sticks.
  if (rowStride == 1 && (blocks() == 1 || blockStep >= rows)) {
    if (blocks() > 1 && blockStep > rows) {
      m.padded = {blockStep};
      m.window = true;
    }
    return m;
  }
  // Each row's blocks consecutive and rows one after another: the blocks
  // innermost.
  if (blockStep == 1 && rowStride == blocks()) {
    m.blockPos = 1;
    return m;
  }
  return std::nullopt;
}

StickMatrix StickMatrix::of(const TensorRef &t) {
  StickMatrix m;
  m.address = t.address;
  m.dtype = t.dtype;
  m.cols = t.cols();
  m.rows = 1;
  for (int i = 0; i + 1 < t.rank(); ++i)
    m.rows *= t.shape[static_cast<size_t>(i)];
  m.memRows = m.rows;
  m.blockStride = t.blockStride();
  if (t.rank() == 1) {
    m.rowStride = 1;
    return m;
  }
  const int lead = t.rank() - 1;
  SPYRE_ASSERT(orderOf(t) == orderOf(TensorRef{t.name, 0, t.dtype, t.shape}),
               "tensor '" + t.name +
                   "': rows of a 2-D view need the leading dims in host order");
  SPYRE_ASSERT(t.blockPos == 0 || t.blockPos == lead,
               "tensor '" + t.name +
                   "': rows are not one strided dim with the block dim in "
                   "the middle");
  for (int i = 1; i < lead; ++i)
    SPYRE_ASSERT(t.paddedDim(i) == t.shape[static_cast<size_t>(i)],
                 "tensor '" + t.name +
                     "': only the outermost leading dim may be padded for a "
                     "2-D view");
  m.rowStride = t.dimStride(lead - 1);
  m.memRows = m.rows / t.shape[0] * t.paddedDim(0);
  if (t.window)
    m.memRows = m.rows;
  return m;
}

} // namespace spyre::codegen
