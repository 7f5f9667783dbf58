// Patterns that ONNX exporters write out op by op, recognised in the graph
// the importer made and replaced by the single op the IR has for them.
//
//  - RMSNorm: x / sqrt(mean(x^2) + eps), with x^2 as pow 2 or x * x, the
//    mean a reduce_mean with keepdims over the trailing axes, eps a
//    one-element constant, and the division written as div, as mul by
//    reciprocal(sqrt(...)), by 1 / sqrt(...) or by rsqrt(...); optionally
//    followed by a mul with a weight of the normalised shape. Becomes
//    rmsnorm {axis, epsilon} (with the weight), named after the last op.
//    Every step in between must feed nothing else.
//
// (The erf form of GELU is fused by the canonicalize pass; causal masks by
// the importer itself, which sees the mask's boolean condition.)
#pragma once

#include "compiler/ir/Graph.h"

namespace spyre::compiler {

/// Fuses every RMSNorm pattern; returns how many.
int fuseRmsNorm(Graph &graph);

/// Erases ops none of whose results is used or a graph output, then
/// constants likewise; returns how many ops were erased.
int eraseUnused(Graph &graph);

} // namespace spyre::compiler
