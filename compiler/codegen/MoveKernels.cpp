// Kernels that move elements without arithmetic (Kernels.h): the transpose
// of the last two dims, through xpose, and the copy of a tensor between two
// stick layouts, through DMA alone.
//
// Transpose. x [..., P, Q] sits as [Q blocks, O, P, lanes] (O the product of
// the leading dims) and y [..., Q, P] as [P blocks, O, Q, lanes]. The 64 rows
// p of x's block (qb, o) that fall in P block pb, one stick each, are one
// xpose source; its destination is the 64 sticks q of y's block (pb, o).
// A core owns a range of o and of Q blocks; a tile is one o, tileQ columns
// and tileP rows: one load (a contiguous run of rows per Q block), the
// xposes (shared by the SFU units), one store (a contiguous run of columns
// per P block). Load, SFU and store hand tiles over through two buffer rings
// (of two buffers each, or one without overlap).
//
// Relayout. The sticks are the same on both sides, only their addresses
// differ: the iteration space is y's device dims (valid extents), with the
// strides of both layouts; dims contiguous in both are merged. A tile is
// part of the two innermost dims; its load gathers from x (one run per row
// when x is contiguous along the innermost dim, single sticks otherwise),
// its store writes contiguous runs into y. Outer dims are loop levels
// (unrolled past the loop depth limit), the outermost split across cores.
// y's padding sticks are zeroed from a zero buffer in LX.
#include "compiler/codegen/KernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::codegen {

using isa::Opcode;

namespace {

/// Tiles this big (input sticks) amortise a DMA instruction's latency; see
/// RowKernelSupport.cpp.
constexpr int64_t kTargetTileSticks = 512;

int64_t product(const std::vector<int64_t> &v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= v[i];
  return p;
}

/// The DMA walk between a rows x cols tile in LX (rows `ta` sticks apart,
/// one stick per column) and device memory, where a column step is `aStride`
/// sticks and a row step `bStride`: one contiguous run per row when columns
/// are adjacent in memory, else one stick per column.
template <isa::Format F>
void setTileWalk(InstrOf<F> &dma, int64_t rows, int64_t cols, int64_t ta,
                 int64_t aStride, int64_t bStride) {
  if (aStride == 1) {
    dma.run(cols);
    if (rows > 1)
      dma.n1(rows).lxs1(ta).ms1(bStride);
    return;
  }
  dma.run(1);
  if (cols > 1)
    dma.n1(cols).lxs1(1).ms1(aStride);
  if (rows > 1)
    dma.n2(rows).lxs2(ta).ms2(bStride);
}

} // namespace

std::string MovePlan::str() const {
  std::string s;
  if (tileP > 0)
    s = "tiles " + std::to_string(tileP) + " rows x " + std::to_string(tileQ) +
        " columns\n";
  for (const Part &p : parts) {
    s += "core " + std::to_string(p.core) + ": outer [" + std::to_string(p.o0) +
         ", " + std::to_string(p.o1) + ")";
    if (p.q1 > p.q0)
      s += ", columns [" + std::to_string(p.q0) + ", " + std::to_string(p.q1) +
           ")";
    s += "\n";
  }
  return s;
}

// --------------------------------------------------------------- transpose

MovePlan emitTranspose(ProgramBuilder &pb, const TensorRef &x,
                       const TensorRef &y, const KernelOptions &opt) {
  using isa::Engine;
  SPYRE_ASSERT(x.rank() >= 2,
               "transpose: '" + x.name + "' has fewer than 2 dims");
  SPYRE_ASSERT(x.isDefault() && y.isDefault(),
               "transpose: tensors must be in the default layout");
  SPYRE_ASSERT(x.dtype == y.dtype && x.dtype != isa::DType::Int8,
               "transpose: DL16, FP32 or INT32 tensors of one dtype");
  std::vector<int64_t> swapped = x.shape;
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  SPYRE_ASSERT(y.shape == swapped,
               "transpose: '" + y.name +
                   "' is not x with its last two dims swapped");
  const Resources res = resources(pb.config(), opt);
  const int units = res.units;
  // xpose moves 4-byte elements as bit patterns: INT32 (token ids) as FP32.
  const bool f32 =
      x.dtype == isa::DType::Fp32 || x.dtype == isa::DType::Int32;
  const int64_t lanes = x.lanes();
  const size_t r = x.shape.size();
  const int64_t p = x.shape[r - 2], q = x.shape[r - 1];
  const int64_t outer = product(x.shape, 0, r - 2);
  const int64_t pBlocks = ceilDiv(p, lanes), qBlocks = ceilDiv(q, lanes);
  const int64_t xBlockStride = outer * p, yBlockStride = outer * q;

  // Grid over (outer, Q blocks).
  const int64_t gO = std::min<int64_t>(outer, res.cores);
  const int64_t gQ = std::min<int64_t>(qBlocks, res.cores / gO);
  // Tiles: raw and transposed buffers, two each (one without overlap), of
  // tqb x tpb blocks of lanes sticks: 2 * buffers * tqb * tpb * lanes
  // sticks. Whole P first (longer load runs), then as many Q blocks as fit,
  // at most a core's share.
  const int64_t bufferSets = 2 * res.buffers;
  const int64_t budget = res.lxSticks() / (bufferSets * lanes);
  SPYRE_ASSERT(budget >= 1, "transpose: LX region too small");
  const int64_t coreQBlocks = ceilDiv(qBlocks, gQ);
  const int64_t tpb = std::min(pBlocks, budget);
  int64_t tqb = std::min(coreQBlocks, std::max<int64_t>(1, budget / tpb));
  tqb = std::min(tqb, std::max<int64_t>(1, ceilDiv(kTargetTileSticks, p)));
  tqb = std::max<int64_t>(1, std::min(tqb, budget / tpb));
  const int64_t tileRows = tpb * lanes, tileCols = tqb * lanes;

  pb.setOp(opt.op.empty() ? "transpose" : opt.op);
  MovePlan plan;
  plan.tileP = tileRows;
  plan.tileQ = tileCols;
  plan.lxSticks = bufferSets * tqb * tpb * lanes;
  int core = res.firstCore;
  for (int64_t i = 0; i < gO; ++i)
    for (int64_t j = 0; j < gQ; ++j) {
      auto [o0, o1] = splitRange(outer, gO, i);
      auto [qb0, qb1] = splitRange(qBlocks, gQ, j);
      if (o1 <= o0 || qb1 <= qb0)
        continue;
      const int64_t c0 = qb0 * lanes, c1 = std::min(q, qb1 * lanes);
      plan.parts.push_back({core, o0, o1, c0, c1});

      LxArena arena(res.lxBase, res.lxEnd, "transpose");
      std::vector<int64_t> rawSlots =
          arena.takeEach(res.buffers, tqb * tileRows);
      std::vector<int64_t> outSlots =
          arena.takeEach(res.buffers, tpb * tileCols);
      pb.noteLxUse(core, arena.next());
      StreamBuilder &load = pb.stream(core, Engine::DmaLoad);
      StreamBuilder &store = pb.stream(core, Engine::DmaStore);
      std::vector<StreamBuilder *> sfus;
      for (int u = 0; u < units; ++u)
        sfus.push_back(&pb.stream(core, Engine::Sfu, u));
      BufferRing raw(pb, core, rawSlots, {{&load}, sfus});
      BufferRing out(pb, core, outSlots, {sfus, {&store}});

      const int64_t cols = c1 - c0;
      const int64_t qTiles = ceilDiv(cols, tileCols);
      const int64_t qTail = cols - (qTiles - 1) * tileCols;
      const int64_t pTiles = ceilDiv(p, tileRows);
      const int64_t pTail = p - (pTiles - 1) * tileRows;
      const std::vector<NestLevel> levels = {
          {o1 - o0, false, false},
          {qTiles, qTail != tileCols, false},
          {pTiles, pTail != tileRows, false}};
      auto colsOf = [&](const NestIter &it) {
        return it.tail[1] ? qTail : tileCols;
      };
      auto rowsOf = [&](const NestIter &it) {
        return it.tail[2] ? pTail : tileRows;
      };
      const int64_t maxLoop = pb.config().limits.maxLoopCount;

      raw.open(load);
      int xr = load.allocReg();
      load.li(xr,
              static_cast<int64_t>(x.address) + qb0 * xBlockStride + o0 * p);
      NestHooks lh;
      lh.body = [&](const NestIter &it) {
        raw.acquire(load);
        load.append(loadSticks(raw.slot(load), Addr{xr, 0},
                               {rowsOf(it), ceilDiv(colsOf(it), lanes), 1,
                                xBlockStride, tileRows}));
        raw.release(load);
      };
      emitNest(load, levels, {{xr, {p, tqb * xBlockStride, tileRows}}}, lh,
               maxLoop);
      raw.close(load);
      load.freeReg(xr);

      for (int u = 0; u < units; ++u) {
        StreamBuilder &s = *sfus[static_cast<size_t>(u)];
        raw.open(s);
        out.open(s);
        NestHooks sh;
        sh.body = [&](const NestIter &it) {
          const int64_t rows = rowsOf(it), colsNow = colsOf(it);
          const int64_t qbN = ceilDiv(colsNow, lanes);
          raw.acquire(s);
          out.acquire(s);
          for (int64_t qb = u * qbN / units; qb < (u + 1) * qbN / units; ++qb)
            for (int64_t pbk = 0; pbk * lanes < rows; ++pbk) {
              auto xp = instr<Opcode::Xpose>()
                            .dst(out.slot(s) + pbk * tileCols + qb * lanes)
                            .src(raw.slot(s) + qb * tileRows + pbk * lanes)
                            .m(std::min(lanes, rows - pbk * lanes))
                            .k(std::min(lanes, colsNow - qb * lanes));
              if (f32)
                xp.fmt(isa::StickFormat::F32);
              s.append(xp);
            }
          raw.release(s);
          out.release(s);
        };
        emitNest(s, levels, {}, sh, maxLoop);
        raw.close(s);
        out.close(s);
      }

      out.open(store);
      int yr = store.allocReg();
      store.li(yr, static_cast<int64_t>(y.address) + o0 * q + c0);
      NestHooks th;
      th.body = [&](const NestIter &it) {
        out.acquire(store);
        store.append(storeSticks(Addr{yr, 0}, out.slot(store),
                                 {colsOf(it), ceilDiv(rowsOf(it), lanes), 1,
                                  yBlockStride, tileCols}));
        out.release(store);
      };
      emitNest(store, levels, {{yr, {q, tileCols, tpb * yBlockStride}}}, th,
               maxLoop);
      out.close(store);
      store.freeReg(yr);
      raw.finish();
      out.finish();
      ++core;
    }
  return plan;
}

// ---------------------------------------------------------------- relayout

namespace {

/// One dim of a relayout's iteration space.
struct CopyDim {
  int64_t extent = 1;       ///< valid extent
  int64_t padded = 1;       ///< y's device extent
  int64_t src = 0, dst = 0; ///< strides in sticks
};

} // namespace

MovePlan emitRelayout(ProgramBuilder &pb, const TensorRef &x,
                      const TensorRef &y, const KernelOptions &opt) {
  using isa::Engine;
  SPYRE_ASSERT(x.shape == y.shape && x.dtype == y.dtype,
               "relayout: '" + x.name + "' and '" + y.name +
                   "' differ in shape or dtype");
  SPYRE_ASSERT(!y.window, "relayout: '" + y.name +
                              "' is a window, whose padding is other data "
                              "this kernel would zero");
  const Resources res = resources(pb.config(), opt);
  const int rank = y.rank();

  // y's device dims, outermost first, with the strides of both layouts.
  std::vector<CopyDim> all;
  std::vector<int64_t> yDims = y.deviceDims();
  for (int d = 0; d < rank; ++d) {
    CopyDim c;
    c.padded = yDims[static_cast<size_t>(d)];
    if (d == y.blockPos) {
      c.extent = y.blocks();
      c.src = x.blockStride();
      c.dst = y.blockStride();
    } else {
      int host = y.hostDimAt(d);
      c.extent = y.shape[static_cast<size_t>(host)];
      c.src = x.dimStride(host);
      c.dst = y.dimStride(host);
    }
    all.push_back(c);
  }

  // Zero y's padding: for a padded dim j, the sticks with index j past the
  // valid extent form one contiguous run per index of the dims above it.
  bool anyPadding = false;
  for (const CopyDim &c : all)
    anyPadding |= c.padded > c.extent;

  // Merge dims contiguous in both layouts; drop dims of extent 1.
  std::vector<CopyDim> dims;
  for (const CopyDim &c : all) {
    if (c.extent == 1)
      continue;
    if (!dims.empty()) {
      CopyDim &o = dims.back();
      if (o.src == c.src * c.extent && o.dst == c.dst * c.extent &&
          c.padded == c.extent) {
        o.extent *= c.extent;
        o.padded = o.extent;
        o.src = c.src;
        o.dst = c.dst;
        continue;
      }
    }
    dims.push_back(c);
  }
  if (dims.empty())
    dims.push_back({1, 1, 1, 1});
  if (dims.size() == 1)
    dims.insert(dims.begin(), CopyDim{1, 1, 0, 0});
  const CopyDim a = dims.back(), b = dims[dims.size() - 2];

  // Tiles: [tb rows][ta sticks] in LX, two buffers (one without overlap),
  // plus the zero buffer.
  const int64_t zeroSticks = anyPadding ? 64 : 0;
  const int64_t slotMax = (res.lxSticks() - zeroSticks) / res.buffers;
  SPYRE_ASSERT(slotMax >= 1, "relayout: LX region too small");
  const int64_t ta = std::min(a.extent, slotMax);
  int64_t tb = std::min(
      b.extent,
      std::max<int64_t>(1, std::min(slotMax, kTargetTileSticks * 8) / ta));
  // Cores take the outermost level's indices; where it has fewer than
  // there are cores, each index's b tiles are shared out as well (a head
  // split [S, H x 64] -> [S, H, 64] has no outer level, a batch-outer copy
  // of C only its few stick blocks), so tiles of b are cut small enough
  // for every core to get one.
  const int64_t outerTop = dims.size() > 2 ? dims[0].extent : 1;
  const int64_t perTop =
      outerTop >= res.cores ? 1 : res.cores / std::max<int64_t>(1, outerTop);
  tb = std::max<int64_t>(1, std::min(tb, ceilDiv(b.extent, perTop)));

  // Levels: every outer dim (one index per iteration), then b and a tiles.
  std::vector<NestLevel> levels;
  std::vector<int64_t> srcStep, dstStep;
  for (size_t d = 0; d + 2 < dims.size(); ++d) {
    levels.push_back({dims[d].extent, false, false});
    srcStep.push_back(dims[d].src);
    dstStep.push_back(dims[d].dst);
  }
  const int64_t bTiles = ceilDiv(b.extent, tb),
                bTail = b.extent - (bTiles - 1) * tb;
  const int64_t aTiles = ceilDiv(a.extent, ta),
                aTail = a.extent - (aTiles - 1) * ta;
  levels.push_back({bTiles, bTail != tb, false});
  levels.push_back({aTiles, aTail != ta, false});
  srcStep.push_back(tb * b.src);
  srcStep.push_back(ta * a.src);
  dstStep.push_back(tb * b.dst);
  dstStep.push_back(ta * a.dst);
  // Hardware loops for the innermost levels, in line past the depth limit.
  int depth = 0;
  for (size_t l = levels.size(); l-- > 0;)
    if (levels[l].tiles > 1 && ++depth > pb.config().limits.maxLoopDepth)
      levels[l].unroll = true;
  const size_t nb = levels.size() - 2, na = levels.size() - 1;

  // The outermost level is split across cores; with fewer indices than
  // cores, each index's b tiles are split among `split` cores.
  const int64_t top = levels[0].tiles;
  const int64_t split =
      nb > 0 && top < res.cores ? std::min(res.cores / top, bTiles) : 1;
  const int64_t cores = std::min<int64_t>(res.cores, top * split);
  pb.setOp(opt.op.empty() ? "relayout" : opt.op);
  MovePlan plan;
  plan.lxSticks = res.buffers * ta * tb + zeroSticks;
  for (int64_t i = 0; i < cores; ++i) {
    const int core = res.firstCore + static_cast<int>(i);
    auto [t0, t1] = split > 1 ? std::pair<int64_t, int64_t>{i / split,
                                                            i / split + 1}
                              : splitRange(top, cores, i);
    auto [b0, b1] = split > 1 ? splitRange(bTiles, split, i % split)
                              : std::pair<int64_t, int64_t>{0, bTiles};
    plan.parts.push_back({core, t0, t1, b0 * tb, std::min(b1 * tb, b.extent)});
    std::vector<NestLevel> lv = levels;
    lv[0].tiles = t1 - t0;
    if (lv.size() == 2)
      lv[0].hasTail = levels[0].hasTail && t1 == top;
    else
      lv[0].hasTail = false;
    if (split > 1) {
      lv[nb].tiles = b1 - b0;
      lv[nb].hasTail = levels[nb].hasTail && b1 == bTiles;
    }
    const int64_t firstTile = t0;
    // Level 0 is b when there are no outer dims: its tail belongs to the
    // core holding the last tile.
    auto sizeOf = [&](size_t l, const NestIter &it, int64_t full,
                      int64_t tail) { return it.tail[l] ? tail : full; };

    LxArena arena(res.lxBase, res.lxEnd, "relayout");
    std::vector<int64_t> slots = arena.takeEach(res.buffers, ta * tb);
    const int64_t zeroAt = arena.take(zeroSticks);
    pb.noteLxUse(core, arena.next());
    StreamBuilder &load = pb.stream(core, Engine::DmaLoad);
    StreamBuilder &store = pb.stream(core, Engine::DmaStore);
    BufferRing ring(pb, core, slots, {{&load}, {&store}});
    const int64_t maxLoop = pb.config().limits.maxLoopCount;

    ring.open(load);
    int xr = load.allocReg();
    load.li(xr, static_cast<int64_t>(x.address) + firstTile * srcStep[0] +
                    b0 * srcStep[nb]);
    NestHooks lh;
    lh.body = [&](const NestIter &it) {
      const int64_t rows = sizeOf(nb, it, tb, bTail),
                    cols = sizeOf(na, it, ta, aTail);
      ring.acquire(load);
      auto ld = instr<Opcode::Ld>().lx(ring.slot(load)).mem(Addr{xr, 0});
      setTileWalk(ld, rows, cols, ta, a.src, b.src);
      load.append(ld);
      ring.release(load);
    };
    emitNest(load, lv, {{xr, srcStep}}, lh, maxLoop);
    ring.close(load);
    load.freeReg(xr);

    ring.open(store);
    int yr = store.allocReg();
    store.li(yr, static_cast<int64_t>(y.address) + firstTile * dstStep[0] +
                     b0 * dstStep[nb]);
    NestHooks th;
    th.body = [&](const NestIter &it) {
      const int64_t rows = sizeOf(nb, it, tb, bTail),
                    cols = sizeOf(na, it, ta, aTail);
      ring.acquire(store);
      auto st = instr<Opcode::St>().mem(Addr{yr, 0}).lx(ring.slot(store));
      setTileWalk(st, rows, cols, ta, a.dst, b.dst);
      store.append(st);
      ring.release(store);
    };
    emitNest(store, lv, {{yr, dstStep}}, th, maxLoop);
    ring.close(store);
    store.freeReg(yr);
    ring.finish();

    if (anyPadding && i == 0) {
      // The first core's DMA engines zero y's padding: load the shared zero
      // sticks once, then one strided store per padded dim.
      load.append(loadSticks(at(zeroAt),
                             at(static_cast<int64_t>(pb.zeroSticks(64))),
                             {64, 1, 1, 0, 0}));
      OnceSignal zeros(pb, core, {&store});
      zeros.post(load);
      zeros.await(store);
      for (size_t j = 0; j < all.size(); ++j) {
        if (all[j].padded == all[j].extent)
          continue;
        const int64_t runLen = (all[j].padded - all[j].extent) * all[j].dst;
        int64_t count = 1;
        for (size_t o = 0; o < j; ++o)
          count *= all[o].padded;
        const int64_t stride = j > 0 ? all[j - 1].dst : 0;
        int64_t base =
            static_cast<int64_t>(y.address) + all[j].extent * all[j].dst;
        for (int64_t done = 0; done < count;) {
          const int64_t n2 = std::min<int64_t>(count - done, 65535);
          for (int64_t off = 0; off < runLen;) {
            const int64_t chunk = std::min<int64_t>(64, runLen - off);
            const int64_t reps =
                std::min<int64_t>((runLen - off) / chunk, 65535);
            auto st = instr<Opcode::St>()
                          .mem(at(base + done * stride + off))
                          .lx(at(zeroAt))
                          .run(chunk);
            if (reps > 1)
              st.n1(reps).ms1(chunk);
            if (n2 > 1)
              st.n2(n2).ms2(stride);
            store.append(st);
            off += chunk * reps;
          }
          done += n2;
        }
      }
      zeros.finish();
    }
  }
  return plan;
}

} // namespace spyre::codegen
