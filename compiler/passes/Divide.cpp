// The `divide` pass (what it does: Divide.h).
#include "compiler/passes/Divide.h"

#include "compiler/codegen/Kernels.h"
#include "compiler/plan/DeviceLayout.h"
#include "compiler/plan/KernelChoice.h"
#include "compiler/plan/Mapping.h"
#include "compiler/plan/PlanningSupport.h"

#include <algorithm>
#include <map>
#include <set>

namespace spyre::compiler {

namespace {

int64_t elementsOf(const Value &v) { return v.type().elementCount(); }

/// Ops that run the transpose and relayout kernels (and no arithmetic).
bool movesData(const Op &op) {
  switch (op.kind()) {
  case OpKind::Transpose:
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Split:
  case OpKind::Concat:
  case OpKind::Relayout:
    return true;
  default:
    return false;
  }
}

/// Sticks of results below which one more core is not worth taking.
constexpr int64_t kMinSticksPerCore = 32;

/// The bias vector of `add` when it adds one to `mm`'s result: the other
/// operand has the result's last dim and no other elements.
const Value *biasOperand(const Op &add, const Op &mm) {
  if (add.kind() != OpKind::Add || add.numOperands() != 2)
    return nullptr;
  const Value *r = mm.result();
  const Value *other = add.operand(0) == r   ? add.operand(1)
                       : add.operand(1) == r ? add.operand(0)
                                             : nullptr;
  if (!other || other == r)
    return nullptr;
  const Shape &rs = r->type().shape, &os = other->type().shape;
  if (os.empty() || rs.empty() || os.back() != rs.back() ||
      elementsOf(*other) != os.back() ||
      add.result()->type().shape != rs)
    return nullptr;
  return other;
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Whether the operands of bias add `add` other than `mm`'s result are
/// computed before `mm` (the fused kernel reads them while it runs).
bool biasReadyBefore(const Graph &graph, const Op &add, const Op &mm) {
  for (const Value *v : add.operands())
    if (v != mm.result())
      if (const Op *def = v->definingOp();
          def && graph.opIndex(def) > graph.opIndex(&mm))
        return false;
  return true;
}

/// Tensors an elementwise chain may stream: each takes three of a DMA load
/// stream's 15 address registers (two buffer slots and the walking
/// address; isa/InstrTable.h), and the buffer rotation takes one more.
constexpr int64_t kMaxChainStreams = 4;

/// Checks an elementwise chain after `head` one op at a time: add() says
/// why `name` cannot be the chain's next op (empty when it can): each op
/// uses the one before as its running value and is its only use, that value
/// is no graph output, every result has the chain's type and layout, and
/// the other operands fit the kernel. They may be computed after `head`:
/// placeChain moves the chain to its last op. `checkFusedInto`: each op's
/// mapping names `head`. Checking op by op keeps the fusion of a long chain
/// linear in its length.
class ChainChecker {
public:
  ChainChecker(const Graph &graph, const Op &head, bool checkFusedInto)
      : graph_(graph), head_(head), checkFusedInto_(checkFusedInto),
        v_(head.result()) {
    if (const std::optional<size_t> input = chainInput(head))
      streams_ = 1 + streamed(*elementwiseStep(head, *input));
    else
      headProblem_ = "'" + head.name() + "' cannot start an elementwise chain";
  }

  /// Why `head` cannot start a chain at all (empty when it can).
  const std::string &headProblem() const { return headProblem_; }

  /// After a problem the checker is spent: the chain ends before `name`.
  std::string add(const std::string &name) {
    if (!headProblem_.empty())
      return headProblem_;
    const Op *op = graph_.findOp(name);
    if (!op)
      return "the graph has no op '" + name + "'";
    std::vector<OpUse> uses = graph_.usesOf(v_);
    if (graph_.isOutput(v_) || uses.size() != 1 || uses[0].op != op)
      return "'" + name + "' is not the only use of '" + v_->name() +
             "', or that is a graph output";
    std::optional<ElementwiseStep> step =
        elementwiseStep(*op, uses[0].operandIndex);
    if (!step)
      return "'" + name + "' is not an elementwise op";
    const Value *r = op->result();
    if (r->type() != v_->type() || requireLayout(*r) != requireLayout(*v_))
      return "'" + name + "' changes the chain's shape, dtype or layout";
    if (const Value *o = step->operand; o && !chainOperandFits(*o, *v_))
      return "operand '" + o->name() + "' of '" + name +
             "' is neither the chain's shape, one row nor one element";
    const int64_t streams = streams_ + streamed(*step);
    if (streams > kMaxChainStreams)
      return "with '" + name + "' the kernel would stream " +
             std::to_string(streams) + " tensors, more than the " +
             std::to_string(kMaxChainStreams) + " it has registers for";
    if (checkFusedInto_ && opMapping(*op).fusedInto != head_.name())
      return "'" + name + "' does not name '" + head_.name() +
             "' in 'fused_into'";
    streams_ = streams;
    v_ = r;
    return "";
  }

private:
  /// Tensors the kernel streams tile by tile: the input and every operand
  /// of the chain's shape (rows and scalars are loaded once).
  int64_t streamed(const ElementwiseStep &s) const {
    return s.operand && s.operand->type().shape == head_.result()->type().shape
               ? 1
               : 0;
  }

  const Graph &graph_;
  const Op &head_;
  bool checkFusedInto_;
  const Value *v_;
  int64_t streams_ = 0;
  std::string headProblem_;
};

/// Why `names` cannot follow `head` as an elementwise chain (empty when
/// they can; ChainChecker has the rules).
std::string chainProblem(const Graph &graph, const Op &head,
                         const std::vector<std::string> &names,
                         bool checkFusedInto) {
  ChainChecker checker(graph, head, checkFusedInto);
  if (!checker.headProblem().empty())
    return checker.headProblem();
  for (const std::string &name : names)
    if (std::string why = checker.add(name); !why.empty())
      return why;
  return "";
}

/// Fuses maximal elementwise chains of ops without a mapping (ChainChecker
/// has the rules); a matmul's folded bias add never joins one.
void fuseChains(Graph &graph, PassContext &ctx) {
  auto free = [](const Op &op) {
    return !op.annotations().contains(kMappingAnnotation);
  };
  for (Op *head : graph.ops()) {
    if (!free(*head) || !chainInput(*head))
      continue;
    std::vector<std::string> names;
    ChainChecker checker(graph, *head, false);
    const Value *v = head->result();
    while (true) {
      std::vector<OpUse> uses = graph.usesOf(v);
      if (uses.size() != 1 || !free(*uses[0].op))
        break;
      if (!checker.add(uses[0].op->name()).empty())
        break;
      names.push_back(uses[0].op->name());
      v = uses[0].op->result();
    }
    if (names.empty())
      continue;
    placeChain(graph, *head, names);
    OpMapping hm;
    hm.chain = names;
    setOpMapping(*head, hm);
    for (const std::string &name : names) {
      OpMapping fm;
      fm.fusedInto = head->name();
      setOpMapping(*graph.findOp(name), fm);
    }
    ctx.addStatistic("chains-fused");
    ctx.addStatistic("ops-chained", static_cast<int64_t>(names.size()));
  }
}

bool divideRun(Graph &graph, PassContext &ctx) {
  const hw::HwConfig &cfg = ctx.hw();
  const bool cost = ctx.options().getString("strategy") == "cost";
  const bool fuse = ctx.options().getBool("fuse-bias");
  // Fusion first: it decides which ops run at all.
  if (fuse)
    for (Op *op : graph.ops()) {
      if (op->kind() != OpKind::Matmul ||
          op->annotations().contains(kMappingAnnotation) ||
          graph.isOutput(op->result()))
        continue;
      std::vector<OpUse> uses = graph.usesOf(op->result());
      if (uses.size() != 1 || !biasOperand(*uses[0].op, *op) ||
          uses[0].op->annotations().contains(kMappingAnnotation))
        continue;
      Op *add = uses[0].op;
      if (matmulWork(graph, *op, "").batches != 1 ||
          !biasReadyBefore(graph, *add, *op))
        continue;
      OpMapping mm, am;
      mm.fuseBias = add->name();
      am.fusedInto = op->name();
      setOpMapping(*op, mm);
      setOpMapping(*add, am);
      ctx.addStatistic("biases-fused");
    }
  if (ctx.options().getBool("fuse-elementwise"))
    fuseChains(graph, ctx);
  // The mapping of the op the last fused op named in 'fused_into'. Only
  // 'fuse_bias' and 'chain' are read from it, which this loop never changes.
  struct {
    const Op *op = nullptr;
    OpMapping mapping;
    std::set<std::string, std::less<>> chain;
  } fuser;
  for (Op *op : graph.ops()) {
    OpMapping m = opMapping(*op);
    // A replayed fusion must still be one.
    if (!m.fuseBias.empty()) {
      const Op *add = graph.findOp(m.fuseBias);
      if (!add || op->kind() != OpKind::Matmul || !biasOperand(*add, *op) ||
          graph.usesOf(op->result()).size() != 1 ||
          opMapping(*add).fusedInto != op->name() ||
          matmulWork(graph, *op, "").batches != 1 ||
          !biasReadyBefore(graph, *add, *op))
        return opFail(ctx, graph, *op,
                           "cannot fold '" + m.fuseBias +
                               "' into this op: it must be the only use of "
                               "a matmul without batched B, adding a vector "
                               "of the last dim computed before the matmul, "
                               "and name the matmul in 'fused_into'");
    }
    if (!m.chain.empty()) {
      if (!m.fuseBias.empty() || !m.fusedInto.empty())
        return opFail(ctx, graph, *op,
                      "an op with a 'chain' cannot also fold a bias or be "
                      "fused into another op");
      if (std::string why = chainProblem(graph, *op, m.chain, true);
          !why.empty())
        return opFail(ctx, graph, *op,
                      "cannot run the elementwise chain [" +
                          joinNames(m.chain) + "]: " + why);
      placeChain(graph, *op, m.chain);
    }
    if (!m.fusedInto.empty()) {
      const Op *into = graph.findOp(m.fusedInto);
      if (into != fuser.op) {
        // The ops of a chain ask about the same head one after another:
        // its mapping is read (and its chain indexed) once, not per op.
        fuser.op = into;
        fuser.mapping = into ? opMapping(*into) : OpMapping{};
        fuser.chain = std::set<std::string, std::less<>>(
            fuser.mapping.chain.begin(), fuser.mapping.chain.end());
      }
      if (!into || (fuser.mapping.fuseBias != op->name() &&
                    !fuser.chain.contains(op->name())))
        return opFail(ctx, graph, *op,
                           "'fused_into' names '" + m.fusedInto +
                               "', whose mapping does not fuse this op");
    }
    if (!opRunsKernels(graph, *op) || op->kind() == OpKind::Host)
      continue; // host ops run on the host: no cores, no LX
    if (m.cores >= 0 || m.firstCore >= 0) {
      // Compared without adding, so that huge values cannot overflow.
      if (m.cores < 1 || m.firstCore < 0 || m.firstCore > cfg.chip.cores ||
          m.cores > cfg.chip.cores - m.firstCore)
        return opFail(ctx, graph, *op,
                           "mapping puts the op on cores [" +
                               std::to_string(m.firstCore) + ", " +
                               std::to_string(saturatingAdd(m.firstCore, m.cores)) +
                               "), the chip has cores [0, " +
                               std::to_string(cfg.chip.cores) + ")");
      ctx.addStatistic("ops-given");
      continue;
    }
    m.firstCore = 0;
    m.cores = cfg.chip.cores;
    if (!cost) {
      // The naive division: no overlap of a core's loads, compute and
      // stores, and every core loads its own matmul operands.
      m.overlap = false;
      if (runsMatmulKernel(op->kind())) {
        m.shareA = false;
        m.keepB = false;
        m.kSplit = 1;
      }
    }
    if (cost) {
      if (runsMatmulKernel(op->kind())) {
        MatmulWork w = matmulWork(graph, *op, m.fuseBias);
        if (w.batches == 1) {
          codegen::KernelOptions o;
          o.cores = cfg.chip.cores;
          if (!kSplitFits(ctx, graph, *op, m))
            return false;
          codegen::MatmulPlan p =
              codegen::planMatmul(cfg, w.args, o, 0, 0, matmulSearch(m));
          if (!p.error.empty())
            return opFail(ctx, graph, *op, p.error);
          m.cores = p.gridM * p.gridN * p.gridK;
        }
      } else if (!movesData(*op)) {
        // Row kernels use at most one core per row.
        const Shape &s = op->result()->type().shape;
        const int64_t rows =
            s.empty() ? 1 : op->result()->type().elementCount() / s.back();
        m.cores = std::clamp<int64_t>(rows, 1, cfg.chip.cores);
      } else {
        // Data movers stream sticks: below kMinSticksPerCore sticks a
        // core's time is the DMA latency, so more cores would only take
        // cores other ops of the phase could use.
        int64_t sticks = 0;
        for (const Value *r : op->results())
          sticks += requireLayout(*r).deviceElements() /
                    elementsPerStick(requireLayout(*r).dtype);
        m.cores = std::clamp<int64_t>(
            (sticks + kMinSticksPerCore - 1) / kMinSticksPerCore, 1,
            cfg.chip.cores);
      }
    }
    ctx.addStatistic("ops-divided");
    ctx.addStatistic("cores-assigned", m.cores);
    setOpMapping(*op, m);
  }
  return true;
}

} // namespace

const PassInfo &dividePass() {
  static const PassInfo info{
      "divide",
      "Work division: the cores of every op (and bias adds folded into "
      "matmuls, elementwise chains fused)",
      "every op that runs kernels has `cores` and `first_core` in its "
      "mapping, inside the chip.",
      {
          {"strategy",
           OptionType::Enum,
           "cost",
           "`cost`: the grid the matmul planner estimates fastest, one core "
           "per row at most for row ops, per 32 result sticks for data "
           "movers; `all-cores`: every op on every core without overlap "
           "inside its kernels (`overlap` false), matmuls with every core "
           "loading its own operands and K whole (`share_a` and `keep_b` "
           "false, `k_split` 1)",
           {"cost", "all-cores"},
           nullptr},
          {"fuse-bias",
           OptionType::Bool,
           "true",
           "fold an add of a bias vector into the matmul it follows",
           {},
           nullptr},
          {"fuse-elementwise",
           OptionType::Bool,
           "true",
           "run each maximal chain of elementwise ops, where every "
           "intermediate has one use (the next op) and is no graph output, "
           "as one kernel whose intermediates stay in LX (the first op's "
           "mapping lists the others in `chain`)",
           {},
           nullptr},
      },
      {
          {"ops-divided", "ops given cores"},
          {"ops-given", "ops whose cores a mapping gave"},
          {"cores-assigned", "cores summed over the ops"},
          {"biases-fused", "bias adds folded into matmuls"},
          {"chains-fused", "elementwise chains run as one kernel"},
          {"ops-chained", "elementwise ops run by the chain of an op before "
                          "them"},
      },
      [](Graph &graph, PassContext &ctx) {
        return passResult(divideRun(graph, ctx));
      },
      [](const Graph &graph, const PassContext &, DiagnosticEngine &diags) {
        return checkMappings(graph, diags, false, false, false);
      },
  };
  return info;
}

} // namespace spyre::compiler
