// The benchmark shapes (what they are: BenchShapes.h).
#include "BenchShapes.h"

#include "compiler/ir/Parser.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

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

} // namespace

std::vector<BenchShape> benchShapes() {
  std::vector<BenchShape> cases;
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
  return cases;
}

} // namespace spyre::compiler
