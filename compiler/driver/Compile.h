// The compiler as one call: a graph in, a program out, through the pass
// pipeline of an optimisation level (PassRegistry.h), an optional replayed
// mapping, and emission (Emit.h). The `spyre compile` command and the tests
// both use it.
#pragma once

#include "compiler/ir/Graph.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace spyre::compiler {

struct CompileOptions {
  /// 0: the naive plan; 1: cost-model division, one op per phase; 2: the
  /// best plan (phases that overlap independent ops).
  int optLevel = 2;
  /// A mapping file to replay (empty: none).
  std::string mappingIn;
  /// Pass names (or `all`) after which the IR is printed to irStream.
  std::vector<std::string> printIrAfter;
  std::ostream *irStream = nullptr;
};

struct CompileResult {
  isa::Program program;
  /// The planned graph (layouts and mappings annotated).
  std::unique_ptr<Graph> graph;
  /// The mapping of every op, as --mapping-out writes it.
  std::string mappingJson;
  /// Pass statistics and a program summary (deterministic text).
  std::string statistics;
};

/// The pipeline text of a level (`canonicalize,layout,...`).
std::string pipelineForLevel(int optLevel, const std::string &mappingIn);

/// Compiles a copy of `graph` (which must verify). nullopt after reporting
/// user errors; an internal error in a pass is reported as such and also
/// gives nullopt (the caller tells them apart by the diagnostics' text).
std::optional<CompileResult> compileGraph(const Graph &graph,
                                          const hw::HwConfig &config,
                                          const CompileOptions &options,
                                          DiagnosticEngine &diags);

} // namespace spyre::compiler
