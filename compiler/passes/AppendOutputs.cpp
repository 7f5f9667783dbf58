// The append-outputs pass (what it rewrites: AppendOutputs.h).
#include "compiler/passes/AppendOutputs.h"

#include "compiler/pm/Rewrite.h"

#include <algorithm>

namespace spyre::compiler {

std::optional<AppendedOutput> appendedOutput(const Graph &graph,
                                             const Value &output) {
  const Op *cat = output.definingOp();
  if (!cat || cat->kind() != OpKind::Concat || cat->numOperands() < 2 ||
      !graph.isOutput(&output) || !graph.usesOf(&output).empty())
    return std::nullopt;
  const Value *past = cat->operand(0);
  if (!past->isInput() || graph.isOutput(past))
    return std::nullopt;
  const std::optional<int64_t> axis =
      normalizeAxis(cat->intAttr("axis"), output.type().rank());
  if (!axis)
    return std::nullopt;
  return AppendedOutput{past, *axis};
}

namespace {

bool appendRun(Graph &graph, PassContext &ctx) {
  // Collected first: the rewrite replaces the outputs it walks.
  std::vector<Op *> cats;
  for (const Value *v : graph.outputs())
    if (appendedOutput(graph, *v) &&
        std::find(cats.begin(), cats.end(), v->definingOp()) == cats.end())
      cats.push_back(v->definingOp());
  for (Op *cat : cats) {
    const std::vector<Value *> rest(cat->operands().begin() + 1,
                                    cat->operands().end());
    const int64_t axis = cat->intAttr("axis");
    replaceOpInPlace(graph, cat, [&](OpBuilder &b, const ReplacedNames &n) {
      return b.create(OpKind::Concat, n.opName, rest, {{"axis", axis}},
                      n.resultName);
    });
    ctx.addStatistic("outputs-appended");
  }
  return true;
}

} // namespace

const PassInfo &appendOutputsPass() {
  static const PassInfo info{
      "append-outputs",
      "Makes a graph output that is a graph input with more joined after it "
      "(concat(%past, %new) of a key/value cache) an output of what is "
      "joined only",
      "no graph output is a concat, read by no op, whose first operand is a "
      "graph input; outputs keep their names.",
      {},
      {
          {"outputs-appended",
           "outputs that now hold only what the step appends to an input"},
      },
      [](Graph &graph, PassContext &ctx) {
        return appendRun(graph, ctx) ? PassResult::Success
                                     : PassResult::Failure;
      },
      [](const Graph &graph, const PassContext &, DiagnosticEngine &diags) {
        bool ok = true;
        for (const Value *v : graph.outputs())
          if (appendedOutput(graph, *v)) {
            diags.error(v->definingOp()->loc(),
                        "output '" + v->name() +
                            "' still copies the input it appends to");
            ok = false;
          }
        return ok;
      },
  };
  return info;
}

} // namespace spyre::compiler
