// Small graph-rewriting utilities shared by passes: a builder that places
// new ops at one point and gives them the location of the op they come
// from, replacement of an op that keeps its op and result names (so printed
// IR and diagnostics keep the model's names), and removal of dead ops.
#pragma once

#include "compiler/ir/Graph.h"

#include <functional>
#include <string>
#include <vector>

namespace spyre::compiler {

/// Creates ops before a fixed op (or at the end), each at `loc`.
class OpBuilder {
public:
  OpBuilder(Graph &graph, const Op *before, SourceLoc loc)
      : graph_(graph), before_(before), loc_(std::move(loc)) {}

  Graph &graph() const { return graph_; }

  /// buildOp (defaults filled in, result types inferred) of a single-result
  /// op; `resultName` empty picks a fresh name from `opName`. Returns the
  /// result.
  Value *create(OpKind kind, const std::string &opName,
                std::vector<Value *> operands, AttrDict attrs = {},
                const std::string &resultName = "");

private:
  Graph &graph_;
  const Op *before_;
  SourceLoc loc_;
};

/// The names a replacement takes over from the op it replaces.
struct ReplacedNames {
  std::string opName;
  std::string resultName;
};

/// Replaces the single-result `op` in place: it is erased first (so its op
/// name and result name are free), then `build` creates the replacement
/// with the builder (at the op's position and location) and returns the
/// value that takes over every use of the old result, graph outputs
/// included. `build` may read the old op's operands, which stay valid;
/// while it runs, the old result's uses point at the op's first operand.
Value *replaceOpInPlace(
    Graph &graph, Op *op,
    const std::function<Value *(OpBuilder &builder, const ReplacedNames &names)>
        &build);

/// Erases every op none of whose results is used or a graph output, until
/// none is left; returns how many were erased.
int eraseDeadOps(Graph &graph);

} // namespace spyre::compiler
