// Where a tensor's elements are in device memory, as kernels see it.
//
// TensorRef is docs/hardware.md#device-layout with its degrees of
// freedom made explicit: the host's last dim is cut into stick blocks
// (64 DL16 or 32 FP32 lanes), the leading host dims take the device order
// the layout gives them (host order by default), the block dim is placed
// among them (outermost by default), and every leading host dim may be
// padded to a larger device extent (zero sticks, e.g. K padded to a
// multiple of 64 for a matmul's B operand). Device dims are row-major,
// sticks contiguous.
//
// A layout sticked on a host dim other than the last (torch-spyre's
// SpyreTensorLayout with any stick dim, compiler/plan/DeviceLayout.h) is
// the TensorRef of the permuted host shape with that dim last: e.g. host
// [K, N] sticked on K is the TensorRef of [N, K]. Moving between two stick
// dims is a transpose (emitTranspose); between two orders, block positions
// or paddings with the same stick dim, a relayout (emitRelayout).
//
// StickMatrix is the 2-D view most kernels work on: rows x cols elements,
// the stick of (row r, block b) at address + b*blockStride + r*rowStride.
// One matrix of a batched tensor is such a view in place
// (TensorRef::matrix): a window whose padding is the other matrices.
#pragma once

#include "isa/Program.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spyre::codegen {

struct TensorRef {
  std::string name;
  uint64_t address = 0; ///< device address in sticks
  isa::DType dtype = isa::DType::Dl16;
  std::vector<int64_t> shape; ///< host shape
  /// Device extent of each leading host dim (rank - 1 values, each >= the
  /// host extent); empty: no padding.
  std::vector<int64_t> padded;
  /// Index among the device dims of the stick-block dim: 0 is outermost
  /// (the default layout), rank - 1 is just above the lanes.
  int blockPos = 0;
  /// Device order of the leading host dims (a permutation of 0 .. rank-2,
  /// outermost first); empty: host order.
  std::vector<int> dimOrder;
  /// Leading host dims read with stride zero: memory holds one index there
  /// and every index of the view reads it (a broadcast source; only the
  /// relayout kernel takes such a view).
  std::vector<int> broadcast;
  /// The padding sticks of the leading dims hold other data, not zeros: the
  /// view is a window into a larger tensor (one matrix of a batched tensor,
  /// matrix()). Kernels read and write only the host extent of a window;
  /// only the matmul kernel takes one (a relayout would zero its padding).
  bool window = false;

  /// The default layout of a declared tensor.
  static TensorRef of(const isa::TensorDecl &t);

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t lanes() const { return isa::lanesPerStick(dtype); }
  int64_t cols() const { return shape.back(); }
  /// Stick blocks of the last dim: ceil(cols / lanes).
  int64_t blocks() const { return (cols() + lanes() - 1) / lanes(); }
  /// Device extent of leading host dim i (< rank - 1).
  int64_t paddedDim(int i) const;
  /// Device dims without the lanes, outermost first.
  std::vector<int64_t> deviceDims() const;
  uint64_t sizeSticks() const;
  /// Stride in sticks of leading host dim i, and of the block dim.
  int64_t dimStride(int i) const;
  int64_t blockStride() const;
  /// The host dim at device dim `pos`, -1 for the block dim.
  int hostDimAt(int pos) const;
  /// Stick holding host element `index` (rank values; the last picks the
  /// block, its lane is index.back() % lanes()).
  uint64_t stickOf(const std::vector<int64_t> &index) const;
  /// Blocks outermost, host order, no padding: what a TensorDecl describes.
  bool isDefault() const;
  /// Matrix `i` of the tensor (its last two dims at index i of the leading
  /// ones, counted row-major) in place, as a [rows, cols] view: stick
  /// (r, b) of it is stickOf({i.., r, b*lanes}). The view is a window whose
  /// row dim is padded to the block stride where other matrices lie between
  /// its blocks (the default layout of [B, R, C]: blocks B*R sticks apart).
  /// nullopt when the layout does not hold the matrix as one strided view
  /// (its rows not consecutive sticks under the block dim, nor its blocks
  /// consecutive sticks of each row), e.g. batch dims ordered inside the
  /// rows. Rank >= 2.
  std::optional<TensorRef> matrix(int64_t i) const;
  /// `x dl16 [3, 100] @0x10` plus the layout when it is not the default.
  std::string str() const;
};

struct StickMatrix {
  uint64_t address = 0;
  isa::DType dtype = isa::DType::Dl16;
  int64_t rows = 0, cols = 0;
  int64_t blockStride = 0, rowStride = 1;
  /// Rows present in memory (>= rows): the padded extent of the row dim.
  /// Rows beyond `rows` are zero sticks. A window has none (memRows ==
  /// rows): what lies beyond its rows is other data.
  int64_t memRows = 0;

  /// The rows x last-dim view of a tensor whose leading dims collapse into
  /// one strided row dim (host order, only the outermost of them padded,
  /// the block dim outermost or innermost). Asserts otherwise.
  static StickMatrix of(const TensorRef &t);

  int64_t lanes() const { return isa::lanesPerStick(dtype); }
  int64_t blocks() const { return (cols + lanes() - 1) / lanes(); }
  int64_t stick(int64_t row, int64_t block) const {
    return static_cast<int64_t>(address) + block * blockStride +
           row * rowStride;
  }
  /// Valid lanes of the last block (lanes() when cols fill it).
  int64_t lastLanes() const { return cols - (blocks() - 1) * lanes(); }
};

} // namespace spyre::codegen
