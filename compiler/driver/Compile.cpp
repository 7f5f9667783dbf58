// The compiler driver (what it does: Compile.h).
#include "compiler/driver/Compile.h"

#include "compiler/emit/Emission.h"
#include "compiler/passes/ApplyMapping.h"
#include "compiler/passes/Divide.h"
#include "compiler/passes/Schedule.h"
#include "compiler/pipeline/PassRegistry.h"
#include "compiler/plan/Mapping.h"
#include "compiler/pm/PassManager.h"
#include "support/Hash.h"

#include <fmt/format.h>

namespace spyre::compiler {

namespace {

Pipeline pipelineOf(int optLevel, const std::string &mappingIn) {
  Pipeline p = optLevel == 0 ? o0Pipeline() : o2Pipeline();
  if (optLevel == 1)
    for (PassInvocation &inv : p)
      if (inv.pass == &schedulePass())
        inv.options.set("overlap", Attribute(false));
  if (!mappingIn.empty()) {
    PassInvocation apply = invocation(applyMappingPass());
    apply.options.set("file", Attribute(mappingIn));
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i].pass == &dividePass()) {
        p.insert(p.begin() + static_cast<std::ptrdiff_t>(i), apply);
        break;
      }
  }
  return p;
}

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
  return pipelineText(pipelineOf(optLevel, mappingIn));
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
  if (options.pipeline.empty()) {
    pm.addPipeline(pipelineOf(options.optLevel, options.mappingIn));
  } else {
    std::optional<Pipeline> given =
        parsePipeline(options.pipeline, diags, "--passes");
    if (!given)
      return {CompileStatus::UserError, std::nullopt};
    // Emission reads what these passes annotate; without one of them it
    // would fail on a graph it cannot handle, a bug's symptom for a user's
    // choice.
    size_t next = 0;
    for (const PassInvocation &inv : *given)
      if (next < std::size(kPassesEmissionNeeds) &&
          inv.pass->name == kPassesEmissionNeeds[next])
        ++next;
    if (next < std::size(kPassesEmissionNeeds)) {
      diags.error(SourceLoc{"--passes"},
                  "a pipeline that is compiled to a program must run layout, "
                  "divide, schedule, lx-plan and tile in that order, which "
                  "emission needs; '" +
                      std::string(kPassesEmissionNeeds[next]) +
                      "' is missing (spyre graph opt runs any pipeline)");
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
  const size_t errorsBefore = diags.errorCount();
  std::optional<isa::Program> program = emitProgram(
      *r.graph, config, diags, options.placement, options.constantData);
  if (!program) {
    if (diags.errorCount() > errorsBefore)
      return {CompileStatus::UserError, std::nullopt};
    diags.error(graphLoc(*r.graph),
                "internal error in emission: it failed without reporting an "
                "error");
    return {CompileStatus::InternalError, std::nullopt};
  }
  r.program = std::move(*program);
  r.mappingJson = mappingJson(
      collectMapping(*r.graph, toHex(config.fingerprint(), 16)));
  r.statistics = pm.statisticsReport() + programSummary(r.program, config);
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
