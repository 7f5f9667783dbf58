// Fuzz target `graph_json`: the graph JSON loader (compiler/import) on
// arbitrary text. Relative constant files resolve in
// examples/models/gpt_block, so seeds naming its .npy files load them. A
// graph the loader accepts must serialise (constants inline) to JSON that
// loads again and serialises to the same text.
#include "FuzzTarget.h"

#include "compiler/import/GraphJson.h"
#include "support/Diagnostic.h"

#include <limits>
#include <string>

using namespace spyre;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string baseDir =
      std::string(SPYRE_SOURCE_DIR) + "/examples/models/gpt_block";
  DiagnosticEngine diags;
  std::unique_ptr<compiler::Graph> graph;
  try {
    graph = compiler::parseGraphJson(fuzz::asText(data, size), "fuzz.json",
                                     baseDir, diags);
  } catch (const UserError &) {
    return 0;
  }
  if (!graph)
    return 0;

  compiler::GraphJsonWriteOptions options;
  options.inlineLimit = std::numeric_limits<int64_t>::max();
  compiler::GraphJsonFiles files = compiler::serializeGraphJson(*graph, options);
  // Non-finite constants go to .npy files; the text alone cannot reload.
  if (!files.constantFiles.empty())
    return 0;
  DiagnosticEngine again;
  std::unique_ptr<compiler::Graph> back =
      compiler::parseGraphJson(files.json, "fuzz2.json", "", again);
  SPYRE_ASSERT(back != nullptr,
               "the JSON of an accepted graph does not load:\n" + again.str() +
                   files.json);
  SPYRE_ASSERT(compiler::serializeGraphJson(*back, options).json == files.json,
               "an accepted graph serialises differently after a reload:\n" +
                   files.json);
  return 0;
}
