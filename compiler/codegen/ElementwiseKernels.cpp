// The elementwise row kernels (Kernels.h): unary, scalar and binary ops,
// binary ops against a column, fused chains, conversion between DL16 and
// FP32, and rotary embedding. Each is a RowKernel whose SFU code works a
// sub-tile block by block (RowKernelSupport.h).
#include "compiler/codegen/RowKernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::codegen {

using isa::Opcode;
using namespace rowkernel;

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

RowPlan emitRotary(ProgramBuilder &pb, const TensorRef &x, const TensorRef &cos,
                   const TensorRef &sin, const TensorRef &y, int64_t headDim,
                   const KernelOptions &opt) {
  requireSameShape(x, y, "rotary");
  requireSameShape(cos, sin, "rotary");
  requireFloat(x, "rotary");
  SPYRE_ASSERT(x.dtype == y.dtype && x.dtype == cos.dtype &&
                   x.dtype == sin.dtype,
               "rotary: dtypes differ");
  SPYRE_ASSERT(headDim >= 2 && x.cols() % headDim == 0 &&
                   (headDim / 2) % x.lanes() == 0,
               "rotary: the halves of a head must be whole sticks");
  std::vector<int64_t> perHead = x.shape;
  perHead.back() = headDim;
  const bool shared = cos.shape == perHead && cos.shape != x.shape;
  SPYRE_ASSERT(shared || cos.shape == x.shape,
               "rotary: the tables must have x's shape or one head's");
  RowKernel k;
  k.what = "rotary";
  k.inputs = {StickMatrix::of(x), StickMatrix::of(cos), StickMatrix::of(sin)};
  k.output = StickMatrix::of(y);
  const bool f32 = x.dtype == kF32;
  const int64_t half = headDim / 2 / x.lanes(); // blocks per half head
  const int64_t heads = x.cols() / headDim, nb = x.blocks();
  // A scratch tile of the swapped halves times sin, per unit.
  k.scratch = [nb](int64_t h) { return nb * h; };
  k.compute = [f32, half, heads, nb, shared](const UnitCtx &u,
                                             const SubTile &st) {
    StreamBuilder &s = *u.sfu;
    const Addr tmp = at(u.scratch);
    const int64_t h = st.h, bs = st.bs, head = 2 * half;
    // One instruction per block offset c inside a head, its rows the heads
    // (a head's blocks apart); a table shared by the heads is read with
    // row stride 0. y = x * cos; tmp = swap(x) * sin, where block c of a
    // head's first half reads x's block c + half and of its second half
    // block c - half.
    const int64_t tableStep = shared ? 0 : head * bs;
    for (int64_t c = 0; c < head; ++c) {
      const int64_t swapped = c < half ? c + half : c - half;
      s.append(sfuBinary(Opcode::Mul, st.out + c * bs, st.in[0] + c * bs,
                         st.in[1] + c * bs,
                         {h, heads, head * bs, head * bs, tableStep, 0}, false,
                         f32));
      s.append(sfuBinary(Opcode::Mul, tmp + c * h, st.in[0] + swapped * bs,
                         st.in[2] + c * bs,
                         {h, heads, head * h, head * bs, tableStep, 0}, false,
                         f32));
    }
    // y += tmp.
    s.append(sfuBinary(Opcode::Add, st.out, st.out, tmp, {h, nb, bs, bs, h, 0},
                       false, f32));
  };
  return runRowKernel(pb, k, opt, "rotary");
}

} // namespace spyre::codegen
