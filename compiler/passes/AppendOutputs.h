// The `append-outputs` pass: a graph output that is a graph input with more
// joined after it,
//
//   %present = concat(%past, %new, ...) {axis = a}   (%past a graph input)
//
// becomes an output of what is joined only, %present = concat(%new, ...):
// the program writes what the step appends, not a copy of what it was given.
// That is how a key/value cache exported to ONNX works (`past_key_values.N`
// inputs, `present.N` outputs the next step passes back as its past): the
// past stays where it is on the device and the step's new keys and values go
// after it, as the persistent device appends the new keys and values of the
// config.json form (docs/llm.md). Copying the past into the output instead
// read and wrote the whole cache, twice the layer's other traffic in a
// Granite decode step. Whoever runs the program gives the model's output as
// the input followed by the program's output along the axis
// (appendedOutput; run/RunModel.h does).
//
// The rewrite needs: the concat has more than one operand, its result is
// read by no op (only the graph output), and its first operand is a graph
// input that is not itself a graph output. The output keeps its op and value
// names; its shape becomes that of what is joined.
//
// Postcondition: no such output is left.
#pragma once

#include "compiler/ir/Graph.h"
#include "compiler/pm/Pass.h"

#include <optional>

namespace spyre::compiler {

const PassInfo &appendOutputsPass();

/// A graph output the pass makes an append: the graph input it follows and
/// the axis along which.
struct AppendedOutput {
  const Value *input = nullptr;
  int64_t axis = 0;
};

/// Whether graph output `output` is an input with more joined after it, as
/// the pass rewrites (on the graph before the pass).
std::optional<AppendedOutput> appendedOutput(const Graph &graph,
                                             const Value &output);

} // namespace spyre::compiler
