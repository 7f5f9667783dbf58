// Row kernels: elementwise ops, conversion, softmax, layer and RMS norm and
// reductions over the last dim (Kernels.h).
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
#include "compiler/codegen/KernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <functional>

namespace spyre::codegen {

using isa::Opcode;

namespace {

constexpr isa::DType kF32 = isa::DType::Fp32;
/// Rows per tile are chosen so a tile moves at least this many sticks of
/// input when the core has that much work: shorter DMA instructions spend
/// more of their time in issue and memory latency (dma.issue_latency_cycles
/// + memory.latency_cycles, about 170 cycles against 1.3 cycles per stick
/// at the sustained bandwidth).
constexpr int64_t kMinTileSticks = 256;
/// A core's rows are cut into at least this many tiles when they are large
/// enough, so loads, compute and stores overlap. Kernels without overlap
/// tile by the same rule (the LX fit counting one buffer each).
constexpr int64_t kMinTiles = 4;

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

int64_t constSticks(const ConstSpec &c) {
  return std::max(c.m.rows * c.m.blocks(), c.padTo);
}

/// The rows x blocks move of a whole tile of matrix `m`.
StickMove tileMove(const StickMatrix &m, int64_t rows, int64_t lxBlockStride) {
  return {rows, m.blocks(), m.rowStride, m.blockStride, lxBlockStride};
}

void emitRowCore(ProgramBuilder &pb, const RowKernel &k, const Resources &res,
                 int core, int64_t r0, int64_t r1, int64_t t) {
  using isa::Engine;
  const int units = res.units;
  const int64_t hmax = ceilDiv(t, units);
  LxArena arena(res.lxBase, res.lxEnd, k.what);
  std::vector<int64_t> constAt;
  for (const ConstSpec &c : k.consts)
    constAt.push_back(arena.take(constSticks(c)));
  std::vector<std::vector<int64_t>> inSlots;
  for (const StickMatrix &m : k.inputs)
    inSlots.push_back(arena.takeEach(res.buffers, m.blocks() * t));
  std::vector<int64_t> outSlots =
      arena.takeEach(res.buffers, k.output.blocks() * t);
  std::vector<int64_t> scratchAt;
  for (int u = 0; u < units; ++u)
    scratchAt.push_back(arena.take(k.scratch(hmax)));
  pb.noteLxUse(core, arena.next());

  StreamBuilder &load = pb.stream(core, Engine::DmaLoad);
  StreamBuilder &store = pb.stream(core, Engine::DmaStore);
  std::vector<StreamBuilder *> sfus;
  for (int u = 0; u < units; ++u)
    sfus.push_back(&pb.stream(core, Engine::Sfu, u));

  std::vector<BufferRing> inRings;
  inRings.reserve(k.inputs.size());
  for (size_t i = 0; i < k.inputs.size(); ++i)
    inRings.emplace_back(
        pb, core, inSlots[i],
        std::vector<std::vector<StreamBuilder *>>{{&load}, sfus});
  BufferRing outRing(pb, core, outSlots, {sfus, {&store}});
  OnceSignal constsReady(
      pb, core, k.consts.empty() ? std::vector<StreamBuilder *>{} : sfus);

  const int64_t n = r1 - r0;
  const int64_t tiles = ceilDiv(n, t);
  const int64_t tail = n - (tiles - 1) * t;
  const std::vector<NestLevel> levels = {{tiles, tail != t, false}};
  const int64_t maxLoop = pb.config().limits.maxLoopCount;
  auto rowsOf = [&](const NestIter &it) { return it.tail[0] ? tail : t; };

  // DMA load: constants once, then every input tile.
  for (BufferRing &r : inRings)
    r.open(load);
  for (size_t c = 0; c < k.consts.size(); ++c) {
    const ConstSpec &cs = k.consts[c];
    load.append(loadSticks(at(constAt[c]),
                           at(static_cast<int64_t>(cs.m.address)),
                           tileMove(cs.m, cs.m.rows, cs.m.rows)));
    int64_t own = cs.m.rows * cs.m.blocks();
    if (cs.padTo > own)
      load.append(
          loadSticks(at(constAt[c] + own),
                     at(static_cast<int64_t>(pb.zeroSticks(cs.padTo - own))),
                     {cs.padTo - own, 1, 1, 0, 0}));
  }
  if (!k.consts.empty())
    constsReady.post(load);
  std::vector<NestReg> loadRegs;
  for (const StickMatrix &m : k.inputs) {
    int reg = load.allocReg();
    load.li(reg, m.stick(r0, 0));
    loadRegs.push_back({reg, {t * m.rowStride}});
  }
  NestHooks loadHooks;
  loadHooks.body = [&](const NestIter &it) {
    for (size_t i = 0; i < k.inputs.size(); ++i) {
      inRings[i].acquire(load);
      load.append(loadSticks(inRings[i].slot(load), Addr{loadRegs[i].reg, 0},
                             tileMove(k.inputs[i], rowsOf(it), t)));
      inRings[i].release(load);
    }
  };
  emitNest(load, levels, loadRegs, loadHooks, maxLoop);
  for (BufferRing &r : inRings)
    r.close(load);
  for (const NestReg &r : loadRegs)
    load.freeReg(r.reg);

  // DMA store: every output tile.
  outRing.open(store);
  int outReg = store.allocReg();
  store.li(outReg, k.output.stick(r0, 0));
  std::vector<NestReg> storeRegs = {{outReg, {t * k.output.rowStride}}};
  NestHooks storeHooks;
  storeHooks.body = [&](const NestIter &it) {
    outRing.acquire(store);
    store.append(storeSticks(Addr{outReg, 0}, outRing.slot(store),
                             tileMove(k.output, rowsOf(it), t)));
    outRing.release(store);
  };
  emitNest(store, levels, storeRegs, storeHooks, maxLoop);
  outRing.close(store);
  store.freeReg(outReg);

  // SFU units: each its share of every tile's rows.
  for (int u = 0; u < units; ++u) {
    StreamBuilder &s = *sfus[static_cast<size_t>(u)];
    for (BufferRing &r : inRings)
      r.open(s);
    outRing.open(s);
    UnitCtx ctx{&s, u, hmax, constAt, scratchAt[static_cast<size_t>(u)]};
    if (!k.consts.empty())
      constsReady.await(s);
    if (k.prologue)
      k.prologue(ctx);
    const int cursor = k.period > 0 ? s.allocReg() : 0;
    NestHooks hooks;
    hooks.body = [&](const NestIter &it) {
      int64_t rows = rowsOf(it);
      int64_t i0 = u * rows / units, i1 = (u + 1) * rows / units;
      for (BufferRing &r : inRings)
        r.acquire(s);
      outRing.acquire(s);
      if (i1 > i0) {
        SubTile st{i1 - i0, t, {}, outRing.slot(s) + i0, Addr{cursor, i0}};
        for (BufferRing &r : inRings)
          st.in.push_back(r.slot(s) + i0);
        k.compute(ctx, st);
      }
      for (BufferRing &r : inRings)
        r.release(s);
      outRing.release(s);
    };
    if (k.period == 0) {
      emitNest(s, levels, {}, hooks, maxLoop);
    } else {
      // One loop per run of tiles inside one period, the cursor set at its
      // start and stepped a tile on per iteration.
      for (int64_t row = r0; row < r1;) {
        const int64_t end = std::min(r1, (row / k.period + 1) * k.period);
        s.li(cursor, constAt[k.cursorConst] + k.cursorOffset + row % k.period);
        emitNest(s, {{(end - row) / t, false, false}}, {{cursor, {t}}}, hooks,
                 maxLoop);
        row = end;
      }
      s.freeReg(cursor);
    }
    for (BufferRing &r : inRings)
      r.close(s);
    outRing.close(s);
  }
  for (BufferRing &r : inRings)
    r.finish();
  outRing.finish();
  constsReady.finish();
}

RowPlan runRowKernel(ProgramBuilder &pb, const RowKernel &k,
                     const KernelOptions &opt, std::string_view defaultOp) {
  const Resources res = resources(pb.config(), opt);
  const int64_t rows = k.output.rows;
  for (const StickMatrix &m : k.inputs)
    SPYRE_ASSERT(m.rows == rows, k.what + ": operands differ in rows");
  SPYRE_ASSERT(k.period == 0 || rows % k.period == 0,
               k.what + ": rows are not a multiple of the period");
  const int cores = static_cast<int>(std::min<int64_t>(res.cores, rows));
  const int units = res.units;

  const int buffers = res.buffers;
  int64_t fixed = 0, perRow = buffers * k.output.blocks(), inSticks = 0;
  for (const ConstSpec &c : k.consts)
    fixed += constSticks(c);
  for (const StickMatrix &m : k.inputs) {
    perRow += buffers * m.blocks();
    inSticks += m.blocks();
  }
  auto lxFor = [&](int64_t t) {
    return fixed + perRow * t + units * k.scratch(ceilDiv(t, units));
  };
  const int64_t maxRows = ceilDiv(rows, cores);
  const int64_t avail = res.lxSticks();
  int64_t fit = 0;
  for (int64_t lo = 1, hi = maxRows; lo <= hi;) {
    int64_t mid = lo + (hi - lo) / 2;
    if (lxFor(mid) <= avail) {
      fit = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (fit < 1) {
    RowPlan failed;
    failed.rows = rows;
    failed.error = "one row of " + std::to_string(k.output.cols) +
                   " elements needs " + std::to_string(lxFor(1)) +
                   " LX sticks, the region has " + std::to_string(avail);
    return failed;
  }
  int64_t t = 0;
  if (opt.tileRows > 0) {
    t = std::min(opt.tileRows, maxRows);
    if (k.period > 0 && k.period % t != 0) {
      RowPlan failed;
      failed.rows = rows;
      failed.error = std::to_string(t) + " rows per tile do not divide the " +
                     std::to_string(k.period) + " rows of a period";
      return failed;
    }
    if (t > fit) {
      RowPlan failed;
      failed.rows = rows;
      failed.error = std::to_string(t) + " rows per tile need " +
                     std::to_string(lxFor(t)) +
                     " LX sticks, the region has " + std::to_string(avail) +
                     " (at most " + std::to_string(fit) + " rows fit)";
      return failed;
    }
  } else {
    int64_t minRows = ceilDiv(kMinTileSticks, std::max<int64_t>(1, inSticks));
    t = std::min(
        {fit, maxRows, std::max(ceilDiv(maxRows, kMinTiles), minRows)});
    t = ceilDiv(maxRows, ceilDiv(maxRows, t));
    if (k.period > 0) // the largest divisor of the period up to t
      while (k.period % t != 0)
        --t;
  }

  // With one tile per core there is nothing to overlap: a second buffer
  // would only cost the hand-overs between the two.
  Resources used = res;
  int64_t lxSticks = lxFor(t);
  if (t >= maxRows && used.buffers > 1) {
    used.buffers = 1;
    lxSticks -= (buffers - 1) * (perRow / buffers) * t;
  }

  pb.setOp(opt.op.empty() ? std::string(defaultOp) : opt.op);
  RowPlan plan;
  plan.rows = rows;
  plan.tileRows = t;
  plan.units = units;
  plan.lxSticks = lxSticks;
  // With a period, cores take whole tiles (t divides the rows then).
  const int64_t unit = k.period > 0 ? t : 1;
  const int parts =
      static_cast<int>(std::min<int64_t>(cores, rows / unit));
  for (int i = 0; i < parts; ++i) {
    auto [p0, p1] = splitRange(rows / unit, parts, i);
    const int64_t r0 = p0 * unit, r1 = p1 * unit;
    int core = res.firstCore + i;
    plan.parts.push_back({core, r0, r1});
    emitRowCore(pb, k, used, core, r0, r1, t);
  }
  return plan;
}

// ------------------------------------------------- FP32 sub-tile helpers

/// A sub-tile of h rows in FP32 in scratch: [block][row][F] sticks. F is 2
/// for a DL16 source (a DL16 stick is two FP32 sticks) and 1 for FP32.
struct F32Rows {
  StreamBuilder &s;
  int64_t h = 0;
  int64_t nb = 0;    ///< blocks of the source
  int64_t f = 1;     ///< FP32 sticks per block and row
  int64_t rem = 0;   ///< valid elements of the last block; 0: it is full
  int64_t nFull = 0; ///< blocks without padding

  F32Rows(StreamBuilder &stream, const StickMatrix &x, int64_t rows)
      : s(stream), h(rows), nb(x.blocks()), f(x.dtype == kF32 ? 1 : 2),
        rem(x.lastLanes() == x.lanes() ? 0 : x.lastLanes()),
        nFull(x.blocks() - (rem != 0 ? 1 : 0)) {}

  int64_t rowSticks() const { return h * f; } ///< one block of the sub-tile
  Addr lastBlock(Addr a) const { return a + nFull * rowSticks(); }

  /// xf = the tile rows at `in` (block stride bs) in FP32.
  void load(Addr xf, Addr in, int64_t bs) {
    if (f == 2) {
      s.append(sfuCvt(xf, in, true, {h, nb, 2 * h, bs, 0, 0}));
      return;
    }
    s.append(sfuUnary(Opcode::Copy, xf, in, {h, nb, h, bs, 0, 0}, true));
  }
  /// out (block stride bs) = xf rounded to the source's format.
  void store(Addr out, Addr xf, int64_t bs) {
    if (f == 2) {
      s.append(sfuCvt(out, xf, false, {2 * h, nb, bs, 2 * h, 0, 0}));
      return;
    }
    s.append(sfuUnary(Opcode::Copy, out, xf, {h, nb, bs, h, 0, 0}, true));
  }
  /// dst (h sticks) = per-row rsum or rmax of src, through `partial`
  /// (nb * h sticks) when there are several blocks. Padding lanes are left
  /// out of rmax with count; rsum needs them zero (they are, throughout).
  void reduce(Opcode op, Addr dst, Addr src, Addr partial) {
    Addr p = nb > 1 ? partial : dst;
    bool isMax = op == Opcode::Rmax;
    int64_t plain = isMax ? nFull : nb;
    if (plain > 0)
      s.append(sfuUnary(op, p, src, {f, plain * h, 1, f, 0, 0}, true));
    if (isMax && rem != 0)
      s.append(sfuUnary(op, p + nFull * h, lastBlock(src), {f, h, 1, f, 0, rem},
                        true));
    if (nb > 1)
      s.append(sfuUnary(isMax ? Opcode::Cmax : Opcode::Csum, dst, partial,
                        {h, nb, 0, h, 0, 0}, true));
  }
  /// A per-row stick (h sticks) as [row][F] for whole-block operations;
  /// returns where that is (the stat itself when F = 1).
  Addr spread(Addr statF, Addr stat) {
    if (f == 1)
      return stat;
    for (int64_t i = 0; i < f; ++i)
      s.append(sfuUnary(Opcode::Copy, statF + i, stat, {1, h, f, 1, 0, 0}, true));
    return statF;
  }
  /// dst = src op stat, stat one stick per row (spread: its [row][F] form).
  void rowStat(Opcode op, Addr dst, Addr src, Addr stat,
               Addr spreadStat) {
    if (nFull > 0)
      s.append(sfuBinary(op, dst, src, spreadStat,
                         {rowSticks(), nFull, rowSticks(), rowSticks(), 0, 0},
                         false, true));
    if (rem != 0)
      s.append(sfuBinary(op, lastBlock(dst), lastBlock(src), stat,
                         {f, h, f, f, 1, rem}, true, true));
  }
  /// dst = src op vec, vec [block][F] along the row (weights, bias).
  void colVec(Opcode op, Addr dst, Addr src, Addr vec) {
    for (int64_t b = 0; b < nb; ++b) {
      int64_t off = b * rowSticks();
      s.append(sfuBinary(op, dst + off, src + off, vec + b * f,
                         {f, h, f, f, 0, b == nFull ? rem : 0}, false, true));
    }
  }
  /// dst = op(src) elementwise, padding lanes kept zero.
  void map(Opcode op, Addr dst, Addr src) {
    if (nFull > 0)
      s.append(sfuUnary(op, dst, src, {f, nFull * h, f, f, 0, 0}, true));
    if (rem != 0)
      s.append(sfuUnary(op, lastBlock(dst), lastBlock(src),
                        {f, h, f, f, 0, rem}, true));
  }
  /// dst = a * b elementwise over every stick (0 * 0 keeps padding zero).
  void square(Addr dst, Addr src) {
    s.append(
        sfuBinary(Opcode::Mul, dst, src, src, {f, nb * h, f, f, f, 0}, false, true));
  }
  /// On h stat sticks: x = op(x, imm).
  void statScalar(Opcode op, Addr dst, Addr src, float imm) {
    s.append(sfuScalar(op, dst, src, imm, {1, h, 1, 1, 0, 0}, true));
  }
  void statUnary(Opcode op, Addr dst, Addr src) {
    s.append(sfuUnary(op, dst, src, {1, h, 1, 1, 0, 0}, true));
  }
};

/// Scratch of the FP32 row kernels, per unit, for sub-tiles of hmax rows.
struct F32Scratch {
  int64_t xf = 0, sq = 0, partial = 0, stat = 0, stat2 = 0, spread = 0;
  int64_t wf = 0, bf = 0;
  int64_t end = 0;
};

/// Lays out the scratch from `base`: xf and (when `withSquare`) sq of
/// nb*F*h sticks, partial sums nb*h, two stats h each, spread stat F*h,
/// and `vecSticks` each for converted weight and bias.
F32Scratch f32Scratch(int64_t base, const StickMatrix &x, int64_t h,
                      bool withSquare, int64_t vecSticks) {
  const int64_t f = x.dtype == kF32 ? 1 : 2;
  const int64_t nb = x.blocks();
  F32Scratch s;
  int64_t at = base;
  auto take = [&](int64_t n) {
    int64_t a = at;
    at += n;
    return a;
  };
  s.xf = take(nb * f * h);
  s.sq = withSquare ? take(nb * f * h) : 0;
  s.partial = take(nb * h);
  s.stat = take(h);
  s.stat2 = take(h);
  s.spread = take(f * h);
  s.wf = take(vecSticks);
  s.bf = take(vecSticks);
  s.end = at;
  return s;
}

void requireSameShape(const TensorRef &a, const TensorRef &b,
                      std::string_view what) {
  SPYRE_ASSERT(a.shape == b.shape, std::string(what) + ": '" + a.name +
                                       "' and '" + b.name +
                                       "' differ in shape");
}

void requireFloat(const TensorRef &t, std::string_view what) {
  SPYRE_ASSERT(t.dtype == isa::DType::Dl16 || t.dtype == kF32,
               std::string(what) + ": '" + t.name + "' is not DL16 or FP32");
}

/// Valid lanes of a matrix's last block, 0 when it is full.
int64_t remOf(const StickMatrix &m) {
  return m.lastLanes() == m.lanes() ? 0 : m.lastLanes();
}

/// Makes the instruction for the sticks at offset `off` of every tile
/// operand, over rows `r`; `last` is set for the padded last block.
using BlockOp =
    std::function<InstrBuilder(int64_t off, const Rows &r, bool last)>;

/// The SFU code of an elementwise op: the full blocks in one instruction
/// whose rows are the blocks, the padded last block with count.
void elementwise(StreamBuilder &s, const StickMatrix &x, const SubTile &st,
                 const BlockOp &make) {
  const int64_t rem = remOf(x);
  const int64_t nb = x.blocks();
  const int64_t nFull = nb - (rem != 0 ? 1 : 0);
  if (nFull > 0)
    s.append(make(0, {st.h, nFull, st.bs, st.bs, st.bs, 0}, false));
  if (rem != 0)
    s.append(make((nb - 1) * st.bs, {1, st.h, 1, 1, 1, rem}, true));
}

} // namespace

std::string RowPlan::str() const {
  std::string s;
  for (const Part &p : parts) {
    int64_t n = p.end - p.begin;
    int64_t tiles = ceilDiv(n, tileRows);
    s += "core " + std::to_string(p.core) + ": rows [" +
         std::to_string(p.begin) + ", " + std::to_string(p.end) + "), " +
         std::to_string(tiles) + (tiles == 1 ? " tile" : " tiles") + " of " +
         std::to_string(tileRows) + "\n";
  }
  return s;
}

RowPlan emitUnary(ProgramBuilder &pb, Opcode opcode, const TensorRef &x,
                  const TensorRef &y, const KernelOptions &opt) {
  const std::string_view op = isa::instrDesc(opcode).mnemonic;
  SPYRE_ASSERT(isa::familyOf(opcode) == isa::Family::Unary,
               "'" + std::string(op) + "' is not an SFU unary op");
  requireSameShape(x, y, op);
  requireFloat(x, op);
  SPYRE_ASSERT(x.dtype == y.dtype, std::string(op) + ": dtypes differ");
  RowKernel k;
  k.what = std::string(op);
  k.inputs = {StickMatrix::of(x)};
  k.output = StickMatrix::of(y);
  const bool f32 = x.dtype == kF32;
  k.compute = [&, f32, opcode](const UnitCtx &u, const SubTile &st) {
    elementwise(*u.sfu, k.inputs[0], st, [&](int64_t off, const Rows &r, bool) {
      return sfuUnary(opcode, st.out + off, st.in[0] + off, r, f32);
    });
  };
  return runRowKernel(pb, k, opt, op);
}

RowPlan emitScalar(ProgramBuilder &pb, Opcode opcode, float imm,
                   const TensorRef &x, const TensorRef &y,
                   const KernelOptions &opt) {
  const std::string_view op = isa::instrDesc(opcode).mnemonic;
  SPYRE_ASSERT(isa::familyOf(opcode) == isa::Family::Scalar,
               "'" + std::string(op) + "' is not an SFU scalar op");
  requireSameShape(x, y, op);
  requireFloat(x, op);
  SPYRE_ASSERT(x.dtype == y.dtype, std::string(op) + ": dtypes differ");
  RowKernel k;
  k.what = std::string(op);
  k.inputs = {StickMatrix::of(x)};
  k.output = StickMatrix::of(y);
  const bool f32 = x.dtype == kF32;
  k.compute = [&, f32, imm, opcode](const UnitCtx &u, const SubTile &st) {
    elementwise(*u.sfu, k.inputs[0], st, [&](int64_t off, const Rows &r, bool) {
      return sfuScalar(opcode, st.out + off, st.in[0] + off, imm, r, f32);
    });
  };
  return runRowKernel(pb, k, opt, op);
}

RowPlan emitBinary(ProgramBuilder &pb, Opcode opcode, const TensorRef &a,
                   const TensorRef &b, const TensorRef &y,
                   const KernelOptions &opt) {
  const std::string_view op = isa::instrDesc(opcode).mnemonic;
  SPYRE_ASSERT(isa::familyOf(opcode) == isa::Family::Binary,
               "'" + std::string(op) + "' is not an SFU binary op");
  requireSameShape(a, y, op);
  requireFloat(a, op);
  SPYRE_ASSERT(a.dtype == b.dtype && a.dtype == y.dtype,
               std::string(op) + ": dtypes differ");
  enum class Mode { Full, Row, Scalar };
  const uint64_t bElems = isa::elementCount(b.shape);
  Mode mode = Mode::Full;
  if (b.shape != a.shape) {
    if (bElems == 1)
      mode = Mode::Scalar;
    else if (b.cols() == a.cols() && bElems == static_cast<uint64_t>(a.cols()))
      mode = Mode::Row;
    else
      SPYRE_UNREACHABLE(std::string(op) + ": '" + b.name +
                        "' is neither a's shape, one row nor one element");
  }
  RowKernel k;
  k.what = std::string(op);
  k.inputs = {StickMatrix::of(a)};
  k.output = StickMatrix::of(y);
  if (mode == Mode::Full)
    k.inputs.push_back(StickMatrix::of(b));
  else
    k.consts.push_back({StickMatrix::of(b), 0});
  const bool f32 = a.dtype == kF32;
  if (mode == Mode::Scalar) {
    // Each unit broadcasts lane 0 of the scalar's stick over one stick.
    k.scratch = [](int64_t) { return 1; };
    k.prologue = [f32](const UnitCtx &u) {
      auto bc = instr<Opcode::Bcast>()
                    .dst(at(u.scratch))
                    .src(at(u.consts[0]))
                    .lane(0);
      if (f32)
        bc.fmt(isa::StickFormat::F32);
      u.sfu->append(bc);
    };
  }
  const int64_t nb = k.inputs[0].blocks();
  k.compute = [&k, f32, mode, nb, opcode](const UnitCtx &u,
                                          const SubTile &st) {
    elementwise(*u.sfu, k.inputs[0], st,
                [&](int64_t off, const Rows &r, bool last) {
                  Rows rr = r;
                  switch (mode) {
                  case Mode::Full:
                    return sfuBinary(opcode, st.out + off, st.in[0] + off,
                                     st.in[1] + off, rr, false, f32);
                  case Mode::Row:
                    // Full blocks: the rows are blocks, src2 one bias stick
                    // per block. Last block: its bias stick for every row.
                    rr.s2s = last ? 0 : 1;
                    return sfuBinary(opcode, st.out + off, st.in[0] + off,
                                     at(u.consts[0] + (last ? nb - 1 : 0)), rr,
                                     true, f32);
                  case Mode::Scalar:
                    rr.s2s = 0;
                    return sfuBinary(opcode, st.out + off, st.in[0] + off,
                                     at(u.scratch), rr, true, f32);
                  }
                  SPYRE_UNREACHABLE("binary mode");
                });
  };
  return runRowKernel(pb, k, opt, op);
}

RowPlan emitColumnBinary(ProgramBuilder &pb, Opcode opcode,
                         const TensorRef &x, const TensorRef &col,
                         const TensorRef &y, bool colFirst,
                         const KernelOptions &opt) {
  const std::string_view op = isa::instrDesc(opcode).mnemonic;
  SPYRE_ASSERT(isa::familyOf(opcode) == isa::Family::Binary,
               "'" + std::string(op) + "' is not an SFU binary op");
  requireSameShape(x, y, op);
  requireFloat(x, op);
  SPYRE_ASSERT(x.dtype == col.dtype && x.dtype == y.dtype,
               std::string(op) + ": dtypes differ");
  std::vector<int64_t> colShape = x.shape;
  colShape.back() = 1;
  SPYRE_ASSERT(col.shape == colShape, std::string(op) + ": '" + col.name +
                                          "' is not one column of '" + x.name +
                                          "'");
  // The column streams beside x, one stick per row (the value in lane 0),
  // so a tile of it is t sticks next to x's t * blocks.
  RowKernel k;
  k.what = std::string(op);
  k.inputs = {StickMatrix::of(x), StickMatrix::of(col)};
  k.output = StickMatrix::of(y);
  // Each unit's sub-tile of the column broadcast over whole sticks: one
  // stick per row, contiguous, the form s2=row reads with s2s=0 against
  // every block of the rows.
  k.scratch = [](int64_t h) { return h; };
  const bool f32 = x.dtype == kF32;
  k.compute = [&k, f32, colFirst, opcode](const UnitCtx &u,
                                          const SubTile &st) {
    StreamBuilder &s = *u.sfu;
    const Addr wide = at(u.scratch);
    auto bc =
        instr<Opcode::Bcast>().dst(wide).src(st.in[1]).lane(0).m(st.h).ds(1).ss(
            1);
    if (f32)
      bc.fmt(isa::StickFormat::F32);
    s.append(bc);
    // Full blocks: the rows of the instruction are x's blocks (h sticks
    // each, t apart); the broadcast sticks are one such row read for every
    // block (stride 0). The padded last block: one row per x row, count =
    // its valid lanes.
    elementwise(s, k.inputs[0], st, [&](int64_t off, const Rows &r, bool last) {
      const int64_t across = last ? 1 : 0;
      Rows rr = r;
      if (!colFirst) {
        rr.s2s = across;
        return sfuBinary(opcode, st.out + off, st.in[0] + off, wide, rr,
                         false, f32);
      }
      auto b = sfuBinary(opcode, st.out + off, wide, st.in[0] + off, rr, false,
                         f32);
      // Rows' ss of 0 means "the row length"; here it is a stride of 0.
      b.ss(across);
      return b;
    });
  };
  return runRowKernel(pb, k, opt, op);
}

RowPlan emitChain(ProgramBuilder &pb, const TensorRef &x,
                  const std::vector<ChainStep> &chain, const TensorRef &y,
                  const KernelOptions &opt) {
  SPYRE_ASSERT(!chain.empty(), "an elementwise chain needs a step");
  requireSameShape(x, y, "chain");
  requireFloat(x, "chain");
  SPYRE_ASSERT(x.dtype == y.dtype, "chain: dtypes differ");
  enum class Mode { Unary, Scalar, Full, FullSwapped, Row, Broadcast };
  struct Step {
    Opcode op = Opcode::Copy;
    Mode mode = Mode::Unary;
    float imm = 0;
    size_t slot = 0; ///< input (Full) or constant (Row, Broadcast) index
    size_t bcast = 0; ///< the unit's scratch stick (Broadcast)
  };
  RowKernel k;
  k.what = "chain";
  k.inputs = {StickMatrix::of(x)};
  k.output = StickMatrix::of(y);
  std::vector<Step> steps;
  size_t broadcasts = 0;
  for (const ChainStep &c : chain) {
    if (!c.operand) {
      SPYRE_ASSERT(isa::familyOf(c.op) ==
                       (c.imm ? isa::Family::Scalar : isa::Family::Unary),
                   "chain: '" + std::string(isa::opcodeName(c.op)) +
                       "' is not an SFU " + (c.imm ? "scalar" : "unary") +
                       " op");
      steps.push_back({c.op, c.imm ? Mode::Scalar : Mode::Unary,
                       c.imm.value_or(0.0f)});
      continue;
    }
    SPYRE_ASSERT(isa::familyOf(c.op) == isa::Family::Binary,
                 "chain: '" + std::string(isa::opcodeName(c.op)) +
                     "' is not binary");
    const TensorRef &b = *c.operand;
    SPYRE_ASSERT(b.dtype == x.dtype, "chain: dtypes differ");
    if (b.shape == x.shape) {
      steps.push_back({c.op, c.operandFirst ? Mode::FullSwapped : Mode::Full,
                       0, k.inputs.size()});
      k.inputs.push_back(StickMatrix::of(b));
      continue;
    }
    const uint64_t elems = isa::elementCount(b.shape);
    const bool scalar = elems == 1;
    SPYRE_ASSERT(scalar || (b.cols() == x.cols() &&
                            elems == static_cast<uint64_t>(x.cols())),
                 "chain: '" + b.name + "' is neither x's shape, one row nor "
                 "one element");
    if (c.operandFirst) {
      // operand - v = -v + operand; operand / v = (1 / v) * operand: the
      // SFU broadcasts its second source only.
      SPYRE_ASSERT(c.op == Opcode::Sub || c.op == Opcode::Div,
                   "chain: operand-first '" +
                       std::string(isa::opcodeName(c.op)) + "'");
      steps.push_back(
          {c.op == Opcode::Sub ? Opcode::Neg : Opcode::Recip, Mode::Unary});
    }
    const Opcode op = !c.operandFirst
                          ? c.op
                          : (c.op == Opcode::Sub ? Opcode::Add : Opcode::Mul);
    steps.push_back({op, scalar ? Mode::Broadcast : Mode::Row, 0,
                     k.consts.size(), scalar ? broadcasts++ : 0});
    k.consts.push_back({StickMatrix::of(b), 0});
  }
  const bool f32 = x.dtype == kF32;
  if (broadcasts > 0) {
    // Each unit broadcasts lane 0 of every scalar's stick over a stick.
    k.scratch = [broadcasts](int64_t) {
      return static_cast<int64_t>(broadcasts);
    };
    k.prologue = [&steps, f32](const UnitCtx &u) {
      for (const Step &st : steps) {
        if (st.mode != Mode::Broadcast)
          continue;
        auto bc = instr<Opcode::Bcast>()
                      .dst(at(u.scratch + static_cast<int64_t>(st.bcast)))
                      .src(at(u.consts[st.slot]))
                      .lane(0);
        if (f32)
          bc.fmt(isa::StickFormat::F32);
        u.sfu->append(bc);
      }
    };
  }
  const int64_t nb = k.inputs[0].blocks();
  k.compute = [&k, &steps, f32, nb](const UnitCtx &u, const SubTile &st) {
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step &step = steps[i];
      // The first step reads x's tile; every later one works in place on
      // the output tile, so the intermediates never leave LX.
      const Addr src = i == 0 ? st.in[0] : st.out;
      elementwise(*u.sfu, k.inputs[0], st,
                  [&](int64_t off, const Rows &r, bool last) -> InstrBuilder {
                    Rows rr = r;
                    switch (step.mode) {
                    case Mode::Unary:
                      return sfuUnary(step.op, st.out + off, src + off, rr, f32);
                    case Mode::Scalar:
                      return sfuScalar(step.op, st.out + off, src + off,
                                       step.imm, rr, f32);
                    case Mode::Full:
                      return sfuBinary(step.op, st.out + off, src + off,
                                       st.in[step.slot] + off, rr, false, f32);
                    case Mode::FullSwapped:
                      return sfuBinary(step.op, st.out + off,
                                       st.in[step.slot] + off, src + off, rr,
                                       false, f32);
                    case Mode::Row:
                      rr.s2s = last ? 0 : 1;
                      return sfuBinary(
                          step.op, st.out + off, src + off,
                          at(u.consts[step.slot] + (last ? nb - 1 : 0)), rr,
                          true, f32);
                    case Mode::Broadcast:
                      rr.s2s = 0;
                      return sfuBinary(
                          step.op, st.out + off, src + off,
                          at(u.scratch + static_cast<int64_t>(step.bcast)), rr,
                          true, f32);
                    }
                    SPYRE_UNREACHABLE("chain step mode");
                  });
    }
  };
  return runRowKernel(pb, k, opt, "chain");
}

RowPlan emitConvert(ProgramBuilder &pb, const TensorRef &x, const TensorRef &y,
                    const KernelOptions &opt) {
  requireSameShape(x, y, "convert");
  requireFloat(x, "convert");
  requireFloat(y, "convert");
  SPYRE_ASSERT(x.dtype != y.dtype, "convert: '" + x.name + "' and '" + y.name +
                                       "' have the same dtype");
  RowKernel k;
  k.what = "convert";
  k.inputs = {StickMatrix::of(x)};
  k.output = StickMatrix::of(y);
  const bool toF32 = y.dtype == kF32;
  // DL16 block b holds FP32 blocks 2b and 2b+1; the staging area keeps a
  // sub-tile as [dl16 block][row][2] FP32 sticks, the order cvt reads and
  // writes.
  const int64_t nb16 = toF32 ? k.inputs[0].blocks() : k.output.blocks();
  const int64_t nb32 = toF32 ? k.output.blocks() : k.inputs[0].blocks();
  k.scratch = [nb16](int64_t h) { return 2 * nb16 * h; };
  k.compute = [toF32, nb16, nb32](const UnitCtx &u, const SubTile &st) {
    StreamBuilder &s = *u.sfu;
    const int64_t h = st.h;
    const Addr stage = at(u.scratch);
    if (toF32) {
      s.append(sfuCvt(stage, st.in[0], true, {h, nb16, 2 * h, st.bs, 0, 0}));
      for (int64_t j = 0; j < nb32; ++j)
        s.append(sfuUnary(Opcode::Copy, st.out + j * st.bs,
                          stage + (j / 2) * 2 * h + j % 2, {1, h, 1, 2, 0, 0},
                          true));
      return;
    }
    // An odd FP32 block count leaves the last DL16 block half full: it is
    // converted straight from its one FP32 block (lanes 32..63 become 0).
    const int64_t pairs = nb32 / 2;
    for (int64_t j = 0; j < 2 * pairs; ++j)
      s.append(sfuUnary(Opcode::Copy, stage + (j / 2) * 2 * h + j % 2,
                        st.in[0] + j * st.bs, {1, h, 2, 1, 0, 0}, true));
    if (pairs > 0)
      s.append(
          sfuCvt(st.out, stage, false, {2 * h, pairs, st.bs, 2 * h, 0, 0}));
    if (nb32 % 2 != 0)
      s.append(sfuCvt(st.out + (nb16 - 1) * st.bs,
                      st.in[0] + (nb32 - 1) * st.bs, false,
                      {1, h, 1, 1, 0, 0}));
  };
  return runRowKernel(pb, k, opt, "convert");
}

namespace {

/// The softmax of a sub-tile's rows (after `scale` times them) into its
/// output, in FP32: row max, subtract, exp, sum, reciprocal, multiply.
void softmaxRows(const UnitCtx &u, const StickMatrix &xm, const SubTile &st,
                 float scale) {
  F32Scratch sc = f32Scratch(u.scratch, xm, u.hmax, false, 0);
  F32Rows r(*u.sfu, xm, st.h);
  Addr xf = at(sc.xf), stat = at(sc.stat), stat2 = at(sc.stat2);
  r.load(xf, st.in[0], st.bs);
  if (scale != 1.0f)
    u.sfu->append(sfuScalar(Opcode::Muls, xf, xf, scale,
                            {r.f, r.nb * r.h, r.f, r.f, 0, 0}, true));
  r.reduce(Opcode::Rmax, stat, xf, at(sc.partial));
  r.rowStat(Opcode::Sub, xf, xf, stat, r.spread(at(sc.spread), stat));
  r.map(Opcode::Exp, xf, xf);
  r.reduce(Opcode::Rsum, stat, xf, at(sc.partial));
  r.statUnary(Opcode::Recip, stat2, stat);
  r.rowStat(Opcode::Mul, xf, xf, stat2, r.spread(at(sc.spread), stat2));
  r.store(st.out, xf, st.bs);
}

} // namespace

RowPlan emitSoftmax(ProgramBuilder &pb, const TensorRef &x, const TensorRef &y,
                    const KernelOptions &opt) {
  requireSameShape(x, y, "softmax");
  requireFloat(x, "softmax");
  SPYRE_ASSERT(x.dtype == y.dtype, "softmax: dtypes differ");
  RowKernel k;
  k.what = "softmax";
  k.inputs = {StickMatrix::of(x)};
  k.output = StickMatrix::of(y);
  const StickMatrix xm = k.inputs[0];
  k.scratch = [xm](int64_t h) { return f32Scratch(0, xm, h, false, 0).end; };
  k.compute = [xm](const UnitCtx &u, const SubTile &st) {
    softmaxRows(u, xm, st, 1.0f);
  };
  return runRowKernel(pb, k, opt, "softmax");
}

int64_t causalMaskFirstBlock(int64_t queries, int64_t keys, int lanes) {
  SPYRE_ASSERT(queries >= 1 && keys >= queries && lanes >= 1,
               "causal mask: needs 1 <= Q <= K");
  return std::min((keys - queries + 1) / lanes, ceilDiv(keys, lanes) - 1);
}

MaskTable causalMaskTable(int64_t queries, int64_t keys, int lanes) {
  const int64_t first = causalMaskFirstBlock(queries, keys, lanes);
  const int64_t back = lanes * (ceilDiv(keys, lanes) - 1 - first);
  MaskTable t;
  t.shape = {queries + back, lanes};
  t.values.assign(static_cast<size_t>(t.shape[0] * lanes), 0.0f);
  for (int64_t j = 0; j < t.shape[0]; ++j)
    for (int64_t l = 0; l < lanes; ++l)
      if (l > j - back - lanes * first + (keys - queries))
        t.values[static_cast<size_t>(j * lanes + l)] = kMaskValue;
  return t;
}

RowPlan emitCausalSoftmax(ProgramBuilder &pb, const TensorRef &x,
                          const TensorRef &mask, const TensorRef &y,
                          float scale, const KernelOptions &opt) {
  requireSameShape(x, y, "causal_softmax");
  requireFloat(x, "causal_softmax");
  SPYRE_ASSERT(x.dtype == y.dtype && mask.dtype == x.dtype,
               "causal_softmax: dtypes differ");
  SPYRE_ASSERT(x.rank() >= 2 && scale > 0.0f,
               "causal_softmax: needs [.., Q, K] scores and a positive scale");
  const int64_t queries = x.shape[static_cast<size_t>(x.rank() - 2)];
  RowKernel k;
  k.what = "causal_softmax";
  k.inputs = {StickMatrix::of(x)};
  k.output = StickMatrix::of(y);
  const StickMatrix xm = k.inputs[0];
  const int64_t lanes = xm.lanes();
  const int64_t first = causalMaskFirstBlock(queries, xm.cols, lanes);
  const int64_t back = lanes * (xm.blocks() - 1 - first);
  const std::vector<int64_t> tableShape = {queries + back, lanes};
  SPYRE_ASSERT(mask.shape == tableShape,
               "causal_softmax: '" + mask.name +
                   "' is not the mask table of the scores");
  k.consts.push_back({StickMatrix::of(mask), 0});
  k.period = queries;
  // Query i's stick for block b is table stick i - lanes * (b - first) +
  // back; the blocks before `first` need no mask.
  k.cursorConst = 0;
  k.cursorOffset = back;
  k.scratch = [xm](int64_t h) { return f32Scratch(0, xm, h, false, 0).end; };
  k.compute = [xm, lanes, first, scale](const UnitCtx &u, const SubTile &st) {
    // The mask is added to the tile in place, in its own format: a visible
    // score gets + 0 (exact), a hidden one about -2^24.
    StreamBuilder &s = *u.sfu;
    const bool f32 = xm.dtype == kF32;
    const int64_t rem = remOf(xm), nb = xm.blocks();
    const int64_t nFull = nb - (rem != 0 ? 1 : 0);
    if (nFull > first)
      s.append(sfuBinary(Opcode::Add, st.in[0] + first * st.bs,
                         st.in[0] + first * st.bs, st.cursor,
                         {st.h, nFull - first, st.bs, st.bs, -lanes, 0}, false,
                         f32));
    if (rem != 0) {
      const Addr last = st.in[0] + (nb - 1) * st.bs;
      s.append(sfuBinary(Opcode::Add, last, last,
                         st.cursor + -lanes * (nb - 1 - first),
                         {1, st.h, 1, 1, 1, rem}, false, f32));
    }
    softmaxRows(u, xm, st, scale);
  };
  return runRowKernel(pb, k, opt, "causal_softmax");
}

namespace {

/// Weights and bias of the norms: loaded once, brought to FP32 sticks in
/// element order by each unit's prologue.
struct NormVectors {
  std::optional<StickMatrix> weight, bias;
  int wIndex = -1, bIndex = -1;
  int64_t vecSticks = 0; ///< FP32 sticks of a converted vector
};

NormVectors normVectors(RowKernel &k, const StickMatrix &x,
                        const std::optional<TensorRef> &weight,
                        const std::optional<TensorRef> &bias,
                        std::string_view what) {
  NormVectors v;
  const int64_t f = x.dtype == kF32 ? 1 : 2;
  // The FP32 form needs x.blocks() * F sticks; a DL16 vector converts to
  // twice its sticks, an FP32 one is used in place, padded with zero
  // sticks up to that size.
  v.vecSticks = x.blocks() * f;
  auto add = [&](const std::optional<TensorRef> &t, int &index) {
    if (!t)
      return std::optional<StickMatrix>();
    requireFloat(*t, what);
    SPYRE_ASSERT(isa::elementCount(t->shape) == static_cast<uint64_t>(x.cols) &&
                     t->cols() == x.cols,
                 std::string(what) + ": '" + t->name +
                     "' is not a vector of the last dim");
    StickMatrix m = StickMatrix::of(*t);
    index = static_cast<int>(k.consts.size());
    k.consts.push_back({m, t->dtype == kF32 ? v.vecSticks : 0});
    if (t->dtype != kF32)
      v.vecSticks = std::max(v.vecSticks, 2 * m.blocks());
    return std::optional<StickMatrix>(m);
  };
  v.weight = add(weight, v.wIndex);
  v.bias = add(bias, v.bIndex);
  return v;
}

/// The FP32 form of vector `index`: converted into `scratch` (DL16) or the
/// loaded constant itself (FP32).
Addr vectorF32(const UnitCtx &u, const std::optional<StickMatrix> &m, int index,
               int64_t scratch) {
  if (m->dtype == kF32)
    return at(u.consts[static_cast<size_t>(index)]);
  return at(scratch);
}

void convertVector(const UnitCtx &u, const std::optional<StickMatrix> &m,
                   int index, int64_t scratch) {
  if (!m || m->dtype == kF32)
    return;
  u.sfu->append(sfuCvt(at(scratch), at(u.consts[static_cast<size_t>(index)]),
                       true, {m->blocks(), 1, 0, 0, 0, 0}));
}

} // namespace

namespace {

/// Layer norm (centred: subtract the mean, then scale by the inverse
/// standard deviation, then weight and bias) and RMS norm (not centred, no
/// bias) share one kernel: FP32 statistics per row, then the row scaled.
RowPlan emitNorm(ProgramBuilder &pb, const TensorRef &x,
                 const std::optional<TensorRef> &weight,
                 const std::optional<TensorRef> &bias, const TensorRef &y,
                 float eps, const KernelOptions &opt, bool centred,
                 const char *what) {
  requireSameShape(x, y, what);
  requireFloat(x, what);
  SPYRE_ASSERT(x.dtype == y.dtype, std::string(what) + ": dtypes differ");
  RowKernel k;
  k.what = what;
  k.inputs = {StickMatrix::of(x)};
  k.output = StickMatrix::of(y);
  const StickMatrix xm = k.inputs[0];
  const NormVectors v = normVectors(k, xm, weight, bias, what);
  const float invN = 1.0f / static_cast<float>(xm.cols);
  k.scratch = [xm, v](int64_t h) {
    return f32Scratch(0, xm, h, true, v.vecSticks).end;
  };
  k.prologue = [xm, v](const UnitCtx &u) {
    F32Scratch sc = f32Scratch(u.scratch, xm, u.hmax, true, v.vecSticks);
    convertVector(u, v.weight, v.wIndex, sc.wf);
    convertVector(u, v.bias, v.bIndex, sc.bf);
  };
  k.compute = [xm, v, invN, eps, centred](const UnitCtx &u, const SubTile &st) {
    F32Scratch sc = f32Scratch(u.scratch, xm, u.hmax, true, v.vecSticks);
    F32Rows r(*u.sfu, xm, st.h);
    Addr xf = at(sc.xf), sq = at(sc.sq), stat = at(sc.stat),
         stat2 = at(sc.stat2);
    r.load(xf, st.in[0], st.bs);
    if (centred) {
      r.reduce(Opcode::Rsum, stat, xf, at(sc.partial));
      r.statScalar(Opcode::Muls, stat, stat, invN);
      r.rowStat(Opcode::Sub, xf, xf, stat, r.spread(at(sc.spread), stat));
    }
    r.square(sq, xf);
    r.reduce(Opcode::Rsum, stat, sq, at(sc.partial));
    r.statScalar(Opcode::Muls, stat, stat, invN);
    r.statScalar(Opcode::Adds, stat, stat, eps);
    r.statUnary(Opcode::Rsqrt, stat2, stat);
    r.rowStat(Opcode::Mul, xf, xf, stat2, r.spread(at(sc.spread), stat2));
    if (v.weight)
      r.colVec(Opcode::Mul, xf, xf, vectorF32(u, v.weight, v.wIndex, sc.wf));
    if (v.bias)
      r.colVec(Opcode::Add, xf, xf, vectorF32(u, v.bias, v.bIndex, sc.bf));
    r.store(st.out, xf, st.bs);
  };
  return runRowKernel(pb, k, opt, what);
}

} // namespace

RowPlan emitLayerNorm(ProgramBuilder &pb, const TensorRef &x,
                      const std::optional<TensorRef> &weight,
                      const std::optional<TensorRef> &bias, const TensorRef &y,
                      float eps, const KernelOptions &opt) {
  return emitNorm(pb, x, weight, bias, y, eps, opt, true, "layernorm");
}

RowPlan emitRmsNorm(ProgramBuilder &pb, const TensorRef &x,
                    const std::optional<TensorRef> &weight, const TensorRef &y,
                    float eps, const KernelOptions &opt) {
  return emitNorm(pb, x, weight, std::nullopt, y, eps, opt, false, "rmsnorm");
}

RowPlan emitReduce(ProgramBuilder &pb, ReduceKind kind, const TensorRef &x,
                   const TensorRef &y, const KernelOptions &opt) {
  requireFloat(x, "reduce");
  requireFloat(y, "reduce");
  std::vector<int64_t> keep = x.shape;
  keep.back() = 1;
  SPYRE_ASSERT(y.shape == keep,
               "reduce: '" + y.name + "' must have x's shape with last dim 1");
  RowKernel k;
  k.what = "reduce";
  k.inputs = {StickMatrix::of(x)};
  k.output = StickMatrix::of(y);
  const StickMatrix xm = k.inputs[0];
  const bool outF32 = y.dtype == kF32;
  const float invN = 1.0f / static_cast<float>(xm.cols);
  k.scratch = [xm](int64_t h) { return f32Scratch(0, xm, h, false, 0).end; };
  k.compute = [xm, kind, outF32, invN](const UnitCtx &u, const SubTile &st) {
    F32Scratch sc = f32Scratch(u.scratch, xm, u.hmax, false, 0);
    F32Rows r(*u.sfu, xm, st.h);
    Addr xf = at(sc.xf), stat = at(sc.stat);
    r.load(xf, st.in[0], st.bs);
    r.reduce(kind == ReduceKind::Max ? Opcode::Rmax : Opcode::Rsum, stat, xf,
             at(sc.partial));
    if (kind == ReduceKind::Mean)
      r.statScalar(Opcode::Muls, stat, stat, invN);
    // One stick per row, the value in lane 0, the other lanes zero.
    Rows one{1, st.h, 1, 1, 0, 1};
    if (outF32)
      u.sfu->append(sfuUnary(Opcode::Copy, st.out, stat, one, true));
    else
      u.sfu->append(sfuCvt(st.out, stat, false, one));
  };
  const char *name = kind == ReduceKind::Sum    ? "reduce_sum"
                     : kind == ReduceKind::Mean ? "reduce_mean"
                                                : "reduce_max";
  return runRowKernel(pb, k, opt, name);
}

} // namespace spyre::codegen
