// The matmul kernel's planner and cost model: the grid over (M, N) and the
// K split, tile sizes, operand sharing and the B panel, each candidate
// estimated in cycles (MatmulKernel.cpp describes the kernel; MatmulModel.h
// holds what the planner and the emitter share).
#include "compiler/codegen/MatmulModel.h"

namespace spyre::codegen {
namespace matmul {

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

} // namespace matmul

using namespace matmul;

namespace {

// ------------------------------------------------------------ planning


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
  // The gated product multiplies each tile by both weights.
  const auto weights = static_cast<double>(p.weights());
  const double stepPt = cfg.pt.setupCycles * weights +
                        rowsPerUnit * s.tileK * s.tileN * weights / (macs * eff);
  const double ptTime = static_cast<double>(steps) * stepPt;

  const std::array<int, 3> lvl = levelsOf(s.nOuter);
  const std::array<int64_t, 3> tiles = {s.mTiles, s.nTiles, s.kTiles};
  const double aBytes = 2.0 * blockM * kPad,
               bBytes = 2.0 * kPad * blockN * weights;
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
  // The first tiles' loads (both weights' for a gated product), their
  // latency and the last step's PT work.
  const double firstLoads =
      (2.0 * (s.tileM + s.tileN * weights) * s.tileK) / perCoreBw;
  double fill = firstLoads + ldLatency + stepPt;
  // The cores' C tiles reach memory together: the cores start together,
  // run the same steps and share one channel, so they finish each C tile
  // at about the same time, and its store is one burst of every core's
  // tile at the whole channel's rate.
  const double burst =
      cTraffic / static_cast<double>(cTiles) * active / bw;
  // A core with one C tile stores it after its last K step, all cores at
  // once: nothing is left to run beside that burst, it ends the op. That
  // holds with and without shared A: GPT-2's FFN (256 x 768 x 3072) on 8
  // cores with a 1x7 grid of one 256 x 64 x 448 tile per core, each core
  // loading its own A, keeps its PT units busy 84.5k of its 107.6k
  // simulated cycles and ends with 1.5 MiB of C at 100 bytes per cycle
  // (15.7k). Counted for sharing plans only, the burst was missing from
  // its estimate (104.0k), which ranked it above a 1x8 sharing plan
  // estimated 108.6k that runs 95.8k; it is now estimated 112.9k.
  const double lastBurst =
      cTiles == 1 ? std::max(0.0, burst - stepPt) : 0.0;
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
    if (!pacedStores(s) && cTiles > 1)
      fill += static_cast<double>(cTiles) * std::max(0.0, burst - stepPt);
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
    const double hop = 4.0 * s.tileM * s.tileN * weights /
                           cfg.reduceRing.bytesPerCycle +
                       cfg.reduceRing.hopLatencyCycles +
                       cfg.sequencer.syncCycles;
    reduceTime = (s.gridK > 2 ? 2.0 : 1.0) * hop * static_cast<double>(cTiles);
    fill += (s.gridK - 1) * hop;
  }
  // With one C buffer the next tile's K steps wait for the reduction.
  const bool oneC = !s.overlap || cTiles == 1;
  const double ptBusy = oneC ? ptTime + reduceTime : ptTime;
  // With one C tile per core, where memory is the longer of PT and memory
  // time, that time already holds the bytes of the first loads and of the
  // final store burst: they cost only what exceeds the slack. Counted in
  // full, they put such plans up to 30% above their simulation (GPT-2's
  // 8-core qkv projection, 256 x 768 x 2304 on a 1x8 grid sharing A: 95.0k
  // against 73.7k), so the planner passed them over for slower ones: the
  // GPT-2 layer ran 4.5% slower on 32 cores, and decode 1 x 4096 x 4096
  // slower at -O2 than at -O0. With more C tiles the first loads stay
  // counted: taking them out there too gave 1024^3 a 2x16 grid that runs
  // 2.8% slower.
  double memSlack = std::max(0.0, memBytes / perCoreBw - ptBusy);
  if (cTiles == 1) {
    fill += std::max(0.0, firstLoads + lastBurst - memSlack) - firstLoads;
    memSlack = std::max(0.0, memSlack - firstLoads - lastBurst);
  }
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
    fill += std::max(0.0, idle - memSlack);
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

} // namespace spyre::codegen
