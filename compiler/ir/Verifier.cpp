#include "compiler/ir/Verifier.h"

#include <algorithm>
#include <set>

namespace spyre::compiler {

namespace {

std::string valueRef(const Value *v) { return printName('%', v->name()); }

/// Ops that depend on each other in a circle, in dependency order, or empty.
/// Works on the use-def edges alone, ignoring the list order.
std::vector<const Op *> findCycle(const Graph &graph) {
  std::vector<Op *> ops = graph.ops();
  size_t n = ops.size();
  // Colour per op index: 0 unvisited, 1 on the stack, 2 done.
  std::vector<int> colour(n, 0);
  std::vector<size_t> parentOf(n, SIZE_MAX);
  auto producerIndex = [&](const Value *v) -> size_t {
    if (!v || !v->definingOp() || !graph.contains(v->definingOp()))
      return SIZE_MAX;
    return graph.opIndex(v->definingOp());
  };
  for (size_t root = 0; root < n; ++root) {
    if (colour[root] != 0)
      continue;
    // Iterative depth-first search over operand producers.
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    colour[root] = 1;
    while (!stack.empty()) {
      auto &[node, next] = stack.back();
      if (next == ops[node]->numOperands()) {
        colour[node] = 2;
        stack.pop_back();
        continue;
      }
      size_t p = producerIndex(ops[node]->operand(next++));
      if (p == SIZE_MAX || colour[p] == 2)
        continue;
      if (colour[p] == 1) {
        // node uses p, which is on the stack: p -> ... -> node -> p.
        std::vector<const Op *> cycle;
        for (size_t k = stack.size(); k-- > 0;) {
          cycle.push_back(ops[stack[k].first]);
          if (stack[k].first == p)
            break;
        }
        // Collected from the top of the stack down to p; reversed, each op
        // uses a result of the next one (and the last uses the first).
        std::reverse(cycle.begin(), cycle.end());
        return cycle;
      }
      colour[p] = 1;
      stack.push_back({p, 0});
    }
  }
  return {};
}

class GraphVerifier {
public:
  GraphVerifier(const Graph &graph, DiagnosticEngine &diags)
      : graph_(graph), diags_(diags) {}

  bool run() {
    size_t errorsBefore = diags_.errorCount();
    if (graph_.name().empty())
      graphError("the graph has no name");
    for (const Value *v : graph_.inputs())
      checkDefinition(*v, ValueKind::Input);
    for (const Value *v : graph_.constants())
      checkDefinition(*v, ValueKind::Constant);
    bool outOfOrder = false;
    for (const Op *op : graph_.ops())
      outOfOrder |= !checkOp(*op);
    if (outOfOrder) {
      std::vector<const Op *> cycle = findCycle(graph_);
      if (!cycle.empty()) {
        std::string path;
        for (const Op *op : cycle)
          path += "'" + op->name() + "' -> ";
        path += "'" + cycle.front()->name() + "'";
        diags_.error(opLocation(graph_, *cycle.front()),
                     "ops form a cycle: " + path +
                         " (each uses a result of the next)");
      }
    }
    checkOutputs();
    return diags_.errorCount() == errorsBefore;
  }

private:
  void graphError(std::string message) {
    diags_.error(graphLoc(graph_), std::move(message));
  }

  void opError(const Op &op, const std::string &message) {
    diags_.error(opLocation(graph_, op), opPrefix(op) + message);
  }

  void checkDefinition(const Value &v, ValueKind kind) {
    std::string what = kind == ValueKind::Input ? "input " : "constant ";
    if (v.name().empty() || graph_.findValue(v.name()) != &v)
      graphError(what + valueRef(&v) + " is not registered under its name");
    if (v.kind() != kind || v.definingOp())
      graphError(what + valueRef(&v) + " has the wrong kind");
    std::string shapeProblem = checkShape(v.type().shape);
    if (!shapeProblem.empty())
      graphError(what + valueRef(&v) + ": " + shapeProblem);
    if (kind == ValueKind::Constant) {
      if (!v.constantDataPtr())
        graphError("constant " + valueRef(&v) + " has no data");
      else if (v.constantData().type() != v.type())
        graphError("constant " + valueRef(&v) + " is declared " +
                   v.type().str() + " but its data is " +
                   v.constantData().type().str());
    }
    defined_.insert(&v);
  }

  /// Returns false when an operand is used before its definition.
  bool checkOp(const Op &op) {
    bool inOrder = true;
    if (op.name().empty() || !graph_.contains(&op))
      opError(op, "the op is not registered under its name");
    const OpDef &def = op.def();
    std::vector<TensorType> operandTypes;
    bool operandsOk = true;
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const Value *v = op.operand(i);
      std::string which = "operand " + std::to_string(i) + " (" +
                          std::string(i < def.operands.size() ||
                                              def.maxOperands() == SIZE_MAX
                                          ? def.operandName(i)
                                          : "extra") +
                          ")";
      if (!v) {
        opError(op, which + " is null");
        operandsOk = false;
        continue;
      }
      if (!graph_.contains(v)) {
        opError(op, which + " " + valueRef(v) + " is not a value of this graph");
        operandsOk = false;
        continue;
      }
      if (!defined_.contains(v)) {
        inOrder = false;
        if (v->definingOp() == &op)
          opError(op, which + " " + valueRef(v) + " is the op's own result");
        else
          opError(op, which + " " + valueRef(v) + " is defined later, by op '" +
                          v->definingOp()->name() +
                          "' (ops must be in topological order)");
      }
      operandTypes.push_back(v->type());
    }
    std::vector<Value *> results = op.results();
    for (size_t i = 0; i < results.size(); ++i) {
      const Value *r = results[i];
      if (graph_.findValue(r->name()) != r)
        opError(op, "result " + valueRef(r) + " is not registered under its name");
      if (!r->isOpResult() || r->definingOp() != &op || r->resultIndex() != i)
        opError(op, "result " + std::to_string(i) + " " + valueRef(r) +
                        " does not record its defining op and position");
    }
    if (operandsOk)
      checkSchemaAndTypes(op, operandTypes, results);
    for (const Value *r : results)
      defined_.insert(r);
    return inOrder;
  }

  void checkSchemaAndTypes(const Op &op,
                           const std::vector<TensorType> &operandTypes,
                           const std::vector<Value *> &results) {
    std::vector<OpIssue> issues;
    std::optional<std::vector<TensorType>> inferred =
        compiler::checkOp(op.def(), operandTypes, op.attrs(), issues);
    if (!inferred) {
      for (const OpIssue &issue : issues)
        opError(op, issue.message);
      return;
    }
    if (inferred->size() != results.size()) {
      opError(op, "has " + std::to_string(results.size()) + " results, " +
                      std::string(op.kindName()) + " gives " +
                      std::to_string(inferred->size()));
      return;
    }
    for (size_t i = 0; i < results.size(); ++i)
      if (results[i]->type() != (*inferred)[i])
        opError(op, "result " + std::to_string(i) + " " + valueRef(results[i]) +
                        " has type " + results[i]->type().str() + ", but " +
                        std::string(op.kindName()) + " gives " +
                        (*inferred)[i].str());
  }

  void checkOutputs() {
    const std::vector<Value *> &outputs = graph_.outputs();
    if (outputs.empty())
      graphError("the graph has no outputs");
    std::set<const Value *> seen;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Value *v = outputs[i];
      std::string which = "output " + std::to_string(i);
      if (!v) {
        graphError(which + " is null");
        continue;
      }
      if (!graph_.contains(v)) {
        graphError(which + " " + valueRef(v) + " is not a value of this graph");
        continue;
      }
      if (!seen.insert(v).second)
        graphError(which + " " + valueRef(v) + " is listed twice");
    }
  }

  const Graph &graph_;
  DiagnosticEngine &diags_;
  // Membership only; never iterated, so pointer order cannot leak out.
  std::set<const Value *> defined_;
};

} // namespace

SourceLoc opLocation(const Graph &graph, const Op &op) {
  if (!op.loc().file.empty())
    return op.loc();
  return graphLoc(graph);
}

std::string opPrefix(const Op &op) {
  return "op '" + op.name() + "' (" + std::string(op.kindName()) + "): ";
}

bool verifyGraph(const Graph &graph, DiagnosticEngine &diags) {
  return GraphVerifier(graph, diags).run();
}

} // namespace spyre::compiler
