// The pass registry and the default pipelines.
//
// Every pass of the compiler is listed here once; the pipeline parser, the
// documentation (docs/passes.md) and `--list-passes` read the list. The
// default pipelines are short functions that read like lists of passes.
#pragma once

#include "compiler/pm/Pass.h"
#include "compiler/pm/PassManager.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace spyre::compiler {

/// Every registered pass, in pipeline order.
std::span<const PassInfo *const> passRegistry();
/// The registered pass called `name`, or nullptr.
const PassInfo *findPass(std::string_view name);
/// `canonicalize, layout`: the registered names, for messages.
std::string registeredPassNames();

/// Parses pipeline text against the registry (parsePipeline of
/// PassManager.h over passRegistry()).
std::optional<Pipeline>
parsePipeline(std::string_view text, DiagnosticEngine &diags,
              const std::string &sourceName = "<pipeline>");

/// `-O0`: the naive plan, the baseline the optimising pipeline is measured
/// against (docs/compiler.md#the-pipeline).
Pipeline o0Pipeline();
/// `-O2`: the optimising pipeline.
Pipeline o2Pipeline();
/// The pipeline of an optimisation level (0 or 2), or nullopt for another.
std::optional<Pipeline> defaultPipeline(int level);

} // namespace spyre::compiler
