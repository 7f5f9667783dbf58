// Emission (what each op becomes: Emit.h).
#include "compiler/passes/Emit.h"

#include "compiler/codegen/Kernels.h"
#include "compiler/passes/DeviceLayout.h"
#include "compiler/passes/Mapping.h"
#include "compiler/passes/Planning.h"
#include "host/HostOp.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

namespace spyre::compiler {

using codegen::KernelOptions;
using codegen::TensorRef;

namespace {

int64_t product(const std::vector<int64_t> &s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= s[i];
  return p;
}

int64_t numel(const std::vector<int64_t> &s) {
  return product(s, 0, s.size());
}

/// Host dims in the order a kernel sees them: the stick dim last.
std::vector<int64_t> refOrder(const Value &v) {
  const int64_t rank = v.type().rank();
  if (rank == 0)
    return {};
  const int64_t stick = requireLayout(v).stickDim;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < rank; ++i)
    if (i != stick)
      order.push_back(i);
  order.push_back(stick);
  return order;
}

std::vector<int64_t> refShapeOf(const Value &v) {
  const Shape &s = v.type().shape;
  if (s.empty())
    return {1};
  std::vector<int64_t> r;
  for (int64_t d : refOrder(v))
    r.push_back(s[static_cast<size_t>(d)]);
  return r;
}

bool stickLast(const Value &v) {
  return v.type().rank() == 0 || requireLayout(v).stickDim == v.type().rank() - 1;
}

bool isIdentity(const std::vector<int> &p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int>(i))
      return false;
  return true;
}

std::vector<int64_t> permuted(const std::vector<int64_t> &s,
                              const std::vector<int> &p) {
  std::vector<int64_t> r;
  for (int d : p)
    r.push_back(s[static_cast<size_t>(d)]);
  return r;
}

/// `x` read as a tensor of `shape` when the bytes are the same: a default
/// layout keeps its bytes under any reshape of the leading dims (the last
/// dim, and so the sticks, unchanged), and a single element is one stick.
std::optional<TensorRef> viewAs(const TensorRef &x,
                                const std::vector<int64_t> &shape) {
  if (!x.isDefault() || numel(x.shape) != numel(shape) || shape.empty())
    return std::nullopt;
  if (shape.back() != x.shape.back() && numel(shape) != 1)
    return std::nullopt;
  TensorRef v = x;
  v.shape = shape;
  return v;
}

/// viewAs where the caller knows the bytes are the same.
TensorRef viewOf(const TensorRef &x, const std::vector<int64_t> &shape) {
  std::optional<TensorRef> v = viewAs(x, shape);
  SPYRE_ASSERT(v, "'" + x.name + "' " + shapeStr(x.shape) +
                      " is not a view of " + shapeStr(shape));
  return *v;
}

/// Whether transpose `t` swaps the two dims just above the last and keeps
/// the others: [.., S, H, L] <-> [.., H, S, L].
bool swapsAboveLast(const Op &t) {
  if (t.kind() != OpKind::Transpose)
    return false;
  const std::vector<int64_t> p = t.intsAttr("perm");
  const size_t n = p.size();
  if (n < 3)
    return false;
  for (size_t d = 0; d < n; ++d) {
    const size_t want = d == n - 3 ? n - 2 : d == n - 2 ? n - 3 : d;
    if (p[d] != static_cast<int64_t>(want))
      return false;
  }
  return true;
}

/// Whether `flat` [S, H x L] and `heads` [S, H, L] are the two sides of a
/// split into heads of exactly one stick (L the lanes of a stick), with
/// no dim of more than one index above S.
bool stickHeads(const Shape &flat, const Shape &heads, int64_t lanes) {
  return flat.size() >= 2 && heads.size() == flat.size() + 1 &&
         heads.back() == lanes &&
         heads[heads.size() - 2] * lanes == flat.back() &&
         std::equal(flat.begin(), flat.end() - 1, heads.begin()) &&
         product(flat, 0, flat.size() - 2) == 1;
}

/// Whether reshape `r` splits its last dim into heads of one stick
/// (`back`: merges them again).
bool splitsStickHeads(const Op &r, int stickBytes, bool back = false) {
  if (r.kind() != OpKind::Reshape)
    return false;
  const Shape &xs = r.operand(0)->type().shape, &ys = r.result()->type().shape;
  const int64_t lanes =
      elementsPerStick(requireLayout(*r.operand(0)).dtype, stickBytes);
  return back ? stickHeads(ys, xs, lanes) : stickHeads(xs, ys, lanes);
}

bool splitsStickHeadsBack(const Op &r, int stickBytes) {
  return splitsStickHeads(r, stickBytes, true);
}

bool onlyUsedBy(const Graph &graph, const Value *v,
                const std::function<bool(const Op &)> &ok) {
  if (graph.isOutput(v))
    return false;
  const std::vector<OpUse> uses = graph.usesOf(v);
  return !uses.empty() &&
         std::all_of(uses.begin(), uses.end(),
                     [&](const OpUse &u) { return ok(*u.op); });
}

/// A head split [S, H x L] -> [S, H, L] -> [H, S, L] (a reshape, then a
/// transpose) or the merge back (the transpose, then the reshape), with
/// heads of one stick: stick h of row s is the stick of (h, s) in both
/// default layouts, since the stick blocks of the last dim are outermost.
/// The pair moves nothing; `op` is either of them, and the value between
/// them is used by nothing else.
bool isHeadSwap(const Graph &graph, const Op &op, int stickBytes) {
  auto mergeReshape = [&](const Op &r) {
    return splitsStickHeadsBack(r, stickBytes) &&
           r.operand(0)->isOpResult() &&
           swapsAboveLast(*r.operand(0)->definingOp());
  };
  switch (op.kind()) {
  case OpKind::Reshape: {
    if (splitsStickHeads(op, stickBytes))
      return onlyUsedBy(graph, op.result(), swapsAboveLast);
    if (!mergeReshape(op))
      return false;
    return onlyUsedBy(graph, op.operand(0),
                      [&](const Op &u) { return &u == &op; });
  }
  case OpKind::Transpose: {
    if (!swapsAboveLast(op))
      return false;
    const Value *x = op.operand(0);
    if (x->isOpResult() && splitsStickHeads(*x->definingOp(), stickBytes) &&
        onlyUsedBy(graph, x, swapsAboveLast))
      return true;
    return onlyUsedBy(graph, op.result(), [&](const Op &u) {
      return u.kind() == OpKind::Reshape && u.operand(0) == op.result() &&
             splitsStickHeadsBack(u, stickBytes);
    });
  }
  default:
    return false;
  }
}

} // namespace

bool isFreeView(const Graph &graph, const Op &op, int stickBytes) {
  const Value *x = op.numOperands() > 0 ? op.operand(0) : nullptr;
  if (!x || !stickLast(*x))
    return false;
  const DeviceLayout xl = requireLayout(*x);
  for (const Value *r : op.results())
    if (!stickLast(*r) || requireLayout(*r).dtype != xl.dtype)
      return false;
  const Shape &xs = x->type().shape;
  switch (op.kind()) {
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze: {
    const Shape &ys = op.result(0)->type().shape;
    if (numel(xs) == 1)
      return true;
    if (!xs.empty() && !ys.empty() && xs.back() == ys.back())
      return true;
    return isHeadSwap(graph, op, stickBytes);
  }
  case OpKind::Split: {
    const int64_t rank = x->type().rank();
    const int64_t axis = *normalizeAxis(op.intAttr("axis"), rank);
    const int64_t lanes = elementsPerStick(xl.dtype, stickBytes);
    const std::vector<int64_t> sizes = op.intsAttr("sizes");
    if (axis == rank - 1) {
      for (size_t i = 0; i + 1 < sizes.size(); ++i)
        if (sizes[i] % lanes != 0)
          return false;
      return true;
    }
    return xs.back() <= lanes &&
           product(xs, 0, static_cast<size_t>(axis)) == 1;
  }
  case OpKind::Transpose:
    return isHeadSwap(graph, op, stickBytes);
  default:
    return false;
  }
}

int64_t coresPerBatch(int64_t batches, int64_t cores) {
  return cores / std::min(batches, cores);
}

MatmulWork matmulWork(const Graph &graph, const Op &op,
                      const std::string &fuseBias) {
  auto refOf = [](const Value *v) {
    TensorRef t;
    t.name = v->name();
    t.dtype = requireLayout(*v).dtype;
    t.shape = refShapeOf(*v);
    return t;
  };
  const TensorRef a = refOf(op.operand(0)), b = refOf(op.operand(1));
  const Value *out = op.result();
  MatmulWork w;
  if (!fuseBias.empty()) {
    const Op *add = graph.findOp(fuseBias);
    SPYRE_ASSERT(add, "fused add '" + fuseBias + "' is gone");
    const Value *bv =
        add->operand(0) == op.result() ? add->operand(1) : add->operand(0);
    out = add->result();
    w.args.bias = refOf(bv);
    w.args.bias->shape = {numel(w.args.bias->shape)};
  }
  const TensorRef c = refOf(out);
  const size_t ra = a.shape.size(), rb = b.shape.size();
  const int64_t m = a.shape[ra - 2], k = a.shape.back(), n = b.shape.back();
  const int64_t batchA = product(a.shape, 0, ra - 2);
  const int64_t batchB = product(b.shape, 0, rb - 2);
  w.args.a = a;
  w.args.b = b;
  w.args.c = c;
  w.args.b.shape = {k, n};
  if (batchB == 1) {
    w.args.a.shape = {batchA * m, k};
    w.args.c.shape = {batchA * m, n};
    return w;
  }
  w.batches = batchB;
  w.args.a.shape = {m, k};
  w.args.c.shape = {m, n};
  return w;
}

namespace {

/// Thrown inside the emitter when device memory runs out; run() reports it.
struct DeviceMemoryFull {
  std::string tensor;
  uint64_t neededSticks;
};

/// Thrown inside the emitter when a placed value (Placement) has a layout
/// other than the default one; run() reports it.
struct PlacementLayout {
  std::string value;
};

class Emitter {
public:
  Emitter(Graph &graph, const hw::HwConfig &config, DiagnosticEngine &diags,
          const Placement &placement, bool constantData)
      : g_(graph), cfg_(config), diags_(diags), pb_(config, graph.name()),
        stickBytes_(config.chip.stickBytes), placement_(placement),
        constantData_(constantData) {
    pb_.setAllocator(placement.firstFree);
  }

  std::optional<isa::Program> run();

private:
  // ---- storage ----
  void reserve(const std::string &name, isa::DType dtype,
               const std::vector<int64_t> &shape);
  const TensorRef &ref(const Value *v);
  TensorRef declare(const Value *v, isa::TensorKind kind);
  TensorRef result(const Value *v) {
    return declare(v, g_.isOutput(v) ? isa::TensorKind::Output
                                     : isa::TensorKind::Scratch);
  }
  TensorRef scratch(isa::DType dtype, std::vector<int64_t> shape,
                    int blockPos = 0);
  TensorRef declareConstant(const Value *v);

  // ---- kernels ----
  KernelOptions options() const;
  void beginKernel();
  bool fail(const std::string &message);
  bool rowDone(const codegen::RowPlan &plan);
  TensorRef asDType(const TensorRef &x, isa::DType dtype);
  void relayoutPerm(const TensorRef &x, const std::vector<int> &p,
                    const TensorRef &y);
  void permute(const TensorRef &x, const std::vector<int> &p,
               const TensorRef &y);
  void splitLast(const TensorRef &x, int64_t d, const TensorRef &y);
  void broadcastTo(const TensorRef &x, const TensorRef &y);
  void mergeLast(const TensorRef &x, const TensorRef &y);

  // ---- ops ----
  bool emitOp(Op &op);
  bool emitFreeView(const Op &op);
  bool emitMatmul(const Op &op);
  bool emitBinary(const Op &op);
  bool emitUnaryOp(const Op &op);
  bool emitChainOp(const Op &op);
  bool emitSoftmax(const Op &op);
  bool emitNorm(const Op &op);
  bool emitReduce(const Op &op);
  bool emitReshape(const Op &op);
  bool emitSplit(const Op &op);
  bool emitConcat(const Op &op);
  bool emitCausalMask(const Op &op);
  bool emitCausalSoftmax(const Op &op);
  bool emitRelayoutOp(const Op &op);
  bool emitHost(const Op &op);
  bool emitOutputs();

  Graph &g_;
  const hw::HwConfig &cfg_;
  DiagnosticEngine &diags_;
  codegen::ProgramBuilder pb_;
  int stickBytes_;
  const Placement &placement_;
  /// Whether constant tensors carry their data (emitProgram).
  bool constantData_;
  std::map<const Value *, TensorRef> refs_;
  /// Host ops in emission order, their tensors by name until finish()
  /// fixes the tensor indices.
  struct PendingHostOp {
    isa::HostOpDecl decl;
    std::vector<std::string> inputs, outputs;
  };
  std::vector<PendingHostOp> hostOps_;

  const Op *op_ = nullptr;
  OpMapping m_;
  int opKernels_ = 0;
  bool emittedAny_ = false;
  int64_t phase_ = -1;
  int scratchCount_ = 0;
};

void Emitter::reserve(const std::string &name, isa::DType dtype,
                      const std::vector<int64_t> &shape) {
  TensorRef t;
  t.dtype = dtype;
  t.shape = shape.empty() ? std::vector<int64_t>{1} : shape;
  const uint64_t end = pb_.nextAddress() + t.sizeSticks();
  if (end * static_cast<uint64_t>(stickBytes_) >
      static_cast<uint64_t>(cfg_.memory.sizeBytes))
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
  // x's memory described in y's dims: x's leading dim i is y's dim pinv[i].
  SPYRE_ASSERT(x.isDefault() && p.back() == x.rank() - 1,
               "relayoutPerm: the last dim must stay");
  std::vector<int> pinv(p.size());
  for (size_t k = 0; k < p.size(); ++k)
    pinv[static_cast<size_t>(p[k])] = static_cast<int>(k);
  TensorRef xv = x;
  xv.shape = y.shape;
  xv.dimOrder.assign(pinv.begin(), pinv.end() - 1);
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

// ------------------------------------------------------------------- ops

bool Emitter::emitFreeView(const Op &op) {
  const TensorRef x = ref(op.operand(0));
  if (isHeadSwap(g_, op, stickBytes_)) {
    // The value between the two ops, [.., S, H, L], is x's (or the
    // result's) memory with H outermost; the other end is in the default
    // layout at the same address.
    const bool between = op.kind() == OpKind::Reshape
                             ? splitsStickHeads(op, stickBytes_)
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
  const int64_t m = a.shape[static_cast<size_t>(ra - 2)],
                k = a.shape.back(), n = b.shape.back();
  const int64_t batchA = product(a.shape, 0, static_cast<size_t>(ra - 2));
  const int64_t batchB = product(b.shape, 0, static_cast<size_t>(rb - 2));
  const int64_t batchC = product(c.shape, 0, static_cast<size_t>(rc - 2));
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
    args.b.shape = {k, n};
    args.c = c;
    args.c.shape = {batchC * m, n};
    args.bias = bias;
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

namespace {

/// `t` viewed as one column of a result of shape `y`: [.., R, 1] with y's
/// leading dims [.., R] (t may lack leading dims of one), the bytes of a
/// default layout read as they are. nullopt when t is not such a column.
std::optional<TensorRef> columnOf(const TensorRef &t,
                                  const std::vector<int64_t> &y) {
  if (t.shape.back() != 1 || t.shape.size() > y.size())
    return std::nullopt;
  std::vector<int64_t> col = y;
  col.back() = 1;
  std::vector<int64_t> padded(y.size() - t.shape.size(), 1);
  padded.insert(padded.end(), t.shape.begin(), t.shape.end());
  if (padded != col)
    return std::nullopt;
  return viewAs(t, col);
}

} // namespace

bool Emitter::emitBinary(const Op &op) {
  TensorRef a = ref(op.operand(0)), b = ref(op.operand(1));
  const Value *bv = op.operand(1);
  const TensorRef y = result(op.result());
  const isa::Opcode sfuOp = binaryOpcode(op.kind());
  // One operand of the result's shape and one value per row in the other
  // ([.., R, 1], what reductions with keepdims give, as in softmax and the
  // norms written out as primitive ops): the column kernel broadcasts each
  // row's value in LX, so no [.., R, C] copy of the column is made. A
  // single element stays a scalar (an immediate when constant) except
  // before a non-commutative op, where the scalar path cannot take it.
  if ((a.shape == y.shape) != (b.shape == y.shape)) {
    const bool colFirst = b.shape == y.shape;
    const TensorRef &full = colFirst ? b : a;
    const TensorRef &other = colFirst ? a : b;
    const bool commutative =
        op.kind() == OpKind::Add || op.kind() == OpKind::Mul;
    const bool scalar = numel(other.shape) == 1;
    std::optional<TensorRef> col = columnOf(other, y.shape);
    if (col && (!scalar || (colFirst && !commutative))) {
      const TensorRef x = asDType(full, y.dtype);
      const TensorRef c = asDType(*col, y.dtype);
      beginKernel();
      return rowDone(
          codegen::emitColumnBinary(pb_, sfuOp, x, c, y, colFirst, options()));
    }
  }
  auto smallOk = [&](const TensorRef &t) {
    return numel(t.shape) == 1 || (t.shape.back() == y.shape.back() &&
                                   numel(t.shape) == t.shape.back());
  };
  bool commutative = op.kind() == OpKind::Add || op.kind() == OpKind::Mul;
  size_t running = 0;
  if (a.shape != y.shape && b.shape == y.shape && commutative) {
    std::swap(a, b);
    bv = op.operand(0);
    running = 1;
  }
  // Other broadcasts are made explicit first: a copy of the operand at the
  // result's shape (a row of the last dim and a scalar second operand are
  // taken by the kernels as they are).
  auto expand = [&](const TensorRef &t) {
    if (t.shape == y.shape)
      return t;
    const TensorRef full = scratch(t.dtype, y.shape);
    broadcastTo(t, full);
    return full;
  };
  a = expand(a);
  if (b.shape != y.shape && !smallOk(b))
    b = expand(b);
  a = asDType(a, y.dtype);
  const std::optional<ElementwiseStep> step = elementwiseStep(op, running);
  SPYRE_ASSERT(step && (step->imm || step->operand == bv),
               "binary op '" + op.name() + "' is no elementwise step");
  if (step->imm) {
    beginKernel();
    return rowDone(
        codegen::emitScalar(pb_, step->op, *step->imm, a, y, options()));
  }
  b = asDType(b, y.dtype);
  beginKernel();
  return rowDone(codegen::emitBinary(pb_, sfuOp, a, b, y, options()));
}

bool Emitter::emitUnaryOp(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const std::optional<ElementwiseStep> step = elementwiseStep(op, 0);
  SPYRE_ASSERT(step && !step->operand,
               "unary op '" + op.name() + "' is no elementwise step");
  beginKernel();
  if (step->imm)
    return rowDone(
        codegen::emitScalar(pb_, step->op, *step->imm, x, y, options()));
  return rowDone(codegen::emitUnary(pb_, step->op, x, y, options()));
}

bool Emitter::emitChainOp(const Op &op) {
  // The planning passes checked the chain (Planning.h): each op runs on
  // the one before, its other operands are in device memory already.
  std::vector<const Op *> ops = {&op};
  for (const std::string &name : m_.chain) {
    const Op *next = g_.findOp(name);
    SPYRE_ASSERT(next, "chained op '" + name + "' is gone");
    ops.push_back(next);
  }
  const TensorRef y = result(ops.back()->result());
  const std::optional<size_t> input = chainInput(op);
  SPYRE_ASSERT(input, "op '" + op.name() + "' cannot start a chain");
  const TensorRef x = asDType(ref(op.operand(*input)), y.dtype);
  std::vector<codegen::ChainStep> steps;
  size_t running = *input;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i > 0)
      running = static_cast<size_t>(
          std::find(ops[i]->operands().begin(), ops[i]->operands().end(),
                    ops[i - 1]->result()) -
          ops[i]->operands().begin());
    const std::optional<ElementwiseStep> s =
        elementwiseStep(*ops[i], running);
    SPYRE_ASSERT(s, "op '" + ops[i]->name() + "' is no elementwise step");
    codegen::ChainStep c;
    c.op = s->op;
    c.imm = s->imm;
    c.operandFirst = s->operandFirst;
    if (s->operand)
      c.operand = asDType(ref(s->operand), y.dtype);
    steps.push_back(std::move(c));
  }
  beginKernel();
  return rowDone(codegen::emitChain(pb_, x, steps, y, options()));
}

bool Emitter::emitSoftmax(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const int n = x.rank();
  const int axis = static_cast<int>(*normalizeAxis(op.intAttr("axis"), n));
  if (axis == n - 1) {
    beginKernel();
    return rowDone(codegen::emitSoftmax(pb_, x, y, options()));
  }
  std::vector<int> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::swap(p[static_cast<size_t>(axis)], p.back());
  const TensorRef t1 = scratch(y.dtype, permuted(x.shape, p));
  const TensorRef t2 = scratch(y.dtype, t1.shape);
  permute(x, p, t1);
  beginKernel();
  if (!rowDone(codegen::emitSoftmax(pb_, t1, t2, options())))
    return false;
  permute(t2, p, y);
  return true;
}

bool Emitter::emitNorm(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const int64_t rank = op.operand(0)->type().rank();
  if (*normalizeAxis(op.intAttr("axis"), rank) != rank - 1)
    return fail("normalising over more than the last dim is not run on the "
                "device");
  auto vec = [&](size_t i) -> std::optional<TensorRef> {
    if (op.numOperands() <= i || !op.operand(i))
      return std::nullopt;
    TensorRef t = ref(op.operand(i));
    t.shape = {numel(t.shape)};
    return t;
  };
  const float eps = static_cast<float>(op.floatAttr("epsilon"));
  beginKernel();
  if (op.kind() == OpKind::LayerNorm)
    return rowDone(
        codegen::emitLayerNorm(pb_, x, vec(1), vec(2), y, eps, options()));
  return rowDone(codegen::emitRmsNorm(pb_, x, vec(1), y, eps, options()));
}

bool Emitter::emitReduce(const Op &op) {
  const TensorRef y = result(op.result());
  TensorRef cur = asDType(ref(op.operand(0)), y.dtype);
  const int n = cur.rank();
  const codegen::ReduceKind kind =
      op.kind() == OpKind::ReduceSum    ? codegen::ReduceKind::Sum
      : op.kind() == OpKind::ReduceMean ? codegen::ReduceKind::Mean
                                        : codegen::ReduceKind::Max;
  std::vector<int64_t> axes;
  for (int64_t a : op.intsAttr("axes"))
    axes.push_back(*normalizeAxis(a, n));
  std::sort(axes.begin(), axes.end());
  // One axis at a time, keeping reduced dims as 1 (a mean of equal-sized
  // means is the mean).
  for (int64_t axis : axes) {
    std::vector<int64_t> outShape = cur.shape;
    outShape[static_cast<size_t>(axis)] = 1;
    if (axis == n - 1) {
      TensorRef t = scratch(y.dtype, outShape);
      beginKernel();
      if (!rowDone(codegen::emitReduce(pb_, kind, cur, t, options())))
        return false;
      cur = t;
      continue;
    }
    std::vector<int> p(static_cast<size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    std::swap(p[static_cast<size_t>(axis)], p.back());
    const TensorRef t1 = scratch(y.dtype, permuted(cur.shape, p));
    permute(cur, p, t1);
    std::vector<int64_t> rShape = t1.shape;
    rShape.back() = 1;
    const TensorRef t2 = scratch(y.dtype, rShape);
    beginKernel();
    if (!rowDone(codegen::emitReduce(pb_, kind, t1, t2, options())))
      return false;
    const TensorRef t3 = scratch(y.dtype, outShape);
    permute(t2, p, t3);
    cur = t3;
  }
  // cur has the keepdims shape; y drops the reduced dims or keeps them.
  if (std::optional<TensorRef> yv = viewAs(y, cur.shape)) {
    beginKernel();
    codegen::emitRelayout(pb_, cur, *yv, options());
    return true;
  }
  // The last dim was reduced and dropped: [..., M, 1] -> [..., M] is a
  // transpose of the last two dims of [P, M, 1].
  const int64_t mDim = y.shape.back();
  std::optional<TensorRef> cv =
      viewAs(cur, {numel(cur.shape) / mDim, mDim, 1});
  std::optional<TensorRef> yv = viewAs(y, {numel(y.shape) / mDim, 1, mDim});
  SPYRE_ASSERT(cv && yv, "reduce: result views");
  beginKernel();
  codegen::emitTranspose(pb_, *cv, *yv, options());
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

bool Emitter::emitCausalMask(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const Shape &s = op.operand(0)->type().shape;
  const int64_t q = s[s.size() - 2], k = s.back();
  std::vector<float> mask(static_cast<size_t>(numel(s)), 0.0f);
  for (size_t at = 0; at < mask.size(); ++at) {
    const int64_t j = static_cast<int64_t>(at) % k;
    const int64_t i = static_cast<int64_t>(at) / k % q;
    if (j > i + (k - q))
      mask[at] = codegen::kMaskValue;
  }
  reserve(op.name() + ".mask", y.dtype, s);
  const isa::TensorDecl &d =
      pb_.addConst(op.name() + ".mask", y.dtype, s, mask);
  beginKernel();
  return rowDone(
      codegen::emitBinary(pb_, isa::Opcode::Add, x, TensorRef::of(d), y,
                          options()));
}

bool Emitter::emitCausalSoftmax(const Op &op) {
  // The mask is a table of at most Q + K sticks (codegen::causalMaskTable),
  // never the scores' size: one per op, loaded once into LX by every core.
  const TensorRef y = result(op.result());
  const TensorRef x = asDType(ref(op.operand(0)), y.dtype);
  const Shape &s = op.operand(0)->type().shape;
  const codegen::MaskTable table = codegen::causalMaskTable(
      s[s.size() - 2], s.back(), static_cast<int>(y.lanes()));
  const std::string name = op.name() + ".mask";
  reserve(name, y.dtype, table.shape);
  const isa::TensorDecl &d =
      pb_.addConst(name, y.dtype, table.shape, table.values);
  beginKernel();
  return rowDone(codegen::emitCausalSoftmax(
      pb_, x, TensorRef::of(d), y, static_cast<float>(op.floatAttr("scale")),
      options()));
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
  if (isFreeView(g_, op, stickBytes_))
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
    diags_.error(graphLoc(g_), "the model does not fit device memory: with tensor '" +
                          full.tensor + "' it needs " +
                          std::to_string(full.neededSticks * stickBytes_) +
                          " bytes, the card has " +
                          std::to_string(cfg_.memory.sizeBytes));
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

} // namespace

std::optional<isa::Program> emitProgram(Graph &graph,
                                        const hw::HwConfig &config,
                                        DiagnosticEngine &diags,
                                        const Placement &placement,
                                        bool constantData) {
  Emitter e(graph, config, diags, placement, constantData);
  return e.run();
}

} // namespace spyre::compiler
