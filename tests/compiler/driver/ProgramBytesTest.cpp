// The program bytes of every example model at every level, as FNV-1a 64
// digests in tests/golden/compiler/programs.txt: a change to the compiler
// that is not meant to change what it emits (a faster pass, a refactoring)
// must leave them alone. Regenerate with scripts/update-golden.sh and name
// the reason for each changed line in the commit.
#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/Hash.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>

namespace spyre::compiler {
namespace {

TEST(ProgramBytes, ExampleModelsAtEveryLevel) {
  const char *const kModels[] = {
      "bert_encoder/model.onnx", "gpt2_layer/model.json",
      "gpt_block/model.json",    "gpt_decoder/model.onnx",
      "llama_block/model.onnx",  "mlp_block/model.json",
      "norm_softmax/model.json", "torch_mlp/model.onnx"};
  std::string digests;
  for (const char *model : kModels) {
    DiagnosticEngine diags;
    std::optional<Graph> g = loadModel(
        test::srcPath(std::string("examples/models/") + model), {}, diags);
    ASSERT_TRUE(g.has_value()) << model << ": " << diags.str();
    for (int level = 0; level <= 2; ++level) {
      CompileOptions options;
      options.optLevel = level;
      std::optional<CompileResult> r =
          compileGraph(*g, hw::builtinConfig(), options, diags);
      ASSERT_TRUE(r.has_value()) << model << " -O" << level << ": "
                                 << diags.str();
      const std::string bytes = isa::writeProgram(r->program);
      char line[160];
      std::snprintf(line, sizeof line, "%s -O%d %016" PRIx64 " %zu\n", model,
                    level, fnv1a64(bytes), bytes.size());
      digests += line;
    }
  }
  test::expectGolden(digests, "compiler/programs.txt");
}

} // namespace
} // namespace spyre::compiler
