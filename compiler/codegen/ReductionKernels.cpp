// The row kernels that reduce each row (Kernels.h): softmax and causal
// softmax, layer and RMS norm, and sum, mean and max over the last dim.
// Their statistics are worked in FP32, per block and then over the blocks
// (RowKernelSupport.h).
#include "compiler/codegen/RowKernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::codegen {

using isa::Opcode;
using namespace rowkernel;

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
