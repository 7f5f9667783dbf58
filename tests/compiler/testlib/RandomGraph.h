// Random valid graphs for round-trip tests: every op kind, random shapes
// (odd sizes included), attributes drawn to fit the operands, constants
// small enough to print inline and large enough not to, names that need
// quoting, and nested annotations with awkward floats and strings.
#pragma once

#include "compiler/ir/Graph.h"

#include <cstdint>
#include <memory>

namespace spyre::compiler::test {

struct RandomGraphOptions {
  int ops = 14;
  /// Attach random annotations to the graph, values and ops.
  bool annotations = true;
  /// Allow names with control characters (the IR text escapes them; graph
  /// JSON rejects them).
  bool controlCharNames = true;
  /// Allow '/' in names (a program refuses it in an input or output name,
  /// which becomes a file name).
  bool slashNames = true;
  /// Allow non-finite constant elements and NaNs with payloads.
  bool specialValues = true;
};

/// A graph that verifies, the same for the same seed.
std::unique_ptr<Graph> randomGraph(uint64_t seed,
                                   const RandomGraphOptions &options = {});

} // namespace spyre::compiler::test
