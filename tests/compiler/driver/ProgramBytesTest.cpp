// The program bytes of every example model at every level, as FNV-1a 64
// digests in tests/golden/compiler/programs.txt: a change to the compiler
// that is not meant to change what it emits (a faster pass, a refactoring)
// must leave them alone. Regenerate with scripts/update-golden.sh and name
// the reason for each changed line in the commit.
//
// The same for the shapes of bench/CompilerBench.cpp (matmuls, batched
// matmuls, softmax, layer norm, the encoder layer, a relu chain;
// compiler/bench-programs.txt), and for every example model compiled again
// from the mapping its first compilation wrote (--mapping-in, which must
// give the same program; compiler/replayed-programs.txt).
#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/FileIO.h"
#include "support/Hash.h"
#include "testlib/Golden.h"

#include "BenchShapes.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>

namespace spyre::compiler {
namespace {

/// `name -O<level> <digest> <size>`.
std::string digestLine(const std::string &name, int level,
                       const isa::Program &program) {
  const std::string bytes = isa::writeProgram(program);
  char line[200];
  std::snprintf(line, sizeof line, "%s -O%d %016" PRIx64 " %zu\n",
                name.c_str(), level, fnv1a64(bytes), bytes.size());
  return line;
}

TEST(ProgramBytes, ExampleModelsAtEveryLevel) {
  std::string digests;
  for (const char *model : kExampleModels) {
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
      digests += digestLine(model, level, r->program);
    }
  }
  test::expectGolden(digests, "compiler/programs.txt");
}

TEST(ProgramBytes, ExampleModelsReplayedFromTheirMapping) {
  const std::string dir = test::makeTempDir();
  std::string digests;
  for (const char *model : kExampleModels) {
    DiagnosticEngine diags;
    std::optional<Graph> g = loadModel(
        test::srcPath(std::string("examples/models/") + model), {}, diags);
    ASSERT_TRUE(g.has_value()) << model << ": " << diags.str();
    for (int level = 0; level <= 2; ++level) {
      CompileOptions options;
      options.optLevel = level;
      std::optional<CompileResult> first =
          compileGraph(*g, hw::builtinConfig(), options, diags);
      ASSERT_TRUE(first.has_value()) << model << " -O" << level << ": "
                                     << diags.str();
      const std::string path = dir + "/mapping.json";
      writeFileAtomic(path, first->mappingJson);
      options.mappingIn = path;
      std::optional<CompileResult> again =
          compileGraph(*g, hw::builtinConfig(), options, diags);
      ASSERT_TRUE(again.has_value()) << model << " -O" << level
                                     << " replayed: " << diags.str();
      EXPECT_EQ(isa::writeProgram(again->program),
                isa::writeProgram(first->program))
          << model << " -O" << level;
      digests += digestLine(model, level, again->program);
    }
  }
  test::expectGolden(digests, "compiler/replayed-programs.txt");
}

TEST(ProgramBytes, BenchmarkShapesAtEveryLevel) {
  std::vector<BenchShape> cases = benchShapes();
  std::string digests;
  for (const auto &[name, graph] : cases) {
    ASSERT_TRUE(graph) << name;
    for (int level = 0; level <= 2; ++level) {
      DiagnosticEngine diags;
      CompileOptions options;
      options.optLevel = level;
      std::optional<CompileResult> r =
          compileGraph(*graph, hw::builtinConfig(), options, diags);
      ASSERT_TRUE(r.has_value()) << name << " -O" << level << ": "
                                 << diags.str();
      digests += digestLine(name, level, r->program);
    }
  }
  test::expectGolden(digests, "compiler/bench-programs.txt");
}

} // namespace
} // namespace spyre::compiler
