// Op kernels: each emits complete, race-free per-core instruction streams
// for one op into a ProgramBuilder, over up to all cores of the chip.
//
// Every kernel follows the same shape (docs/kernels.md has the details):
// the op's iteration space is split across cores deterministically (rows,
// or an M x N x K grid for matmul) and the split is returned as a plan that
// can be printed and passed back to reproduce the program; each core's share is
// tiled so that its LX working set, with two buffers per streamed operand,
// fits the LX region given in the options; and each core runs a pipeline
// DMA load -> compute (SFU and/or PT units) -> DMA store in which the load of
// tile i+1 overlaps the compute of tile i and the store of tile i-1 (with
// KernelOptions::overlap false, one buffer per streamed operand: the stages
// take turns, the -O0 baseline). Engines
// hand buffers over with signal/wait on per-core counters; every counter is
// back at zero when a kernel's streams end, and every register and counter a
// kernel took is given back, so kernels can follow one another in the same
// streams (separated by ProgramBuilder::barrierAll() when one reads what the
// other wrote).
//
// Tensors are TensorRef descriptors (Layout.h). Elementwise and row kernels
// take any tensor whose leading dims collapse into rows (StickMatrix::of);
// sizes that are not multiples of the stick lanes work everywhere: padding
// lanes are ignored by reductions (count=) and written as zero.
#pragma once

#include "compiler/codegen/ProgramBuilder.h"
#include "compiler/codegen/TensorRef.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::codegen {

/// What every kernel takes besides its tensors.
struct KernelOptions {
  /// Cores firstCore .. firstCore + cores - 1; cores = 0 means to the last
  /// core of the chip. A kernel may use fewer when the op is small.
  int cores = 0;
  int firstCore = 0;
  /// PT and SFU units (corelets) per core; 0: all of them.
  int units = 0;
  /// Source op recorded as the provenance of every instruction.
  std::string op;
  /// The kernel uses LX sticks [lxBase, lxBase + lxSticks) on each core;
  /// lxSticks = 0 means up to the end of LX.
  int64_t lxBase = 0;
  int64_t lxSticks = 0;
  /// Row kernels: rows per tile; 0 lets the kernel choose.
  int64_t tileRows = 0;
  /// false: one buffer per streamed operand, so a core's load, compute and
  /// store run one after another (the -O0 baseline).
  bool overlap = true;
};

// ------------------------------------------------------------ row kernels

/// Work division of a row kernel: the rows of each core and the tile size.
struct RowPlan {
  struct Part {
    int core = 0;
    int64_t begin = 0, end = 0; ///< rows [begin, end)
  };
  int64_t rows = 0;
  int64_t tileRows = 0;
  int units = 1;        ///< SFU units per core sharing each tile's rows
  int64_t lxSticks = 0; ///< LX working set per core
  std::vector<Part> parts;
  /// Why nothing was emitted (a row or the tiles asked for do not fit the
  /// LX region); empty when the kernel was emitted.
  std::string error;

  /// One line per core: `core 3: rows [24, 32), 2 tiles of 4`.
  std::string str() const;
};

/// y = op(x) for an SFU op of the unary family (copy, neg, abs, relu, exp,
/// recip, rsqrt, sqrt, tanh, sigmoid, gelu, gelut, silu, erf). x and y have
/// the same shape and dtype (DL16 or FP32).
RowPlan emitUnary(ProgramBuilder &pb, isa::Opcode op, const TensorRef &x,
                  const TensorRef &y, const KernelOptions &opt = {});

/// y = op(x, imm) for adds, muls, maxs, pows (the scalar family).
RowPlan emitScalar(ProgramBuilder &pb, isa::Opcode op, float imm,
                   const TensorRef &x, const TensorRef &y,
                   const KernelOptions &opt = {});

/// y = op(a, b) for add, sub, mul, div, max, min. b has a's shape, or is a
/// row broadcast over a's rows (one row of a's last dim: shape [N], [1, N],
/// ...), or a scalar (one element). a, b and y share their dtype.
RowPlan emitBinary(ProgramBuilder &pb, isa::Opcode op, const TensorRef &a,
                   const TensorRef &b, const TensorRef &y,
                   const KernelOptions &opt = {});

/// y = op(x, col), or op(col, x) with `colFirst`, for add, sub, mul, div,
/// max, min, where col holds one value per row of x: x's shape with the
/// last dim 1 ([.., R, 1], what a reduction with keepdims gives). The
/// broadcast happens in LX (bcast of each row's stick), so col is read once
/// and no [.., R, C] copy of it exists. x, col and y share their dtype.
RowPlan emitColumnBinary(ProgramBuilder &pb, isa::Opcode op,
                         const TensorRef &x, const TensorRef &col,
                         const TensorRef &y, bool colFirst = false,
                         const KernelOptions &opt = {});

/// One step of an elementwise chain (emitChain). The running value v
/// becomes op(v) for an SFU unary op; op(v, imm) for a scalar op (adds,
/// muls, maxs, pows) when `imm` is set; op(v, operand) for a binary op, or
/// op(operand, v) with `operandFirst` (sub and div only when the operand is
/// broadcast). The operand has x's shape, or is one row of x's last dim, or
/// one element, in x's dtype.
struct ChainStep {
  isa::Opcode op = isa::Opcode::Copy;
  std::optional<float> imm;
  std::optional<TensorRef> operand;
  bool operandFirst = false;
};

/// y = the chain applied to x in one pass: each tile is loaded once, every
/// step runs on it in LX, and only the result is stored (the fusion of
/// elementwise ops consumed on the same cores). x and y have the same shape
/// and dtype.
RowPlan emitChain(ProgramBuilder &pb, const TensorRef &x,
                  const std::vector<ChainStep> &chain, const TensorRef &y,
                  const KernelOptions &opt = {});

/// y = x converted between DL16 and FP32 (same shape).
RowPlan emitConvert(ProgramBuilder &pb, const TensorRef &x, const TensorRef &y,
                    const KernelOptions &opt = {});

/// Softmax over the last dim, in FP32 inside: row max, subtract, exp, sum,
/// reciprocal, multiply. x and y have the same shape and dtype.
RowPlan emitSoftmax(ProgramBuilder &pb, const TensorRef &x, const TensorRef &y,
                    const KernelOptions &opt = {});

/// What a causal mask adds to a hidden score: far below any activation,
/// yet finite in DL16 and FP32, so that softmax makes it exactly zero.
constexpr float kMaskValue = -16777216.0f; // -2^24

/// The first stick block of [.., Q, K] scores (`lanes` lanes per stick: 64
/// DL16, 32 FP32) that a causal mask touches: the blocks before it are
/// seen whole by every query (their last key is at most K - Q). At most
/// the last block, so a decode-shaped mask (Q = 1) is one block.
int64_t causalMaskFirstBlock(int64_t queries, int64_t keys, int lanes);

/// The diagonal table of a causal mask over [.., Q, K] scores from block
/// f = causalMaskFirstBlock on (blocks = ceil(K / lanes), back = lanes x
/// (blocks - 1 - f)): stick j holds, in lane l, kMaskValue when l > j -
/// back - lanes x f + (K - Q) and 0 otherwise, for j < Q + back. Stick i -
/// lanes x (b - f) + back is then the mask of query i in stick block b >= f
/// of its row: the mask of every row and block is read from one table, a
/// row further one stick on, a block further `lanes` sticks back, so one
/// instruction masks a whole tile of rows however its queries fall, and
/// the mask takes at most Q + K sticks instead of Q x K elements.
struct MaskTable {
  std::vector<int64_t> shape; ///< [sticks, lanes]
  std::vector<float> values;
};
MaskTable causalMaskTable(int64_t queries, int64_t keys, int lanes);

/// y = softmax(x * scale + causal mask) over the last dim, the scale,
/// mask and softmax in one pass over the scores: x is [.., Q, K] (the
/// leading dims collapse into rows; row r is query r mod Q), the mask hides
/// key j from query i when j > i + (K - Q) (aligned to the bottom right,
/// as causal_mask_add), K >= Q. `mask` is causalMaskTable(Q, K, lanes) in
/// x's dtype; each core loads it once into LX and adds it to each tile in
/// place, one SFU instruction per tile and unit. Tiles never straddle two
/// queries' slices (their rows divide Q) and cores take whole tiles. scale
/// must be positive (a hidden score stays below -2^24 * scale).
RowPlan emitCausalSoftmax(ProgramBuilder &pb, const TensorRef &x,
                          const TensorRef &mask, const TensorRef &y,
                          float scale, const KernelOptions &opt = {});

/// Rotary position embedding over heads of `headDim` along the last dim,
/// in one pass: y = x * cos + swap(x) * sin per head, swap exchanging the
/// two halves of the head (with the sign of rotate_half folded into sin,
/// whose first half holds -sin, this is Hugging Face's
/// apply_rotary_pos_emb). cos and sin have x's shape, or x's with the last
/// dim one head (the same angles for every head, as a position's are: read
/// once per row instead of once per head); each half of a head is whole
/// sticks, so the swap is the other half's blocks, read in place.
/// The products and the sum round to x's dtype as separate mul and add
/// ops would.
RowPlan emitRotary(ProgramBuilder &pb, const TensorRef &x, const TensorRef &cos,
                   const TensorRef &sin, const TensorRef &y, int64_t headDim,
                   const KernelOptions &opt = {});

/// y[i.., :] = table[ids[i..], :], the ids read at run time (TokenKernels.cpp):
/// each id is loaded into a register with `lr`, bounded by the vocabulary
/// (an id outside it stops the run with the simulator's index-out-of-range
/// finding), and its row is one DMA from [register + table]. table is
/// [vocab, hidden] in its default layout, ids INT32 of any shape, y [ids..,
/// hidden] in table's dtype.
RowPlan emitEmbedding(ProgramBuilder &pb, const TensorRef &table,
                      const TensorRef &ids, const TensorRef &y,
                      const KernelOptions &opt = {});

/// y[i.., 0] = the lowest index of the largest element of x[i.., :] (NaN
/// passed over), one `rargmax` per row; x DL16 or FP32, y INT32 [.., 1].
RowPlan emitArgmax(ProgramBuilder &pb, const TensorRef &x, const TensorRef &y,
                   const KernelOptions &opt = {});

/// LayerNorm over the last dim with FP32 statistics:
/// y = (x - mean) / sqrt(var + eps) * weight + bias; weight and bias are
/// optional vectors of the last dim (DL16 or FP32).
RowPlan emitLayerNorm(ProgramBuilder &pb, const TensorRef &x,
                      const std::optional<TensorRef> &weight,
                      const std::optional<TensorRef> &bias, const TensorRef &y,
                      float eps, const KernelOptions &opt = {});

/// RMSNorm over the last dim: y = x / sqrt(mean(x^2) + eps) * weight.
RowPlan emitRmsNorm(ProgramBuilder &pb, const TensorRef &x,
                    const std::optional<TensorRef> &weight, const TensorRef &y,
                    float eps, const KernelOptions &opt = {});

enum class ReduceKind { Sum, Mean, Max };

/// Reduction over the last dim, FP32 inside. y keeps the dim: x [..., N] ->
/// y [..., 1] (DL16 or FP32).
RowPlan emitReduce(ProgramBuilder &pb, ReduceKind kind, const TensorRef &x,
                   const TensorRef &y, const KernelOptions &opt = {});

// ----------------------------------------------------------------- matmul

struct MatmulArgs {
  /// [M, K] sticked on K; with transA, [K, M] sticked on M (A^T is used).
  TensorRef a;
  /// [K, N] sticked on N; with transB, [N, K] sticked on K. Its K dim may be
  /// padded to a multiple of 64 with zero rows (TensorRef::padded); when it
  /// is not, the kernel zeroes the missing rows in LX.
  TensorRef b;
  /// [M, N], DL16 or FP32.
  TensorRef c;
  /// [N] added to every row of C (DL16 or FP32).
  std::optional<TensorRef> bias;
  /// The gated product (GatedMatmulKernel.cpp): with a second weight of
  /// b's shape, C = silu(A x B) * (A x up), both products of each tile
  /// computed side by side and gated in LX. Needs B not transposed, a DL16
  /// C and no bias.
  std::optional<TensorRef> up;
  bool transA = false;
  bool transB = false;
};

/// The decisions of a matmul plan besides the cores: the gridM x gridN grid
/// over (M, N), the tiles (tileM rows, tileK of the reduction, tileN
/// columns; K and N multiples of 64), the loop order (n, m, k when nOuter,
/// else m, n, k), and how operands reach the cores:
///  - shareA: the cores of a grid row (consecutive cores, so neighbours on
///    the ring) need the same A tiles; the row's first core loads each from
///    device memory and the tile travels along the row over the data ring
///    (send/recv), so A is read once per grid row instead of once per core.
///    Needs every core's columns in one tile and A not transposed.
///  - keepB: each core loads its whole B panel (K x its columns) once and
///    keeps it in LX for all its M tiles. Needs the columns in one tile and
///    B not transposed.
///  - gridK, the grid's third side (K split): the gridK partners of each
///    (M, N) block sit on consecutive cores (neighbours on the reduce ring)
///    and take contiguous ranges of K in whole sticks (larger ranges first,
///    none empty). Each computes an FP32 partial of every C tile of the
///    block; the partials travel down the chain of partners over the reduce
///    ring (rsend/racc) into the first partner, the block's owner, which
///    alone adds the bias, converts and stores. Not with shareA.
///  - pairFill: with keepB, the first two M tiles of each N tile run
///    together, K outer, while the panel arrives (MatmulPlan::pairFill).
///    Unset, the plan derives it from the other decisions and the config
///    as the planner does; set, it is forced (true needs a kept panel, two
///    M tiles, several K tiles, DL16 C and overlap).
struct MatmulTiling {
  int gridM = 1, gridN = 1, gridK = 1;
  int64_t tileM = 0, tileK = 0, tileN = 0;
  bool nOuter = true;
  bool shareA = false;
  bool keepB = false;
  std::optional<bool> pairFill;
};

/// Work division and tiling of a matmul (MatmulTiling): each core tiles its
/// block with K innermost so each C tile accumulates in FP32 in LX. The
/// rows of each tile are shared among the core's PT units.
struct MatmulPlan {
  struct Part {
    int core = 0;
    int64_t m0 = 0, m1 = 0; ///< rows of C
    int64_t n0 = 0, n1 = 0; ///< columns of C
    int64_t k0 = 0, k1 = 0; ///< the range of K this core reduces over
  };
  int64_t m = 0, k = 0, n = 0;
  /// Parts are block by block, row by row, the gridK partners of a block on
  /// consecutive cores (the owner first).
  int gridM = 1, gridN = 1, gridK = 1;
  int units = 1;
  int64_t tileM = 0, tileK = 0, tileN = 0;
  bool nOuter = true;
  bool shareA = false, keepB = false; ///< see MatmulTiling
  /// With a kept B panel, the first two M tiles of each N tile run
  /// together, K outer, while the panel arrives, so each K tile of it
  /// feeds twice the PT work. The planner takes it where its estimate says
  /// the PT units would otherwise wait for the panel; it follows from the
  /// other decisions and the config, so a replayed plan that leaves it
  /// unset (MatmulTiling::pairFill) derives it again.
  bool pairFill = false;
  int64_t lxSticks = 0;        ///< LX working set per core (largest)
  int64_t estimatedCycles = 0; ///< the planner's estimate of the time
  std::vector<Part> parts;
  /// Why there is no plan (no tiling fits the LX region); empty when there
  /// is one. emitMatmul needs a plan without an error.
  std::string error;

  MatmulTiling tiling() const;
  std::string str() const;
};

/// Which plans planMatmul weighs: each of shareA and keepB fixed to a value
/// or, unset, tried both ways; kSplit fixes the grid's K side or, unset,
/// lets the planner choose it. shareA and keepB false and kSplit 1 is the
/// plain plan in which every core loads its own operands and computes whole
/// C tiles (the -O0 baseline).
struct MatmulSearch {
  std::optional<bool> shareA, keepB;
  std::optional<int> kSplit;
  static MatmulSearch plain() { return {false, false, 1}; }
};

/// The default plan: the grid, tiles and operand sharing that minimise an
/// estimate of time from the config (PT rate, memory bandwidth shared by
/// the active cores, DMA latency, data-ring time of shared tiles,
/// reduce-ring time of K-split partials, LX size). The grid may use fewer
/// cores than allowed when more would only add memory traffic. gridM,
/// gridN > 0 fix the (M, N) grid and plan only the rest; the K side is then
/// search.kSplit, 1 when unset. A kSplit the problem or the cores cannot
/// take gives a plan whose error names why.
MatmulPlan planMatmul(const hw::HwConfig &config, const MatmulArgs &args,
                      const KernelOptions &opt = {}, int gridM = 0,
                      int gridN = 0, const MatmulSearch &search = {});

/// Why a plan with these decisions cannot run the product on the cores and
/// LX region of `opt` (grid larger than the problem or the cores, a K split
/// below 1 or into more partners than K has sticks, tiles off the
/// 64-element granularity, working set over the region, sharing or keeping
/// an operand the plan cannot); empty when it can. For plans that come from
/// outside (a replayed mapping).
std::string matmulPlanProblem(const hw::HwConfig &config,
                              const MatmulArgs &args, const KernelOptions &opt,
                              const MatmulTiling &tiling);

/// The plan with these decisions (tiles clamped to the blocks), which must
/// pass matmulPlanProblem.
MatmulPlan planMatmulWith(const hw::HwConfig &config, const MatmulArgs &args,
                          const KernelOptions &opt, const MatmulTiling &tiling);

/// C = A x B (+ bias), DL16 inputs, FP32 accumulation over K tiles, C in
/// its dtype. With `plan`, that work division is used (e.g. a recorded one).
MatmulPlan emitMatmul(ProgramBuilder &pb, const MatmulArgs &args,
                      const KernelOptions &opt = {},
                      const MatmulPlan *plan = nullptr);

// --------------------------------------------------- transposes and copies

/// Work division of a transpose or a copy: per core, a range of the outer
/// index and, for transposes, of the columns of the input.
struct MovePlan {
  struct Part {
    int core = 0;
    int64_t o0 = 0, o1 = 0; ///< outer index range
    int64_t q0 = 0, q1 = 0; ///< input columns (transpose) or 0, 0
  };
  int64_t tileQ = 0, tileP = 0; ///< transpose tile: input columns and rows
  int64_t lxSticks = 0;
  std::vector<Part> parts;

  std::string str() const;
};

/// y = x with the last two dims swapped: x [..., P, Q] -> y [..., Q, P],
/// through xpose in 64 x 64 (DL16) or 32 x 32 (FP32) blocks. Default layouts.
MovePlan emitTranspose(ProgramBuilder &pb, const TensorRef &x,
                       const TensorRef &y, const KernelOptions &opt = {});

/// y = x between two stick layouts of the same tensor (same shape and
/// dtype): any block position and padding on either side. Sticks move
/// through LX by DMA; padding sticks of y are written as zero.
MovePlan emitRelayout(ProgramBuilder &pb, const TensorRef &x,
                      const TensorRef &y, const KernelOptions &opt = {});

// ---------------------------------------------------------------- attention

/// Attention of grouped-query heads in one kernel (AttentionKernel.cpp):
/// y[b, h] = softmax(q[b, h] k[b, j]^T * scale (+ causal mask)) v[b, j]
/// with j = h / (H / KV), for q and y [B, H, S, hd], k and v [B, KV, L, hd],
/// all DL16, in any layout sticked on hd (a view of another tensor's memory
/// too: the heads of a [B, S, H x hd] projection). The causal mask hides key
/// i' from query i when i' > i + (L - S) (aligned to the bottom right, as
/// causal_mask_add; L >= S). The scores never leave LX.
struct AttentionArgs {
  TensorRef q, k, v, y;
  /// More keys and values after k's and v's along the tokens (a cache's
  /// new part), read where they lie; the keys are then k's and these.
  std::optional<TensorRef> kMore, vMore;
  float scale = 1.0f;
  bool causal = false;
};

/// Work division of the attention kernel: the key/value heads (groups) of
/// every sequence are spread over the cores, `coresPerGroup` cores each,
/// and a group's query tiles (tileRows rows of one query head) over its
/// cores, balanced by the keys each tile sees.
struct AttentionPlan {
  struct Tile {
    int64_t group = 0; ///< b * KV + j
    int64_t head = 0;  ///< query head h
    int64_t row0 = 0, rows = 0;
    int64_t keys = 0; ///< keys the tile's last row sees (all of L without a mask)
  };
  struct Part {
    int core = 0;
    std::vector<Tile> tiles; ///< in the order the core runs them
  };
  int64_t tileRows = 0;
  int coresPerGroup = 0;
  /// Keys taken at a time when one head's do not fit LX at once (a
  /// multiple of 64); 0 when they do.
  int64_t chunkKeys = 0;
  int64_t lxSticks = 0;
  /// The kernel's estimate of its cycles (memory or compute, whichever is
  /// longer), from which coresPerGroup was chosen.
  int64_t estimatedCycles = 0;
  std::vector<Part> parts;
  /// Why nothing can be emitted (the keys of one head do not fit LX);
  /// empty when the plan is good.
  std::string error;

  /// One line per core: `core 3: 8 tiles of 64 rows in group 0, 139264 scores`.
  std::string str() const;
};

/// The plan emitAttention uses for `args` (tile rows, cores per group and
/// the tiles of each core).
AttentionPlan planAttention(const hw::HwConfig &config,
                            const AttentionArgs &args,
                            const KernelOptions &opt = {});

/// Emits the kernel: per core, the keys of a group transposed once into LX
/// (xpose) and its values loaded once, then per query tile Q K^T on the PT
/// units, mask, scale and softmax on the SFU units in FP32, P V on the PT
/// units; the query tiles, scores and outputs double-buffered. Keys that
/// do not fit LX at once are taken in chunks, each chunk's result merged
/// with the one so far by the row statistics (AttentionKernel.cpp). Returns
/// the plan; with an error in it, nothing was emitted.
AttentionPlan emitAttention(ProgramBuilder &pb, const AttentionArgs &args,
                            const KernelOptions &opt = {});

} // namespace spyre::codegen
