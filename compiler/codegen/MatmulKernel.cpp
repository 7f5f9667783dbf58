// The matmul kernel: C[M, N] = A[M, K] x B[K, N] (+ bias[N]), DL16 operands,
// FP32 accumulation, C in DL16 or FP32, with A or B optionally given
// transposed (Kernels.h). This file emits a plan's streams; the planner and
// its cost model are MatmulPlan.cpp, what both share MatmulModel.h.
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
//
// The gated product (MatmulArgs::up; what differs, GatedMatmulKernel.cpp):
// each B tile holds the columns of both weights, each C tile both FP32
// products, and the post stage gates them into the DL16 result.
#include "compiler/codegen/MatmulModel.h"

namespace spyre::codegen {

using isa::Opcode;
using namespace matmul;

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
  int upMemReg_ = 0;

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
  for (int64_t w = 0; w < p_.weights(); ++w) {
    const Addr to = slot + w * gatedBOffset(s_, lxBlockStride);
    load_->append(loadSticks(
        to, Addr{w == 0 ? bMemReg_ : upMemReg_, 0},
        {present, nBlocks, b.rowStride, b.blockStride, lxBlockStride}));
    if (present < kp)
      load_->append(loadSticks(
          to + present, at(static_cast<int64_t>(pb_.zeroSticks(kp - present))),
          {kp - present, nBlocks, 1, 0, lxBlockStride}));
  }
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
  if (p_.up) {
    upMemReg_ = s.allocReg();
    s.li(upMemReg_, p_.up->stick(k0, part_.n0 / kDl16Lanes));
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
  if (upMemReg_)
    regs.push_back({upMemReg_, bStep});
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
  if (upMemReg_)
    s.freeReg(upMemReg_);
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
    const int64_t bs = s_.keepB ? s_.kPad : s_.tileK;
    const Addr b = s_.keepB ? Addr{bReg, 0} : bRing_->slot(s);
    // The gated product's second weight and product sit beside the first.
    for (int64_t w = 0; w < p_.weights(); ++w) {
      auto mm = instr<Opcode::Mm>()
                    .c(c + w * gatedCOffset(s_) + i0)
                    .a(aRing_->slot(s) + i0)
                    .b(b + w * gatedBOffset(s_, bs))
                    .m(i1 - i0)
                    .k(kPad(it, 2))
                    .n(ceilDiv(size(DimN, it, 2), kDl16Lanes) * kDl16Lanes)
                    .as(s_.tileM)
                    .bs(bs)
                    .cs(s_.tileM);
      if (s_.directDl16)
        mm.out(isa::StickFormat::Dl16);
      if (!it.first[2])
        mm.acc(1);
      s.append(mm);
    }
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
      // The gated product's second partial sits a whole tile of columns
      // on (gatedCOffset): one transfer per product.
      auto transfer = [&](Opcode op, int peer, int64_t w) {
        return instrOf<isa::Format::Ring>(op)
            .core(peer)
            .lx(cRing_->slot(s) + w * gatedCOffset(s_))
            .n(rows(it, 1, j))
            .m(2 * ceilDiv(size(DimN, it, 1), kDl16Lanes))
            .s(s_.tileM);
      };
      for (int64_t w = 0; w < p_.weights(); ++w) {
        if (accFrom_ >= 0)
          s.append(transfer(Opcode::Racc, accFrom_, w));
        if (sendTo_ >= 0)
          s.append(transfer(Opcode::Rsend, sendTo_, w));
      }
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
  if (p_.up)
    siluInPlace(s, c, m, 2 * nBlocks, s_.tileM);
  for (int64_t b0 = 0; b0 < nBlocks; b0 += perStage) {
    const int64_t blocks = std::min(perStage, nBlocks - b0);
    for (int64_t f = 0; f < 2 * blocks; ++f) {
      Addr dst = stage + (f / 2) * 2 * m + f % 2;
      Addr src = c + (2 * b0 + f) * s_.tileM;
      if (p_.up)
        s.append(gateRows(dst, src, src + gatedCOffset(s_), m));
      else if (p_.bias)
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
