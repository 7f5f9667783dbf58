// The program bytes of every example model and of every shape the compiler
// benchmarks (bench/CompilerBench.cpp) at every level, as FNV-1a 64 digests
// in tests/golden/compiler/programs.txt and bench-programs.txt: a change to
// the compiler that is not meant to change what it emits (a faster pass, a
// refactoring) must leave them alone. Regenerate with
// scripts/update-golden.sh and name the reason for each changed line in the
// commit.
#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/ir/Parser.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/Hash.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>

namespace spyre::compiler {
namespace {

/// `name -O<level> <digest> <bytes>` for each level.
std::string digestLines(const Graph &g, const std::string &name) {
  std::string lines;
  for (int level = 0; level <= 2; ++level) {
    DiagnosticEngine diags;
    CompileOptions options;
    options.optLevel = level;
    std::optional<CompileResult> r =
        compileGraph(g, hw::builtinConfig(), options, diags);
    EXPECT_TRUE(r.has_value()) << name << " -O" << level << ": "
                               << diags.str();
    if (!r)
      return lines;
    const std::string bytes = isa::writeProgram(r->program);
    char line[200];
    std::snprintf(line, sizeof line, "%s -O%d %016" PRIx64 " %zu\n",
                  name.c_str(), level, fnv1a64(bytes), bytes.size());
    lines += line;
  }
  return lines;
}

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

std::string dims(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The one-op graphs of bench/CompilerBench.cpp (BM_Matmul,
/// BM_BatchedMatmul, BM_Softmax, BM_LayerNorm) and its 1,000-op relu chain.
TEST(ProgramBytes, BenchmarkShapesAtEveryLevel) {
  std::vector<std::pair<std::string, std::string>> cases;
  const std::vector<std::vector<int64_t>> matmuls = {
      {1024, 1024, 1024}, {4096, 4096, 4096}, {2048, 4096, 4096},
      {32, 4096, 4096},   {1, 4096, 4096},    {64, 16384, 128}};
  for (const std::vector<int64_t> &s : matmuls) {
    const int64_t m = s[0], k = s[1], n = s[2];
    cases.emplace_back("matmul " + dims(s),
                       "graph @mm {\n  input %a : f32" + dims({m, k}) +
                           "\n  input %b : f32" + dims({k, n}) +
                           "\n  %y = matmul @mm(%a, %b) : f32" +
                           dims({m, n}) + "\n  return %y\n}\n");
  }
  for (int64_t n : {1024, 2048, 4096, 8192, 12800})
    cases.emplace_back("batched_matmul " + std::to_string(n),
                       "graph @bmm {\n  input %a : f32" +
                           dims({8, 512, 4096}) + "\n  input %b : f32" +
                           dims({4096, n}) +
                           "\n  %y = matmul @bmm(%a, %b) : f32" +
                           dims({8, 512, n}) + "\n  return %y\n}\n");
  cases.emplace_back("softmax", "graph @sm {\n  input %x : f32" +
                                    dims({8192, 4096}) +
                                    "\n  %y = softmax @sm(%x) {axis = -1} : "
                                    "f32" +
                                    dims({8192, 4096}) +
                                    "\n  return %y\n}\n");
  cases.emplace_back(
      "layernorm",
      "graph @ln {\n  input %x : f32" + dims({8192, 4096}) +
          "\n  input %w : f32" + dims({4096}) + "\n  input %b : f32" +
          dims({4096}) +
          "\n  %y = layernorm @ln(%x, %w, %b) {axis = -1, epsilon = "
          "1e-05} : f32" +
          dims({8192, 4096}) + "\n  return %y\n}\n");
  std::string chain = "graph @chain {\n  input %v0 : f32[7, 64]\n";
  for (int i = 0; i < 1000; ++i)
    chain += "  %v" + std::to_string(i + 1) + " = relu @r" +
             std::to_string(i) + "(%v" + std::to_string(i) +
             ") : f32[7, 64]\n";
  chain += "  return %v1000\n}\n";
  cases.emplace_back("relu_chain 1000", chain);

  std::string digests;
  for (const auto &[name, ir] : cases) {
    DiagnosticEngine diags;
    std::unique_ptr<Graph> g = parseGraph(ir, "bench.ir", diags);
    ASSERT_TRUE(g) << name << ": " << diags.str();
    digests += digestLines(*g, name);
  }
  test::expectGolden(digests, "compiler/bench-programs.txt");
}

} // namespace
} // namespace spyre::compiler
