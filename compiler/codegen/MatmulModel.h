// The matmul kernel's model of one problem (Kernels.h, emitMatmul): the
// problem as the kernel sees it, a core's block, the tile shape and loop
// nest, the LX layout and the A chains of a shared-A plan. The planner and
// its cost model (MatmulPlan.cpp) choose among shapes; the emitter
// (MatmulKernel.cpp, which describes the kernel) turns the chosen one into
// streams, with the gated product's own steps in GatedMatmulKernel.cpp.
// Internal to the three.
#pragma once

#include "compiler/codegen/KernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace spyre::codegen::matmul {


constexpr int64_t kDl16Lanes = 64; ///< lanes of a DL16 stick: the granule of K and N
/// Pieces of a paced C tile store (MatmulCore::emitStore): enough to spread
/// the writes over the next tile, few enough to keep the program short.
constexpr int64_t kStorePieces = 8;
/// C tiles per core from which the stores are paced: with fewer, the bursts
/// are few and pacing the last ones only delays the end.
constexpr int64_t kPacedTiles = 4;
/// K tiles of a kept panel a core may load ahead of its PT units.
constexpr int64_t kPanelAhead = 2;
/// How much faster than the best plan with K whole a K split must be
/// estimated before the planner takes it. The shapes it pays on are memory
/// bound, where the estimate is 5-15% above the simulated time for plans
/// with and without a split alike; within that band the sign of the
/// difference is noise (decode-like 8 x 16384 x 256: the split estimated
/// 0.2% faster, simulated 1.8% slower), and a split also takes more cores
/// and the reduce ring.
constexpr double kSplitMargin = 0.05;

enum Dim { DimM = 0, DimN = 1, DimK = 2 };

/// The problem as the kernel sees it.
struct Problem {
  StickMatrix a, b, c;
  std::optional<StickMatrix> bias;
  /// The gated product's second weight (MatmulArgs::up), b's shape.
  std::optional<StickMatrix> up;
  bool transA = false, transB = false;
  int64_t m = 0, k = 0, n = 0;
  bool outF32 = true;

  /// B matrices each tile multiplies: 2 for the gated product.
  int64_t weights() const { return up ? 2 : 1; }
};

// ---- The gated product's own steps (GatedMatmulKernel.cpp)

/// Asserts what the gated product needs of its operands.
void checkGated(const Problem &p);

inline Problem problemOf(const MatmulArgs &args) {
  Problem p;
  p.transA = args.transA;
  p.transB = args.transB;
  p.a = StickMatrix::of(args.a);
  p.b = StickMatrix::of(args.b);
  p.c = StickMatrix::of(args.c);
  SPYRE_ASSERT(p.a.dtype == isa::DType::Dl16 && p.b.dtype == isa::DType::Dl16,
               "matmul: A and B must be DL16");
  SPYRE_ASSERT(p.c.dtype == isa::DType::Dl16 || p.c.dtype == isa::DType::Fp32,
               "matmul: C must be DL16 or FP32");
  p.outF32 = p.c.dtype == isa::DType::Fp32;
  p.m = p.transA ? p.a.cols : p.a.rows;
  p.k = p.transA ? p.a.rows : p.a.cols;
  int64_t kb = p.transB ? p.b.cols : p.b.rows;
  p.n = p.transB ? p.b.rows : p.b.cols;
  SPYRE_ASSERT(kb == p.k, "matmul: K of A (" + std::to_string(p.k) +
                              ") and of B (" + std::to_string(kb) + ") differ");
  SPYRE_ASSERT(p.c.rows == p.m && p.c.cols == p.n,
               "matmul: C is not " + std::to_string(p.m) + " x " +
                   std::to_string(p.n));
  if (args.bias) {
    p.bias = StickMatrix::of(*args.bias);
    SPYRE_ASSERT(p.bias->rows == 1 && p.bias->cols == p.n &&
                     (p.bias->dtype == isa::DType::Dl16 ||
                      p.bias->dtype == isa::DType::Fp32),
                 "matmul: bias must be a DL16 or FP32 vector of N");
  }
  if (args.up) {
    p.up = StickMatrix::of(*args.up);
    checkGated(p);
  }
  return p;
}

/// A core's share of the problem: its rows and columns of C, the length of
/// its range of K, and its place in a K split (gridK partners, the owner
/// first).
struct Block {
  int64_t m = 0, n = 0, k = 0;
  int gridK = 1;
  bool owner = true;
};

/// What the tiles of a plan need.
struct Shape {
  int64_t tileM = 0, tileK = 0, tileN = 0;
  int64_t mTiles = 1, nTiles = 1, kTiles = 1;
  /// The core's range of K, and that padded to whole sticks.
  int64_t kLen = 0, kPad = 0;
  int gridK = 1;
  /// The core stores C (every core without a K split; the first partner
  /// with one).
  bool owner = true;
  bool nOuter = true;
  bool shareA = false, keepB = false;
  bool post = false, convert = false, directDl16 = false;
  /// Two buffers per streamed operand, or one (KernelOptions::overlap).
  bool overlap = true;
  /// The fill pair: the first two M tiles of each N tile run together, K
  /// outer, while the kept panel arrives (pairsFill, withPair).
  bool pair = false;
};

/// Whether the first two M tiles of each N tile of a kept panel can run as
/// a pair (withPair decides whether they do): K outer, each K step of the panel
/// used by both tiles' A tiles and accumulated into both C buffers. While the
/// panel arrives, all cores' loads together take longer than one tile's PT work
/// per K step (32 x 16 KiB of B per K step of 344 x 64 x 128 tiles, 5.2k cycles
/// at 100 bytes per cycle, against 2.75k of PT work); the pair doubles the PT
/// work that each arriving K tile feeds. It needs both C buffers (two M tiles,
/// with overlap), several K tiles (A then comes per K step), N outside M, and a
/// DL16 C, which leaves the C buffers for buffers of its own (the convert,
/// or on a K-split partner the partial's send) before it is stored: an
/// FP32 C is stored from the C buffers, and the third tile would wait for
/// the first one's store, all cores storing at once.
inline bool pairsFill(const Problem &p, const Shape &s) {
  return s.keepB && s.overlap && s.nOuter && s.mTiles >= 2 && s.kTiles >= 2 &&
         !p.outF32;
}

inline Shape shapeOf(const Problem &p, int64_t tileM, int64_t tileK, int64_t tileN,
              const Block &block, bool nOuter, bool shareA, bool keepB,
              bool overlap) {
  Shape s;
  s.tileM = tileM;
  s.tileK = tileK;
  s.tileN = tileN;
  s.mTiles = ceilDiv(block.m, tileM);
  s.nTiles = ceilDiv(block.n, tileN);
  s.kTiles = ceilDiv(block.k, tileK);
  s.kLen = block.k;
  s.kPad = ceilDiv(block.k, kDl16Lanes) * kDl16Lanes;
  s.gridK = block.gridK;
  s.owner = block.owner;
  s.nOuter = nOuter;
  s.shareA = shareA;
  s.keepB = keepB;
  s.overlap = overlap;
  if (!s.owner)
    return s; // an FP32 partial, sent on as it is
  // A reduced partial arrives in FP32, so a DL16 C converts after it; the
  // gated product's two FP32 tiles are gated on the way.
  s.convert =
      !p.outF32 && (s.kTiles > 1 || p.bias || s.gridK > 1 || p.up);
  s.post = s.convert || p.bias.has_value();
  s.directDl16 = !p.outF32 && !s.convert;
  return s;
}

/// Loop level of each dim: n, m, k (nOuter) or m, n, k.
inline std::array<int, 3> levelsOf(bool nOuter) {
  return nOuter ? std::array<int, 3>{1, 0, 2} : std::array<int, 3>{0, 1, 2};
}

/// Level at which an operand depending on dims d1, d2 is loaded: the
/// innermost of them with more than one tile, -1 (once) when none has.
inline int loadLevel(const std::array<int, 3> &lvl,
              const std::array<int64_t, 3> &tiles, Dim d1, Dim d2) {
  int l = -1;
  for (Dim d : {d1, d2})
    if (tiles[d] > 1)
      l = std::max(l, lvl[d]);
  return l;
}

/// Whether a core's C stores are paced by its K steps (emitStore). Not
/// without overlap: a tile's store waits for the next tile's K steps, which
/// need the one C buffer the store still holds.
inline bool pacedStores(const Shape &s) {
  return s.overlap && s.shareA && s.kTiles > 1 &&
         s.mTiles * s.nTiles >= kPacedTiles;
}

/// Level at which B is loaded: a kept panel (all of K) once per N tile, or
/// once when there is one.
inline int bLoadLevel(const Shape &s) {
  if (s.keepB)
    return s.nTiles > 1 ? levelsOf(s.nOuter)[DimN] : -1;
  return loadLevel(levelsOf(s.nOuter), {s.mTiles, s.nTiles, s.kTiles}, DimN,
                   DimK);
}

/// LX sticks of every buffer of a core, given its tile counts.
struct LxLayout {
  int64_t aSlot = 0, rawASlot = 0, bSlot = 0, rawBSlot = 0, cSlot = 0,
          dSlot = 0, stage = 0, biasRaw = 0, biasF = 0;
  int aSlots = 2, bSlots = 2, cSlots = 2;
  int64_t total() const {
    return aSlots * (aSlot + rawASlot) + bSlots * (bSlot + rawBSlot) +
           cSlots * (cSlot + dSlot) + stage + biasRaw + biasF;
  }
};

inline LxLayout lxLayout(const Problem &p, const Shape &s) {
  LxLayout l;
  const int64_t tkb = s.tileK / kDl16Lanes, tnb = s.tileN / kDl16Lanes;
  const std::array<int, 3> lvl = levelsOf(s.nOuter);
  const std::array<int64_t, 3> tiles = {s.mTiles, s.nTiles, s.kTiles};
  // An operand loaded once needs one buffer; the others two to overlap.
  const int buffers = s.overlap ? 2 : 1;
  l.aSlots = loadLevel(lvl, tiles, DimM, DimK) < 0 ? 1 : buffers;
  l.bSlots = bLoadLevel(s) < 0 ? 1 : buffers;
  l.cSlots = s.mTiles * s.nTiles == 1 ? 1 : buffers;
  l.aSlot = tkb * s.tileM;
  l.rawASlot = p.transA ? ceilDiv(s.tileM, kDl16Lanes) * s.tileK : 0;
  // The gated product's tiles hold both weights' columns, and both
  // products (GatedMatmulKernel.cpp).
  l.bSlot = p.weights() * tnb * (s.keepB ? s.kPad : s.tileK);
  l.rawBSlot = p.transB ? tkb * s.tileN : 0;
  l.cSlot = p.weights() * (s.directDl16 ? 1 : 2) * tnb * s.tileM;
  l.dSlot = s.convert ? tnb * s.tileM : 0;
  // One 64-column block at a time beside a kept panel (postTile).
  l.stage = s.convert ? 2 * (s.keepB ? 1 : tnb) * s.tileM : 0;
  if (p.bias && s.owner) {
    // The FP32 bias covers whole 64-column blocks: a DL16 bias converts
    // into it, an FP32 one is loaded there directly, zero-padded.
    const int64_t f32Sticks = 2 * ceilDiv(p.n, kDl16Lanes);
    l.biasRaw =
        p.bias->dtype == isa::DType::Fp32 ? f32Sticks : p.bias->blocks();
    l.biasF = p.bias->dtype == isa::DType::Fp32 ? 0 : f32Sticks;
  }
  return l;
}

/// Where the up weight's part of a B tile starts in LX, from the gate's:
/// a whole tile of columns on, blocks `lxBlockStride` sticks apart.
inline int64_t gatedBOffset(const Shape &s, int64_t lxBlockStride) {
  return s.tileN / kDl16Lanes * lxBlockStride;
}
/// Where the up product's FP32 C tile starts in LX, from the gate's.
inline int64_t gatedCOffset(const Shape &s) {
  return 2 * (s.tileN / kDl16Lanes) * s.tileM;
}
/// silu over `fBlocks` FP32 blocks of `rows` sticks, `tileM` apart, in
/// place: the gate product of a C tile.
void siluInPlace(StreamBuilder &s, Addr gate, int64_t rows, int64_t fBlocks,
                 int64_t tileM);
/// gate * up over one FP32 block of `rows` sticks into every second stick
/// from `dst` (the interleave the DL16 convert reads).
InstrBuilder gateRows(Addr dst, Addr gate, Addr up, int64_t rows);

/// The A chains of a plan with shareA: each core's neighbours (-1 at an
/// end) for the parts in row-major order on consecutive cores from
/// `firstCore`. Device memory is a node of the data ring and a core reads
/// it over the shorter way round, so reads flow outward from the memory
/// node in both directions. A tile passed along a chain holds its link for
/// the whole transfer; flowing the other way (towards the memory node) it
/// never meets a read. A grid row is therefore cut where the read direction
/// changes, and each piece's chain starts at its core farthest from the
/// memory node.
struct AChains {
  std::vector<int> prev, next;
  int chains = 0;  ///< chains over the whole grid (each loads A once)
  int longest = 0; ///< cores in the longest chain
};

AChains aChains(const hw::HwConfig &cfg, int firstCore, int gridM, int gridN);

/// M is cut at multiples of this: 8 rows, 64 when A is transposed (whole
/// 64 x 64 transpose blocks).
inline int64_t mAlignOf(const Problem &p) { return p.transA ? kDl16Lanes : 8; }

} // namespace spyre::codegen::matmul
