// The matmul kernel: C[M, N] = A[M, K] x B[K, N] (+ bias[N]), DL16 operands,
// FP32 accumulation, C in DL16 or FP32, with A or B optionally given
// transposed (Kernels.h).
//
// Split: the cores form a gridM x gridN grid over (M, N); M is cut at
// multiples of 8 rows (64 when A is transposed, so transposes stay whole
// 64 x 64 blocks), N at multiples of 64. Each core walks its block in a
// nest of tiles, n, m, k or m, n, k with K innermost, so a C tile (tileM
// rows x tileN columns, FP32 in LX) accumulates over the K tiles with acc=1.
// An operand is loaded at the innermost loop level it depends on that has
// more than one iteration, and stays in LX below it: with K in one tile, B
// is loaded once per n tile and reused by every m tile (nOuter), and an
// operand that does not change at all is loaded once.
//
// Pipeline on each core, every hand-over a BufferRing (two buffers for each
// operand that changes, so the stages overlap; one without overlap):
//   dma.load --A, B--> pt.0..pt.U-1 --C--> [sfu post] --> dma.store
// The PT units split each tile's rows. Transposed operands are loaded as
// stored and go through an SFU stage of xpose instructions first:
//   dma.load --A^T--> sfu.0 --A--> pt units.
// The post stage (SFU) adds the bias in FP32 and/or converts C to DL16 when
// C accumulated over several K tiles; with K in one tile, no bias and DL16
// C, the PT writes DL16 directly.
//
// Operand sharing (MatmulTiling): with shareA, a grid row's cores form
// chains of ring neighbours (AChains) and only a chain's first core loads
// A; each tile then travels the chain on the ring engines:
//   first core: dma.load --A--> {pt units, ring (send)}
//   the others: ring (recv) --A--> pt units, then ring (send) onwards.
// With keepB, a core's B panel (all of K) stays in LX for all its M tiles,
// loaded K tile by K tile during the first M tile, paced by the PT's K
// steps; where that pays, the first two M tiles run as a pair, K outer, so
// each arriving K tile of the panel feeds both (MatmulPlan::pairFill).
// With shared A, C stores
// are paced by the PT's K steps so the cores, which the chains keep in
// step, do not write their tiles in one burst.
//
// K split (MatmulTiling::gridK): the partners of a block, on consecutive
// cores, each walk the block's tiles over their own range of K and end each
// C tile with an FP32 partial. The partials are summed over the reduce ring
// in a chain from the last partner to the first (the owner): on each core
// the ring engine takes the C tile from the PT units, adds the partial of
// the next partner into it (racc) and, unless it is the owner, sends the
// sum to the partner before (rsend):
//   partner: pt units --C--> ring (racc from core + 1, rsend to core - 1)
//   owner:   pt units --C--> ring (racc) --> [sfu post] --> dma.store
// With two C buffers the reduction of a tile overlaps the next tile's K
// steps.
#include "compiler/codegen/KernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace spyre::codegen {

using isa::Opcode;

namespace {

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
  bool transA = false, transB = false;
  int64_t m = 0, k = 0, n = 0;
  bool outF32 = true;
};

Problem problemOf(const MatmulArgs &args) {
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
bool pairsFill(const Problem &p, const Shape &s) {
  return s.keepB && s.overlap && s.nOuter && s.mTiles >= 2 && s.kTiles >= 2 &&
         !p.outF32;
}

Shape shapeOf(const Problem &p, int64_t tileM, int64_t tileK, int64_t tileN,
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
  // A reduced partial arrives in FP32, so a DL16 C converts after it.
  s.convert = !p.outF32 && (s.kTiles > 1 || p.bias || s.gridK > 1);
  s.post = s.convert || p.bias.has_value();
  s.directDl16 = !p.outF32 && !s.convert;
  return s;
}

/// Loop level of each dim: n, m, k (nOuter) or m, n, k.
std::array<int, 3> levelsOf(bool nOuter) {
  return nOuter ? std::array<int, 3>{1, 0, 2} : std::array<int, 3>{0, 1, 2};
}

/// Level at which an operand depending on dims d1, d2 is loaded: the
/// innermost of them with more than one tile, -1 (once) when none has.
int loadLevel(const std::array<int, 3> &lvl,
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
bool pacedStores(const Shape &s) {
  return s.overlap && s.shareA && s.kTiles > 1 &&
         s.mTiles * s.nTiles >= kPacedTiles;
}

/// Level at which B is loaded: a kept panel (all of K) once per N tile, or
/// once when there is one.
int bLoadLevel(const Shape &s) {
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

LxLayout lxLayout(const Problem &p, const Shape &s) {
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
  l.bSlot = tnb * (s.keepB ? s.kPad : s.tileK);
  l.rawBSlot = p.transB ? tkb * s.tileN : 0;
  l.cSlot = (s.directDl16 ? 1 : 2) * tnb * s.tileM;
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

// ------------------------------------------------------------ planning

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

AChains aChains(const hw::HwConfig &cfg, int firstCore, int gridM, int gridN) {
  const int cores = cfg.chip.cores, mem = cfg.ring.memoryNodePosition;
  const int positions = cores + 1;
  auto readsIncreasing = [&](int core) {
    const int pos = core >= mem ? core + 1 : core;
    const int up = (pos - mem + positions) % positions;
    return up <= positions - up;
  };
  AChains c;
  const size_t parts = static_cast<size_t>(gridM) * gridN;
  c.prev.assign(parts, -1);
  c.next.assign(parts, -1);
  for (int i = 0; i < gridM; ++i) {
    const int row0 = firstCore + i * gridN;
    int j = 0;
    while (j < gridN) {
      // A piece [j, e) of cores reading memory the same way round.
      const bool inc = readsIncreasing(row0 + j);
      int e = j + 1;
      while (e < gridN && readsIncreasing(row0 + e) == inc)
        ++e;
      // Increasing reads come from below: the chain runs down from the
      // piece's top core; decreasing reads the other way round.
      for (int k = j; k < e; ++k) {
        const size_t at = static_cast<size_t>(i * gridN + k);
        const int core = row0 + k;
        if (inc) {
          c.prev[at] = k + 1 < e ? core + 1 : -1;
          c.next[at] = k > j ? core - 1 : -1;
        } else {
          c.prev[at] = k > j ? core - 1 : -1;
          c.next[at] = k + 1 < e ? core + 1 : -1;
        }
      }
      ++c.chains;
      c.longest = std::max(c.longest, e - j);
      j = e;
    }
  }
  return c;
}

struct Estimate {
  double cycles = std::numeric_limits<double>::infinity();
  Shape shape;
};

/// Time of one core's block (blockM x K x blockN) with these tiles, from the
/// config: PT work per step (rows split over the units, efficiency by
/// passes), DMA time (per-instruction latency plus its share of the memory
/// bandwidth, which `active` cores divide), xpose time on one SFU, ring
/// time of shared A tiles, and one step of pipeline fill. With shareA, the
/// grid's cores form `chains->chains` chains (AChains): A's memory traffic
/// counts once per chain, every core but the last of a chain receives and
/// sends each tile (one ring engine, so the two add up), and the last core
/// gets the first tile after chains->longest - 1 transfers. With a K split
/// (s.gridK partners per block, `active` counting them all) the block is
/// the first partner's, which has the longest range of K; A and B are still
/// read once across the partners, C is stored by one of them, and each C
/// tile's partial crosses the reduce ring once per link of the chain.
/// Without overlap a core's own parts add up, and that chain combines with
/// the time with overlap.
double estimate(const hw::HwConfig &cfg, const Problem &p, const Shape &s,
                int64_t blockM, int64_t blockN, int units, int active,
                const AChains *chains = nullptr) {
  const double bw = cfg.memory.sustainedReadGBps / cfg.chip.clockGhz;
  const double perCoreBw = bw / active;
  const double macs = cfg.ptMacsPerCycle();
  const double ldLatency =
      cfg.dma.issueLatencyCycles + cfg.memory.latencyCycles;
  const int64_t steps = s.mTiles * s.nTiles * s.kTiles;
  const int64_t cTiles = s.mTiles * s.nTiles;
  const int64_t kPad = s.kPad;

  const double rowsPerUnit = std::ceil(static_cast<double>(s.tileM) / units);
  const double passes = std::ceil(rowsPerUnit / cfg.pt.passRows);
  const double eff = std::min(1.0, std::sqrt(passes / cfg.pt.fullRatePasses));
  const double stepPt =
      cfg.pt.setupCycles + rowsPerUnit * s.tileK * s.tileN / (macs * eff);
  const double ptTime = static_cast<double>(steps) * stepPt;

  const std::array<int, 3> lvl = levelsOf(s.nOuter);
  const std::array<int64_t, 3> tiles = {s.mTiles, s.nTiles, s.kTiles};
  const double aBytes = 2.0 * blockM * kPad, bBytes = 2.0 * kPad * blockN;
  auto loadsOf = [&](Dim d1, Dim d2) {
    int l = loadLevel(lvl, tiles, d1, d2);
    int64_t n = 1;
    for (int i = 0; i <= l; ++i)
      n *= tiles[i == lvl[DimM] ? DimM : i == lvl[DimN] ? DimN : DimK];
    return n;
  };
  const int64_t aLoads = loadsOf(DimM, DimK);
  // A kept panel is loaded once per N tile, one K tile at a time.
  const int64_t bLoads = s.keepB ? s.nTiles * s.kTiles : loadsOf(DimN, DimK);
  // Each load of A (B) moves the A (B) tile; the whole block is covered once
  // per iteration of the levels above its own.
  const double aTraffic = aBytes * static_cast<double>(aLoads) /
                          static_cast<double>(s.mTiles * s.kTiles);
  const double bTraffic = s.keepB
                              ? bBytes
                              : bBytes * static_cast<double>(bLoads) /
                                    static_cast<double>(s.nTiles * s.kTiles);
  // Only the owner of a K-split block stores it: per core, the average.
  const double cTraffic =
      (p.outF32 ? 4.0 : 2.0) * static_cast<double>(blockM * blockN) / s.gridK;
  const double aShare =
      s.shareA && chains ? static_cast<double>(chains->chains) / active : 1.0;
  const double memBytes = aTraffic * aShare + bTraffic + cTraffic;
  const double dmaLatency =
      ldLatency * static_cast<double>(aLoads + bLoads + cTiles);
  const double memTime = memBytes / perCoreBw + dmaLatency;
  const double xposeCost = 2.0 * kDl16Lanes + cfg.sfu.pipelineLatencyCycles;
  const double sfuTime =
      xposeCost *
      static_cast<double>((p.transA ? aLoads * ceilDiv(s.tileM, kDl16Lanes) : 0) +
                          (p.transB ? bLoads * (s.tileN / kDl16Lanes) : 0)) *
      static_cast<double>(s.tileK / kDl16Lanes);
  double fill =
      (2.0 * (s.tileM + s.tileN) * s.tileK) / perCoreBw + ldLatency + stepPt;
  double ringTime = 0;
  if (s.shareA && chains && chains->longest > 1) {
    const double aTileRing = 2.0 * s.tileM * s.tileK / cfg.ring.bytesPerCycle +
                             cfg.ring.hopLatencyCycles +
                             cfg.sequencer.syncCycles;
    ringTime = 2.0 * aTileRing * static_cast<double>(aLoads);
    fill += (chains->longest - 1) * aTileRing;
    // The chains keep the cores in step, so they finish their C tiles
    // together; unless the stores are paced (emitStore) they reach memory
    // as one burst, which the chains' next A tiles, asked for one step
    // ahead, queue behind.
    if (!pacedStores(s)) {
      const double burst =
          cTraffic / static_cast<double>(s.mTiles * s.nTiles) * active / bw;
      fill += static_cast<double>(s.mTiles * s.nTiles) *
              std::max(0.0, burst - stepPt);
    }
  }
  // The K split's reduction: a C tile's FP32 partial (tileM x tileN x 4
  // bytes) takes bytes / bytes_per_cycle plus a hop's latency on the link to
  // the partner before (Machine's rsend/racc over sim/timing/Ring). A
  // partner inside the chain receives (racc) and sends (rsend) every tile
  // on its one ring engine, so those two add up; the last tile's sum
  // crosses all gridK - 1 links one after another before the owner can
  // store it.
  double reduceTime = 0;
  if (s.gridK > 1) {
    const double hop = 4.0 * s.tileM * s.tileN / cfg.reduceRing.bytesPerCycle +
                       cfg.reduceRing.hopLatencyCycles +
                       cfg.sequencer.syncCycles;
    reduceTime = (s.gridK > 2 ? 2.0 : 1.0) * hop * static_cast<double>(cTiles);
    fill += (s.gridK - 1) * hop;
  }
  // With one C buffer the next tile's K steps wait for the reduction.
  const bool oneC = !s.overlap || cTiles == 1;
  const double ptBusy = oneC ? ptTime + reduceTime : ptTime;
  if (s.keepB) {
    // A kept panel arrives K tile by K tile during the first M tile (or the
    // fill pair) of its N tile, paced by the PT's K steps: while it does,
    // the memory carries every core's panel and the A tiles of the first
    // tiles, and the PT units wait for what that time exceeds their work
    // on those tiles. Where memory is the longer of the two anyway, the PT
    // units have that much slack to wait in: the fill costs only what it
    // exceeds. The slack is the bytes' time at the core's share of the
    // bandwidth: DMA latency is none (the panel's own loads pay it), and
    // counting it let many-tile plans with a kept panel look free of fill
    // on mid-size products (GPT-2's FFN, 256 x 768 x 3072, chose 64-row
    // tiles estimated 89.8k cycles that ran 90.7k, against 73.5k).
    const double first = s.pair ? 2.0 : 1.0;
    const double panel = bBytes / static_cast<double>(s.nTiles) / perCoreBw;
    const double firstA = aTraffic * aShare * first /
                          static_cast<double>(s.mTiles * s.nTiles) / perCoreBw;
    const double firstM = first * ptTime / static_cast<double>(cTiles);
    const double idle =
        static_cast<double>(s.nTiles) * std::max(0.0, panel + firstA - firstM);
    fill += std::max(0.0, idle - std::max(0.0, memBytes / perCoreBw - ptBusy));
    // The pair ends with both C buffers full: the next tile waits for the
    // post stage to convert the first (a copy of each FP32 block and a cvt
    // of each DL16 block, one stick per cycle).
    if (s.pair)
      fill += static_cast<double>(s.nTiles) *
              (4.0 * static_cast<double>(s.tileN / kDl16Lanes * s.tileM) +
               cfg.sfu.pipelineLatencyCycles);
  }
  double overlapped = 0;
  if (!s.shareA && !s.keepB) {
    overlapped =
        std::max({ptBusy, memTime, sfuTime, ringTime, reduceTime}) + fill;
  } else {
    // Sharing plans run the memory channel close to its rate, where the A
    // tiles a whole chain waits for queue behind everyone's traffic: PT and
    // memory time combine as a 4-norm instead of a max (equal times cost
    // 19% more than either, a memory time half the PT time 1.5% more).
    const double busy =
        std::pow(std::pow(ptBusy, 4) + std::pow(memTime, 4), 0.25);
    overlapped = std::max({busy, sfuTime, ringTime, reduceTime}) + fill;
  }
  if (s.overlap)
    return overlapped;
  // Without overlap (one buffer per operand) a core's loads, transposes,
  // PT steps and ring transfers follow one another (its stores run beside
  // the next loads only): its own times add up, each transfer at the full
  // channel rate when the other cores leave it free. They do only in part
  // (cores running the same program load at the same time), so that chain
  // and the time with overlap combine as a 4-norm, as PT and memory time
  // do for sharing plans.
  const double chain =
      ptTime + sfuTime + ringTime + reduceTime + dmaLatency + memBytes / bw;
  return std::pow(std::pow(overlapped, 4) + std::pow(chain, 4), 0.25);
}

/// The shape with the fill pair decided: where it can run (pairsFill), it
/// is taken when the estimate says it pays, which it does where the panel
/// takes longer to arrive than the first tile's PT work. A function of the
/// plan and the config, so a replayed plan pairs as it did.
Shape withPair(const hw::HwConfig &cfg, const Problem &p, Shape s,
               int64_t blockM, int64_t blockN, int units, int active,
               const AChains *chains) {
  s.pair = false;
  if (!pairsFill(p, s))
    return s;
  Shape paired = s;
  paired.pair = true;
  if (estimate(cfg, p, paired, blockM, blockN, units, active, chains) <
      estimate(cfg, p, s, blockM, blockN, units, active, chains))
    return paired;
  return s;
}

/// Candidate tile sizes: `full` cut into d equal parts, rounded up to
/// `align`, for a spread of part counts.
std::vector<int64_t> tileCandidates(int64_t full, int64_t align) {
  std::vector<int64_t> out;
  for (int64_t d : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}) {
    int64_t t = ceilDiv(ceilDiv(full, d), align) * align;
    if (t < align)
      t = align;
    if (std::find(out.begin(), out.end(), t) == out.end())
      out.push_back(t);
  }
  return out;
}

/// Whether a plan may share A along grid rows / keep B in LX (MatmulTiling).
/// Rows [m0, m1) of grid row i, cut at multiples of `align`.
std::pair<int64_t, int64_t> gridRange(int64_t total, int64_t align,
                                      int64_t parts, int64_t i) {
  auto [u0, u1] = splitRange(ceilDiv(total, align), parts, i);
  return {std::min(total, u0 * align), std::min(total, u1 * align)};
}

/// Sharing needs the same A tiles in the same order on every core of a grid
/// row: the same number of N tiles on each.
bool canShareA(const Problem &p, const Shape &s, int gridN) {
  if (gridN < 2 || p.transA)
    return false;
  for (int j = 0; j < gridN; ++j) {
    auto [n0, n1] = gridRange(p.n, kDl16Lanes, gridN, j);
    if (ceilDiv(n1 - n0, s.tileN) != s.nTiles)
      return false;
  }
  return true;
}
/// A kept panel is loaded once per N tile, so N must not be inside M.
bool canKeepB(const Problem &p, const Shape &s) {
  return (s.nTiles == 1 || s.nOuter) && !p.transB;
}

/// The values of a sharing decision the search tries.
std::vector<bool> choices(const std::optional<bool> &fixed) {
  if (fixed)
    return {*fixed};
  return {false, true};
}

Estimate bestTiles(const hw::HwConfig &cfg, const Problem &p,
                   const Block &block, const Resources &res, int gridM,
                   int gridN, int64_t mAlign, const MatmulSearch &search) {
  Estimate best;
  const int units = res.units;
  const int64_t lxSticks = res.lxSticks();
  const int active = gridM * gridN * block.gridK;
  const AChains chains = aChains(cfg, res.firstCore, gridM, gridN);
  const int64_t kPad = ceilDiv(block.k, kDl16Lanes) * kDl16Lanes;
  const int64_t nPad = ceilDiv(block.n, kDl16Lanes) * kDl16Lanes;
  // K partners need different A tiles, and a grid row's cores are gridK
  // apart: no A chains with a K split.
  const std::vector<bool> shareChoices =
      block.gridK > 1 ? std::vector<bool>{false} : choices(search.shareA);
  for (int64_t tm : tileCandidates(block.m, mAlign))
    for (int64_t tn : tileCandidates(nPad, kDl16Lanes))
      for (int64_t tk : tileCandidates(kPad, kDl16Lanes))
        for (bool nOuter : {true, false})
          for (bool shareA : shareChoices)
            for (bool keepB : choices(search.keepB)) {
              Shape s = shapeOf(p, tm, tk, tn, block, nOuter, shareA, keepB,
                                res.buffers == 2);
              if ((shareA && !canShareA(p, s, gridN)) ||
                  (keepB && !canKeepB(p, s)))
                continue;
              if (lxLayout(p, s).total() > lxSticks)
                continue;
              s = withPair(cfg, p, s, block.m, block.n, units, active, &chains);
              double t =
                  estimate(cfg, p, s, block.m, block.n, units, active, &chains);
              if (t < best.cycles * (1 - 1e-9)) {
                best.cycles = t;
                best.shape = s;
              }
            }
  return best;
}

int64_t mAlignOf(const Problem &p) { return p.transA ? kDl16Lanes : 8; }

/// The largest block of a grid: the first grid row and column, and the
/// first K partner's range (ranges are split larger first).
Block firstBlock(const Problem &p, int gridM, int gridN, int gridK) {
  const int64_t mAlign = mAlignOf(p);
  Block b;
  b.m = std::min(p.m, ceilDiv(ceilDiv(p.m, mAlign), gridM) * mAlign);
  b.n = std::min(p.n, ceilDiv(ceilDiv(p.n, kDl16Lanes), gridN) * kDl16Lanes);
  b.k = std::min(p.k, ceilDiv(ceilDiv(p.k, kDl16Lanes), gridK) * kDl16Lanes);
  b.gridK = gridK;
  b.owner = true;
  return b;
}

/// Why the problem and cores cannot take a K split into gridK partners;
/// empty when they can.
std::string kSplitProblem(const Problem &p, int64_t gridK) {
  const int64_t kSticks = ceilDiv(p.k, kDl16Lanes);
  if (gridK < 1)
    return "k_split " + std::to_string(gridK) +
           " is not a number of K partners (1 or more; 1 does not split)";
  if (gridK > kSticks)
    return "k_split " + std::to_string(gridK) + " gives more partners than K " +
           std::to_string(p.k) + " has sticks of 64 (" +
           std::to_string(kSticks) + "; a partner takes at least one)";
  return {};
}

/// The cores' blocks of a plan's grid, from `firstCore` on: block by block,
/// each block's K partners on consecutive cores (cores whose block would be
/// empty get none).
void addParts(MatmulPlan &plan, const Problem &p, int firstCore) {
  const int64_t mAlign = mAlignOf(p);
  int core = firstCore;
  for (int i = 0; i < plan.gridM; ++i)
    for (int j = 0; j < plan.gridN; ++j) {
      auto [m0, m1] = gridRange(p.m, mAlign, plan.gridM, i);
      auto [n0, n1] = gridRange(p.n, kDl16Lanes, plan.gridN, j);
      if (m1 <= m0 || n1 <= n0)
        continue;
      for (int q = 0; q < plan.gridK; ++q) {
        auto [k0, k1] = gridRange(p.k, kDl16Lanes, plan.gridK, q);
        plan.parts.push_back({core++, m0, m1, n0, n1, k0, k1});
      }
    }
}

/// The shape of a plan's largest block (firstBlock), its fill pair decided
/// as the planner does: every core pairs as this block does, where its own
/// block can.
Shape planShape(const hw::HwConfig &cfg, const Problem &p,
                const MatmulPlan &plan, const Resources &res) {
  const Block block = firstBlock(p, plan.gridM, plan.gridN, plan.gridK);
  const AChains chains = aChains(cfg, res.firstCore, plan.gridM, plan.gridN);
  return withPair(cfg, p,
                  shapeOf(p, plan.tileM, plan.tileK, plan.tileN, block,
                          plan.nOuter, plan.shareA, plan.keepB,
                          res.buffers == 2),
                  block.m, block.n, res.units,
                  plan.gridM * plan.gridN * plan.gridK, &chains);
}

} // namespace

MatmulTiling MatmulPlan::tiling() const {
  MatmulTiling t;
  t.gridM = gridM;
  t.gridN = gridN;
  t.gridK = gridK;
  t.tileM = tileM;
  t.tileK = tileK;
  t.tileN = tileN;
  t.nOuter = nOuter;
  t.shareA = shareA;
  t.keepB = keepB;
  t.pairFill = pairFill;
  return t;
}

std::string MatmulPlan::str() const {
  const bool split = gridK > 1;
  std::string s =
      "matmul " + std::to_string(m) + "x" + std::to_string(k) + "x" +
      std::to_string(n) + ": grid " + std::to_string(gridM) + "x" +
      std::to_string(gridN) +
      (split ? ", K split " + std::to_string(gridK) +
                   " (partials summed over the reduce ring)"
             : "") +
      ", tiles " + std::to_string(tileM) + "x" + std::to_string(tileK) + "x" +
      std::to_string(tileN) + (nOuter ? " (n, m, k)" : " (m, n, k)") +
      (shareA ? ", A shared along grid rows" : "") +
      (keepB ? ", B kept in LX" : "") +
      (pairFill ? ", first two M tiles paired" : "") + ", " +
      std::to_string(units) + " PT units, LX " + std::to_string(lxSticks) +
      " sticks, estimate " + std::to_string(estimatedCycles) + " cycles\n";
  for (const Part &pt : parts)
    s += "core " + std::to_string(pt.core) + ": rows [" +
         std::to_string(pt.m0) + ", " + std::to_string(pt.m1) + "), cols [" +
         std::to_string(pt.n0) + ", " + std::to_string(pt.n1) + ")" +
         (split ? ", k [" + std::to_string(pt.k0) + ", " +
                      std::to_string(pt.k1) + ")"
                : "") +
         "\n";
  return s;
}

MatmulPlan planMatmul(const hw::HwConfig &config, const MatmulArgs &args,
                      const KernelOptions &opt, int gridM, int gridN,
                      const MatmulSearch &search) {
  const Problem p = problemOf(args);
  const Resources res = resources(config, opt);
  const int64_t mAlign = mAlignOf(p);
  const int64_t mUnits = ceilDiv(p.m, mAlign), nUnits = ceilDiv(p.n, kDl16Lanes);
  const int64_t kSticks = ceilDiv(p.k, kDl16Lanes);
  SPYRE_ASSERT((gridM > 0) == (gridN > 0),
               "matmul: give both grid sides or none");
  SPYRE_ASSERT(
      gridM <= 0 ||
          (gridM <= mUnits && gridN <= nUnits && gridM * gridN <= res.cores),
      "matmul: grid " + std::to_string(gridM) + "x" + std::to_string(gridN) +
          " does not fit the problem or cores");
  MatmulPlan plan;
  plan.m = p.m;
  plan.k = p.k;
  plan.n = p.n;
  plan.units = res.units;
  // A fixed grid keeps K whole unless the search splits it.
  const std::optional<int> kSplit =
      gridM > 0 ? std::optional<int>(search.kSplit.value_or(1)) : search.kSplit;
  if (kSplit) {
    plan.error = kSplitProblem(p, *kSplit);
    if (plan.error.empty() && *kSplit > res.cores)
      plan.error = "k_split " + std::to_string(*kSplit) + " needs " +
                   std::to_string(*kSplit) + " cores, the op has " +
                   std::to_string(res.cores);
    if (!plan.error.empty())
      return plan;
  }
  SPYRE_ASSERT(gridM <= 0 || gridM * gridN * *kSplit <= res.cores,
               "matmul: grid " + std::to_string(gridM) + "x" +
                   std::to_string(gridN) + " split " + std::to_string(*kSplit) +
                   " ways needs more cores");
  double bestCycles = std::numeric_limits<double>::infinity();
  double bestScore = bestCycles;
  for (int64_t gm = 1; gm <= std::min<int64_t>(res.cores, mUnits); ++gm)
    for (int64_t gn = 1; gn * gm <= res.cores && gn <= nUnits; ++gn)
      for (int64_t gk = 1; gk * gn * gm <= res.cores && gk <= kSticks; ++gk) {
        if (gridM > 0 && (gm != gridM || gn != gridN))
          continue;
        if (kSplit && gk != *kSplit)
          continue;
        const int igm = static_cast<int>(gm), ign = static_cast<int>(gn),
                  igk = static_cast<int>(gk);
        Estimate e = bestTiles(config, p, firstBlock(p, igm, ign, igk), res,
                               igm, ign, mAlign, search);
        const double score = igk > 1 ? e.cycles / (1 - kSplitMargin) : e.cycles;
        if (!(score < bestScore * (1 - 1e-9)))
          continue;
        bestScore = score;
        bestCycles = e.cycles;
        plan.gridM = igm;
        plan.gridN = ign;
        plan.gridK = igk;
        plan.tileM = e.shape.tileM;
        plan.tileK = e.shape.tileK;
        plan.tileN = e.shape.tileN;
        plan.nOuter = e.shape.nOuter;
        plan.shareA = e.shape.shareA;
        plan.keepB = e.shape.keepB;
        plan.pairFill = e.shape.pair;
      }
  if (!(bestCycles < std::numeric_limits<double>::infinity())) {
    plan.error = "no matmul tiling fits " + std::to_string(res.lxSticks()) +
                 " LX sticks (the smallest tiles need more)";
    return plan;
  }
  plan.estimatedCycles = static_cast<int64_t>(std::ceil(bestCycles));
  addParts(plan, p, res.firstCore);
  return plan;
}

std::string matmulPlanProblem(const hw::HwConfig &config,
                              const MatmulArgs &args, const KernelOptions &opt,
                              const MatmulTiling &t) {
  const Problem p = problemOf(args);
  const Resources res = resources(config, opt);
  const int64_t mAlign = mAlignOf(p);
  const int64_t mUnits = ceilDiv(p.m, mAlign), nUnits = ceilDiv(p.n, kDl16Lanes);
  const std::string grid =
      "grid " + std::to_string(t.gridM) + "x" + std::to_string(t.gridN);
  if (t.gridM < 1 || t.gridN < 1 || t.gridM > mUnits || t.gridN > nUnits)
    return grid + " does not fit a " + std::to_string(p.m) + "x" +
           std::to_string(p.n) + " product (at most " + std::to_string(mUnits) +
           " row parts of " + std::to_string(mAlign) + " and " +
           std::to_string(nUnits) + " column parts of 64)";
  if (std::string why = kSplitProblem(p, t.gridK); !why.empty())
    return why;
  const int64_t cores = static_cast<int64_t>(t.gridM) * t.gridN * t.gridK;
  if (cores > res.cores)
    return grid +
           (t.gridK > 1 ? " with k_split " + std::to_string(t.gridK) : "") +
           " needs " + std::to_string(cores) + " cores, the op has " +
           std::to_string(res.cores);
  const std::string tiles = "tiles " + std::to_string(t.tileM) + "x" +
                            std::to_string(t.tileK) + "x" +
                            std::to_string(t.tileN);
  if (t.tileM < 1 || t.tileM % mAlign != 0 || t.tileK < 1 ||
      t.tileK % kDl16Lanes != 0 || t.tileN < 1 || t.tileN % kDl16Lanes != 0)
    return tiles + " are not multiples of " + std::to_string(mAlign) +
           " x 64 x 64";
  const Block block = firstBlock(p, t.gridM, t.gridN, t.gridK);
  const Shape s =
      shapeOf(p, std::min(t.tileM, ceilDiv(block.m, mAlign) * mAlign),
              std::min(t.tileK, ceilDiv(block.k, kDl16Lanes) * kDl16Lanes),
              std::min(t.tileN, ceilDiv(block.n, kDl16Lanes) * kDl16Lanes), block,
              t.nOuter, t.shareA, t.keepB, res.buffers == 2);
  if (t.shareA && t.gridK > 1)
    return "share_a needs k_split 1 (K partners read different A tiles, and "
           "the cores of a grid row are not neighbours)";
  if (t.shareA && t.gridN < 2)
    return "share_a needs a grid row of at least 2 cores (" + grid + ")";
  if (t.shareA && p.transA)
    return "share_a needs A sticked on K (this A is transposed)";
  if (t.shareA && !canShareA(p, s, t.gridN))
    return "share_a needs the same number of N tiles on every core of a "
           "grid row (tile N " +
           std::to_string(t.tileN) + " does not give that with " + grid + ")";
  if (t.keepB && p.transB)
    return "keep_b needs B sticked on N (this B is transposed)";
  if (t.keepB && !canKeepB(p, s))
    return "keep_b needs N tiles outside M tiles (n_outer) when a core has "
           "several";
  if (t.pairFill.value_or(false) && !pairsFill(p, s))
    return "pair_fill needs keep_b, n_outer, at least two M and two K tiles "
           "per core, a DL16 C and overlap";
  const int64_t need = lxLayout(p, s).total();
  if (need > res.lxSticks())
    return tiles + (t.keepB ? " with B kept" : "") + " need " +
           std::to_string(need) +
           " LX sticks per core, the op's LX region has " +
           std::to_string(res.lxSticks());
  return {};
}

MatmulPlan planMatmulWith(const hw::HwConfig &config, const MatmulArgs &args,
                          const KernelOptions &opt, const MatmulTiling &t) {
  SPYRE_ASSERT(matmulPlanProblem(config, args, opt, t).empty(),
               "matmul: " + matmulPlanProblem(config, args, opt, t));
  const Problem p = problemOf(args);
  const Resources res = resources(config, opt);
  const int64_t mAlign = mAlignOf(p);
  const Block block = firstBlock(p, t.gridM, t.gridN, t.gridK);
  MatmulPlan plan;
  plan.m = p.m;
  plan.k = p.k;
  plan.n = p.n;
  plan.units = res.units;
  plan.gridM = t.gridM;
  plan.gridN = t.gridN;
  plan.gridK = t.gridK;
  plan.tileM = std::min(t.tileM, ceilDiv(block.m, mAlign) * mAlign);
  plan.tileK = std::min(t.tileK, ceilDiv(block.k, kDl16Lanes) * kDl16Lanes);
  plan.tileN = std::min(t.tileN, ceilDiv(block.n, kDl16Lanes) * kDl16Lanes);
  plan.nOuter = t.nOuter;
  plan.shareA = t.shareA;
  plan.keepB = t.keepB;
  const AChains chains = aChains(config, res.firstCore, t.gridM, t.gridN);
  Shape s = planShape(config, p, plan, res);
  if (t.pairFill)
    s.pair = *t.pairFill;
  plan.pairFill = s.pair;
  plan.estimatedCycles = static_cast<int64_t>(
      std::ceil(estimate(config, p, s, block.m, block.n, res.units,
                         t.gridM * t.gridN * t.gridK, &chains)));
  addParts(plan, p, res.firstCore);
  return plan;
}

// ------------------------------------------------------------ emission

namespace {

/// One core's streams, rings and registers, emitted role by role: each
/// stream walks the same loop nest and runs the hooks of the roles it has.
class MatmulCore {
public:
  /// `prev` and `next`: the neighbours in the A chain of a plan with
  /// shareA (-1 at the ends; both -1 without sharing). `accFrom` and
  /// `sendTo`: with a K split, the partner whose partials this core adds
  /// into its own and the one it sends the sums to (-1 for none; the owner
  /// sends to none).
  MatmulCore(ProgramBuilder &pb, const Problem &p, const MatmulPlan &plan,
             const Resources &res, const MatmulPlan::Part &part, int prev,
             int next, int accFrom, int sendTo, bool pair)
      : pb_(pb), p_(p), part_(part), core_(part.core), units_(plan.units),
        prev_(prev), next_(next), accFrom_(accFrom), sendTo_(sendTo) {
    const int64_t blockM = part.m1 - part.m0, blockN = part.n1 - part.n0;
    const Block block{blockM, blockN, part.k1 - part.k0, plan.gridK,
                      sendTo < 0};
    s_ = shapeOf(p, plan.tileM, plan.tileK, plan.tileN, block, plan.nOuter,
                 plan.shareA, plan.keepB, res.buffers == 2);
    s_.pair = pair && pairsFill(p, s_);
    lvl_ = levelsOf(s_.nOuter);
    tail_[DimM] = blockM - (s_.mTiles - 1) * s_.tileM;
    tail_[DimN] = blockN - (s_.nTiles - 1) * s_.tileN;
    tail_[DimK] = s_.kLen - (s_.kTiles - 1) * s_.tileK;
    full_ = {s_.tileM, s_.tileN, s_.tileK};
    const std::array<int64_t, 3> tiles = {s_.mTiles, s_.nTiles, s_.kTiles};
    levels_.resize(3);
    for (Dim d : {DimM, DimN, DimK})
      levels_[static_cast<size_t>(lvl_[d])] = {tiles[d], tail_[d] != full_[d],
                                               d == DimK};
    // The fill pair is the first iteration of the M level, which then has
    // one iteration fewer; every stream emits it on its own.
    if (s_.pair) {
      NestLevel &m = levels_[static_cast<size_t>(lvl_[DimM])];
      m.tiles = s_.mTiles - 1;
      m.peelFirst = true;
    }
    // A kept panel is loaded one K tile at a time during the first M tile
    // of its N tile (see loadB), which the load and PT streams therefore
    // emit on its own (the others need not: the hand-overs are the same).
    panelLevels_ = levels_;
    if (s_.keepB)
      panelLevels_[static_cast<size_t>(lvl_[DimM])].peelFirst = true;
    aLevel_ = loadLevel(lvl_, tiles, DimM, DimK);
    bLevel_ = bLoadLevel(s_);
    allocate(res);
    makeStreams();
  }

  void emit();
  int64_t lxEnd() const { return lxEnd_; }

private:
  // Sizes of the current tile: levels up to `upTo` come from the nest
  // iteration, deeper levels have one tile whose kind is known statically.
  bool isTail(Dim d, const NestIter &it, int upTo) const {
    int l = lvl_[d];
    if (l <= upTo)
      return it.tail[static_cast<size_t>(l)];
    return levels_[static_cast<size_t>(l)].hasTail;
  }
  int64_t size(Dim d, const NestIter &it, int upTo) const {
    return isTail(d, it, upTo) ? tail_[d] : full_[d];
  }
  int64_t kPad(const NestIter &it, int upTo) const {
    return ceilDiv(size(DimK, it, upTo), kDl16Lanes) * kDl16Lanes;
  }
  /// Whether the iteration is the fill pair (for hooks at the M level or
  /// inside it).
  bool inPair(const NestIter &it) const {
    return s_.pair && it.first[static_cast<size_t>(lvl_[DimM])];
  }
  /// C tiles of the iteration: two for the fill pair, else one.
  int members(const NestIter &it) const { return inPair(it) ? 2 : 1; }
  /// Rows of member `j` of the iteration's C tiles: the pair's first tile
  /// is full, its second the M level's first iteration (the tail when the
  /// pair is all of M).
  int64_t rows(const NestIter &it, int upTo, int j) const {
    if (inPair(it) && j == 0)
      return full_[DimM];
    return size(DimM, it, upTo);
  }
  /// Around the fill pair, in the streams with a register that steps with
  /// M: the pair covers two M tiles but is one iteration of the M level.
  /// After it the register moves one tile further (when the level has more
  /// iterations; otherwise it does not step at all), and after the M level
  /// it moves that tile back, since the N level steps it back by the M
  /// level's iterations only.
  void afterPair(StreamBuilder &s, int reg, int64_t stepM) const {
    if (levels_[static_cast<size_t>(lvl_[DimM])].tiles > 1)
      s.addi(reg, reg, stepM);
  }
  void afterMLevel(StreamBuilder &s, int reg, int64_t stepM) const {
    if (s_.pair && levels_[static_cast<size_t>(lvl_[DimM])].tiles > 1)
      s.addi(reg, reg, -stepM);
  }

  void allocate(const Resources &res);
  void makeStreams();
  void emitLoad();
  void emitSfu(StreamBuilder &s);
  void postTile(StreamBuilder &s, const NestIter &it, int biasReg, int j);
  void emitPt(int unit);
  void emitStore();
  void emitRing();
  void emitReduce();
  /// A tile of the current iteration as ring transfer fields.
  InstrBuilder aTransfer(isa::Opcode op, int peer, Addr slot,
                         const NestIter &it, int upTo, int j) const;
  /// `j`: the member of the fill pair (0 otherwise).
  void loadA(const NestIter &it, int upTo, int j);
  void loadB(const NestIter &it, int upTo);
  void xposeA(const NestIter &it, int upTo, int j);
  /// The change of A's memory address from one M tile to the next.
  int64_t aStepM() const;
  void xposeB(const NestIter &it, int upTo);

  ProgramBuilder &pb_;
  const Problem &p_;
  MatmulPlan::Part part_;
  int core_;
  int units_;
  int prev_ = -1, next_ = -1;
  int accFrom_ = -1, sendTo_ = -1;
  Shape s_;
  std::array<int, 3> lvl_{};
  std::array<int64_t, 3> tail_{}, full_{};
  std::vector<NestLevel> levels_, panelLevels_;
  int aLevel_ = -1, bLevel_ = -1;
  LxLayout lx_;
  int64_t lxEnd_ = 0;
  std::vector<int64_t> aSlots_, rawASlots_, bSlots_, rawBSlots_, cSlots_,
      dSlots_;
  int64_t stageAt_ = 0, biasRawAt_ = 0, biasFAt_ = 0;

  StreamBuilder *load_ = nullptr, *store_ = nullptr, *xpose_ = nullptr,
                *post_ = nullptr, *ring_ = nullptr;
  std::vector<StreamBuilder *> pts_;
  std::unique_ptr<BufferRing> aRing_, rawARing_, bRing_, rawBRing_, cRing_,
      dRing_;
  std::unique_ptr<OnceSignal> biasReady_;
  int aMemReg_ = 0, bMemReg_ = 0, bLxReg_ = 0;
  /// Counter of K steps done (PT unit 0 -> store) when the store is paced;
  /// -1 otherwise.
  int pace_ = -1;
  /// Counter of the kept panel's K steps done (PT unit 0 -> load), which
  /// paces the panel's loads; -1 without a kept panel.
  int panelPace_ = -1;
};

void MatmulCore::allocate(const Resources &res) {
  lx_ = lxLayout(p_, s_);
  LxArena arena(res.lxBase, res.lxEnd, "matmul");
  auto slots = [&](int n, int64_t sticks) {
    std::vector<int64_t> v;
    if (sticks == 0)
      return v;
    for (int i = 0; i < n; ++i)
      v.push_back(arena.take(sticks));
    return v;
  };
  aSlots_ = slots(lx_.aSlots, lx_.aSlot);
  rawASlots_ = slots(lx_.aSlots, lx_.rawASlot);
  bSlots_ = slots(lx_.bSlots, lx_.bSlot);
  rawBSlots_ = slots(lx_.bSlots, lx_.rawBSlot);
  cSlots_ = slots(lx_.cSlots, lx_.cSlot);
  dSlots_ = slots(lx_.cSlots, lx_.dSlot);
  stageAt_ = arena.take(lx_.stage);
  biasRawAt_ = arena.take(lx_.biasRaw);
  biasFAt_ = arena.take(lx_.biasF);
  lxEnd_ = arena.next();
  pb_.noteLxUse(core_, lxEnd_);
}

void MatmulCore::makeStreams() {
  using isa::Engine;
  load_ = &pb_.stream(core_, Engine::DmaLoad);
  if (s_.owner)
    store_ = &pb_.stream(core_, Engine::DmaStore);
  for (int u = 0; u < units_; ++u)
    pts_.push_back(&pb_.stream(core_, Engine::Pt, u));
  if (p_.transA || p_.transB)
    xpose_ = &pb_.stream(core_, Engine::Sfu, 0);
  if (s_.post)
    post_ = &pb_.stream(core_, Engine::Sfu, units_ > 1 ? 1 : 0);
  const bool reduces = accFrom_ >= 0 || sendTo_ >= 0;
  if (prev_ >= 0 || next_ >= 0 || reduces)
    ring_ = &pb_.stream(core_, Engine::Ring);
  if (pacedStores(s_))
    pace_ = pb_.allocCounter(core_);
  if (s_.keepB)
    panelPace_ = pb_.allocCounter(core_);

  using Stages = std::vector<std::vector<StreamBuilder *>>;
  if (p_.transA) {
    rawARing_ = std::make_unique<BufferRing>(pb_, core_, rawASlots_,
                                             Stages{{load_}, {xpose_}});
    aRing_ = std::make_unique<BufferRing>(pb_, core_, aSlots_,
                                          Stages{{xpose_}, pts_});
  } else if (prev_ >= 0) {
    // A arrives from the previous core of the chain.
    aRing_ = std::make_unique<BufferRing>(pb_, core_, aSlots_,
                                          Stages{{ring_}, pts_});
  } else if (next_ >= 0) {
    // The chain's first core loads A; its ring engine passes each tile on
    // while the PT units use it.
    std::vector<StreamBuilder *> readers = pts_;
    readers.push_back(ring_);
    aRing_ = std::make_unique<BufferRing>(pb_, core_, aSlots_,
                                          Stages{{load_}, readers});
  } else {
    aRing_ = std::make_unique<BufferRing>(pb_, core_, aSlots_,
                                          Stages{{load_}, pts_});
  }
  if (p_.transB) {
    rawBRing_ = std::make_unique<BufferRing>(pb_, core_, rawBSlots_,
                                             Stages{{load_}, {xpose_}});
    bRing_ = std::make_unique<BufferRing>(pb_, core_, bSlots_,
                                          Stages{{xpose_}, pts_});
  } else {
    bRing_ = std::make_unique<BufferRing>(pb_, core_, bSlots_,
                                          Stages{{load_}, pts_});
  }
  // C goes from the PT units through the reduction (K split) and the post
  // stage to the store; a partner's C ends at its ring engine's send.
  Stages cStages{pts_};
  if (reduces)
    cStages.push_back({ring_});
  if (s_.post)
    cStages.push_back({post_});
  if (s_.convert)
    dRing_ = std::make_unique<BufferRing>(pb_, core_, dSlots_,
                                          Stages{{post_}, {store_}});
  else if (s_.owner)
    cStages.push_back({store_});
  cRing_ = std::make_unique<BufferRing>(pb_, core_, cSlots_, cStages);
  if (p_.bias && s_.owner)
    biasReady_ = std::make_unique<OnceSignal>(
        pb_, core_, std::vector<StreamBuilder *>{post_});
}

// ---- DMA load

int64_t MatmulCore::aStepM() const {
  return p_.transA ? s_.tileM / kDl16Lanes * p_.a.blockStride
                   : s_.tileM * p_.a.rowStride;
}

void MatmulCore::loadA(const NestIter &it, int upTo, int j) {
  const int64_t m = rows(it, upTo, j), kp = kPad(it, upTo);
  const StickMatrix &a = p_.a;
  // The fill pair's second tile is one M tile on.
  const Addr mem{aMemReg_, j * aStepM()};
  if (p_.transA) {
    // A^T [K, M] sticked on M: the tile's k rows of each of its m blocks.
    rawARing_->acquire(*load_);
    load_->append(loadSticks(rawARing_->slot(*load_), mem,
                             {size(DimK, it, upTo), ceilDiv(m, kDl16Lanes),
                              a.rowStride, a.blockStride, s_.tileK}));
    rawARing_->release(*load_);
    return;
  }
  aRing_->acquire(*load_);
  load_->append(
      loadSticks(aRing_->slot(*load_), mem,
                 {m, kp / kDl16Lanes, a.rowStride, a.blockStride, s_.tileM}));
  aRing_->release(*load_);
}

void MatmulCore::loadB(const NestIter &it, int upTo) {
  const int64_t cols = size(DimN, it, upTo), kp = kPad(it, upTo);
  const int64_t nBlocks = ceilDiv(cols, kDl16Lanes);
  const StickMatrix &b = p_.b;
  if (p_.transB) {
    // B^T [N, K] sticked on K: the tile's n rows of each of its k blocks.
    rawBRing_->acquire(*load_);
    load_->append(
        loadSticks(rawBRing_->slot(*load_), Addr{bMemReg_, 0},
                   {cols, kp / kDl16Lanes, b.rowStride, b.blockStride, s_.tileN}));
    rawBRing_->release(*load_);
    return;
  }
  // Rows of the tile that memory holds; the rest up to the padded K are
  // zeroed in LX from the shared zero sticks, so mm never reads garbage.
  int64_t present = kp;
  if (isTail(DimK, it, upTo))
    present = std::min(kp, b.memRows - part_.k0 - (s_.kTiles - 1) * s_.tileK);
  // A kept panel's K tile goes to its rows of the panel (bLxReg_ steps
  // with K), and is handed over alone: the PT units start on it while the
  // next one loads.
  Addr slot = Addr{bLxReg_, 0};
  if (!s_.keepB) {
    bRing_->acquire(*load_);
    slot = bRing_->slot(*load_);
  }
  const int64_t lxBlockStride = s_.keepB ? s_.kPad : s_.tileK;
  load_->append(loadSticks(
      slot, Addr{bMemReg_, 0},
      {present, nBlocks, b.rowStride, b.blockStride, lxBlockStride}));
  if (present < kp)
    load_->append(loadSticks(
        slot + present, at(static_cast<int64_t>(pb_.zeroSticks(kp - present))),
        {kp - present, nBlocks, 1, 0, lxBlockStride}));
  if (s_.keepB) {
    bRing_->post(*load_);
    return;
  }
  bRing_->release(*load_);
}

void MatmulCore::emitLoad() {
  StreamBuilder &s = *load_;
  for (BufferRing *r : {rawARing_.get(), rawBRing_.get()})
    if (r)
      r->open(s);
  const bool loadsA = prev_ < 0;
  if (!p_.transA && loadsA)
    aRing_->open(s);
  if (!p_.transB)
    bRing_->open(s);
  if (p_.bias && s_.owner) {
    const StickMatrix &bias = *p_.bias;
    s.append(loadSticks(at(biasRawAt_), at(static_cast<int64_t>(bias.address)),
                        {1, bias.blocks(), 1, bias.blockStride, 1}));
    // An FP32 bias is used in place: pad it with zero sticks to whole
    // 64-column blocks.
    if (lx_.biasRaw > bias.blocks())
      s.append(loadSticks(
          at(biasRawAt_ + bias.blocks()),
          at(static_cast<int64_t>(pb_.zeroSticks(lx_.biasRaw - bias.blocks()))),
          {lx_.biasRaw - bias.blocks(), 1, 1, 0, 0}));
    biasReady_->post(s);
  }
  const StickMatrix &a = p_.a, &b = p_.b;
  aMemReg_ = s.allocReg();
  bMemReg_ = s.allocReg();
  std::vector<int64_t> aStep(3, 0), bStep(3, 0);
  const int64_t k0 = part_.k0;
  if (p_.transA) {
    s.li(aMemReg_, a.stick(k0, part_.m0 / kDl16Lanes));
    aStep[static_cast<size_t>(lvl_[DimM])] = s_.tileM / kDl16Lanes * a.blockStride;
    aStep[static_cast<size_t>(lvl_[DimK])] = s_.tileK * a.rowStride;
  } else {
    s.li(aMemReg_, a.stick(part_.m0, k0 / kDl16Lanes));
    aStep[static_cast<size_t>(lvl_[DimM])] = s_.tileM * a.rowStride;
    aStep[static_cast<size_t>(lvl_[DimK])] = s_.tileK / kDl16Lanes * a.blockStride;
  }
  if (p_.transB) {
    s.li(bMemReg_, b.stick(part_.n0, k0 / kDl16Lanes));
    bStep[static_cast<size_t>(lvl_[DimN])] = s_.tileN * b.rowStride;
    bStep[static_cast<size_t>(lvl_[DimK])] = s_.tileK / kDl16Lanes * b.blockStride;
  } else {
    s.li(bMemReg_, b.stick(k0, part_.n0 / kDl16Lanes));
    bStep[static_cast<size_t>(lvl_[DimN])] = s_.tileN / kDl16Lanes * b.blockStride;
    bStep[static_cast<size_t>(lvl_[DimK])] = s_.tileK * b.rowStride;
  }
  NestIter none;
  none.tail.assign(3, false);
  none.first.assign(3, false);
  if (aLevel_ < 0 && loadsA)
    loadA(none, -1, 0);
  std::vector<NestReg> regs;
  if (loadsA)
    regs.push_back({aMemReg_, aStep});
  regs.push_back({bMemReg_, bStep});
  // A kept panel: the buffer is taken when its N tile starts, filled K tile
  // by K tile in the first M tile, and given up when the N tile ends.
  const int mLevel = lvl_[DimM];
  if (s_.keepB) {
    bLxReg_ = s.allocReg();
    std::vector<int64_t> step(3, 0);
    step[static_cast<size_t>(lvl_[DimK])] = s_.tileK;
    regs.push_back({bLxReg_, step});
  }
  auto takePanel = [&] {
    bRing_->acquire(s);
    s.mov(bLxReg_, bRing_->slot(s).reg);
  };
  if (s_.keepB)
    s.signal(panelPace_, kPanelAhead);
  if (bLevel_ < 0 && s_.keepB)
    takePanel();
  else if (bLevel_ < 0)
    loadB(none, -1);
  NestHooks h;
  h.enter = [&](int l, const NestIter &it) {
    if (s_.keepB) {
      // The panel's K tile first: every core of a chain waits for it, only
      // the chain waits for the first core's A tile.
      if (l == bLevel_)
        takePanel();
      if (l == lvl_[DimK] && it.first[static_cast<size_t>(mLevel)]) {
        s.wait(panelPace_, 1);
        loadB(it, l);
      }
      if (l == aLevel_ && loadsA)
        for (int j = 0; j < members(it); ++j)
          loadA(it, l, j);
      return;
    }
    if (l == aLevel_ && loadsA)
      loadA(it, l, 0);
    if (l == bLevel_)
      loadB(it, l);
  };
  h.leave = [&](int l, const NestIter &it) {
    if (l == bLevel_ && s_.keepB)
      bRing_->advance(s);
    if (loadsA && l == mLevel && inPair(it))
      afterPair(s, aMemReg_, aStepM());
    if (loadsA && l + 1 == mLevel)
      afterMLevel(s, aMemReg_, aStepM());
  };
  emitNest(s, panelLevels_, regs, h, pb_.config().limits.maxLoopCount);
  if (s_.keepB)
    s.wait(panelPace_, kPanelAhead);
  if (bLxReg_)
    s.freeReg(bLxReg_);
  for (BufferRing *r : {rawARing_.get(), rawBRing_.get()})
    if (r)
      r->close(s);
  if (!p_.transA && loadsA)
    aRing_->close(s);
  if (!p_.transB)
    bRing_->close(s);
  s.freeReg(aMemReg_);
  s.freeReg(bMemReg_);
}

// ---- SFU transposes

void MatmulCore::xposeA(const NestIter &it, int upTo, int j) {
  StreamBuilder &s = *xpose_;
  const int64_t m = rows(it, upTo, j), kRows = size(DimK, it, upTo);
  rawARing_->acquire(s);
  aRing_->acquire(s);
  Addr raw = rawARing_->slot(s), a = aRing_->slot(s);
  // Raw block mb holds k rows (sticks of 64 m values); A block kb holds m
  // rows (sticks of 64 k values). Each 64 x 64 piece turns over once; lanes
  // past the valid k rows come out zero (K padding).
  for (int64_t mb = 0; mb * kDl16Lanes < m; ++mb)
    for (int64_t kb = 0; kb * kDl16Lanes < kRows; ++kb)
      s.append(instr<Opcode::Xpose>()
                   .dst(a + kb * s_.tileM + mb * kDl16Lanes)
                   .src(raw + mb * s_.tileK + kb * kDl16Lanes)
                   .m(std::min(kDl16Lanes, kRows - kb * kDl16Lanes))
                   .k(std::min(kDl16Lanes, m - mb * kDl16Lanes)));
  rawARing_->release(s);
  aRing_->release(s);
}

void MatmulCore::xposeB(const NestIter &it, int upTo) {
  StreamBuilder &s = *xpose_;
  const int64_t cols = size(DimN, it, upTo), kp = kPad(it, upTo);
  rawBRing_->acquire(s);
  bRing_->acquire(s);
  Addr raw = rawBRing_->slot(s), b = bRing_->slot(s);
  // Raw block kb holds n rows (sticks of 64 k values); B block nb holds k
  // rows (sticks of 64 n values). All 64 k lanes are taken: past K they
  // are the zero padding of the stick, giving zero rows of B.
  for (int64_t nb = 0; nb * kDl16Lanes < cols; ++nb)
    for (int64_t kb = 0; kb * kDl16Lanes < kp; ++kb)
      s.append(instr<Opcode::Xpose>()
                   .dst(b + nb * s_.tileK + kb * kDl16Lanes)
                   .src(raw + kb * s_.tileN + nb * kDl16Lanes)
                   .m(std::min(kDl16Lanes, cols - nb * kDl16Lanes))
                   .k(kDl16Lanes));
  rawBRing_->release(s);
  bRing_->release(s);
}

// ---- PT units

void MatmulCore::emitPt(int unit) {
  StreamBuilder &s = *pts_[static_cast<size_t>(unit)];
  aRing_->open(s);
  bRing_->open(s);
  cRing_->open(s);
  if (aLevel_ < 0)
    aRing_->acquire(s);
  if (bLevel_ < 0 && !s_.keepB)
    bRing_->acquire(s);
  // A kept B panel holds all K tiles: the K step's rows start tileK further
  // on at every step.
  std::vector<NestReg> regs;
  int bReg = 0;
  if (s_.keepB) {
    bReg = s.allocReg();
    s.mov(bReg, bRing_->slot(s).reg);
    std::vector<int64_t> step(3, 0);
    step[static_cast<size_t>(lvl_[DimK])] = s_.tileK;
    regs.push_back({bReg, step});
  }
  // The unit's share of the rows of member j's C tile, into buffer c.
  auto step = [&](const NestIter &it, int j, Addr c) {
    const int64_t m = rows(it, 2, j);
    const int64_t i0 = unit * m / units_, i1 = (unit + 1) * m / units_;
    if (i1 <= i0)
      return;
    auto mm = instr<Opcode::Mm>()
                  .c(c + i0)
                  .a(aRing_->slot(s) + i0)
                  .b(s_.keepB ? Addr{bReg, 0} : bRing_->slot(s))
                  .m(i1 - i0)
                  .k(kPad(it, 2))
                  .n(ceilDiv(size(DimN, it, 2), kDl16Lanes) * kDl16Lanes)
                  .as(s_.tileM)
                  .bs(s_.keepB ? s_.kPad : s_.tileK)
                  .cs(s_.tileM);
    if (s_.directDl16)
      mm.out(isa::StickFormat::Dl16);
    if (!it.first[2])
      mm.acc(1);
    s.append(mm);
  };
  // The fill pair holds both C buffers: the first tile's is the one
  // released (stepped past) on the way to the second's.
  NestHooks h;
  h.enter = [&](int l, const NestIter &it) {
    if (l == aLevel_ && !inPair(it))
      aRing_->acquire(s);
    if (l == bLevel_ && bReg)
      s.mov(bReg, bRing_->slot(s).reg);
    else if (l == bLevel_)
      bRing_->acquire(s);
    if (l != 1)
      return;
    cRing_->acquire(s);
    if (inPair(it)) {
      cRing_->advance(s);
      cRing_->acquire(s);
    }
  };
  h.body = [&](const NestIter &it) {
    // The kept panel's K tiles arrive one by one in the first M tile.
    if (s_.keepB && it.first[static_cast<size_t>(lvl_[DimM])])
      bRing_->acquire(s);
    if (pace_ >= 0 && unit == 0)
      s.signal(pace_, 1);
    if (s_.keepB && unit == 0 && it.first[static_cast<size_t>(lvl_[DimM])])
      s.signal(panelPace_, 1);
    if (!inPair(it)) {
      step(it, 0, cRing_->slot(s));
      return;
    }
    // Both tiles of the pair on this K step of the panel, each with its
    // own A tile.
    for (int j = 0; j < 2; ++j) {
      aRing_->acquire(s);
      step(it, j, j == 0 ? cRing_->released(s) : cRing_->slot(s));
      aRing_->release(s);
    }
  };
  h.leave = [&](int l, const NestIter &it) {
    if (l == 1 && inPair(it)) {
      cRing_->post(s);
      cRing_->post(s);
      cRing_->advance(s);
    } else if (l == 1) {
      cRing_->release(s);
    }
    if (l == aLevel_ && !inPair(it))
      aRing_->release(s);
    if (l == bLevel_)
      bRing_->release(s);
  };
  emitNest(s, panelLevels_, regs, h, pb_.config().limits.maxLoopCount);
  if (pace_ >= 0 && unit == 0)
    s.signal(pace_, s_.kTiles);
  if (bReg)
    s.freeReg(bReg);
  if (aLevel_ < 0)
    aRing_->release(s);
  if (bLevel_ < 0)
    bRing_->release(s);
  aRing_->close(s);
  bRing_->close(s);
  cRing_->close(s);
}

// ---- Ring: the A chain

InstrBuilder MatmulCore::aTransfer(Opcode op, int peer, Addr slot,
                                   const NestIter &it, int upTo, int j) const {
  // The tile's k blocks of `rows` sticks each, tileM apart in LX.
  return instrOf<isa::Format::Ring>(op)
      .core(peer)
      .lx(slot)
      .n(rows(it, upTo, j))
      .m(kPad(it, upTo) / kDl16Lanes)
      .s(s_.tileM);
}

void MatmulCore::emitRing() {
  StreamBuilder &s = *ring_;
  aRing_->open(s);
  // The first core passes on the tile it loaded while its PT units read it.
  // The others receive a tile, hand it to their PT units, and pass it on
  // from the buffer they just released: the PT units only read it, and the
  // buffer is filled again only after this send (program order) and after
  // the PT units are done with it (the ring's tokens).
  auto step = [&](const NestIter &it, int upTo, int j) {
    aRing_->acquire(s);
    if (prev_ < 0) {
      s.append(aTransfer(Opcode::Send, next_, aRing_->slot(s), it, upTo, j));
      aRing_->release(s);
      return;
    }
    s.append(aTransfer(Opcode::Recv, prev_, aRing_->slot(s), it, upTo, j));
    aRing_->release(s);
    if (next_ >= 0)
      s.append(aTransfer(Opcode::Send, next_, aRing_->released(s), it, upTo, j));
  };
  NestIter none;
  none.tail.assign(3, false);
  none.first.assign(3, false);
  if (aLevel_ < 0)
    step(none, -1, 0);
  NestHooks h;
  h.enter = [&](int l, const NestIter &it) {
    if (l == aLevel_)
      for (int j = 0; j < members(it); ++j)
        step(it, l, j);
  };
  emitNest(s, levels_, {}, h, pb_.config().limits.maxLoopCount);
  aRing_->close(s);
}

// ---- Ring: the K split's partial sums

void MatmulCore::emitReduce() {
  StreamBuilder &s = *ring_;
  cRing_->open(s);
  // Per C tile, once the PT units are done with it: add the next partner's
  // partial (its sum over the partners after it) into this core's own, then
  // pass the sum on towards the owner. racc reads and writes the tile, so it
  // waits for the PT units like every later stage; the rsend has finished
  // reading the tile when it completes, before the release lets the PT
  // units (or, on the owner, the post stage or the store) at it again.
  NestHooks h;
  h.leave = [&](int l, const NestIter &it) {
    if (l != 1)
      return;
    for (int j = 0; j < members(it); ++j) {
      cRing_->acquire(s);
      // The tile's FP32 blocks (two per 64 columns) of `rows` sticks each,
      // tileM apart.
      auto transfer = [&](Opcode op, int peer) {
        return instrOf<isa::Format::Ring>(op)
            .core(peer)
            .lx(cRing_->slot(s))
            .n(rows(it, 1, j))
            .m(2 * ceilDiv(size(DimN, it, 1), kDl16Lanes))
            .s(s_.tileM);
      };
      if (accFrom_ >= 0)
        s.append(transfer(Opcode::Racc, accFrom_));
      if (sendTo_ >= 0)
        s.append(transfer(Opcode::Rsend, sendTo_));
      cRing_->release(s);
    }
  };
  emitNest(s, levels_, {}, h, pb_.config().limits.maxLoopCount);
  cRing_->close(s);
}

// ---- SFU: transposes and the post stage, in one nest when one unit has
// both (its program must follow the pipeline's order, or a full ring
// would wait for work later in the same stream).

void MatmulCore::emitSfu(StreamBuilder &s) {
  const bool doXpose = &s == xpose_, doPost = &s == post_;
  if (doXpose && p_.transA) {
    rawARing_->open(s);
    aRing_->open(s);
  }
  if (doXpose && p_.transB) {
    rawBRing_->open(s);
    bRing_->open(s);
  }
  int biasReg = 0;
  std::vector<NestReg> regs;
  if (doPost) {
    cRing_->open(s);
    if (dRing_)
      dRing_->open(s);
    if (p_.bias) {
      biasReady_->await(s);
      if (p_.bias->dtype == isa::DType::Dl16)
        s.append(sfuCvt(at(biasFAt_), at(biasRawAt_), true,
                        {p_.bias->blocks(), 1, 0, 0, 0, 0}));
      biasReg = s.allocReg();
      const int64_t biasF =
          p_.bias->dtype == isa::DType::Dl16 ? biasFAt_ : biasRawAt_;
      // FP32 bias sticks are 32 columns each.
      s.li(biasReg, biasF + part_.n0 / 32);
      std::vector<int64_t> step(3, 0);
      step[static_cast<size_t>(lvl_[DimN])] = s_.tileN / 32;
      regs.push_back({biasReg, step});
    }
  }
  NestIter none;
  none.tail.assign(3, false);
  none.first.assign(3, false);
  if (doXpose && p_.transA && aLevel_ < 0)
    xposeA(none, -1, 0);
  if (doXpose && p_.transB && bLevel_ < 0)
    xposeB(none, -1);
  NestHooks h;
  h.enter = [&](int l, const NestIter &it) {
    if (doXpose && p_.transA && l == aLevel_)
      for (int j = 0; j < members(it); ++j)
        xposeA(it, l, j);
    if (doXpose && p_.transB && l == bLevel_)
      xposeB(it, l);
  };
  h.leave = [&](int l, const NestIter &it) {
    if (doPost && l == 1)
      for (int j = 0; j < members(it); ++j)
        postTile(s, it, biasReg, j);
  };
  emitNest(s, levels_, regs, h, pb_.config().limits.maxLoopCount);
  if (doXpose && p_.transA) {
    rawARing_->close(s);
    aRing_->close(s);
  }
  if (doXpose && p_.transB) {
    rawBRing_->close(s);
    bRing_->close(s);
  }
  if (doPost) {
    cRing_->close(s);
    if (dRing_)
      dRing_->close(s);
    if (biasReg)
      s.freeReg(biasReg);
  }
}

void MatmulCore::postTile(StreamBuilder &s, const NestIter &it, int biasReg,
                          int j) {
  const int64_t m = rows(it, 1, j);
  const int64_t nBlocks = ceilDiv(size(DimN, it, 1), kDl16Lanes);
  cRing_->acquire(s);
  Addr c = cRing_->slot(s);
  if (!s_.convert) {
    // FP32 C: bias stick j on every row of FP32 block j, in place.
    s.append(sfuBinary(Opcode::Add, c, c, Addr{biasReg, 0},
                       {m, 2 * nBlocks, s_.tileM, s_.tileM, 1, 0}, true, true));
    cRing_->release(s);
    return;
  }
  // FP32 blocks 2b and 2b+1 interleave row by row into the stage (plus the
  // bias on the way), which cvt turns into DL16 block b. Beside a kept
  // panel, one block at a time: the stage holds one DL16 block's FP32 rows
  // (2 tileM sticks, not 2 tileM per 64 columns: what lets a fill pair of
  // 512-row tiles fit beside a 4096 x 128 panel), and this one SFU stream
  // orders its reuse. Otherwise all blocks, then one cvt (the plain -O0
  // plan's tiles stay those it always had).
  dRing_->acquire(s);
  const Addr stage = at(stageAt_);
  const int64_t perStage = s_.keepB ? 1 : nBlocks;
  for (int64_t b0 = 0; b0 < nBlocks; b0 += perStage) {
    const int64_t blocks = std::min(perStage, nBlocks - b0);
    for (int64_t f = 0; f < 2 * blocks; ++f) {
      Addr dst = stage + (f / 2) * 2 * m + f % 2;
      Addr src = c + (2 * b0 + f) * s_.tileM;
      if (p_.bias)
        s.append(sfuBinary(Opcode::Add, dst, src, Addr{biasReg, 2 * b0 + f},
                           {1, m, 2, 1, 0, 0}, true, true));
      else
        s.append(sfuUnary(Opcode::Copy, dst, src, {1, m, 2, 1, 0, 0}, true));
    }
    s.append(sfuCvt(dRing_->slot(s) + b0 * s_.tileM, stage, false,
                    {2 * m, blocks, s_.tileM, 2 * m, 0, 0}));
  }
  cRing_->release(s);
  dRing_->release(s);
}

// ---- DMA store

void MatmulCore::emitStore() {
  StreamBuilder &s = *store_;
  BufferRing &ring = dRing_ ? *dRing_ : *cRing_;
  ring.open(s);
  const StickMatrix &c = p_.c;
  const int64_t lanes = c.lanes();
  int reg = s.allocReg();
  s.li(reg, c.stick(part_.m0, part_.n0 / lanes));
  std::vector<int64_t> step(3, 0);
  step[static_cast<size_t>(lvl_[DimM])] = s_.tileM * c.rowStride;
  step[static_cast<size_t>(lvl_[DimN])] = s_.tileN / lanes * c.blockStride;
  // Paced: the tile's rows go out in pieces, each after the next tile's
  // share of K steps (the PT's tokens), so that the cores of a chain, which
  // finish their tiles together, do not write them to memory in one burst
  // that the chains' A tiles would queue behind. The first tile's tokens
  // are taken up front; the PT adds a tile's worth at its end. The fill
  // pair's two tiles share the next tile's tokens, half each, so the
  // stores stay one tile behind the PT.
  const int64_t k = s_.kTiles;
  if (pace_ >= 0)
    s.wait(pace_, k);
  // One C tile of m rows after `tokens` of the PT's.
  auto storeTile = [&](const NestIter &it, int64_t m, int64_t tokens) {
    ring.acquire(s);
    const int64_t blocks = ceilDiv(size(DimN, it, 1), lanes);
    const int64_t pieces = pace_ >= 0 ? std::min({tokens, kStorePieces, m}) : 1;
    if (pieces <= 1) {
      if (pace_ >= 0 && tokens > 0)
        s.wait(pace_, tokens);
      s.append(storeSticks(Addr{reg, 0}, ring.slot(s),
                           {m, blocks, c.rowStride, c.blockStride, s_.tileM}));
      ring.release(s);
      return;
    }
    // `full` pieces of `pr` rows in a loop, each after tokens / pieces
    // tokens, then the rest of the rows after the rest of the tokens.
    const int64_t pr = ceilDiv(m, pieces), full = (m - 1) / pr;
    const int64_t w = tokens / pieces;
    const int lx = s.allocReg();
    s.mov(lx, ring.slot(s).reg);
    s.beginLoop(full);
    s.wait(pace_, w);
    s.append(storeSticks(Addr{reg, 0}, Addr{lx, 0},
                         {pr, blocks, c.rowStride, c.blockStride, s_.tileM}));
    s.addi(reg, reg, pr * c.rowStride);
    s.addi(lx, lx, pr);
    s.endLoop();
    s.wait(pace_, tokens - full * w);
    s.append(storeSticks(
        Addr{reg, 0}, Addr{lx, 0},
        {m - full * pr, blocks, c.rowStride, c.blockStride, s_.tileM}));
    s.addi(reg, reg, -full * pr * c.rowStride);
    s.freeReg(lx);
    ring.release(s);
  };
  const int64_t stepM = s_.tileM * c.rowStride;
  NestHooks h;
  h.leave = [&](int l, const NestIter &it) {
    if (l + 1 == lvl_[DimM])
      afterMLevel(s, reg, stepM);
    if (l != 1)
      return;
    if (!inPair(it)) {
      storeTile(it, rows(it, 1, 0), k);
      return;
    }
    storeTile(it, rows(it, 1, 0), k / 2);
    s.addi(reg, reg, stepM);
    storeTile(it, rows(it, 1, 1), k - k / 2);
    s.addi(reg, reg, -stepM);
    afterPair(s, reg, stepM);
  };
  emitNest(s, levels_, {{reg, step}}, h, pb_.config().limits.maxLoopCount);
  ring.close(s);
  s.freeReg(reg);
}

void MatmulCore::emit() {
  emitLoad();
  if (xpose_)
    emitSfu(*xpose_);
  for (int u = 0; u < units_; ++u)
    emitPt(u);
  if (prev_ >= 0 || next_ >= 0)
    emitRing();
  if (accFrom_ >= 0 || sendTo_ >= 0)
    emitReduce();
  if (post_ && post_ != xpose_)
    emitSfu(*post_);
  if (store_)
    emitStore();
  for (auto *r : {aRing_.get(), rawARing_.get(), bRing_.get(), rawBRing_.get(),
                  cRing_.get(), dRing_.get()})
    if (r)
      r->finish();
  if (biasReady_)
    biasReady_->finish();
  if (pace_ >= 0)
    pb_.releaseCounter(core_, pace_);
  if (panelPace_ >= 0)
    pb_.releaseCounter(core_, panelPace_);
}

} // namespace

MatmulPlan emitMatmul(ProgramBuilder &pb, const MatmulArgs &args,
                      const KernelOptions &opt, const MatmulPlan *given) {
  const Problem p = problemOf(args);
  const Resources res = resources(pb.config(), opt);
  MatmulPlan plan = given ? *given : planMatmul(pb.config(), args, opt);
  SPYRE_ASSERT(plan.error.empty(), "matmul: " + plan.error);
  SPYRE_ASSERT(plan.m == p.m && plan.k == p.k && plan.n == p.n,
               "matmul: the plan is for another problem");
  SPYRE_ASSERT(plan.tileK % kDl16Lanes == 0 && plan.tileN % kDl16Lanes == 0 &&
                   plan.tileM % mAlignOf(p) == 0 && plan.tileM > 0,
               "matmul: tile sizes break the stick granularity");
  SPYRE_ASSERT(plan.units >= 1 &&
                   plan.units <= pb.config().chip.coreletsPerCore,
               "matmul: plan units");
  pb.setOp(opt.op.empty() ? "matmul" : opt.op);
  SPYRE_ASSERT(!plan.shareA || static_cast<int>(plan.parts.size()) ==
                                   plan.gridM * plan.gridN,
               "matmul: a plan sharing A needs every grid cell");
  SPYRE_ASSERT(!plan.shareA || !p.transA, "matmul: shared A is transposed");
  SPYRE_ASSERT(!plan.keepB || !p.transB, "matmul: kept B is transposed");
  SPYRE_ASSERT(plan.gridK >= 1 && (plan.gridK == 1 || !plan.shareA),
               "matmul: a K split does not share A");
  SPYRE_ASSERT(plan.parts.size() % static_cast<size_t>(plan.gridK) == 0,
               "matmul: every block of a K split needs all its partners");
  const AChains chains =
      plan.shareA ? aChains(pb.config(), res.firstCore, plan.gridM, plan.gridN)
                  : AChains{};
  const bool pair = plan.pairFill;
  SPYRE_ASSERT(!pair || plan.keepB, "matmul: a fill pair needs a kept panel");
  plan.lxSticks = 0;
  for (size_t i = 0; i < plan.parts.size(); ++i) {
    const MatmulPlan::Part &part = plan.parts[i];
    SPYRE_ASSERT(!plan.shareA ||
                     part.core == res.firstCore + static_cast<int>(i),
                 "matmul: a shared A chain needs consecutive cores");
    const int prev = plan.shareA ? chains.prev[i] : -1;
    const int next = plan.shareA ? chains.next[i] : -1;
    // The partners of a block, owner first, on consecutive cores: partials
    // flow down the core ids to the owner.
    const auto q = static_cast<int>(i % static_cast<size_t>(plan.gridK));
    SPYRE_ASSERT(q == 0 || (plan.parts[i - 1].core == part.core - 1 &&
                            plan.parts[i - 1].m0 == part.m0 &&
                            plan.parts[i - 1].n0 == part.n0),
                 "matmul: K partners must be on consecutive cores");
    const int accFrom = q + 1 < plan.gridK ? part.core + 1 : -1;
    const int sendTo = q > 0 ? part.core - 1 : -1;
    MatmulCore core(pb, p, plan, res, part, prev, next, accFrom, sendTo, pair);
    core.emit();
    plan.lxSticks = std::max(plan.lxSticks, core.lxEnd() - res.lxBase);
  }
  return plan;
}

} // namespace spyre::codegen
