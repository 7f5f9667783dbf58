// Emission of free views and of the ops that move sticks: reshape, split,
// concat, relayout (Emission.h, Emitter.h).
#include "compiler/emit/Emitter.h"

namespace spyre::compiler::emit_detail {

bool Emitter::emitFreeView(const Op &op) {
  const TensorRef x = ref(op.operand(0));
  if (isAttentionHeadView(g_, op)) {
    // Split: x is the flat projection; the reshape's result is [B, S, H, D]
    // and the transpose's [B, H, S, D] in its memory. Merge: the attention
    // wrote into the reshape's result (emitAttention), which is declared
    // already; the transpose between is [B, S, H, D] in it.
    const Shape &ys = op.result()->type().shape;
    if (op.kind() == OpKind::Reshape && splitsHeads(op)) {
      SPYRE_ASSERT(x.isDefault(), "head split of '" + x.name +
                                      "' from a layout that is not the default");
      refs_[op.result()] = headsView(op.result()->name(), x, ys, false);
    } else if (op.kind() == OpKind::Transpose) {
      refs_[op.result()] =
          headsView(op.result()->name(), x, ys, !x.dimOrder.empty() &&
                                                    x.dimOrder[0] == 2);
    } else {
      SPYRE_ASSERT(refs_.count(op.result()) == 1,
                   "head merge '" + op.name() + "' before its attention");
    }
    return true;
  }
  if (isHeadSwap(g_, op)) {
    // The value between the two ops, [.., S, H, L], is x's (or the
    // result's) memory with H outermost; the other end is in the default
    // layout at the same address.
    const bool between = op.kind() == OpKind::Reshape ? splitsStickHeads(op)
                                                      : x.dimOrder.empty();
    SPYRE_ASSERT(between ? x.isDefault() : !x.dimOrder.empty(),
                 "head swap '" + op.name() + "' on an unexpected layout");
    TensorRef v;
    v.name = op.result()->name();
    v.dtype = x.dtype;
    v.address = x.address;
    v.shape = refShapeOf(*op.result());
    if (between) {
      const int n = v.rank();
      for (int d = 0; d + 3 < n; ++d)
        v.dimOrder.push_back(d);
      v.dimOrder.push_back(n - 2);
      v.dimOrder.push_back(n - 3);
    }
    refs_[op.result()] = v;
    return true;
  }
  if (op.kind() != OpKind::Split) {
    std::optional<TensorRef> v = viewAs(x, refShapeOf(*op.result()));
    SPYRE_ASSERT(v, "free view is not a view");
    v->name = op.result()->name();
    refs_[op.result()] = *v;
    return true;
  }
  const int64_t rank = op.operand(0)->type().rank();
  const int64_t axis = *normalizeAxis(op.intAttr("axis"), rank);
  int64_t offset = 0;
  for (size_t i = 0; i < op.numResults(); ++i) {
    const Value *r = op.result(i);
    TensorRef v = x;
    v.name = r->name();
    v.shape = refShapeOf(*r);
    if (axis == rank - 1)
      v.address = x.address + static_cast<uint64_t>(
                                  offset / x.lanes() * x.blockStride());
    else
      v.address = x.address + static_cast<uint64_t>(
                                  offset * x.dimStride(static_cast<int>(axis)));
    offset += r->type().shape[static_cast<size_t>(axis)];
    refs_[r] = v;
  }
  return true;
}


bool Emitter::emitReshape(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const int64_t cx = x.shape.back(), cy = y.shape.back();
  const int64_t total = numel(x.shape), lanes = x.lanes();
  // [.., M, 1] <-> [.., M]: a transpose of [P, M, 1] and [P, 1, M].
  if (cx == 1 || cy == 1) {
    const int64_t mDim = cx == 1 ? cy : cx;
    std::optional<TensorRef> xv =
        viewAs(x, cx == 1 ? std::vector<int64_t>{total / mDim, mDim, 1}
                          : std::vector<int64_t>{total / mDim, 1, mDim});
    std::optional<TensorRef> yv =
        viewAs(y, cx == 1 ? std::vector<int64_t>{total / mDim, 1, mDim}
                          : std::vector<int64_t>{total / mDim, mDim, 1});
    if (xv && yv) {
      beginKernel();
      codegen::emitTranspose(pb_, *xv, *yv, options());
      return true;
    }
  }
  // [.., H*D] <-> [.., H, D] with D whole sticks: stick blocks h*D/64+j of
  // x are block j of head h in y.
  const bool split = cx > cy && cx % cy == 0 && cy % lanes == 0 &&
                     y.rank() >= 2 &&
                     y.shape[static_cast<size_t>(y.rank() - 2)] == cx / cy;
  const bool merge = cy > cx && cy % cx == 0 && cx % lanes == 0 &&
                     x.rank() >= 2 &&
                     x.shape[static_cast<size_t>(x.rank() - 2)] == cy / cx;
  if (split || merge) {
    const int64_t d = std::min(cx, cy), h = std::max(cx, cy) / d;
    const std::vector<int64_t> s3 = {total / (h * d), h, d};
    const TensorRef &flat = split ? x : y, &heads = split ? y : x;
    TensorRef fv = flat; // [P, H*D] memory as [P, H, D]: h, block, p
    fv.shape = s3;
    fv.dimOrder = {1, 0};
    fv.blockPos = 1;
    std::optional<TensorRef> hv = viewAs(heads, s3);
    SPYRE_ASSERT(hv, "reshape: head view");
    beginKernel();
    codegen::emitRelayout(pb_, split ? fv : *hv, split ? *hv : fv, options());
    return true;
  }
  // Any other regrouping of the last dim: split it to the common divisor
  // g of both last dims, then merge to the new one.
  const int64_t g = std::gcd(cx, cy);
  if (g == cy) {
    splitLast(x, cy, viewOf(y, {total / cx, cx / cy, cy}));
    return true;
  }
  if (g == cx) {
    mergeLast(viewOf(x, {total / cy, cy / cx, cx}), y);
    return true;
  }
  const TensorRef mid = scratch(x.dtype, {total / g, g});
  splitLast(x, g, viewOf(mid, {total / cx, cx / g, g}));
  mergeLast(viewOf(mid, {total / cy, cy / g, g}), y);
  return true;
}

bool Emitter::emitSplit(const Op &op) {
  const TensorRef x = ref(op.operand(0));
  const int64_t rank = x.rank();
  const int64_t axis = *normalizeAxis(op.intAttr("axis"), rank);
  if (axis == rank - 1) {
    // Through the transpose: pieces of the last dim are row ranges there.
    const int64_t c = x.shape.back(), p = numel(x.shape) / c;
    const TensorRef t = scratch(x.dtype, {c, p});
    beginKernel();
    codegen::emitTranspose(pb_, viewOf(x, {p, c}), t, options());
    int64_t off = 0;
    for (size_t i = 0; i < op.numResults(); ++i) {
      const TensorRef y = result(op.result(i));
      const int64_t w = y.shape.back();
      TensorRef rows = t;
      rows.shape = {w, p};
      rows.padded = {c};
      rows.address = t.address + static_cast<uint64_t>(off);
      off += w;
      const TensorRef piece = scratch(x.dtype, {w, p});
      beginKernel();
      codegen::emitRelayout(pb_, rows, piece, options());
      const TensorRef yd = asDType(piece, y.dtype);
      beginKernel();
      codegen::emitTranspose(pb_, yd, viewOf(y, {p, w}), options());
    }
    return true;
  }
  int64_t offset = 0;
  for (size_t i = 0; i < op.numResults(); ++i) {
    const Value *r = op.result(i);
    const TensorRef y = result(r);
    TensorRef xv = asDType(x, y.dtype);
    xv.padded.assign(xv.shape.begin(), xv.shape.end() - 1);
    xv.address +=
        static_cast<uint64_t>(offset * xv.dimStride(static_cast<int>(axis)));
    xv.shape = y.shape;
    offset += y.shape[static_cast<size_t>(axis)];
    beginKernel();
    codegen::emitRelayout(pb_, xv, y, options());
  }
  return true;
}

bool Emitter::emitConcat(const Op &op) {
  const TensorRef y = result(op.result());
  const int64_t rank = y.rank();
  const int64_t axis = *normalizeAxis(op.intAttr("axis"), rank);
  const int64_t lanes = y.lanes();
  std::vector<TensorRef> xs;
  for (const Value *v : op.operands())
    xs.push_back(asDType(ref(v), y.dtype));
  bool aligned = true;
  for (size_t i = 0; i + 1 < xs.size(); ++i)
    aligned &= xs[i].shape.back() % lanes == 0;
  if (axis == rank - 1 && !aligned) {
    // Through the transpose: each piece's rows go to their range of a copy
    // with the rows outermost (contiguous per piece), then back.
    const int64_t c = y.shape.back(), p = numel(y.shape) / c;
    TensorRef rowsOuter = scratch(y.dtype, {c, p}, 1);
    int64_t off = 0;
    for (const TensorRef &x : xs) {
      const int64_t w = x.shape.back();
      const TensorRef t = scratch(y.dtype, {w, p});
      beginKernel();
      codegen::emitTranspose(pb_, viewOf(x, {p, w}), t, options());
      TensorRef dst = rowsOuter;
      dst.shape = {w, p};
      dst.address = rowsOuter.address +
                    static_cast<uint64_t>(off * rowsOuter.dimStride(0));
      off += w;
      beginKernel();
      codegen::emitRelayout(pb_, t, dst, options());
    }
    const TensorRef t = scratch(y.dtype, {c, p});
    beginKernel();
    codegen::emitRelayout(pb_, rowsOuter, t, options());
    beginKernel();
    codegen::emitTranspose(pb_, t, viewOf(y, {p, c}), options());
    return true;
  }
  if (axis == rank - 1) {
    int64_t offset = 0;
    for (const TensorRef &x : xs) {
      TensorRef dst = y;
      dst.shape = x.shape;
      dst.address = y.address + static_cast<uint64_t>(offset / lanes *
                                                      y.blockStride());
      offset += x.shape.back();
      beginKernel();
      codegen::emitRelayout(pb_, x, dst, options());
    }
    return true;
  }
  // Pieces go into a copy with the concat dim outermost, where each piece
  // is contiguous, then into y.
  std::vector<int> order = {static_cast<int>(axis)};
  for (int d = 0; d < rank - 1; ++d)
    if (d != axis)
      order.push_back(d);
  TensorRef whole = scratch(y.dtype, y.shape, 1);
  whole.dimOrder = order;
  const int64_t perIndex = whole.dimStride(static_cast<int>(axis));
  int64_t offset = 0;
  for (const TensorRef &x : xs) {
    TensorRef dst = whole;
    dst.shape = x.shape;
    dst.address = whole.address + static_cast<uint64_t>(offset * perIndex);
    offset += x.shape[static_cast<size_t>(axis)];
    beginKernel();
    codegen::emitRelayout(pb_, x, dst, options());
  }
  beginKernel();
  codegen::emitRelayout(pb_, whole, y, options());
  return true;
}


bool Emitter::emitRelayoutOp(const Op &op) {
  const Value *xv = op.operand(0), *yv = op.result();
  const TensorRef y = result(yv);
  const TensorRef x = ref(xv);
  const std::vector<int64_t> xo = refOrder(*xv), yo = refOrder(*yv);
  std::vector<int> p;
  for (int64_t d : yo)
    p.push_back(static_cast<int>(std::find(xo.begin(), xo.end(), d) -
                                 xo.begin()));
  if (isIdentity(p)) {
    beginKernel();
    if (x.dtype != y.dtype)
      return rowDone(codegen::emitConvert(pb_, x, y, options()));
    codegen::emitRelayout(pb_, x, y, options());
    return true;
  }
  permute(asDType(x, y.dtype), p, y);
  return true;
}

} // namespace spyre::compiler::emit_detail
