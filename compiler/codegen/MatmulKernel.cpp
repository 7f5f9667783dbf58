// The matmul kernel: C[M, N] = A[M, K] x B[K, N] (+ bias[N]), DL16 operands,
// FP32 accumulation, C in DL16 or FP32, with A or B optionally given
// transposed (Kernels.h). This file emits a plan's compute streams (the PT
// units, the SFU transposes and post stage) and drives the cores; their data
// movement (DMA and ring) is MatmulTransfers.cpp, the per-core emitter both
// fill in MatmulCore.h; the planner and its cost model are MatmulPlan.cpp,
// what plan and emission share MatmulModel.h.
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
#include "compiler/codegen/MatmulCore.h"

namespace spyre::codegen {

using isa::Opcode;
using namespace matmul;

// ------------------------------------------------------------ emission

namespace matmul {

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

} // namespace matmul

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
