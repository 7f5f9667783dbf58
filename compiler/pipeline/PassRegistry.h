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

/// The pipeline of optimisation level `level` (0, 1 or 2), replaying the
/// mapping file `mappingIn` unless it is empty, down to the program (the
/// `emit` pass last). `-O0` is the naive plan the optimising pipeline is
/// measured against (docs/compiler.md#the-pipeline); `-O1` divides by the
/// cost model with one op per phase; `-O2` lets independent ops share a
/// phase. `spyre compile --passes` takes the same text (pipelineText).
Pipeline levelPipeline(int level, const std::string &mappingIn = "");
/// `-O0` without a mapping.
Pipeline o0Pipeline();
/// `-O2` without a mapping.
Pipeline o2Pipeline();
/// The pipeline of an optimisation level (0, 1 or 2), or nullopt for
/// another.
std::optional<Pipeline> defaultPipeline(int level);

/// Why `pipeline` cannot be compiled to a program: it does not end with
/// `emit`, or a pass lacks a pass it needs before it (requirementProblem);
/// empty when it can.
std::string programPipelineProblem(const Pipeline &pipeline);

} // namespace spyre::compiler
