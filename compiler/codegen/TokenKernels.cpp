// Kernels of the token ops: embedding (rows of a table gathered by ids read
// at run time) and argmax (the index of each row's largest element).
//
// embedding: the tokens are split over the cores. A core's dma.load stream
// loads the stick of each token's id into LX, reads the id into a register
// with `lr` (bounded by the vocabulary, so a bad id stops the run with the
// simulator's index-out-of-range finding instead of reading past the
// table), and loads the table row at [r + table] with one `ld` of the row's
// blocks: in the table's default layout, [vocab, hidden] sticked on hidden,
// row v of every block is stick v of that block, so the row's address is
// the id itself plus the table's; no multiply is needed. Rows gather in
// one of two LX buffers; the dma.store stream writes each full buffer to
// the result.
//
// argmax: the rows are split over the cores; a tile of rows is loaded with
// each row's blocks consecutive in LX, one `rargmax` per row writes the
// INT32 index to a stick, and the sticks go to the result [.., 1] (one
// stick per row in its default layout).
#include "compiler/codegen/KernelSupport.h"

#include <algorithm>

namespace spyre::codegen {

namespace {

using isa::Engine;
using isa::Opcode;

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Counters that hand tiles between the streams of one core, in turn.
struct Handover {
  ProgramBuilder &pb;
  int core;
  std::vector<int> counters;
  Handover(ProgramBuilder &b, int c, int n) : pb(b), core(c) {
    for (int i = 0; i < n; ++i)
      counters.push_back(pb.allocCounter(core));
  }
  ~Handover() {
    for (int c : counters)
      pb.releaseCounter(core, c);
  }
};

} // namespace

RowPlan emitEmbedding(ProgramBuilder &pb, const TensorRef &table,
                      const TensorRef &ids, const TensorRef &y,
                      const KernelOptions &opt) {
  SPYRE_ASSERT(table.rank() == 2, "embedding: the table is not [vocab, hidden]");
  SPYRE_ASSERT(ids.dtype == isa::DType::Int32, "embedding: ids are not INT32");
  SPYRE_ASSERT(table.dtype == y.dtype, "embedding: table and result dtypes differ");
  const StickMatrix tm = StickMatrix::of(table);
  const StickMatrix ym = StickMatrix::of(y);
  SPYRE_ASSERT(tm.rowStride == 1,
               "embedding: the table's rows are not consecutive sticks");
  const int64_t vocab = table.shape[0], nb = tm.blocks();
  const int64_t tokens = numel(ids.shape);
  SPYRE_ASSERT(ym.rows == tokens && ym.blocks() == nb,
               "embedding: the result is not [tokens, hidden]");
  const Resources res = resources(pb.config(), opt);
  pb.setOp(opt.op.empty() ? std::string("embedding") : opt.op);

  RowPlan plan;
  plan.rows = tokens;
  // Two buffers of t rows and one id stick per core.
  const int64_t fit = (res.lxSticks() - 1) / (2 * nb);
  if (fit < 1) {
    plan.error = "a row of " + std::to_string(nb) +
                 " sticks does not fit LX twice";
    return plan;
  }
  const int parts = static_cast<int>(std::min<int64_t>(res.cores, tokens));
  const int64_t t = std::min(fit, ceilDiv(tokens, parts));
  plan.tileRows = t;
  plan.lxSticks = 1 + 2 * t * nb;
  SPYRE_ASSERT(vocab < (int64_t(1) << 31), "embedding: vocabulary past the lr bound");

  for (int i = 0; i < parts; ++i) {
    auto [b0, b1] = splitRange(tokens, parts, i);
    const int core = res.firstCore + i;
    plan.parts.push_back({core, b0, b1});
    LxArena arena(res.lxBase, res.lxEnd, "embedding");
    const int64_t idSlot = arena.take(1);
    const std::vector<int64_t> bufs = arena.takeEach(2, t * nb);
    pb.noteLxUse(core, arena.next());
    StreamBuilder &load = pb.stream(core, Engine::DmaLoad);
    StreamBuilder &store = pb.stream(core, Engine::DmaStore);
    // full: a buffer is gathered (load -> store); free: it was written out
    // (store -> load), for the buffer's next use.
    Handover h(pb, core, 2);
    const int full = h.counters[0], free = h.counters[1];
    const int reg = load.allocReg();
    const int64_t tiles = ceilDiv(b1 - b0, t);
    uint64_t loadedStick = ~uint64_t{0};
    for (int64_t k = 0; k < tiles; ++k) {
      const int64_t r0 = b0 + k * t, rows = std::min(t, b1 - r0);
      const int64_t buf = bufs[static_cast<size_t>(k % 2)];
      if (k >= 2)
        load.wait(free, 1);
      for (int64_t j = 0; j < rows; ++j) {
        // The id's element index in ids' host shape.
        std::vector<int64_t> index(ids.shape.size());
        int64_t rest = r0 + j;
        for (size_t d = index.size(); d-- > 0;) {
          index[d] = rest % ids.shape[d];
          rest /= ids.shape[d];
        }
        const uint64_t stick = ids.stickOf(index);
        if (stick != loadedStick) {
          load.append(instr<Opcode::Ld>().lx(at(idSlot)).mem(
              at(static_cast<int64_t>(stick))));
          loadedStick = stick;
        }
        load.append(instr<Opcode::Lr>()
                        .rd(reg)
                        .lx(at(idSlot))
                        .lane(index.back() % ids.lanes())
                        .limit(vocab));
        load.append(instr<Opcode::Ld>()
                        .lx(at(buf + j))
                        .mem(Addr{reg, static_cast<int64_t>(tm.address)})
                        .run(1)
                        .n1(nb)
                        .lxs1(t)
                        .ms1(tm.blockStride));
      }
      load.signal(full, 1);
      store.wait(full, 1);
      store.append(storeSticks(at(ym.stick(r0, 0)), at(buf),
                               {rows, nb, ym.rowStride, ym.blockStride, t}));
      if (k + 2 < tiles)
        store.signal(free, 1);
    }
    load.freeReg(reg);
  }
  return plan;
}

RowPlan emitArgmax(ProgramBuilder &pb, const TensorRef &x, const TensorRef &y,
                   const KernelOptions &opt) {
  SPYRE_ASSERT(x.dtype == isa::DType::Dl16 || x.dtype == isa::DType::Fp32,
               "argmax: x is not DL16 or FP32");
  SPYRE_ASSERT(y.dtype == isa::DType::Int32 && y.cols() == 1,
               "argmax: the result is not INT32 [.., 1]");
  const StickMatrix xm = StickMatrix::of(x);
  const StickMatrix ym = StickMatrix::of(y);
  SPYRE_ASSERT(ym.rows == xm.rows, "argmax: result rows differ from x's");
  const int64_t rows = xm.rows, nb = xm.blocks();
  const bool f32 = x.dtype == isa::DType::Fp32;
  const Resources res = resources(pb.config(), opt);
  pb.setOp(opt.op.empty() ? std::string("argmax") : opt.op);

  RowPlan plan;
  plan.rows = rows;
  // One buffer of t rows and t result sticks per core.
  const int64_t fit = res.lxSticks() / (nb + 1);
  if (fit < 1) {
    plan.error = "a row of " + std::to_string(nb) + " sticks does not fit LX";
    return plan;
  }
  // Padding lanes (zeros) must not compete: count stops the search at the
  // row's last element, a 16-bit field.
  const int64_t count = x.cols() % x.lanes() == 0 ? 0 : x.cols();
  if (count > 65535) {
    plan.error = "a row of " + std::to_string(x.cols()) +
                 " elements, not whole sticks, is past rargmax's count";
    return plan;
  }
  const int parts = static_cast<int>(std::min<int64_t>(res.cores, rows));
  const int64_t t = std::min(fit, ceilDiv(rows, parts));
  plan.tileRows = t;
  plan.lxSticks = t * (nb + 1);
  for (int i = 0; i < parts; ++i) {
    auto [b0, b1] = splitRange(rows, parts, i);
    const int core = res.firstCore + i;
    plan.parts.push_back({core, b0, b1});
    LxArena arena(res.lxBase, res.lxEnd, "argmax");
    const int64_t in = arena.take(t * nb), out = arena.take(t);
    pb.noteLxUse(core, arena.next());
    StreamBuilder &load = pb.stream(core, Engine::DmaLoad);
    StreamBuilder &sfu = pb.stream(core, Engine::Sfu, 0);
    StreamBuilder &store = pb.stream(core, Engine::DmaStore);
    // loaded: load -> sfu; read: sfu -> load (the buffer may be refilled);
    // computed: sfu -> store; stored: store -> sfu (the sticks are free).
    Handover h(pb, core, 4);
    const int loaded = h.counters[0], read = h.counters[1],
              computed = h.counters[2], stored = h.counters[3];
    const int64_t tiles = ceilDiv(b1 - b0, t);
    for (int64_t k = 0; k < tiles; ++k) {
      const int64_t r0 = b0 + k * t, n = std::min(t, b1 - r0);
      const bool more = k + 1 < tiles;
      if (k > 0)
        load.wait(read, 1);
      // Row r's blocks consecutive in LX: stick (r, b) at in + r*nb + b.
      load.append(instr<Opcode::Ld>()
                      .lx(at(in))
                      .mem(at(xm.stick(r0, 0)))
                      .run(1)
                      .n1(n)
                      .lxs1(nb)
                      .ms1(xm.rowStride)
                      .n2(nb)
                      .lxs2(1)
                      .ms2(xm.blockStride));
      load.signal(loaded, 1);
      sfu.wait(loaded, 1);
      if (k > 0)
        sfu.wait(stored, 1);
      sfu.append(sfuUnary(Opcode::Rargmax, at(out), at(in),
                          {nb, n, 1, nb, 0, count}, f32));
      if (more)
        sfu.signal(read, 1);
      sfu.signal(computed, 1);
      store.wait(computed, 1);
      store.append(storeSticks(at(ym.stick(r0, 0)), at(out),
                               {n, 1, ym.rowStride, ym.blockStride, t}));
      if (more)
        store.signal(stored, 1);
    }
  }
  return plan;
}

} // namespace spyre::codegen
