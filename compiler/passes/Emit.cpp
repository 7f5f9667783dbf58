// The `emit` pass (what it does: Emit.h).
#include "compiler/passes/Emit.h"

#include "compiler/emit/Emission.h"
#include "compiler/plan/PlanningSupport.h"

namespace spyre::compiler {

const PassInfo &emitPass() {
  static const PassInfo info{
      "emit",
      "Emission: the program of the annotated graph, the kernels of every "
      "op on the cores, LX region, tiles and phase of its mapping",
      "the pipeline's target holds the program; every op that runs kernels "
      "has cores, a phase, an LX region and (a matmul) tiles in its "
      "mapping.",
      {},
      {
          {"tensors", "device tensors the program declares"},
          {"streams", "instruction streams of the program"},
          {"instructions", "instructions in all streams"},
      },
      [](Graph &graph, PassContext &ctx) {
        CompileTarget *target = ctx.target();
        SPYRE_ASSERT(target, "the emit pass runs without a target");
        std::optional<isa::Program> program =
            emitProgram(graph, ctx.hw(), ctx.diags(), target->placement,
                        target->constantData);
        if (!program)
          return PassResult::Failure;
        ctx.addStatistic("tensors",
                         static_cast<int64_t>(program->tensors.size()));
        ctx.addStatistic("streams",
                         static_cast<int64_t>(program->streams.size()));
        ctx.addStatistic("instructions",
                         static_cast<int64_t>(program->instructionCount()));
        target->program = std::move(*program);
        return PassResult::Success;
      },
      [](const Graph &graph, const PassContext &ctx, DiagnosticEngine &diags) {
        if (!ctx.target() || !ctx.target()->program) {
          diags.error(graphLoc(graph), "no program in the target");
          return false;
        }
        return checkMappings(graph, diags, true, true, true);
      },
      {"layout", "divide", "schedule", "lx-plan", "tile"},
  };
  return info;
}

} // namespace spyre::compiler
