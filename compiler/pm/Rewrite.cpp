// Graph-rewriting utilities.
#include "compiler/pm/Rewrite.h"

#include "support/Diagnostic.h"

namespace spyre::compiler {

Value *OpBuilder::create(OpKind kind, const std::string &opName,
                         std::vector<Value *> operands, AttrDict attrs,
                         const std::string &resultName) {
  std::vector<std::string> names;
  if (!resultName.empty())
    names.push_back(resultName);
  Op *op = buildOp(graph_, kind, opName, std::move(operands), std::move(attrs),
                   std::move(names), before_);
  op->setLoc(loc_);
  SPYRE_ASSERT(op->numResults() == 1,
               "OpBuilder::create makes single-result ops");
  return op->result();
}

Value *replaceOpInPlace(
    Graph &graph, Op *op,
    const std::function<Value *(OpBuilder &builder, const ReplacedNames &names)>
        &build) {
  SPYRE_ASSERT(op->numResults() == 1 && op->numOperands() >= 1,
               "replaceOpInPlace needs a single-result op with an operand");
  Value *old = op->result();
  std::vector<OpUse> uses = graph.usesOf(old);
  std::vector<Value *> outputs = graph.outputs();
  // Park the uses on an operand while the op is gone; they are all set to
  // the replacement before anything reads them.
  Value *parked = op->operand(0);
  for (const OpUse &u : uses)
    u.op->setOperand(u.operandIndex, parked);
  std::vector<Value *> parkedOutputs = outputs;
  for (Value *&v : parkedOutputs)
    if (v == old)
      v = parked;
  graph.setOutputs(parkedOutputs);

  ReplacedNames names{op->name(), old->name()};
  SourceLoc loc = op->loc();
  const Op *next = graph.nextOp(op);
  // The operands outlive the op: they are values defined elsewhere.
  graph.eraseOp(op);
  OpBuilder builder(graph, next, loc);
  Value *replacement = build(builder, names);
  SPYRE_ASSERT(replacement != nullptr,
               "replacement of op '" + names.opName + "' is null");

  for (const OpUse &u : uses)
    u.op->setOperand(u.operandIndex, replacement);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i] == old)
      parkedOutputs[i] = replacement;
  graph.setOutputs(parkedOutputs);
  return replacement;
}

int eraseDeadOps(Graph &graph) {
  int erased = 0;
  std::vector<Op *> ops = graph.ops();
  // Backwards, so an op whose only user dies is seen after that user.
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Op *op = *it;
    bool live = false;
    for (const Value *r : op->results())
      live = live || graph.isOutput(r) || !graph.usesOf(r).empty();
    if (live)
      continue;
    graph.eraseOp(op);
    ++erased;
  }
  return erased;
}

} // namespace spyre::compiler
