// The driver every row kernel shares (RowKernelSupport.h): the tile size
// from the LX fit, the split of the rows among the cores, and each core's
// streams (DMA load and store through buffer rings, the SFU units' share of
// every tile); with the small helpers the kernels use.
#include "compiler/codegen/RowKernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::codegen {

namespace {

using rowkernel::ConstSpec;
using rowkernel::RowKernel;
using rowkernel::SubTile;
using rowkernel::UnitCtx;

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

} // namespace

namespace rowkernel {

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

int64_t remOf(const StickMatrix &m) {
  return m.lastLanes() == m.lanes() ? 0 : m.lastLanes();
}

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

} // namespace rowkernel

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

} // namespace spyre::codegen
