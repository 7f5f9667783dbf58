// The pass manager: runs a pipeline of passes over a graph, in order, and
// checks the IR after each one.
//
// After every pass it runs the generic verifier (verifyGraph) and then the
// pass's own postcondition; a failure there is a bug in the pass and is
// reported as an internal error naming the pass, with the IR the pass left
// printed, and the pipeline stops (it never continues on broken IR). A pass
// that reports a user error (an unsupported shape) stops the pipeline with
// Failure. Exceptions never cross a pass boundary: what a pass throws is
// caught here and reported.
//
// A pipeline is data: a list of (pass, options) that prints as text and
// parses back, e.g. `canonicalize,layout{default-dtype=f32 f32-ops=softmax}`:
// passes separated by commas, each optionally followed by `{key=value ...}`
// with options separated by spaces (list values are comma-separated).
#pragma once

#include "compiler/ir/Graph.h"
#include "compiler/pm/Pass.h"
#include "compiler/pm/Target.h"
#include "hw/HwConfig.h"
#include "support/Diagnostic.h"

#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::compiler {

/// One pass of a pipeline with its option values.
struct PassInvocation {
  const PassInfo *pass = nullptr;
  PassOptions options;
};

using Pipeline = std::vector<PassInvocation>;

/// A registered pass with its default options.
PassInvocation invocation(const PassInfo &pass);

/// Parses pipeline text against `passes` (the registry,
/// compiler/pipeline/PassRegistry.h, which also offers this parser over
/// itself). Errors are located in the text (`<pipeline>:1:13: error:
/// unknown pass 'layot'`, with the text and a caret): unknown passes and
/// options, bad values, syntax. `sourceName` names the text in messages (a
/// flag, a file).
std::optional<Pipeline>
parsePipeline(std::string_view text, std::span<const PassInfo *const> passes,
              DiagnosticEngine &diags,
              const std::string &sourceName = "<pipeline>");

/// The text of a pipeline (each pass with its non-default options); parses
/// back to the same pipeline.
std::string pipelineText(const Pipeline &pipeline);

/// Why `pipeline` cannot run: a pass whose requiredBefore passes do not all
/// come before it, in order (`pass 'emit' needs layout, divide, schedule,
/// lx-plan and tile before it, in that order; 'lx-plan' is missing`);
/// empty when nothing is missing.
std::string requirementProblem(const Pipeline &pipeline);

struct PassManagerOptions {
  /// Pass names (or `all`) after which the IR is printed to `irStream`.
  std::vector<std::string> printIrAfter;
  /// Pass names (or `all`) before which the IR is printed to `irStream`.
  std::vector<std::string> printIrBefore;
  /// Stop after the first run of this pass (empty: run everything).
  std::string stopAfter;
  /// Make this pass fail without reporting an error, as a bug would, instead
  /// of running it: a test hook for the internal-error path.
  std::string debugFailPass;
  /// Where printed IR goes; nullptr prints nothing.
  std::ostream *irStream = nullptr;
};

enum class PipelineStatus : uint8_t {
  Success,
  Failure,       ///< a user error, reported as diagnostics
  InternalError, ///< a pass broke the IR or its postcondition: a bug
};

/// What one pass run did.
struct PassRunRecord {
  std::string pass;       ///< the pass name
  std::string invocation; ///< name and non-default options
  const PassInfo *info = nullptr;
  std::vector<int64_t> statistics; ///< in the pass's declaration order
  double seconds = 0;
  PipelineStatus status = PipelineStatus::Success;
};

class PassManager {
public:
  explicit PassManager(const hw::HwConfig &hw, PassManagerOptions options = {});

  void addPass(const PassInfo &pass);
  void addPass(const PassInfo &pass, PassOptions options);
  void addPipeline(const Pipeline &pipeline);
  const Pipeline &pipeline() const { return pipeline_; }

  /// Runs the pipeline on `graph`, which must verify (a graph that does not
  /// is reported as a Failure before any pass runs, as is a pipeline with a
  /// requirementProblem). Names in printIrAfter,
  /// printIrBefore and stopAfter that are not passes of the pipeline are
  /// usage errors reported before anything runs.
  PipelineStatus run(Graph &graph, DiagnosticEngine &diags);

  /// What the pipeline compiles for and the program it made (Target.h):
  /// set the placement and constant data before run(); the program is
  /// there after a run whose pipeline ends in `emit`.
  CompileTarget &target() { return target_; }
  const CompileTarget &target() const { return target_; }

  /// One record per pass that ran (the failing one included).
  const std::vector<PassRunRecord> &records() const { return records_; }
  /// The pass that failed or at which the run stopped (empty when all ran).
  const std::string &stoppedAt() const { return stoppedAt_; }

  /// Every statistic of every pass run, with its description:
  ///   canonicalize
  ///     linear-to-matmul   3  linear ops rewritten as ...
  std::string statisticsReport() const;
  /// Wall-clock time per pass; not deterministic, so never part of golden
  /// output.
  std::string timingReport() const;

private:
  bool checkNames(DiagnosticEngine &diags) const;
  bool wants(const std::vector<std::string> &names,
             std::string_view pass) const;
  PipelineStatus runOne(const PassInvocation &inv, Graph &graph,
                        DiagnosticEngine &diags);

  const hw::HwConfig &hw_;
  PassManagerOptions options_;
  Pipeline pipeline_;
  CompileTarget target_;
  std::vector<PassRunRecord> records_;
  std::string stoppedAt_;
};

} // namespace spyre::compiler
