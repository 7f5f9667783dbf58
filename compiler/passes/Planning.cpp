// The planning passes (what each decides: Planning.h).
#include "compiler/passes/Planning.h"

#include "compiler/codegen/Kernels.h"
#include "compiler/passes/DeviceLayout.h"
#include "compiler/passes/Emit.h"
#include "compiler/passes/Mapping.h"

#include "support/FileIO.h"

#include <algorithm>
#include <limits>
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

/// a + b for non-negative values, INT64_MAX past it (for messages about
/// mapping values a file may give at any size).
int64_t saturatingAdd(int64_t a, int64_t b) {
  return b > std::numeric_limits<int64_t>::max() - a
             ? std::numeric_limits<int64_t>::max()
             : a + b;
}

bool opFail(const PassContext &ctx, const Graph &graph, const Op &op,
            const std::string &message) {
  (void)ctx.opError(graph, op, message);
  return false;
}

/// A matmul's k_split from a mapping, when it gives one, is a core count
/// the chip has (matmulPlanProblem and planMatmul name the other limits).
bool kSplitFits(const PassContext &ctx, const Graph &graph, const Op &op,
                const OpMapping &m) {
  const int64_t cores = ctx.hw().chip.cores;
  if (m.kSplit <= cores)
    return true;
  return opFail(ctx, graph, op,
                "mapping cannot be used: k_split " + std::to_string(m.kSplit) +
                    " has more partners than the chip has cores (" +
                    std::to_string(cores) + ")");
}

/// The matmul plans a mapping leaves to the planner: the sharing decisions
/// and the K split it gives are kept.
codegen::MatmulSearch matmulSearch(const OpMapping &m) {
  codegen::MatmulSearch s{m.shareA, m.keepB, std::nullopt};
  if (m.kSplit >= 0)
    s.kSplit = static_cast<int>(m.kSplit);
  return s;
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

bool isStickLast(const Value &v) {
  return v.type().rank() == 0 ||
         requireLayout(v).stickDim == v.type().rank() - 1;
}

/// Whether emitChain takes `other` beside chain value `v` as it is: v's
/// shape and stick dim, or one row of v's last dim, or one element (the
/// dtype is converted if need be).
bool chainOperandFits(const Value &other, const Value &v) {
  const Shape &os = other.type().shape, &vs = v.type().shape;
  if (elementsOf(other) == 1)
    return true;
  if (os == vs)
    return requireLayout(other).stickDim == requireLayout(v).stickDim;
  return !os.empty() && !vs.empty() && os.back() == vs.back() &&
         elementsOf(other) == os.back() && isStickLast(other) &&
         isStickLast(v);
}

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

/// Moves `head` and every op of its chain but the last to just before the
/// last, in order, so that the kernel (placed at `head`) comes after every
/// operand of the chain. Nothing else reads the intermediate values, and
/// each op's own operands were computed before it, so the order stays a
/// valid one.
void placeChain(Graph &graph, Op &head, const std::vector<std::string> &names) {
  std::vector<Op *> moved{&head};
  for (size_t i = 0; i + 1 < names.size(); ++i)
    moved.push_back(graph.findOp(names[i]));
  graph.moveOpsBefore(moved, graph.findOp(names.back()));
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
  const int stickBytes = cfg.chip.stickBytes;
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
    if (!opRunsKernels(graph, *op, stickBytes) || op->kind() == OpKind::Host)
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
      if (op->kind() == OpKind::Matmul) {
        m.shareA = false;
        m.keepB = false;
        m.kSplit = 1;
      }
    }
    if (cost) {
      if (op->kind() == OpKind::Matmul) {
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
                    elementsPerStick(requireLayout(*r).dtype, stickBytes);
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

/// The op whose kernels make `v` (through views and fused adds), or nullptr
/// for inputs and constants.
const Op *producer(const Graph &graph, const Value *v, int stickBytes) {
  while (v && v->isOpResult()) {
    const Op *op = v->definingOp();
    const OpMapping m = opMapping(*op);
    if (!m.fusedInto.empty())
      return graph.findOp(m.fusedInto);
    if (!isFreeView(graph, *op, stickBytes))
      return op;
    v = op->operand(0);
  }
  return nullptr;
}

bool scheduleRun(Graph &graph, PassContext &ctx) {
  const int stickBytes = ctx.hw().chip.stickBytes;
  const bool overlap = ctx.options().getBool("overlap");
  const int64_t maxOps = ctx.options().getInt("max-ops-per-phase");
  std::map<const Op *, int64_t> phaseOf;
  int64_t phase = -1, inPhase = 0, nextFree = 0;
  // A host op has a phase of its own, with barriers around it.
  bool hostPhase = false;
  for (Op *op : graph.ops()) {
    if (!opRunsKernels(graph, *op, stickBytes))
      continue;
    OpMapping m = opMapping(*op);
    const bool onHost = op->kind() == OpKind::Host;
    // The latest phase this op reads from.
    int64_t after = -1;
    std::string from;
    auto reads = [&](const Value *v) {
      if (const Op *p = producer(graph, v, stickBytes)) {
        auto it = phaseOf.find(p);
        SPYRE_ASSERT(it != phaseOf.end(), "producer scheduled after its use");
        if (it->second > after) {
          after = it->second;
          from = p->name();
        }
      }
    };
    for (const Value *v : op->operands())
      reads(v);
    if (!m.fuseBias.empty())
      for (const Value *v : graph.findOp(m.fuseBias)->operands())
        if (v != op->result())
          reads(v);
    // A chain's kernel also reads the other operands of its later ops
    // (each computed before the chain's first op, which placeChain moved
    // to just before its last).
    const Value *running = op->result();
    for (const std::string &name : m.chain) {
      const Op *next = graph.findOp(name);
      for (const Value *v : next->operands())
        if (v != running)
          reads(v);
      running = next->result();
    }
    if (m.phase >= 0) {
      if (m.phase == phase && (onHost || hostPhase))
        return opFail(ctx, graph, *op,
                      "mapping puts the op in phase " +
                          std::to_string(m.phase) +
                          " beside other ops, but a host op has a phase of "
                          "its own");
      if (m.phase < phase || m.phase <= after)
        return opFail(ctx, graph, *op,
                           "mapping puts the op in phase " +
                               std::to_string(m.phase) + ", but " +
                               (m.phase <= after
                                    ? "it reads what '" + from +
                                          "' makes in phase " +
                                          std::to_string(after)
                                    : "an earlier op is in phase " +
                                          std::to_string(phase)) +
                               " (phases follow op order; an op reads only "
                               "from earlier phases)");
    } else if (phase >= 0 && overlap && !onHost && !hostPhase &&
               after < phase && inPhase < maxOps &&
               m.firstCore == 0 &&
               nextFree + m.cores <= ctx.hw().chip.cores) {
      // Beside the phase's other ops, so that they run at the same time.
      m.phase = phase;
      m.firstCore = nextFree;
      ctx.addStatistic("ops-moved-beside");
    } else {
      m.phase = phase + 1;
    }
    if (m.phase != phase) {
      phase = m.phase;
      inPhase = 0;
      nextFree = 0;
      ctx.addStatistic("phases");
    }
    hostPhase = onHost;
    if (!onHost)
      nextFree = std::max(nextFree, m.firstCore + m.cores);
    ++inPhase;
    phaseOf[op] = m.phase;
    setOpMapping(*op, m);
  }
  return true;
}

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return a0 < b1 && b0 < a1;
}

bool lxPlanRun(Graph &graph, PassContext &ctx) {
  const hw::HwConfig &cfg = ctx.hw();
  const int stickBytes = cfg.chip.stickBytes;
  const int64_t lxSticks = cfg.lxSticks();
  // Ops grouped by phase, in op order.
  std::map<int64_t, std::vector<Op *>> phases;
  for (Op *op : graph.ops())
    if (opRunsKernels(graph, *op, stickBytes) && op->kind() != OpKind::Host)
      phases[opMapping(*op).phase].push_back(op);
  for (auto &[phase, ops] : phases) {
    // Ops sharing a core with another op of the phase split LX evenly.
    std::vector<OpMapping> ms;
    for (Op *op : ops)
      ms.push_back(opMapping(*op));
    int64_t sharing = 0;
    std::vector<bool> shares(ops.size(), false);
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = 0; j < ops.size(); ++j)
        if (i != j &&
            overlaps(ms[i].firstCore, ms[i].firstCore + ms[i].cores,
                     ms[j].firstCore, ms[j].firstCore + ms[j].cores))
          shares[i] = true;
      sharing += shares[i] ? 1 : 0;
    }
    const int64_t share = sharing > 0 ? lxSticks / sharing : lxSticks;
    int64_t slot = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      OpMapping &m = ms[i];
      if (m.lx.empty()) {
        m.lx = shares[i] ? std::vector<int64_t>{slot++ * share, share}
                         : std::vector<int64_t>{0, lxSticks};
        ctx.addStatistic("regions-planned");
      } else if (m.lx[1] < 1 || m.lx[0] > lxSticks ||
                 m.lx[1] > lxSticks - m.lx[0]) {
        return opFail(ctx, graph, *ops[i],
                           "mapping gives the LX region [" +
                               std::to_string(m.lx[0]) + ", " +
                               std::to_string(saturatingAdd(m.lx[0], m.lx[1])) +
                               ") sticks, LX has " + std::to_string(lxSticks));
      }
      setOpMapping(*ops[i], m);
    }
    // Regions of ops of one phase on a common core must not overlap.
    int64_t used = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      used += ms[i].lx[1];
      for (size_t j = 0; j < i; ++j)
        if (overlaps(ms[i].firstCore, ms[i].firstCore + ms[i].cores,
                     ms[j].firstCore, ms[j].firstCore + ms[j].cores) &&
            overlaps(ms[i].lx[0], ms[i].lx[0] + ms[i].lx[1], ms[j].lx[0],
                     ms[j].lx[0] + ms[j].lx[1]))
          return opFail(ctx, graph, *ops[i],
                             "its LX region overlaps that of '" +
                                 ops[j]->name() + "', which runs in the same "
                                 "phase on a common core");
    }
    const int64_t peak = std::min(used, lxSticks) * stickBytes;
    if (peak > ctx.statistic("peak-lx-bytes"))
      ctx.addStatistic("peak-lx-bytes", peak - ctx.statistic("peak-lx-bytes"));
  }
  return true;
}

bool tileRun(Graph &graph, PassContext &ctx) {
  const hw::HwConfig &cfg = ctx.hw();
  for (Op *op : graph.ops()) {
    if (op->kind() != OpKind::Matmul ||
        !opRunsKernels(graph, *op, cfg.chip.stickBytes))
      continue;
    OpMapping m = opMapping(*op);
    MatmulWork w = matmulWork(graph, *op, m.fuseBias);
    codegen::KernelOptions o;
    o.firstCore = static_cast<int>(m.firstCore);
    o.cores = static_cast<int>(coresPerBatch(w.batches, m.cores));
    o.lxBase = m.lx[0];
    o.lxSticks = m.lx[1];
    if (m.grid.empty() != m.tile.empty())
      return opFail(ctx, graph, *op,
                         "mapping gives 'grid' or 'tile' without the other");
    // The planner takes grid sides and the K split as int; larger ones
    // cannot fit anyway.
    if (!kSplitFits(ctx, graph, *op, m))
      return false;
    if (!m.grid.empty()) {
      if (m.grid[0] > cfg.chip.cores || m.grid[1] > cfg.chip.cores)
        return opFail(ctx, graph, *op,
                      "mapping cannot be used: grid " +
                          std::to_string(m.grid[0]) + "x" +
                          std::to_string(m.grid[1]) + " has more parts than "
                          "the chip has cores (" +
                          std::to_string(cfg.chip.cores) + ")");
      codegen::MatmulTiling t;
      t.gridM = static_cast<int>(m.grid[0]);
      t.gridN = static_cast<int>(m.grid[1]);
      t.gridK = m.kSplit < 0 ? 1 : static_cast<int>(m.kSplit);
      t.tileM = m.tile[0];
      t.tileK = m.tile[1];
      t.tileN = m.tile[2];
      t.nOuter = m.nOuter.value_or(true);
      t.shareA = m.shareA.value_or(false);
      t.keepB = m.keepB.value_or(false);
      std::string why = codegen::matmulPlanProblem(cfg, w.args, o, t);
      if (!why.empty())
        return opFail(ctx, graph, *op, "mapping cannot be used: " + why);
      m.nOuter = t.nOuter;
      m.shareA = t.shareA;
      m.keepB = t.keepB;
      m.kSplit = t.gridK;
      setOpMapping(*op, m);
      continue;
    }
    // Sharing and K-split decisions the mapping already has (none from the
    // naive division) restrict the search; the rest are weighed.
    codegen::MatmulPlan p =
        codegen::planMatmul(cfg, w.args, o, 0, 0, matmulSearch(m));
    if (!p.error.empty())
      return opFail(ctx, graph, *op, p.error);
    m.grid = {p.gridM, p.gridN};
    m.tile = {p.tileM, p.tileK, p.tileN};
    m.nOuter = p.nOuter;
    m.shareA = p.shareA;
    m.keepB = p.keepB;
    m.kSplit = p.gridK;
    ctx.addStatistic("matmuls-tiled");
    if (p.shareA)
      ctx.addStatistic("matmuls-sharing-a");
    if (p.gridK > 1)
      ctx.addStatistic("matmuls-k-split");
    ctx.addStatistic("estimated-cycles", p.estimatedCycles * w.batches);
    setOpMapping(*op, m);
  }
  return true;
}

PassResult result(bool ok) {
  return ok ? PassResult::Success : PassResult::Failure;
}

/// Every op that runs kernels has the fields `fields` lists.
bool checkMappings(const Graph &graph, const PassContext &ctx,
                   DiagnosticEngine &diags, bool phase, bool lx, bool tile) {
  bool ok = true;
  for (const Op *op : graph.ops()) {
    if (!opRunsKernels(graph, *op, ctx.hw().chip.stickBytes))
      continue;
    const OpMapping m = opMapping(*op);
    std::string missing;
    const bool onHost = op->kind() == OpKind::Host;
    if (!onHost && (m.cores < 1 || m.firstCore < 0))
      missing += " cores";
    if (phase && m.phase < 0)
      missing += " phase";
    if (lx && !onHost && m.lx.size() != 2)
      missing += " lx";
    if (tile && op->kind() == OpKind::Matmul && m.tile.size() != 3)
      missing += " tile";
    if (!missing.empty()) {
      diags.error(graphLoc(graph),
                  "op '" + op->name() + "' has no mapping for:" + missing);
      ok = false;
    }
  }
  return ok;
}

} // namespace

bool opRunsKernels(const Graph &graph, const Op &op, int stickBytes) {
  return opMapping(op).fusedInto.empty() &&
         !isFreeView(graph, op, stickBytes);
}

isa::Opcode binaryOpcode(OpKind kind) {
  switch (kind) {
  case OpKind::Add:
    return isa::Opcode::Add;
  case OpKind::Sub:
    return isa::Opcode::Sub;
  case OpKind::Mul:
    return isa::Opcode::Mul;
  case OpKind::Div:
    return isa::Opcode::Div;
  default:
    SPYRE_UNREACHABLE("no SFU binary op for " +
                      std::string(opKindName(kind)));
  }
}

std::optional<ElementwiseStep> elementwiseStep(const Op &op, size_t running) {
  if (running >= op.numOperands() || op.numResults() != 1)
    return std::nullopt;
  ElementwiseStep s;
  switch (op.kind()) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div: {
    if (op.numOperands() != 2)
      return std::nullopt;
    const bool commutative =
        op.kind() == OpKind::Add || op.kind() == OpKind::Mul;
    const Value *other = op.operand(1 - running);
    s.op = binaryOpcode(op.kind());
    s.operandFirst = running == 1 && !commutative;
    if (other->isConstant() && elementsOf(*other) == 1 && !s.operandFirst &&
        op.kind() != OpKind::Div) {
      // A constant scalar is an immediate: no load, no broadcast. (Not for
      // div: multiplying by the reciprocal would round differently.)
      const double c = other->constantData().element(0);
      const bool add = op.kind() == OpKind::Add || op.kind() == OpKind::Sub;
      s.op = add ? isa::Opcode::Adds : isa::Opcode::Muls;
      s.imm = static_cast<float>(op.kind() == OpKind::Sub ? -c : c);
      return s;
    }
    s.operand = other;
    return s;
  }
  case OpKind::Pow:
    s.op = isa::Opcode::Pows;
    s.imm = static_cast<float>(op.floatAttr("exponent"));
    return s;
  case OpKind::Reciprocal:
    s.op = isa::Opcode::Recip;
    return s;
  case OpKind::Gelu:
    s.op = op.stringAttr("approximate") == "tanh" ? isa::Opcode::Gelut
                                                  : isa::Opcode::Gelu;
    return s;
  case OpKind::Relu:
    s.op = isa::Opcode::Relu;
    return s;
  case OpKind::Silu:
    s.op = isa::Opcode::Silu;
    return s;
  case OpKind::Sigmoid:
    s.op = isa::Opcode::Sigmoid;
    return s;
  case OpKind::Tanh:
    s.op = isa::Opcode::Tanh;
    return s;
  case OpKind::Erf:
    s.op = isa::Opcode::Erf;
    return s;
  case OpKind::Exp:
    s.op = isa::Opcode::Exp;
    return s;
  case OpKind::Sqrt:
    s.op = isa::Opcode::Sqrt;
    return s;
  case OpKind::Rsqrt:
    s.op = isa::Opcode::Rsqrt;
    return s;
  case OpKind::Neg:
    s.op = isa::Opcode::Neg;
    return s;
  case OpKind::Abs:
    s.op = isa::Opcode::Abs;
    return s;
  default:
    return std::nullopt;
  }
}

std::optional<size_t> chainInput(const Op &op) {
  if (op.numResults() != 1)
    return std::nullopt;
  const Value &y = *op.result();
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const Value &x = *op.operand(i);
    if (x.type().shape != y.type().shape ||
        requireLayout(x).stickDim != requireLayout(y).stickDim)
      continue;
    std::optional<ElementwiseStep> s = elementwiseStep(op, i);
    if (!s)
      return std::nullopt;
    if (s->operand && !chainOperandFits(*s->operand, y))
      return std::nullopt;
    return i;
  }
  return std::nullopt;
}

const PassInfo &applyMappingPass() {
  static const PassInfo info{
      "apply-mapping",
      "Puts the decisions of a mapping file (--mapping-in) on the ops",
      "every op the file names carries the file's mapping.",
      {
          {"file",
           OptionType::String,
           "",
           "the mapping file (JSON, as --mapping-out writes it)",
           {},
           nullptr},
      },
      {
          {"ops-mapped", "ops given a mapping by the file"},
      },
      [](Graph &graph, PassContext &ctx) {
        const std::string path = ctx.options().getString("file");
        std::string text;
        try {
          text = readFile(path, kJsonFileLimit);
        } catch (const UserError &e) {
          ctx.diags().report(e.diagnostic());
          return PassResult::Failure;
        }
        std::optional<MappingFile> file =
            parseMappingJson(text, path, ctx.diags());
        if (!file || !applyMapping(graph, *file, path, ctx.diags()))
          return PassResult::Failure;
        ctx.addStatistic("ops-mapped", static_cast<int64_t>(file->ops.size()));
        return PassResult::Success;
      },
      [](const Graph &, const PassContext &, DiagnosticEngine &) {
        return true;
      },
  };
  return info;
}

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
        return result(divideRun(graph, ctx));
      },
      [](const Graph &graph, const PassContext &ctx, DiagnosticEngine &diags) {
        return checkMappings(graph, ctx, diags, false, false, false);
      },
  };
  return info;
}

const PassInfo &schedulePass() {
  static const PassInfo info{
      "schedule",
      "Phases: which ops run together between chip-wide barriers",
      "every op that runs kernels has a `phase`; phases do not decrease in "
      "op order and an op reads only values made in earlier phases.",
      {
          {"overlap",
           OptionType::Bool,
           "true",
           "let independent ops share a phase (false: one op per phase)",
           {},
           nullptr},
          {"max-ops-per-phase",
           OptionType::Int,
           "4",
           "ops one phase may hold (their LX regions and sync counters share "
           "the cores)",
           {},
           nullptr},
      },
      {
          {"phases", "phases"},
          {"ops-moved-beside",
           "ops put on cores beside the others of their phase"},
      },
      [](Graph &graph, PassContext &ctx) {
        return result(scheduleRun(graph, ctx));
      },
      [](const Graph &graph, const PassContext &ctx, DiagnosticEngine &diags) {
        return checkMappings(graph, ctx, diags, true, false, false);
      },
  };
  return info;
}

const PassInfo &lxPlanPass() {
  static const PassInfo info{
      "lx-plan",
      "LX planning: each op's scratchpad region on its cores",
      "every op that runs kernels has an `lx` region inside LX; ops of one "
      "phase on a common core have disjoint regions.",
      {},
      {
          {"regions-planned", "LX regions given to ops"},
          {"peak-lx-bytes", "largest LX in use on a core in one phase"},
      },
      [](Graph &graph, PassContext &ctx) {
        return result(lxPlanRun(graph, ctx));
      },
      [](const Graph &graph, const PassContext &ctx, DiagnosticEngine &diags) {
        return checkMappings(graph, ctx, diags, true, true, false);
      },
  };
  return info;
}

const PassInfo &tilePass() {
  static const PassInfo info{
      "tile",
      "Tiling: matmul grids and tiles that fit each op's LX region",
      "every matmul that runs kernels has `grid`, `tile`, `n_outer`, "
      "`share_a`, `keep_b` and `k_split`, and its working set fits its LX "
      "region.",
      {},
      {
          {"matmuls-tiled", "matmuls planned"},
          {"matmuls-sharing-a",
           "matmuls whose grid rows share A tiles over the data ring"},
          {"matmuls-k-split",
           "matmuls whose K is split across cores, partials summed over the "
           "reduce ring"},
          {"estimated-cycles", "the planner's time estimate of all matmuls"},
      },
      [](Graph &graph, PassContext &ctx) {
        return result(tileRun(graph, ctx));
      },
      [](const Graph &graph, const PassContext &ctx, DiagnosticEngine &diags) {
        return checkMappings(graph, ctx, diags, true, true, true);
      },
  };
  return info;
}

} // namespace spyre::compiler
