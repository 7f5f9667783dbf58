// The graph verifier: runs after every reader and every pass.
//
// It checks what every later stage relies on:
//  - every value and op has a non-empty name registered with the graph;
//  - every operand is a value of this graph, defined before the op that
//    uses it (the op list is topological; a cycle is reported as one);
//  - each result knows its defining op and position;
//  - every op carries exactly the attributes of its schema, with the
//    schema's types and permitted values, and passes its verifier hook;
//  - each op's result count and types equal what inference gives;
//  - constants hold data of their declared type;
//  - the graph has at least one output, each a value of the graph, none
//    listed twice.
// Problems are reported, never asserted: a pass that breaks the IR gets a
// message naming the op, the operand and what was expected.
#pragma once

#include "compiler/ir/Graph.h"
#include "support/Diagnostic.h"

namespace spyre::compiler {

/// Reports every problem as an error in `diags`, located at the op's source
/// location when it has one; returns whether the graph is valid.
bool verifyGraph(const Graph &graph, DiagnosticEngine &diags);

/// Where diagnostics about `op` point: its source location, or the graph
/// (graphLoc) for an op a pass made without one.
SourceLoc opLocation(const Graph &graph, const Op &op);

/// `op 'fc1' (linear): `: how messages about an op begin.
std::string opPrefix(const Op &op);

} // namespace spyre::compiler
