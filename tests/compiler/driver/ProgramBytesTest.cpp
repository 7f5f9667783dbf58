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
#include "compiler/ir/Parser.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/FileIO.h"
#include "support/Hash.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>

namespace spyre::compiler {
namespace {

const char *const kModels[] = {
    "bert_encoder/model.onnx", "gpt2_layer/model.json",
    "gpt_block/model.json",    "gpt_decoder/model.onnx",
    "llama_block/model.onnx",  "mlp_block/model.json",
    "norm_softmax/model.json", "torch_mlp/model.onnx"};

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
      digests += digestLine(model, level, r->program);
    }
  }
  test::expectGolden(digests, "compiler/programs.txt");
}

TEST(ProgramBytes, ExampleModelsReplayedFromTheirMapping) {
  const std::string dir = test::makeTempDir();
  std::string digests;
  for (const char *model : kModels) {
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

std::string dims(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string matmulIr(int64_t m, int64_t k, int64_t n) {
  return "graph @mm {\n  input %a : f32" + dims({m, k}) +
         "\n  input %b : f32" + dims({k, n}) +
         "\n  %y = matmul @mm(%a, %b) : f32" + dims({m, n}) +
         "\n  return %y\n}\n";
}

std::string batchedMatmulIr(int64_t n) {
  const int64_t b = 8, m = 512, k = 4096;
  return "graph @bmm {\n  input %a : f32" + dims({b, m, k}) +
         "\n  input %b : f32" + dims({k, n}) +
         "\n  %y = matmul @bmm(%a, %b) : f32" + dims({b, m, n}) +
         "\n  return %y\n}\n";
}

/// BM_CompileEncoderLayer's graph: a BERT-base encoder layer built op by
/// op with constant weights.
std::unique_ptr<Graph> encoderLayer() {
  const int64_t s = 512, d = 768, h = 12, dh = 64, f = 3072;
  auto g = std::make_unique<Graph>("encoder");
  auto constant = [&](const std::string &name, std::vector<int64_t> shape) {
    TensorType t{ElementType::F32, shape};
    std::vector<double> v(static_cast<size_t>(t.elementCount()));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = 0.01 * static_cast<double>(static_cast<int64_t>(i % 17) - 8);
    return g->addConstant(name, ConstantData::fromDoubles(t, v));
  };
  auto op = [&](OpKind kind, const std::string &name,
                std::vector<Value *> operands, AttrDict attrs = {}) {
    return buildOp(*g, kind, name, std::move(operands), std::move(attrs))
        ->result(0);
  };
  auto linear = [&](const std::string &name, Value *x, int64_t in,
                    int64_t out) {
    return op(OpKind::Linear, name,
              {x, constant(name + ".w", {out, in}), constant(name + ".b", {out})});
  };
  auto heads = [&](const std::string &name, Value *x,
                   std::vector<int64_t> perm) {
    Value *r = op(OpKind::Reshape, name + ".split", {x},
                  {{"shape", Attribute::ints({s, h, dh})}});
    return op(OpKind::Transpose, name + ".heads", {r},
              {{"perm", Attribute::ints(perm)}});
  };
  auto norm = [&](const std::string &name, Value *x) {
    return op(OpKind::LayerNorm, name,
              {x, constant(name + ".w", {d}), constant(name + ".b", {d})},
              {{"axis", Attribute(int64_t{-1})}, {"epsilon", Attribute(1e-5)}});
  };
  Value *x = g->addInput("x", TensorType{ElementType::F32, {s, d}});
  Value *q = heads("q", linear("q", x, d, d), {1, 0, 2});
  Value *k = heads("k", linear("k", x, d, d), {1, 2, 0});
  Value *v = heads("v", linear("v", x, d, d), {1, 0, 2});
  Value *scores = op(OpKind::Matmul, "scores", {q, k});
  Value *scaled = op(OpKind::Mul, "scale", {scores, constant("scale", {1})});
  Value *p = op(OpKind::Softmax, "softmax", {scaled},
                {{"axis", Attribute(int64_t{-1})}});
  Value *ctx = op(OpKind::Matmul, "context", {p, v});
  Value *merged = op(OpKind::Transpose, "merge", {ctx},
                     {{"perm", Attribute::ints({1, 0, 2})}});
  Value *flat = op(OpKind::Reshape, "merge.flat", {merged},
                   {{"shape", Attribute::ints({s, d})}});
  Value *attn = linear("attn_out", flat, d, d);
  Value *h1 = norm("norm1", op(OpKind::Add, "residual1", {attn, x}));
  Value *up = op(OpKind::Gelu, "gelu", {linear("ffn_up", h1, d, f)});
  Value *down = linear("ffn_down", up, f, d);
  Value *y = norm("norm2", op(OpKind::Add, "residual2", {down, h1}));
  g->setOutputs({y});
  return g;
}

/// BM_CompileReluChain's graph at its smallest length.
std::unique_ptr<Graph> reluChain(int64_t length) {
  auto g = std::make_unique<Graph>("chain");
  Value *v = g->addInput("x", TensorType{ElementType::F32, {7, 64}});
  for (int64_t i = 0; i < length; ++i)
    v = buildOp(*g, OpKind::Relu, "r" + std::to_string(i), {v})->result();
  g->setOutputs({v});
  return g;
}

TEST(ProgramBytes, BenchmarkShapesAtEveryLevel) {
  std::vector<std::pair<std::string, std::unique_ptr<Graph>>> cases;
  auto parsed = [](const std::string &text) {
    DiagnosticEngine diags;
    std::unique_ptr<Graph> g = parseGraph(text, "bench.ir", diags);
    EXPECT_TRUE(g) << diags.str();
    return g;
  };
  const int64_t kMatmuls[][3] = {{1024, 1024, 1024}, {4096, 4096, 4096},
                                 {2048, 4096, 4096}, {32, 4096, 4096},
                                 {1, 4096, 4096},    {64, 16384, 128}};
  for (const auto &mkn : kMatmuls)
    cases.emplace_back("matmul " + dims({mkn[0], mkn[1], mkn[2]}),
                       parsed(matmulIr(mkn[0], mkn[1], mkn[2])));
  for (int64_t n : {1024, 2048, 4096, 8192, 12800})
    cases.emplace_back("batched_matmul " + dims({n}),
                       parsed(batchedMatmulIr(n)));
  cases.emplace_back(
      "softmax [8192, 4096]",
      parsed("graph @sm {\n  input %x : f32[8192, 4096]\n  %y = softmax "
             "@sm(%x) {axis = -1} : f32[8192, 4096]\n  return %y\n}\n"));
  cases.emplace_back(
      "layernorm [8192, 4096]",
      parsed("graph @ln {\n  input %x : f32[8192, 4096]\n  input %w : "
             "f32[4096]\n  input %b : f32[4096]\n  %y = layernorm @ln(%x, "
             "%w, %b) {axis = -1, epsilon = 1e-05} : f32[8192, 4096]\n  "
             "return %y\n}\n"));
  cases.emplace_back("encoder_layer", encoderLayer());
  cases.emplace_back("relu_chain [1000]", reluChain(1000));
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
