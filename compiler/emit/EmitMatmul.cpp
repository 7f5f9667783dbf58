// Emission of matmuls and attention (Emission.h, Emitter.h).
#include "compiler/emit/Emitter.h"

namespace spyre::compiler::emit_detail {

bool Emitter::emitMatmul(const Op &op) {
  const TensorRef a = ref(op.operand(0)), b = ref(op.operand(1));
  const Value *out = op.result();
  std::optional<TensorRef> bias;
  if (!m_.fuseBias.empty()) {
    const Op *add = g_.findOp(m_.fuseBias);
    SPYRE_ASSERT(add, "fused add '" + m_.fuseBias + "' is gone");
    const Value *bv =
        add->operand(0) == op.result() ? add->operand(1) : add->operand(0);
    out = add->result();
    bias = ref(bv);
    bias->shape = {numel(bias->shape)};
  }
  const TensorRef c = result(out);
  if (a.dtype != isa::DType::Dl16 || b.dtype != isa::DType::Dl16)
    return fail("matmul operands must be DL16 on the device");
  const int ra = a.rank(), rb = b.rank(), rc = c.rank();
  const bool turned = readsBTurned(op);
  const int64_t m = a.shape[static_cast<size_t>(ra - 2)], k = a.shape.back(),
                n = turned ? b.shape[static_cast<size_t>(rb - 2)]
                           : b.shape.back();
  const int64_t batchA = product(a.shape, 0, static_cast<size_t>(ra - 2));
  const int64_t batchB = product(b.shape, 0, static_cast<size_t>(rb - 2));
  const int64_t batchC = product(c.shape, 0, static_cast<size_t>(rc - 2));
  std::optional<TensorRef> up;
  if (op.kind() == OpKind::GatedMatmul) {
    up = ref(op.operand(2));
    if (up->dtype != isa::DType::Dl16 || c.dtype != isa::DType::Dl16)
      return fail("gated_matmul runs on DL16 operands and result only");
    if (batchB != 1)
      return fail("gated_matmul runs with weights without batch dims only");
    up->shape = {k, n};
  }
  KernelOptions o = options();
  auto plan = [&](const codegen::MatmulArgs &args, const KernelOptions &ko) {
    if (m_.grid.size() == 2 && m_.tile.size() == 3) {
      codegen::MatmulTiling t;
      t.gridM = static_cast<int>(m_.grid[0]);
      t.gridN = static_cast<int>(m_.grid[1]);
      t.gridK = m_.kSplit < 0 ? 1 : static_cast<int>(m_.kSplit);
      t.tileM = m_.tile[0];
      t.tileK = m_.tile[1];
      t.tileN = m_.tile[2];
      t.nOuter = m_.nOuter.value_or(true);
      t.shareA = m_.shareA.value_or(false);
      t.keepB = m_.keepB.value_or(false);
      return codegen::planMatmulWith(cfg_, args, ko, t);
    }
    codegen::MatmulSearch search{m_.shareA, m_.keepB, std::nullopt};
    if (m_.kSplit >= 0)
      search.kSplit = static_cast<int>(m_.kSplit);
    return codegen::planMatmul(cfg_, args, ko, 0, 0, search);
  };
  auto record = [&](const codegen::MatmulPlan &p) {
    if (m_.grid.empty())
      m_.grid = {p.gridM, p.gridN};
    if (m_.tile.empty())
      m_.tile = {p.tileM, p.tileK, p.tileN};
    if (!m_.nOuter)
      m_.nOuter = p.nOuter;
    if (!m_.shareA)
      m_.shareA = p.shareA;
    if (!m_.keepB)
      m_.keepB = p.keepB;
    if (m_.kSplit < 0)
      m_.kSplit = p.gridK;
  };
  if (batchB == 1) {
    codegen::MatmulArgs args;
    args.a = a;
    args.a.shape = {batchA * m, k};
    args.b = b;
    args.b.shape =
        turned ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
    args.transB = turned;
    args.c = c;
    args.c.shape = {batchC * m, n};
    args.bias = bias;
    args.up = up;
    codegen::MatmulPlan p = plan(args, o);
    beginKernel();
    codegen::emitMatmul(pb_, args, o, &p);
    record(p);
    return true;
  }
  if (bias)
    return fail("a bias can only be fused into a matmul without batched B");
  if ((batchA != 1 && batchA != batchC) || batchB != batchC)
    return fail("batch dims of " + shapeStr(a.shape) + " and " +
                shapeStr(b.shape) +
                " broadcast in a way the device kernels do not run (each "
                "operand's batch dims must equal the result's, or A have "
                "none)");
  // Each batch's product on its own group of cores, on the batch's
  // matrices in place (TensorRef::matrix; in the default layout, the one
  // emission gives every tensor, a matrix's blocks lie B*R sticks apart
  // with the other batches' rows between them). A layout whose matrices
  // are not strided views (e.g. batch dims ordered inside the rows, so
  // consecutive rows are not consecutive sticks) goes through a
  // batch-outermost copy; a result in such a layout is computed in one and
  // copied back.
  auto sliceable = [](const TensorRef &t) {
    return t.matrix(0).has_value();
  };
  auto inPlace = [&](const TensorRef &t) {
    if (sliceable(t))
      return t;
    TensorRef s = scratch(t.dtype, t.shape, t.rank() - 2);
    beginKernel();
    codegen::emitRelayout(pb_, t, s, options());
    return s;
  };
  const TensorRef a2 = inPlace(a);
  const TensorRef b2 = inPlace(b);
  const TensorRef c2 =
      sliceable(c) ? c : scratch(c.dtype, c.shape, c.rank() - 2);
  const int64_t groups = std::min<int64_t>(batchC, m_.cores);
  const int64_t perGroup = m_.cores / groups;
  for (int64_t i = 0; i < batchC; ++i) {
    const int64_t g = i % groups;
    if (g == 0)
      beginKernel();
    codegen::MatmulArgs args;
    args.a = *a2.matrix(batchA > 1 ? i : 0);
    args.b = *b2.matrix(i);
    args.c = *c2.matrix(i);
    args.transB = turned;
    KernelOptions ko = o;
    ko.firstCore = static_cast<int>(m_.firstCore + g * perGroup);
    ko.cores = static_cast<int>(perGroup);
    codegen::MatmulPlan p = plan(args, ko);
    codegen::emitMatmul(pb_, args, ko, &p);
    record(p);
  }
  if (c2.address != c.address) {
    beginKernel();
    codegen::emitRelayout(pb_, c2, c, options());
  }
  return true;
}

bool Emitter::emitAttention(const Op &op) {
  codegen::AttentionArgs args;
  args.q = ref(op.operand(0));
  args.k = ref(op.operand(1));
  args.v = ref(op.operand(2));
  if (op.numOperands() == 5) {
    args.kMore = ref(op.operand(3));
    args.vMore = ref(op.operand(4));
  }
  // Where the heads are merged back to [B, S, H x D] by views, the kernel
  // writes the merged tensor.
  const std::vector<OpUse> uses = g_.usesOf(op.result());
  const Op *merge = nullptr;
  if (uses.size() == 1 && isAttentionHeadView(g_, *uses.front().op))
    merge = g_.usesOf(uses.front().op->result()).front().op;
  if (merge) {
    const TensorRef flat = result(merge->result());
    args.y = headsView(op.result()->name(), flat, op.result()->type().shape,
                       true);
    refs_[op.result()] = args.y;
  } else {
    args.y = result(op.result());
  }
  for (const TensorRef *t : {&args.q, &args.k, &args.v, &args.y})
    if (t->dtype != isa::DType::Dl16)
      return fail("attention runs on DL16 operands only");
  if (args.kMore && (args.kMore->dtype != isa::DType::Dl16 ||
                     args.vMore->dtype != isa::DType::Dl16))
    return fail("attention runs on DL16 operands only");
  args.scale = static_cast<float>(op.floatAttr("scale"));
  args.causal = op.boolAttr("causal");
  beginKernel();
  const codegen::AttentionPlan plan =
      codegen::emitAttention(pb_, args, options());
  if (!plan.error.empty())
    return fail(plan.error);
  return true;
}

} // namespace spyre::compiler::emit_detail
