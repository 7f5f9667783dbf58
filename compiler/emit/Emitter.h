// The emitter: emission's machinery, shared by the files that implement
// it (not a public header: Emission.h is). One Emitter per program; it
// walks the graph in order and emits each op's kernels (what each op
// becomes: Emission.h).
//
// Emission.cpp: storage (device tensors), the helper kernels every op
// family uses (conversions, permutations, broadcasts), the walk over the
// ops, host ops and outputs.
// EmitMatmul.cpp: matmuls and attention. EmitRows.cpp: the row kernels
// (elementwise ops and chains, softmax, norms, reductions, causal masks,
// rotary).
// EmitMoves.cpp: free views and the ops that move sticks (reshape, split,
// concat, relayout). EmitTokens.cpp: embedding and argmax.
#pragma once

#include "compiler/codegen/Kernels.h"
#include "compiler/ir/Graph.h"
#include "compiler/plan/DeviceLayout.h"
#include "compiler/plan/KernelChoice.h"
#include "compiler/plan/Mapping.h"
#include "compiler/pm/Target.h"
#include "host/HostOp.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

namespace spyre::compiler::emit_detail {

using codegen::KernelOptions;
using codegen::TensorRef;

inline bool isIdentity(const std::vector<int> &p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int>(i))
      return false;
  return true;
}

inline std::vector<int64_t> permuted(const std::vector<int64_t> &s,
                                     const std::vector<int> &p) {
  std::vector<int64_t> r;
  for (int d : p)
    r.push_back(s[static_cast<size_t>(d)]);
  return r;
}

/// `x` read as a tensor of `shape` when the bytes are the same: a default
/// layout keeps its bytes under any reshape of the leading dims (the last
/// dim, and so the sticks, unchanged), and a single element is one stick.
inline std::optional<TensorRef> viewAs(const TensorRef &x,
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
inline TensorRef viewOf(const TensorRef &x, const std::vector<int64_t> &shape) {
  std::optional<TensorRef> v = viewAs(x, shape);
  SPYRE_ASSERT(v, "'" + x.name + "' " + shapeStr(x.shape) +
                      " is not a view of " + shapeStr(shape));
  return *v;
}

/// Thrown inside the emitter when device memory runs out; run() reports it.
struct DeviceMemoryFull {
  std::string tensor;
  uint64_t neededSticks;
};

/// Thrown inside the emitter when a tensor has more dims than a program's
/// tensor may (docs/program-file.md: host rank 1..8); run() reports it.
struct TooManyDims {
  std::string tensor;
  size_t dims;
};
constexpr size_t kMaxTensorDims = 8;

/// [B, S, H, D] or [B, H, S, D] (`headsFirst`) in the memory of the
/// default layout of [B, S, H x D] at `address`: device dims [H, blocks of
/// D, B, S].
inline TensorRef headsView(const std::string &name, const TensorRef &flat,
                           const Shape &shape, bool headsFirst) {
  TensorRef v;
  v.name = name;
  v.dtype = flat.dtype;
  v.address = flat.address;
  v.shape = shape;
  v.blockPos = 1;
  v.dimOrder = headsFirst ? std::vector<int>{1, 0, 2}
                          : std::vector<int>{2, 0, 1};
  return v;
}

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
        placement_(placement), constantData_(constantData) {
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
  bool emitAttention(const Op &op);
  bool emitRotary(const Op &op);
  bool emitEmbedding(const Op &op);
  bool emitArgmax(const Op &op);
  bool emitRelayoutOp(const Op &op);
  bool emitHost(const Op &op);
  bool emitOutputs();

  Graph &g_;
  const hw::HwConfig &cfg_;
  DiagnosticEngine &diags_;
  codegen::ProgramBuilder pb_;
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

} // namespace spyre::compiler::emit_detail
