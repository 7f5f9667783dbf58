// The `schedule` pass (what it does: Schedule.h).
#include "compiler/passes/Schedule.h"

#include "compiler/plan/KernelChoice.h"
#include "compiler/plan/Mapping.h"
#include "compiler/plan/PlanningSupport.h"

#include <algorithm>
#include <map>
#include <set>

namespace spyre::compiler {

namespace {

/// The op whose kernels make `v` (through views and fused adds), or nullptr
/// for inputs and constants.
const Op *producer(const Graph &graph, const Value *v) {
  while (v && v->isOpResult()) {
    const Op *op = v->definingOp();
    const OpMapping m = opMapping(*op);
    if (!m.fusedInto.empty())
      return graph.findOp(m.fusedInto);
    if (!isFreeView(graph, *op))
      return op;
    v = op->operand(0);
  }
  return nullptr;
}

bool scheduleRun(Graph &graph, PassContext &ctx) {
  const bool overlap = ctx.options().getBool("overlap");
  const int64_t maxOps = ctx.options().getInt("max-ops-per-phase");
  std::map<const Op *, int64_t> phaseOf;
  int64_t phase = -1, inPhase = 0, nextFree = 0;
  // A host op has a phase of its own, with barriers around it.
  bool hostPhase = false;
  for (Op *op : graph.ops()) {
    if (!opRunsKernels(graph, *op))
      continue;
    OpMapping m = opMapping(*op);
    const bool onHost = op->kind() == OpKind::Host;
    // The latest phase this op reads from.
    int64_t after = -1;
    std::string from;
    auto reads = [&](const Value *v) {
      if (const Op *p = producer(graph, v)) {
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

} // namespace

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
        return passResult(scheduleRun(graph, ctx));
      },
      [](const Graph &graph, const PassContext &, DiagnosticEngine &diags) {
        return checkMappings(graph, diags, true, false, false);
      },
  };
  return info;
}

} // namespace spyre::compiler
