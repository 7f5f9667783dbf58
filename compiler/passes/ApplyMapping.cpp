// The `apply-mapping` pass (what it does: ApplyMapping.h).
#include "compiler/passes/ApplyMapping.h"

#include "compiler/plan/Mapping.h"
#include "support/FileIO.h"

namespace spyre::compiler {

const PassInfo &applyMappingPass() {
  static const PassInfo info{
      "apply-mapping",
      "Puts the decisions of a mapping file (--mapping-in) on the ops",
      "every op the file names carries the file's mapping.",
      {
          {"file",
           OptionType::String,
           "",
           "the mapping file (JSON, as --mapping-out writes it)",
           {},
           nullptr},
      },
      {
          {"ops-mapped", "ops given a mapping by the file"},
      },
      [](Graph &graph, PassContext &ctx) {
        const std::string path = ctx.options().getString("file");
        std::string text;
        try {
          text = readFile(path, kJsonFileLimit);
        } catch (const UserError &e) {
          ctx.diags().report(e.diagnostic());
          return PassResult::Failure;
        }
        std::optional<MappingFile> file =
            parseMappingJson(text, path, ctx.diags());
        if (!file || !applyMapping(graph, *file, path, ctx.diags()))
          return PassResult::Failure;
        ctx.addStatistic("ops-mapped", static_cast<int64_t>(file->ops.size()));
        return PassResult::Success;
      },
      [](const Graph &, const PassContext &, DiagnosticEngine &) {
        return true;
      },
  };
  return info;
}

} // namespace spyre::compiler
