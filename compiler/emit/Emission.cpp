// Emission (what each op becomes: Emission.h; the emitter: Emitter.h):
// storage, the helper kernels, the walk over the ops, host ops, outputs.
#include "compiler/emit/Emission.h"

#include "compiler/emit/Emitter.h"

namespace spyre::compiler {

namespace emit_detail {

void Emitter::reserve(const std::string &name, isa::DType dtype,
                      const std::vector<int64_t> &shape) {
  if (shape.size() > kMaxTensorDims)
    throw TooManyDims{name, shape.size()};
  TensorRef t;
  t.dtype = dtype;
  t.shape = shape.empty() ? std::vector<int64_t>{1} : shape;
  const uint64_t end = pb_.nextAddress() + t.sizeSticks();
  if (end * isa::kStickBytes > static_cast<uint64_t>(cfg_.memory.sizeBytes))
    throw DeviceMemoryFull{name, end};
}

TensorRef Emitter::declare(const Value *v, isa::TensorKind kind) {
  auto it = refs_.find(v);
  if (it != refs_.end())
    return it->second;
  const isa::DType dtype = requireLayout(*v).dtype;
  auto placed = placement_.addresses.find(v->name());
  if (placed != placement_.addresses.end()) {
    if (refShapeOf(*v) != v->type().shape)
      throw PlacementLayout{v->name()};
    const isa::TensorDecl &d = pb_.addTensorAt(v->name(), kind, dtype,
                                               v->type().shape, placed->second);
    TensorRef r = TensorRef::of(d);
    refs_[v] = r;
    return r;
  }
  reserve(v->name(), dtype, refShapeOf(*v));
  const isa::TensorDecl &d =
      pb_.addTensor(v->name(), kind, dtype, refShapeOf(*v));
  TensorRef r = TensorRef::of(d);
  refs_[v] = r;
  return r;
}

TensorRef Emitter::declareConstant(const Value *v) {
  const std::vector<int64_t> shape = refShapeOf(*v);
  if (!constantData_) {
    reserve(v->name(), requireLayout(*v).dtype, shape);
    const isa::TensorDecl &d = pb_.addConstWithoutData(
        v->name(), requireLayout(*v).dtype, shape);
    TensorRef r = TensorRef::of(d);
    refs_[v] = r;
    return r;
  }
  // The data in the order of the constant's layout (its stick dim last).
  const std::vector<double> host = v->constantData().toDoubles();
  std::vector<float> values(host.size());
  const std::vector<int64_t> order = refOrder(*v);
  if (order.empty()) {
    values.assign(host.begin(), host.end());
  } else {
    const std::vector<int64_t> hostStrides = rowMajorStrides(v->type().shape);
    std::vector<int64_t> idx(shape.size(), 0);
    for (size_t n = 0; n < values.size(); ++n) {
      int64_t at = 0;
      for (size_t k = 0; k < shape.size(); ++k)
        at += idx[k] * hostStrides[static_cast<size_t>(order[k])];
      values[n] = static_cast<float>(host[static_cast<size_t>(at)]);
      for (size_t k = shape.size(); k-- > 0;) {
        if (++idx[k] < shape[k])
          break;
        idx[k] = 0;
      }
    }
  }
  reserve(v->name(), requireLayout(*v).dtype, shape);
  const isa::TensorDecl &d = pb_.addConst(
      v->name(), requireLayout(*v).dtype, shape, values);
  TensorRef r = TensorRef::of(d);
  refs_[v] = r;
  return r;
}

const TensorRef &Emitter::ref(const Value *v) {
  auto it = refs_.find(v);
  if (it == refs_.end()) {
    if (v->isConstant())
      declareConstant(v);
    else if (v->isInput())
      declare(v, isa::TensorKind::Input);
    it = refs_.find(v);
  }
  SPYRE_ASSERT(it != refs_.end(), "value '" + v->name() +
                                      "' is used before it is computed");
  return it->second;
}

TensorRef Emitter::scratch(isa::DType dtype, std::vector<int64_t> shape,
                           int blockPos) {
  reserve(op_->name() + ".tmp", dtype, shape);
  const isa::TensorDecl &d =
      pb_.addTensor(op_->name() + ".tmp" + std::to_string(scratchCount_++),
                    isa::TensorKind::Scratch, dtype, std::move(shape));
  TensorRef r = TensorRef::of(d);
  r.blockPos = blockPos;
  return r;
}

KernelOptions Emitter::options() const {
  KernelOptions o;
  o.cores = static_cast<int>(m_.cores);
  o.firstCore = static_cast<int>(m_.firstCore);
  o.op = op_->name();
  o.lxBase = m_.lx[0];
  o.lxSticks = m_.lx[1];
  o.tileRows = std::max<int64_t>(0, m_.tileRows);
  o.overlap = m_.overlap.value_or(true);
  return o;
}

void Emitter::beginKernel() {
  // Phases are separated by a barrier; so are the kernels of one op, each
  // of which may read what the one before wrote, and kernels of one phase
  // on a common core (a kernel needs up to most of a core's sync counters,
  // which come back only at a barrier).
  bool barrier = opKernels_ > 0 || (emittedAny_ && m_.phase != phase_);
  for (int64_t c = m_.firstCore; c < m_.firstCore + m_.cores && !barrier; ++c)
    barrier = pb_.countersUsed(static_cast<int>(c));
  if (barrier)
    pb_.barrierAll();
  phase_ = m_.phase;
  emittedAny_ = true;
  ++opKernels_;
}

bool Emitter::fail(const std::string &message) {
  diags_.error(op_->loc(), "op '" + op_->name() + "' (" +
                               std::string(op_->kindName()) +
                               "): " + message);
  return false;
}

bool Emitter::rowDone(const codegen::RowPlan &plan) {
  if (!plan.error.empty())
    return fail(plan.error);
  if (m_.tileRows < 0)
    m_.tileRows = plan.tileRows;
  return true;
}

TensorRef Emitter::asDType(const TensorRef &x, isa::DType dtype) {
  if (x.dtype == dtype)
    return x;
  TensorRef t = scratch(dtype, x.shape);
  beginKernel();
  codegen::emitConvert(pb_, x, t, options());
  return t;
}

void Emitter::relayoutPerm(const TensorRef &x, const std::vector<int> &p,
                           const TensorRef &y) {
  // x's memory described in y's dims: x's leading dim i is y's dim pinv[i]
  // (x in any order of its leading dims and block position: a view).
  SPYRE_ASSERT(x.padded.empty() && x.broadcast.empty() && !x.window &&
                   p.back() == x.rank() - 1,
               "relayoutPerm: the last dim must stay");
  std::vector<int> pinv(p.size());
  for (size_t k = 0; k < p.size(); ++k)
    pinv[static_cast<size_t>(p[k])] = static_cast<int>(k);
  std::vector<int> order = x.dimOrder;
  if (order.empty())
    for (int i = 0; i + 1 < x.rank(); ++i)
      order.push_back(i);
  TensorRef xv = x;
  xv.shape = y.shape;
  xv.dimOrder.clear();
  for (int d : order)
    xv.dimOrder.push_back(pinv[static_cast<size_t>(d)]);
  beginKernel();
  codegen::emitRelayout(pb_, xv, y, options());
}

void Emitter::permute(const TensorRef &x, const std::vector<int> &p,
                      const TensorRef &y) {
  const int n = x.rank();
  if (p.size() < 2) { // a scalar (its reference shape is [1]) or a vector
    beginKernel();
    codegen::emitRelayout(pb_, x, y, options());
    return;
  }
  if (p[static_cast<size_t>(n - 1)] == n - 1) {
    relayoutPerm(x, p, y);
    return;
  }
  // The dim that becomes last goes next to the last (a relayout), the last
  // two swap (a transpose), and the leading dims take y's order (a
  // relayout). Steps that would not move anything are left out.
  const int j = p.back();
  std::vector<int> q;
  for (int d = 0; d < n - 1; ++d)
    if (d != j)
      q.push_back(d);
  q.push_back(j);
  q.push_back(n - 1);
  TensorRef u = x;
  if (!isIdentity(q)) {
    u = scratch(x.dtype, permuted(x.shape, q));
    relayoutPerm(x, q, u);
  }
  std::vector<int> vdims = q;
  std::swap(vdims[static_cast<size_t>(n - 1)], vdims[static_cast<size_t>(n - 2)]);
  std::vector<int> r;
  for (int d : p)
    r.push_back(static_cast<int>(
        std::find(vdims.begin(), vdims.end(), d) - vdims.begin()));
  std::vector<int64_t> vShape = u.shape;
  std::swap(vShape[static_cast<size_t>(n - 1)], vShape[static_cast<size_t>(n - 2)]);
  const TensorRef v = isIdentity(r) ? y : scratch(x.dtype, vShape);
  beginKernel();
  codegen::emitTranspose(pb_, u, v, options());
  if (!isIdentity(r))
    relayoutPerm(v, r, y);
}

// Elements move between lanes only through transposes: the last dim
// becomes a row dim, rows regroup freely (whole sticks), and a transpose
// brings the lanes back.

/// y = x broadcast to y's shape (NumPy rules). Leading dims repeat by
/// reading them with stride zero in one relayout; a last dim of one is
/// made a row first (transpose), repeated as rows, and transposed back.
void Emitter::broadcastTo(const TensorRef &x, const TensorRef &y) {
  const size_t n = y.shape.size();
  std::vector<int64_t> xs(n - std::min(n, x.shape.size()), 1);
  xs.insert(xs.end(), x.shape.begin(), x.shape.end());
  TensorRef src = viewOf(x, xs);
  if (xs.back() == 1 && y.shape.back() > 1) {
    const int64_t p = numel(xs), c = y.shape.back();
    const TensorRef row = scratch(x.dtype, {1, p});
    beginKernel();
    codegen::emitTranspose(pb_, viewOf(x, {p, 1}), row, options());
    TensorRef rows = row;
    rows.shape = {c, p};
    rows.broadcast = {0};
    const TensorRef cols = scratch(x.dtype, {c, p});
    beginKernel();
    codegen::emitRelayout(pb_, rows, cols, options());
    std::vector<int64_t> wide = xs;
    wide.back() = c;
    const TensorRef t = scratch(x.dtype, wide);
    beginKernel();
    codegen::emitTranspose(pb_, cols, viewOf(t, {p, c}), options());
    src = t;
    xs = wide;
  }
  TensorRef view = src;
  view.shape = y.shape;
  for (size_t d = 0; d + 1 < n; ++d)
    if (xs[d] == 1 && y.shape[d] > 1)
      view.broadcast.push_back(static_cast<int>(d));
  beginKernel();
  codegen::emitRelayout(pb_, view, y, options());
}

/// y [P.., C/d, d] = x [P.., C] (row-major reshape of the last dim).
void Emitter::splitLast(const TensorRef &x, int64_t d, const TensorRef &y) {
  const int64_t c = x.shape.back(), p = numel(x.shape) / c, h = c / d;
  const TensorRef t = scratch(x.dtype, {c, p});
  beginKernel();
  codegen::emitTranspose(pb_, viewOf(x, {p, c}), t, options());
  // t is [H, D, P]; y is [P, H, D].
  permute(viewOf(t, {h, d, p}), {2, 0, 1}, viewOf(y, {p, h, d}));
}

/// y [P.., H*D] = x [P.., H, D].
void Emitter::mergeLast(const TensorRef &x, const TensorRef &y) {
  const int64_t d = x.shape.back(), h = x.shape[x.shape.size() - 2];
  const int64_t p = numel(x.shape) / (h * d);
  const TensorRef t = scratch(x.dtype, {h, d, p});
  permute(viewOf(x, {p, h, d}), {1, 2, 0}, t);
  beginKernel();
  codegen::emitTranspose(pb_, viewOf(t, {h * d, p}), viewOf(y, {p, h * d}),
                         options());
}

bool Emitter::emitHost(const Op &op) {
  // A host op moves whole tensors over PCIe, in the default layout; an
  // operand that is a view in another layout is copied into one first. A
  // chip-wide barrier comes before it (everything that wrote its inputs is
  // done) and the next op's phase starts after another (the schedule pass
  // gives a host op a phase of its own).
  auto barrier = [&] {
    if (emittedAny_)
      pb_.barrierAll();
    emittedAny_ = true;
  };
  PendingHostOp h;
  std::vector<host::HostShape> shapes;
  for (const Value *v : op.operands()) {
    shapes.push_back(v->type().shape);
    const TensorRef src = ref(v);
    const isa::TensorDecl *d = pb_.findTensor(src.name);
    if (src.isDefault() && d && d->address == src.address &&
        d->hostShape == src.shape && d->dtype == src.dtype) {
      h.inputs.push_back(d->name);
      continue;
    }
    barrier();
    const TensorRef copy = scratch(src.dtype, src.shape);
    KernelOptions o;
    o.op = op.name();
    codegen::emitRelayout(pb_, src, copy, o);
    h.inputs.push_back(copy.name);
  }
  for (const Value *r : op.results())
    h.outputs.push_back(result(r).name);
  barrier();
  std::string why;
  std::optional<nlohmann::json> attrs =
      host::parseHostAttrs(op.stringAttr("attrs"), why);
  SPYRE_ASSERT(attrs, "verified host op '" + op.name() + "' has bad attrs");
  // A program file holds no control character (isa::hasControlChar).
  auto printable = [](const std::string &text) {
    return isa::hasControlChar(text) ? isa::printableName(text) : text;
  };
  h.decl.name = printable(op.name());
  h.decl.opType = printable(op.stringAttr("op"));
  h.decl.attrs = host::hostAttrsText(*attrs);
  h.decl.flops = host::hostOpFlops({h.decl.opType, *attrs}, shapes);
  pb_.setOp(op.name());
  pb_.stream(0, isa::Engine::DmaLoad)
      .append(codegen::instr<isa::Opcode::Host>()
                  .op(static_cast<int64_t>(hostOps_.size()))
                  .build());
  hostOps_.push_back(std::move(h));
  phase_ = m_.phase;
  return true;
}

bool Emitter::emitOp(Op &op) {
  op_ = &op;
  m_ = opMapping(op);
  opKernels_ = 0;
  scratchCount_ = 0;
  if (!m_.fusedInto.empty())
    return true; // the matmul or the chain's first op did it
  if (isFreeView(g_, op))
    return emitFreeView(op);
  if (op.kind() == OpKind::Host) {
    SPYRE_ASSERT(m_.phase >= 0, "host op '" + op.name() + "' has no phase");
    return emitHost(op);
  }
  SPYRE_ASSERT(m_.cores >= 1 && m_.firstCore >= 0 && m_.lx.size() == 2 &&
                   m_.phase >= 0,
               "op '" + op.name() + "' has no complete mapping");
  bool ok = true;
  if (!m_.chain.empty()) {
    ok = emitChainOp(op);
    if (ok)
      setOpMapping(op, m_);
    return ok;
  }
  switch (op.kind()) {
  case OpKind::Matmul:
  case OpKind::GatedMatmul:
    ok = emitMatmul(op);
    break;
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
    ok = emitBinary(op);
    break;
  case OpKind::Relu:
  case OpKind::Silu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Exp:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Pow:
  case OpKind::Reciprocal:
  case OpKind::Gelu:
    ok = emitUnaryOp(op);
    break;
  case OpKind::Softmax:
    ok = emitSoftmax(op);
    break;
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    ok = emitNorm(op);
    break;
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
    ok = emitReduce(op);
    break;
  case OpKind::Transpose: {
    std::vector<int> p;
    for (int64_t d : op.intsAttr("perm"))
      p.push_back(static_cast<int>(d));
    const TensorRef y = result(op.result());
    permute(asDType(ref(op.operand(0)), y.dtype), p, y);
    break;
  }
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
    ok = emitReshape(op);
    break;
  case OpKind::Split:
    ok = emitSplit(op);
    break;
  case OpKind::Concat:
    ok = emitConcat(op);
    break;
  case OpKind::CausalMaskAdd:
    ok = emitCausalMask(op);
    break;
  case OpKind::CausalSoftmax:
    ok = emitCausalSoftmax(op);
    break;
  case OpKind::Attention:
    ok = emitAttention(op);
    break;
  case OpKind::Rotary:
    ok = emitRotary(op);
    break;
  case OpKind::Embedding:
    ok = emitEmbedding(op);
    break;
  case OpKind::Argmax:
    ok = emitArgmax(op);
    break;
  case OpKind::Relayout:
    ok = emitRelayoutOp(op);
    break;
  default:
    return fail("no device kernel for this op");
  }
  if (ok)
    setOpMapping(op, m_);
  return ok;
}

bool Emitter::emitOutputs() {
  // Outputs that are views, inputs or constants are copied into output
  // tensors of their own once everything else is done.
  bool barrier = emittedAny_;
  std::vector<const Value *> done;
  for (const Value *v : g_.outputs()) {
    if (std::find(done.begin(), done.end(), v) != done.end())
      continue;
    done.push_back(v);
    const TensorRef src = ref(v);
    const isa::TensorDecl *d = pb_.findTensor(v->name());
    if (d && d->kind == isa::TensorKind::Output && d->address == src.address)
      continue;
    // Each copy uses all cores and all of LX: one at a time.
    if (barrier)
      pb_.barrierAll();
    barrier = true;
    const std::string name = d ? v->name() + ".out" : v->name();
    auto placed = placement_.addresses.find(v->name());
    SPYRE_ASSERT(placed == placement_.addresses.end() || !d,
                 "placed output '" + v->name() + "' is also an input");
    if (placed != placement_.addresses.end() &&
        refShapeOf(*v) != v->type().shape)
      throw PlacementLayout{v->name()};
    if (placed == placement_.addresses.end())
      reserve(name, src.dtype, refShapeOf(*v));
    const isa::TensorDecl &out =
        placed != placement_.addresses.end()
            ? pb_.addTensorAt(name, isa::TensorKind::Output, src.dtype,
                              v->type().shape, placed->second)
            : pb_.addTensor(name, isa::TensorKind::Output, src.dtype,
                            refShapeOf(*v));
    KernelOptions o;
    o.op = "output " + v->name();
    codegen::emitRelayout(pb_, src, TensorRef::of(out), o);
  }
  return true;
}

std::optional<isa::Program> Emitter::run() {
  try {
    for (Op *op : g_.ops())
      if (!emitOp(*op))
        return std::nullopt;
    emitOutputs();
  } catch (const DeviceMemoryFull &full) {
    diags_.error(graphLoc(g_),
                 "the model does not fit device memory: with tensor '" +
                     full.tensor + "' it needs " +
                     std::to_string(full.neededSticks * isa::kStickBytes) +
                     " bytes, the card has " +
                     std::to_string(cfg_.memory.sizeBytes));
    return std::nullopt;
  } catch (const TooManyDims &many) {
    diags_.error(op_ ? op_->loc() : graphLoc(g_),
                 (op_ ? "op '" + op_->name() + "': " : std::string()) +
                     "tensor '" + many.tensor + "' has " +
                     std::to_string(many.dims) +
                     " dims; a device tensor has at most " +
                     std::to_string(kMaxTensorDims));
    return std::nullopt;
  } catch (const PlacementLayout &placed) {
    diags_.error(graphLoc(g_), "value '" + placed.value +
                                   "' has a fixed device address, so it must "
                                   "keep the default layout of its shape");
    return std::nullopt;
  } catch (const codegen::SyncCountersExhausted &none) {
    SourceLoc loc = graphLoc(g_);
    std::string where = op_ ? "op '" + op_->name() + "' needs" : "the plan needs";
    if (op_)
      loc = op_->loc();
    diags_.error(loc, where + " more sync counters on core " +
                          std::to_string(none.core) +
                          " than limits.sync_counters_per_core (" +
                          std::to_string(none.counters) +
                          ") gives between two barriers");
    return std::nullopt;
  }
  isa::Program program = pb_.finish();
  auto indexOf = [&](const std::string &name) {
    for (size_t i = 0; i < program.tensors.size(); ++i)
      if (program.tensors[i].name == name)
        return static_cast<uint32_t>(i);
    SPYRE_UNREACHABLE("host op tensor '" + name + "' was not declared");
  };
  for (PendingHostOp &h : hostOps_) {
    for (const std::string &n : h.inputs)
      h.decl.inputs.push_back(indexOf(n));
    for (const std::string &n : h.outputs)
      h.decl.outputs.push_back(indexOf(n));
    program.hostOps.push_back(std::move(h.decl));
  }
  return program;
}

} // namespace emit_detail

std::optional<isa::Program> emitProgram(Graph &graph,
                                        const hw::HwConfig &config,
                                        DiagnosticEngine &diags,
                                        const Placement &placement,
                                        bool constantData) {
  emit_detail::Emitter e(graph, config, diags, placement, constantData);
  return e.run();
}

} // namespace spyre::compiler
