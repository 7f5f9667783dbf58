// The registry of passes and the default pipelines.
#include "compiler/pipeline/PassRegistry.h"

#include "compiler/passes/ApplyMapping.h"
#include "compiler/passes/Canonicalize.h"
#include "compiler/passes/Divide.h"
#include "compiler/passes/Layout.h"
#include "compiler/passes/LxPlan.h"
#include "compiler/passes/Schedule.h"
#include "compiler/passes/Tile.h"

#include <algorithm>
#include <vector>

namespace spyre::compiler {

namespace {

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
        &canonicalizePass(), &layoutPass(), &applyMappingPass(), &dividePass(),
        &schedulePass(),     &lxPlanPass(), &tilePass(),
    };
    for (size_t i = 0; i < all.size(); ++i) {
      checkDeclaration(*all[i]);
      for (size_t j = 0; j < i; ++j)
        SPYRE_ASSERT(all[j]->name != all[i]->name,
                     "pass '" + std::string(all[i]->name) +
                         "' registered twice");
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

Pipeline o0Pipeline() {
  // The naive plan -O2 is measured against: every op on every core, alone
  // in its phase, nothing folded or fused, no overlap inside a kernel.
  PassInvocation divide = invocation(dividePass());
  divide.options.set("strategy", Attribute("all-cores"));
  divide.options.set("fuse-bias", Attribute(false));
  divide.options.set("fuse-elementwise", Attribute(false));
  PassInvocation schedule = invocation(schedulePass());
  schedule.options.set("overlap", Attribute(false));
  return {
      invocation(canonicalizePass()), invocation(layoutPass()), divide,
      schedule, invocation(lxPlanPass()), invocation(tilePass()),
  };
}

Pipeline o2Pipeline() {
  return {
      invocation(canonicalizePass()), invocation(layoutPass()),
      invocation(dividePass()),       invocation(schedulePass()),
      invocation(lxPlanPass()),       invocation(tilePass()),
  };
}

std::optional<Pipeline> defaultPipeline(int level) {
  if (level == 0)
    return o0Pipeline();
  if (level == 2)
    return o2Pipeline();
  return std::nullopt;
}

} // namespace spyre::compiler
