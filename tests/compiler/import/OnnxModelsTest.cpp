// The ONNX models of tests/data/onnx (written by scripts/gen_onnx_models.py,
// one per op family and per exporter pattern): each imports through the
// model loader, and the reference evaluator's outputs on the saved inputs
// match NumPy's (computed by the script) within 1e-5 relative. The pattern
// models also import as the fused ops, and names and provenance follow the
// ONNX file.
#include "compiler/import/ModelLoader.h"
#include "compiler/import/Onnx.h"
#include "compiler/ir/Printer.h"
#include "compiler/passes/Canonicalize.h"
#include "compiler/pm/PassManager.h"
#include "compiler/ref/Evaluator.h"
#include "hw/HwConfig.h"
#include "support/Npy.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace spyre::compiler {
namespace {

namespace fs = std::filesystem;

std::string modelDir(const std::string &name) {
  return spyre::test::srcPath("tests/data/onnx/" + name);
}

Graph load(const std::string &name, std::map<std::string, Shape> shapes = {}) {
  DiagnosticEngine diags;
  ModelLoadOptions options;
  options.shapeOverrides = std::move(shapes);
  std::optional<Graph> g =
      loadModel(modelDir(name) + "/model.onnx", options, diags);
  EXPECT_TRUE(g.has_value()) << diags.str();
  return g ? std::move(*g) : Graph("failed");
}

std::set<std::string> filesIn(const std::string &dir) {
  std::set<std::string> names;
  for (const auto &e : fs::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

/// Evaluates `g` on the model's saved inputs and compares every output with
/// the saved NumPy answer, within `relative` of it.
void expectMatchesNumPy(const Graph &g, const std::string &name,
                        double relative = 1e-5) {
  std::string dir = modelDir(name);
  ref::TensorMap inputs;
  std::set<std::string> inputFiles;
  for (const Value *v : g.inputs()) {
    inputs[v->name()] =
        ref::tensorFromNpy(readNpy(dir + "/inputs/" + v->name() + ".npy"));
    inputFiles.insert(v->name() + ".npy");
  }
  EXPECT_EQ(filesIn(dir + "/inputs"), inputFiles);
  std::vector<ref::RefTensor> results = ref::evaluateGraph(g, inputs);
  std::set<std::string> outputFiles;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string &out = g.outputs()[i]->name();
    outputFiles.insert(out + ".npy");
    ref::RefTensor want =
        ref::tensorFromNpy(readNpy(dir + "/expected/" + out + ".npy"));
    ASSERT_EQ(results[i].shape, want.shape) << name << ": " << out;
    for (size_t k = 0; k < want.values.size(); ++k) {
      double a = results[i].values[k], b = want.values[k];
      EXPECT_TRUE(a == b || std::fabs(a - b) <= relative * std::fabs(b))
          << name << ": " << out << "[" << k << "] = " << a << ", NumPy " << b;
    }
  }
  EXPECT_EQ(filesIn(dir + "/expected"), outputFiles);
}

std::map<std::string, int> opKinds(const Graph &g) {
  std::map<std::string, int> kinds;
  for (const Op *op : g.ops())
    ++kinds[std::string(op->kindName())];
  return kinds;
}

class OnnxModel : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxModel, MatchesNumPy) {
  Graph g = load(GetParam());
  expectMatchesNumPy(g, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Families, OnnxModel,
                         ::testing::Values("matmul", "gemm", "elementwise",
                                           "unary", "softmax", "layernorm",
                                           "reduce", "shapes", "where",
                                           "float16", "gelu_erf", "rmsnorm",
                                           "causal_mask", "embedding",
                                           "attention_block",
                                           "opset11", "opset18",
                                           "external_data",
                                           "granite_layer_small",
                                           "granite_layer_padded",
                                           "granite_layer_padded_decode",
                                           "granite_layer_ids"));

TEST(OnnxModels, ShapeOverrideFixesADynamicBatch) {
  // The reshape target comes from Shape/Gather/Concat on the input's shape;
  // with the batch fixed, ONNX shape inference makes it static and those
  // nodes are not needed.
  Graph g = load("dynamic_batch", {{"x", {3, 2, 4}}});
  EXPECT_EQ(g.findValue("x")->type().str(), "f32[3, 2, 4]");
  EXPECT_EQ(opKinds(g),
            (std::map<std::string, int>{{"matmul", 1}, {"reshape", 1}}));
  EXPECT_EQ(g.findOp("flatten")->intsAttr("shape"),
            (std::vector<int64_t>{3, 8}));
  expectMatchesNumPy(g, "dynamic_batch");
}

TEST(OnnxModels, ValuesKeepTheirOnnxNamesAndOpsTheirNodes) {
  Graph g = load("shapes");
  EXPECT_EQ(printGraph(g), R"(graph @shapes {
  input %x : f32[2, 3, 4]
  const %c : f32[4, 1] = dense<[0.5, 0.5, 0.5, 0.5]>
  %t = transpose @transpose(%x) {perm = [2, 0, 1]} : f32[4, 2, 3]
  %r = reshape @reshape(%t) {shape = [4, -1]} : f32[4, 6]
  %s0, %s1 = split @split(%r) {axis = 1, sizes = [2, 4]} : f32[4, 2], f32[4, 4]
  %cat = concat @concat(%s1, %c, %s0) {axis = -1} : f32[4, 7]
  %u = unsqueeze @unsqueeze(%cat) {axes = [0, 3]} : f32[1, 4, 7, 1]
  %sq = squeeze @squeeze(%u) {axes = [0, -1]} : f32[4, 7]
  %out = reshape @identity(%sq) {shape = [4, 7]} : f32[4, 7]
  %rev = transpose @reverse(%x) {perm = [2, 1, 0]} : f32[4, 3, 2]
  return %out, %rev
}
)");
  // Each op points at its node; the index skips the Constant node, which
  // became the constant %c.
  EXPECT_EQ(g.findOp("concat")->loc().keyPath, "graph.node[4]");
  EXPECT_EQ(g.findOp("reverse")->loc().keyPath, "graph.node[8]");
  EXPECT_EQ(g.findOp("reverse")->loc().file,
            modelDir("shapes") + "/model.onnx");
}

TEST(OnnxModels, GemmBecomesMatmulWithScaledBias) {
  Graph g = load("gemm");
  // Helper ops and values are named after the node and its output.
  EXPECT_EQ(
      printGraph(g).substr(printGraph(g).find("  %y.matmul")),
      R"(  %y.matmul = matmul @gemm_all.matmul(%a, %bt) {transpose_a = true, transpose_b = true} : f32[3, 4]
  %y.scaled = mul @gemm_all.mul(%y.matmul, %y.alpha) : f32[3, 4]
  %y.bias = mul @gemm_all.mul.1(%c, %y.beta) : f32[4]
  %y = add @gemm_all(%y.scaled, %y.bias) : f32[3, 4]
  %linear.matmul = matmul @fc.matmul(%x, %w) {transpose_a = false, transpose_b = true} : f32[3, 4]
  %linear = add @fc(%linear.matmul, %bias) : f32[3, 4]
  %plain = matmul @gemm_plain(%x, %wt) {transpose_a = false, transpose_b = false} : f32[3, 4]
  return %y, %linear, %plain
}
)");
}

TEST(OnnxModels, RmsNormPatternsBecomeRmsNorm) {
  Graph g = load("rmsnorm");
  EXPECT_EQ(printGraph(g), R"(graph @rmsnorm {
  input %x : f32[2, 3, 8]
  input %z : f32[5, 8]
  const %weight : f32[8] = dense<[1.5746411, 0.7432834, -0.9698888, -0.21200445, -0.28672993, 2.362419, -0.9432255, 1.3757949]>
  %y = rmsnorm @rms_weight(%x, %weight) {axis = 2, epsilon = 9.999999974752427e-07} : f32[2, 3, 8]
  %w = rmsnorm @t5_norm(%z) {axis = 1, epsilon = 9.999999974752427e-07} : f32[5, 8]
  return %y, %w
}
)");
  EXPECT_EQ(g.findOp("rms_weight")->loc().keyPath, "graph.node[5]");
}

TEST(OnnxModels, CausalMasksBecomeCausalMaskAdd) {
  Graph g = load("causal_mask");
  EXPECT_EQ(opKinds(g), (std::map<std::string, int>{{"causal_mask_add", 2},
                                                    {"matmul", 1},
                                                    {"softmax", 2},
                                                    {"transpose", 1}}));
  EXPECT_EQ(g.findValue("masked_add")->definingOp()->name(), "mask_add");
  EXPECT_EQ(g.findValue("masked_where")->definingOp()->name(), "mask_where");
  EXPECT_EQ(g.numConstants(), 0u);
}

TEST(OnnxModels, ErfGeluImportsAsItsOpsAndCanonicalizesToGelu) {
  Graph g = load("gelu_erf");
  EXPECT_EQ(
      opKinds(g),
      (std::map<std::string, int>{
          {"add", 1}, {"div", 1}, {"erf", 1}, {"matmul", 1}, {"mul", 2}}));
  PassManager pm(hw::builtinConfig());
  pm.addPass(canonicalizePass());
  DiagnosticEngine diags;
  ASSERT_EQ(pm.run(g, diags), PipelineStatus::Success) << diags.str();
  EXPECT_EQ(opKinds(g),
            (std::map<std::string, int>{{"gelu", 1}, {"matmul", 1}}));
  Op *gelu = g.findValue("y")->definingOp();
  EXPECT_EQ(gelu->name(), "gelu_half");
  EXPECT_EQ(gelu->stringAttr("approximate"), "none");
  // The fused op uses sqrt 2 exactly, the decomposition float32's 1.4142135.
  expectMatchesNumPy(g, "gelu_erf");
}

TEST(OnnxModels, AttentionBlockUsesTheFusedOps) {
  Graph g = load("attention_block");
  PassManager pm(hw::builtinConfig());
  pm.addPass(canonicalizePass());
  DiagnosticEngine diags;
  ASSERT_EQ(pm.run(g, diags), PipelineStatus::Success) << diags.str();
  // The scores' scale (Mul), the causal mask (Add of a -inf constant) and
  // the Softmax are one causal_softmax.
  EXPECT_EQ(opKinds(g), (std::map<std::string, int>{{"add", 3},
                                                    {"causal_softmax", 1},
                                                    {"gelu", 1},
                                                    {"layernorm", 1},
                                                    {"matmul", 6},
                                                    {"reshape", 4},
                                                    {"rmsnorm", 1},
                                                    {"split", 1},
                                                    {"transpose", 4}}));
  expectMatchesNumPy(g, "attention_block");
}

TEST(OnnxModels, GathersOfRowsByIdsAreEmbeddingLookups) {
  // Ids that are INT64 model inputs are i32 inputs; each Gather of a table's
  // rows by them (a weight or a model input) is an embedding op, not a host
  // op. The ids are int64 .npy files, as NumPy saves them.
  Graph g = load("embedding");
  EXPECT_EQ(g.findValue("input_ids")->type().str(), "i32[2, 5]");
  EXPECT_EQ(g.findValue("position_ids")->type().str(), "i32[2, 5]");
  // The greedy next token of each position: ArgMax over the last axis,
  // kept (argmax) and dropped (argmax, then a reshape).
  EXPECT_EQ(opKinds(g), (std::map<std::string, int>{{"add", 1},
                                                    {"argmax", 2},
                                                    {"embedding", 2},
                                                    {"matmul", 1},
                                                    {"reshape", 1}}));
  EXPECT_EQ(g.findOp("positions")->operand(0)->name(), "pos_table");
  EXPECT_EQ(g.findValue("next")->type().str(), "i32[2, 5, 1]");
  EXPECT_EQ(g.findValue("next_flat")->type().str(), "i32[2, 5]");
  expectMatchesNumPy(g, "embedding");
}

TEST(OnnxModels, ALayerFromTokenIdsGathersOnTheDevice) {
  // granite_layer_ids starts as a whole model's export does: INT64
  // input_ids gather rows of the embedding table, scaled by the embedding
  // multiplier, and INT64 position_ids gather the rotary tables' rows. The
  // three Gathers are embedding ops; nothing runs on the host.
  Graph g = load("granite_layer_ids");
  std::map<std::string, int> kinds = opKinds(g);
  EXPECT_EQ(kinds.count("host"), 0u);
  EXPECT_EQ(kinds["embedding"], 3);
  EXPECT_EQ(kinds["attention"], 1);
  EXPECT_EQ(g.findValue("input_ids")->type().str(), "i32[1, 6]");
  EXPECT_EQ(g.findValue("position_ids")->type().str(), "i32[1, 6]");
  EXPECT_EQ(g.findOp("model.embed_tokens/Gather")->operand(0)->name(),
            "model.embed_tokens.weight");
}

TEST(OnnxModels, ExportedDecoderLayersRunNothingOnTheHost) {
  // PyTorch's form of a Granite layer (scripts/gen_onnx_models.py): the
  // two Slices of each rotary embedding become one split (heads of 16 are
  // not whole sticks, so no rotary op), the past joined to the new keys and
  // values by Concat stays a concat (the present outputs, which the attention
  // does not read), and the Expand + Reshape repeat of the keys and values is
  // never made: with the causal mask the scores, scale, mask, softmax and
  // context are one attention op over the unrepeated keys and values.
  Graph small = load("granite_layer_small");
  EXPECT_EQ(opKinds(small), (std::map<std::string, int>{{"add", 4},
                                                        {"attention", 1},
                                                        {"concat", 4},
                                                        {"matmul", 7},
                                                        {"mul", 8},
                                                        {"neg", 2},
                                                        {"reshape", 4},
                                                        {"rmsnorm", 2},
                                                        {"sigmoid", 1},
                                                        {"split", 2},
                                                        {"transpose", 4},
                                                        {"unsqueeze", 2}}));
  const Op *attention = small.findOp("model.layers.0.self_attn.context");
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->kind(), OpKind::Attention);
  EXPECT_TRUE(attention->boolAttr("causal"));
  EXPECT_EQ(attention->floatAttr("scale"), 0.25);
  // It reads the past and the new keys and values apart; the concats
  // stay for the present outputs only.
  ASSERT_EQ(attention->numOperands(), 5u);
  EXPECT_EQ(attention->operand(1)->name(), "past_key");
  EXPECT_EQ(attention->operand(2)->name(), "past_value");
  for (int i : {3, 4})
    EXPECT_EQ(attention->operand(i)->type().shape[2],
              attention->operand(0)->type().shape[2]);
  // A padding mask is no causal one: the scores, the mask add and the
  // softmax stay, and each of the two products reads the keys or values of
  // each key/value head once for its group of query heads
  // ([1, 4, 8, 16] viewed as [1, 2, 16, 16]).
  Graph padded = load("granite_layer_padded");
  std::map<std::string, int> kinds = opKinds(padded);
  EXPECT_EQ(kinds.count("host"), 0u);
  EXPECT_EQ(kinds.count("attention"), 0u);
  const Op *scores = padded.findOp("model.layers.0.self_attn.scores.gqa");
  const Op *context = padded.findOp("model.layers.0.self_attn.context.gqa");
  ASSERT_NE(scores, nullptr);
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(scores->operand(0)->type().str(), "f32[1, 2, 16, 16]");
  EXPECT_EQ(scores->operand(1)->name(), "present_key");
  EXPECT_TRUE(scores->boolAttr("transpose_b"));
  EXPECT_EQ(context->operand(0)->type().str(), "f32[1, 2, 16, 8]");
  EXPECT_EQ(context->operand(1)->name(), "present_value");
  // Decoding, the products read the past and the new keys and values apart
  // (the present outputs are concats no op reads), the keys transposed.
  Graph decode = load("granite_layer_padded_decode");
  EXPECT_EQ(opKinds(decode).count("host"), 0u);
  for (const char *name : {"present_key", "present_value"})
    EXPECT_TRUE(decode.usesOf(decode.findValue(name)).empty()) << name;
  const Op *join = decode.findOp("model.layers.0.self_attn.scores.join");
  ASSERT_NE(join, nullptr);
  ASSERT_EQ(join->numOperands(), 2u);
  const Op *pastScores = join->operand(0)->definingOp();
  EXPECT_EQ(pastScores->operand(1)->name(), "past_key");
  EXPECT_TRUE(pastScores->boolAttr("transpose_b"));
}

TEST(OnnxModels, LoaderDispatchesOnTheExtension) {
  EXPECT_EQ(modelFormatOf("a/b.onnx"), ModelFormat::Onnx);
  EXPECT_EQ(modelFormatOf("M.ONNX"), ModelFormat::Onnx);
  EXPECT_EQ(modelFormatOf("model.json"), ModelFormat::GraphJson);
  EXPECT_EQ(modelFormatOf("model.ir"), ModelFormat::IrText);
  EXPECT_EQ(modelFormatOf("model.pb"), std::nullopt);
  DiagnosticEngine diags;
  EXPECT_FALSE(loadModel("model.pb", {}, diags).has_value());
  EXPECT_EQ(diags.str(),
            "model.pb: error: unknown model file type '.pb': give a "
            "graph JSON (.json), ONNX (.onnx) or textual IR (.ir) model\n");
  DiagnosticEngine json;
  ModelLoadOptions shapes;
  shapes.shapeOverrides["x"] = {1};
  std::string path =
      spyre::test::srcPath("examples/models/mlp_block/model.json");
  EXPECT_FALSE(loadModel(path, shapes, json).has_value());
  EXPECT_EQ(json.str(), path + ": error: shape overrides apply to ONNX models "
                               "only; a graph JSON or IR model states its shapes\n");
  DiagnosticEngine ok;
  std::optional<Graph> g = loadModel(path, {}, ok);
  ASSERT_TRUE(g.has_value()) << ok.str();
  EXPECT_EQ(g->name(), "mlp_block");
}

} // namespace
} // namespace spyre::compiler
