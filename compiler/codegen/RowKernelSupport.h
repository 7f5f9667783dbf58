// The framework of the row kernels (Kernels.h: elementwise ops, conversion,
// softmax, layer and RMS norm, reductions over the last dim and rotary
// embedding), internal to compiler/codegen: a kernel describes its operands,
// constants, scratch and the SFU code of one sub-tile (RowKernel), and
// runRowKernel plans and emits it. ElementwiseKernels.cpp and
// ReductionKernels.cpp hold the kernels.
//
// All of them share one driver. A core owns a contiguous range of rows and
// walks it in tiles of t rows. A tile sits in LX as in memory, blocks
// outermost: block b's t row sticks are contiguous (block stride t), so a
// tile is one DMA instruction with one contiguous run per block. Each
// streamed operand has two tile buffers (a BufferRing: load -> SFU units),
// the output two more (SFU units -> store), or one each without overlap
// (KernelOptions::overlap: a tile's compute then waits for its load and for
// the store of the tile before); constants (bias rows, weights) are loaded
// once per core. The SFU units split every tile's rows among
// themselves, each working on its rows of every block.
//
// SFU code per tile works block by block: the full blocks in one
// instruction whose "rows" are the blocks (n = rows of the sub-tile,
// m = blocks, strides t), the last partial block in one instruction with
// count = its valid lanes, so padding lanes are never used and are written
// as zero. Row statistics work on an FP32 copy of the sub-tile laid out
// [block][row][F] (F = 2 FP32 sticks per DL16 stick, 1 for FP32 input):
// per-block partial reductions (rsum/rmax, one stick per row and block),
// then a column reduction over the blocks (csum/cmax) gives one stick per
// row holding the row's value in every lane.
#pragma once

#include "compiler/codegen/KernelSupport.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::codegen::rowkernel {

inline constexpr isa::DType kF32 = isa::DType::Fp32;

/// One SFU unit's view of the kernel: its fixed scratch and the constants.
struct UnitCtx {
  StreamBuilder *sfu = nullptr;
  int unit = 0;
  int64_t hmax = 0;            ///< most rows of any of its sub-tiles
  std::vector<int64_t> consts; ///< LX address of each constant
  int64_t scratch = 0;         ///< base of the unit's scratch
};

/// One sub-tile: `h` rows of the current tile, starting at the addresses
/// given (block 0); blocks are `bs` sticks apart in the tile buffers.
struct SubTile {
  int64_t h = 0;
  int64_t bs = 0;
  std::vector<Addr> in;
  Addr out;
  /// RowKernel::cursor at the sub-tile's first row.
  Addr cursor;
};

struct ConstSpec {
  StickMatrix m;
  int64_t padTo = 0; ///< LX sticks; zero sticks after the constant's own
};

struct RowKernel {
  std::string what;
  std::vector<StickMatrix> inputs;
  StickMatrix output;
  std::vector<ConstSpec> consts;
  /// Scratch sticks of one unit for sub-tiles of up to h rows.
  std::function<int64_t(int64_t h)> scratch = [](int64_t) { return 0; };
  std::function<void(const UnitCtx &)> prologue;
  std::function<void(const UnitCtx &, const SubTile &)> compute;
  /// Rows that repeat with this period (the queries of [.., Q, K] scores):
  /// when set, a tile's rows divide it, so no tile straddles a multiple of
  /// it, and every core takes whole tiles.
  int64_t period = 0;
  /// With a period: an address each SFU unit steps along the rows, at row r
  /// the LX address of constant `cursorConst` + `cursorOffset` + (r mod
  /// period) (SubTile::cursor), e.g. a row's entry in a table.
  size_t cursorConst = 0;
  int64_t cursorOffset = 0;
};

/// Plans the tiles of `k` (rows per tile from the LX fit, or
/// opt.tileRows), splits its rows among the cores and emits every core's
/// streams; `defaultOp` names the op when opt.op is empty. A plan that does
/// not fit comes back with RowPlan::error set and nothing emitted.
RowPlan runRowKernel(ProgramBuilder &pb, const RowKernel &k,
                     const KernelOptions &opt, std::string_view defaultOp);

void requireSameShape(const TensorRef &a, const TensorRef &b,
                      std::string_view what);

void requireFloat(const TensorRef &t, std::string_view what);

/// Valid lanes of a matrix's last block, 0 when it is full.
int64_t remOf(const StickMatrix &m);

/// Makes the instruction for the sticks at offset `off` of every tile
/// operand, over rows `r`; `last` is set for the padded last block.
using BlockOp =
    std::function<InstrBuilder(int64_t off, const Rows &r, bool last)>;

/// The SFU code of an elementwise op: the full blocks in one instruction
/// whose rows are the blocks, the padded last block with count.
void elementwise(StreamBuilder &s, const StickMatrix &x, const SubTile &st,
                 const BlockOp &make);

} // namespace spyre::codegen::rowkernel
