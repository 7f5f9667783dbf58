// Helpers for the pass tests: IR text in, IR text out, and the reference
// evaluator run on the same random inputs before and after a rewrite.
#pragma once

#include "compiler/ir/Graph.h"
#include "compiler/pm/PassManager.h"
#include "compiler/ref/Evaluator.h"

#include <memory>
#include <string>
#include <vector>

namespace spyre::compiler::test {

/// Parses IR text (constants inline); fails the test when it does not parse.
std::unique_ptr<Graph> parseIr(const std::string &text);

/// Runs `pipeline` (pipeline text) on `graph` with the built-in hardware
/// config; expects success and returns the pass manager's statistics report.
std::string runPasses(Graph &graph, const std::string &pipeline);

/// The outputs of `graph` on random inputs drawn from `seed` (the same
/// inputs for any graph with the same input names and types).
std::vector<ref::RefTensor> evaluateOnRandomInputs(const Graph &graph,
                                                   uint64_t seed);

/// Expects equal shapes and values that differ by at most `ulps` units in
/// the last place of a double (0: bit for bit; NaN equals NaN).
void expectSameOutputs(const std::vector<ref::RefTensor> &before,
                       const std::vector<ref::RefTensor> &after,
                       int64_t ulps = 0);

} // namespace spyre::compiler::test
