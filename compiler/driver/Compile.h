// The compiler as one call: a graph in, a program out, through the pass
// pipeline of an optimisation level or a mapping replay
// (compiler/pipeline/PassRegistry.h levelPipeline), whose last pass, emit,
// makes the program. The `spyre compile` command and the tests both use it.
#pragma once

#include "compiler/ir/Graph.h"
#include "compiler/plan/Estimate.h"
#include "compiler/pm/Target.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

struct CompileOptions {
  /// 0: the naive plan; 1: cost-model division, one op per phase; 2: the
  /// best plan (phases that overlap independent ops).
  int optLevel = 2;
  /// A mapping file to replay (empty: none).
  std::string mappingIn;
  /// A pipeline as text (docs/passes.md) instead of the level's, with
  /// `mappingIn` not used (write `apply-mapping{file=...}` in the text).
  /// It must end with `emit` and hold the passes emission needs
  /// (programPipelineProblem); a text that does not parse or lacks one is
  /// a UserError status, located at `--passes`.
  std::string pipeline;
  /// Pass names (or `all`) after which the IR is printed to irStream.
  std::vector<std::string> printIrAfter;
  std::ostream *irStream = nullptr;
  /// A pass made to fail without a diagnostic, as a bug would: the way to
  /// test the internal-error path (`spyre compile --debug-fail-pass`).
  std::string debugFailPass;
  /// Inputs and outputs at fixed device addresses (a program run against a
  /// device that keeps them, run/Device.h); empty: everything is placed
  /// from address 0.
  Placement placement;
  /// false: constant tensors are declared without their data, which is
  /// never read (ONNX weights in external files stay on disk). The program
  /// then serves a timing-only simulation, not a program file.
  bool constantData = true;
};

struct CompileResult {
  isa::Program program;
  /// The planned graph (layouts and mappings annotated).
  std::unique_ptr<Graph> graph;
  /// The mapping of every op, as --mapping-out writes it.
  std::string mappingJson;
  /// The planner's estimate of every op that runs kernels, in graph order
  /// (compiler/plan/Estimate.h).
  std::vector<OpEstimate> estimates;
  /// Pass statistics, a program summary and the estimates (deterministic
  /// text).
  std::string statistics;
};

/// The pipeline text of a level (`canonicalize,layout,...`).
std::string pipelineForLevel(int optLevel, const std::string &mappingIn);

/// How a compilation ended.
enum class CompileStatus : uint8_t {
  Ok,
  UserError,     ///< the model cannot be compiled; the diagnostics say why
  InternalError, ///< a pass or emission broke its contract: a bug
};

struct CompileOutcome {
  CompileStatus status = CompileStatus::Ok;
  std::optional<CompileResult> result; ///< set exactly when status is Ok
};

/// Compiles a copy of `graph` (which must verify). On failure the
/// diagnostics say what went wrong and `status` whose fault it is.
CompileOutcome compile(const Graph &graph, const hw::HwConfig &config,
                       const CompileOptions &options, DiagnosticEngine &diags);

/// compile() for callers that need no more than the program: nullopt after
/// any failure.
std::optional<CompileResult> compileGraph(const Graph &graph,
                                          const hw::HwConfig &config,
                                          const CompileOptions &options,
                                          DiagnosticEngine &diags);

} // namespace spyre::compiler
