// The registry of passes and the default pipelines.
#include "compiler/pipeline/PassRegistry.h"

#include "compiler/passes/AppendOutputs.h"
#include "compiler/passes/ApplyMapping.h"
#include "compiler/passes/Canonicalize.h"
#include "compiler/passes/Divide.h"
#include "compiler/passes/Emit.h"
#include "compiler/passes/FuseGatedMatmul.h"
#include "compiler/passes/Layout.h"
#include "compiler/passes/LxPlan.h"
#include "compiler/passes/Schedule.h"
#include "compiler/passes/Tile.h"

#include <algorithm>
#include <initializer_list>
#include <utility>
#include <vector>

namespace spyre::compiler {

namespace {

using Options = std::vector<std::pair<std::string, Attribute>>;

/// One pass of a level's pipeline: its options that differ from the
/// defaults, and whether the level runs it.
struct Step {
  const PassInfo &pass;
  Options options = {};
  bool runs = true;
};

Pipeline pipelineOf(std::initializer_list<Step> steps) {
  Pipeline pipeline;
  for (const Step &step : steps) {
    if (!step.runs)
      continue;
    PassInvocation inv = invocation(step.pass);
    for (const auto &[name, value] : step.options)
      inv.options.set(name, value);
    pipeline.push_back(std::move(inv));
  }
  return pipeline;
}

bool isKebabCase(std::string_view name) {
  if (name.empty() || name.front() == '-' || name.back() == '-')
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

/// A declaration the registry accepts: kebab-case names, unique option and
/// statistic names, a run function, a summary.
void checkDeclaration(const PassInfo &pass) {
  std::string where = "pass '" + std::string(pass.name) + "'";
  SPYRE_ASSERT(isKebabCase(pass.name), where + ": name is not kebab-case");
  SPYRE_ASSERT(!pass.summary.empty(), where + ": no summary");
  SPYRE_ASSERT(static_cast<bool>(pass.run), where + ": no run function");
  for (size_t i = 0; i < pass.options.size(); ++i) {
    SPYRE_ASSERT(isKebabCase(pass.options[i].name),
                 where + ": option '" + std::string(pass.options[i].name) +
                     "' is not kebab-case");
    SPYRE_ASSERT(pass.findOption(pass.options[i].name) == &pass.options[i],
                 where + ": option declared twice");
  }
  for (size_t i = 0; i < pass.statistics.size(); ++i) {
    SPYRE_ASSERT(isKebabCase(pass.statistics[i].name),
                 where + ": statistic '" +
                     std::string(pass.statistics[i].name) +
                     "' is not kebab-case");
    SPYRE_ASSERT(pass.statisticIndex(pass.statistics[i].name) ==
                     static_cast<int>(i),
                 where + ": statistic declared twice");
  }
  // Every default must parse (PassOptions asserts it).
  PassOptions defaults(pass);
}

} // namespace

std::span<const PassInfo *const> passRegistry() {
  static const std::vector<const PassInfo *> passes = [] {
    std::vector<const PassInfo *> all{
        &canonicalizePass(), &appendOutputsPass(), &fuseGatedMatmulPass(),
        &layoutPass(),       &applyMappingPass(),  &dividePass(),
        &schedulePass(),     &lxPlanPass(),        &tilePass(),
        &emitPass(),
    };
    for (size_t i = 0; i < all.size(); ++i) {
      checkDeclaration(*all[i]);
      for (size_t j = 0; j < i; ++j)
        SPYRE_ASSERT(all[j]->name != all[i]->name,
                     "pass '" + std::string(all[i]->name) +
                         "' registered twice");
      for (std::string_view needed : all[i]->requiredBefore)
        SPYRE_ASSERT(std::any_of(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(i),
                                 [&](const PassInfo *p) {
                                   return p->name == needed;
                                 }),
                     "pass '" + std::string(all[i]->name) + "' needs '" +
                         std::string(needed) +
                         "', which is not registered before it");
    }
    return all;
  }();
  return passes;
}

const PassInfo *findPass(std::string_view name) {
  for (const PassInfo *p : passRegistry())
    if (p->name == name)
      return p;
  return nullptr;
}

std::string registeredPassNames() {
  std::string out;
  for (const PassInfo *p : passRegistry())
    out += (out.empty() ? "" : ", ") + std::string(p->name);
  return out;
}

std::optional<Pipeline> parsePipeline(std::string_view text,
                                      DiagnosticEngine &diags,
                                      const std::string &sourceName) {
  return parsePipeline(text, passRegistry(), diags, sourceName);
}

Pipeline levelPipeline(int level, const std::string &mappingIn) {
  SPYRE_ASSERT(level >= 0 && level <= 2,
               "optimisation level " + std::to_string(level));
  // -O0 is the naive plan -O2 is measured against: every op on every core,
  // alone in its phase, nothing folded or fused (no gated products), no
  // overlap inside a kernel. -O1 keeps the cost model's division, one op per phase.
  const bool naive = level == 0;
  return pipelineOf({
      {canonicalizePass()},
      {appendOutputsPass()},
      {fuseGatedMatmulPass(), {}, !naive},
      {layoutPass()},
      {applyMappingPass(),
       {{"file", Attribute(mappingIn)}},
       !mappingIn.empty()},
      {dividePass(), naive ? Options{{"strategy", Attribute("all-cores")},
                                     {"fuse-bias", Attribute(false)},
                                     {"fuse-elementwise", Attribute(false)}}
                           : Options{}},
      {schedulePass(), {{"overlap", Attribute(level == 2)}}},
      {lxPlanPass()},
      {tilePass()},
      {emitPass()},
  });
}

Pipeline o0Pipeline() { return levelPipeline(0); }

Pipeline o2Pipeline() { return levelPipeline(2); }

std::optional<Pipeline> defaultPipeline(int level) {
  if (level < 0 || level > 2)
    return std::nullopt;
  return levelPipeline(level);
}

std::string programPipelineProblem(const Pipeline &pipeline) {
  if (pipeline.empty() || pipeline.back().pass != &emitPass())
    return "a pipeline that is compiled to a program must end with emit, "
           "the pass that makes the program (spyre graph opt runs any "
           "pipeline)";
  return requirementProblem(pipeline);
}

} // namespace spyre::compiler
