// The data movement of a core's part of a matmul (MatmulCore.h): the DMA
// loads of A, B and the bias, the A chain and the K split's partial sums on
// the ring, and the DMA stores of C. The pipeline they feed is described in
// MatmulKernel.cpp.
#include "compiler/codegen/MatmulCore.h"

namespace spyre::codegen::matmul {

using isa::Opcode;

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

} // namespace spyre::codegen::matmul
