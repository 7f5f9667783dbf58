// The emitter of one core's part of a matmul (MatmulKernel.cpp), internal
// to compiler/codegen: its streams, rings and registers, emitted role by
// role. The compute roles (PT units, SFU transposes and post stage) are
// MatmulKernel.cpp, the data movement (DMA loads and stores, the A chain and
// the K split's partial sums on the ring) MatmulTransfers.cpp.
#pragma once

#include "compiler/codegen/MatmulModel.h"

#include <array>
#include <memory>
#include <vector>

namespace spyre::codegen::matmul {

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

} // namespace spyre::codegen::matmul
