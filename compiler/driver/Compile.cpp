// The compiler driver (what it does: Compile.h).
#include "compiler/driver/Compile.h"

#include "compiler/pipeline/PassRegistry.h"
#include "compiler/plan/Mapping.h"
#include "compiler/pm/PassManager.h"
#include "support/Hash.h"

#include <fmt/format.h>

namespace spyre::compiler {

namespace {

std::string programSummary(const isa::Program &program,
                           const hw::HwConfig &config) {
  uint64_t deviceBytes = 0, constBytes = 0;
  for (const isa::TensorDecl &t : program.tensors) {
    const uint64_t bytes = t.sizeSticks * isa::kStickBytes;
    deviceBytes += bytes;
    if (t.kind == isa::TensorKind::Const)
      constBytes += bytes;
  }
  int cores = 0, lastCore = -1;
  for (const isa::Stream &s : program.streams)
    if (s.core != lastCore) {
      ++cores;
      lastCore = s.core;
    }
  return fmt::format(
      "program:\n  tensors: {}\n  device bytes: {} ({} constant)\n"
      "  streams: {} on {} of {} cores\n  instructions: {}\n"
      "  program bytes: {}\n",
      program.tensors.size(), deviceBytes, constBytes, program.streams.size(),
      cores, config.chip.cores, program.instructionCount(),
      isa::writeProgram(program).size());
}

} // namespace

std::string pipelineForLevel(int optLevel, const std::string &mappingIn) {
  return pipelineText(levelPipeline(optLevel, mappingIn));
}

CompileOutcome compile(const Graph &graph, const hw::HwConfig &config,
                       const CompileOptions &options, DiagnosticEngine &diags) {
  SPYRE_ASSERT(options.optLevel >= 0 && options.optLevel <= 2,
               "optimisation level");
  CompileResult r;
  r.graph = graph.clone();
  PassManagerOptions pmo;
  pmo.printIrAfter = options.printIrAfter;
  pmo.irStream = options.irStream;
  pmo.debugFailPass = options.debugFailPass;
  PassManager pm(config, pmo);
  pm.target().placement = options.placement;
  pm.target().constantData = options.constantData;
  if (options.pipeline.empty()) {
    pm.addPipeline(levelPipeline(options.optLevel, options.mappingIn));
  } else {
    std::optional<Pipeline> given =
        parsePipeline(options.pipeline, diags, "--passes");
    if (!given)
      return {CompileStatus::UserError, std::nullopt};
    if (const std::string problem = programPipelineProblem(*given);
        !problem.empty()) {
      diags.error(SourceLoc{"--passes"}, problem);
      return {CompileStatus::UserError, std::nullopt};
    }
    pm.addPipeline(*given);
  }
  switch (pm.run(*r.graph, diags)) {
  case PipelineStatus::Success:
    break;
  case PipelineStatus::Failure:
    return {CompileStatus::UserError, std::nullopt};
  case PipelineStatus::InternalError:
    return {CompileStatus::InternalError, std::nullopt};
  }
  SPYRE_ASSERT(pm.target().program.has_value(),
               "a pipeline that ends with emit left no program");
  r.program = std::move(*pm.target().program);
  r.mappingJson = mappingJson(
      collectMapping(*r.graph, toHex(config.fingerprint(), 16)));
  r.estimates = estimateOps(*r.graph, config);
  r.statistics = pm.statisticsReport() + programSummary(r.program, config) +
                 estimatesText(r.estimates);
  return {CompileStatus::Ok, std::move(r)};
}

std::optional<CompileResult> compileGraph(const Graph &graph,
                                          const hw::HwConfig &config,
                                          const CompileOptions &options,
                                          DiagnosticEngine &diags) {
  CompileOutcome outcome = compile(graph, config, options, diags);
  return std::move(outcome.result);
}

} // namespace spyre::compiler
