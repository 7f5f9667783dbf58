// The token ops end to end: embedding (rows gathered by ids read at run
// time, `lr` and a register-based DMA) and argmax (`rargmax`, one INT32 id
// per row), compiled, simulated and compared with the double-precision
// reference evaluator (compiler/ref): vocabularies that are not a multiple
// of 64 (Granite's 49,159 among them), repeated ids, ties, rows spread
// over the cores and tiles; an id outside the vocabulary stops the run with
// the simulator's index-out-of-range finding.
#include "compiler/codegen/KernelHarness.h"
#include "compiler/driver/CompileCheck.h"
#include "compiler/ref/Evaluator.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"

#include <gtest/gtest.h>

#include <string>

namespace spyre::compiler {
namespace {

using codegen::test::randomValues;
using codegen::test::SimRequest;
using codegen::test::SimResult;
using codegen::test::simulate;

std::string dims(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

std::optional<CompileResult> compile(const Graph &g, int level = 2) {
  DiagnosticEngine diags;
  CompileOptions o;
  o.optLevel = level;
  std::optional<CompileResult> r =
      compileGraph(g, hw::builtinConfig(), o, diags);
  EXPECT_TRUE(r) << diags.str();
  return r;
}

std::unique_ptr<Graph> embeddingGraph(int64_t vocab, int64_t hidden,
                                      const std::vector<int64_t> &ids) {
  std::vector<int64_t> y = ids;
  y.push_back(hidden);
  return test::parseGraphText(
      "graph @t {\n  input %table : f16[" + std::to_string(vocab) + ", " +
      std::to_string(hidden) + "]\n  input %ids : i32[" + dims(ids) +
      "]\n  %y = embedding @embed(%table, %ids) : f16[" + dims(y) +
      "]\n  return %y\n}");
}

/// Simulates the embedding of `ids` and checks it row for row against the
/// reference: the rows are copies, so they must be equal.
void checkEmbedding(int64_t vocab, int64_t hidden,
                    const std::vector<int64_t> &idShape,
                    const std::vector<float> &ids, int level = 2) {
  SCOPED_TRACE("vocab " + std::to_string(vocab) + ", hidden " +
               std::to_string(hidden) + ", ids [" + dims(idShape) + "], -O" +
               std::to_string(level));
  std::unique_ptr<Graph> g = embeddingGraph(vocab, hidden, idShape);
  ASSERT_TRUE(g);
  std::optional<CompileResult> c = compile(*g, level);
  ASSERT_TRUE(c);
  EXPECT_EQ(codegen::test::programFileProblem(c->program), "");
  SimRequest req;
  req.inputs["table"] =
      randomValues(static_cast<size_t>(vocab * hidden), 3, -2, 2,
                   isa::DType::Dl16);
  req.inputs["ids"] = ids;
  SimResult sim = simulate(c->program, req);
  EXPECT_TRUE(sim.findings.empty()) << sim.findings.front();
  ref::TensorMap in;
  in["table"] = {{vocab, hidden},
                 std::vector<double>(req.inputs["table"].begin(),
                                     req.inputs["table"].end())};
  in["ids"] = {idShape, std::vector<double>(ids.begin(), ids.end())};
  std::vector<ref::RefTensor> want = ref::evaluateGraph(*g, in);
  const std::vector<float> &got = sim.outputs["y"];
  ASSERT_EQ(got.size(), want[0].values.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(static_cast<double>(got[i]), want[0].values[i]) << "element " << i;
  // Only the selected rows are read: the ids, and a row per id.
  EXPECT_LT(sim.readBytes,
            static_cast<uint64_t>(ids.size()) * (hidden * 2 + 128) + 4096);
}

TEST(Embedding, GathersTheRowsOfTheIds) {
  // Decode: one id per sequence; prefill: many, repeated, spread over cores.
  checkEmbedding(200, 128, {4, 1}, {199, 0, 77, 77});
  std::vector<float> ids;
  for (int i = 0; i < 130; ++i)
    ids.push_back(static_cast<float>((i * 37) % 1000));
  checkEmbedding(1000, 192, {2, 65}, ids);
  checkEmbedding(1000, 192, {2, 65}, ids, 0);
}

TEST(Embedding, GranitesVocabulary) {
  // 49,159 rows: not a multiple of 64, the table's blocks 49,159 sticks apart.
  checkEmbedding(49159, 256, {4}, {49158, 0, 12345, 49158});
}

TEST(Embedding, AnIdOutsideTheVocabularyIsAFinding) {
  std::unique_ptr<Graph> g = embeddingGraph(200, 64, {3});
  ASSERT_TRUE(g);
  std::optional<CompileResult> c = compile(*g);
  ASSERT_TRUE(c);
  for (float bad : {200.0f, -1.0f}) {
    SimRequest req;
    req.inputs["table"] =
        randomValues(200 * 64, 3, -2, 2, isa::DType::Dl16);
    req.inputs["ids"] = {5, bad, 7};
    SimResult sim = simulate(c->program, req);
    ASSERT_EQ(sim.findings.size(), 1u);
    EXPECT_NE(sim.findings[0].find("index-out-of-range"), std::string::npos)
        << sim.findings[0];
    EXPECT_NE(sim.findings[0].find("[0, 200)"), std::string::npos)
        << sim.findings[0];
  }
  // The reference rejects it too.
  ref::TensorMap in;
  in["table"] = {{200, 64}, std::vector<double>(200 * 64, 1.0)};
  in["ids"] = {{3}, {5, 200, 7}};
  EXPECT_THROW(ref::evaluateGraph(*g, in), UserError);
}

/// Simulates argmax over rows of x and checks the ids against the
/// reference's; with `squeezed`, the kept axis of 1 is reshaped away (the
/// ids relaid out, as an ONNX ArgMax with keepdims = 0 asks).
void checkArgmax(const std::vector<int64_t> &shape, const std::vector<float> &x,
                 int level = 2, bool squeezed = false) {
  SCOPED_TRACE("x [" + dims(shape) + "], -O" + std::to_string(level) +
               (squeezed ? ", squeezed" : ""));
  std::vector<int64_t> y = shape;
  y.back() = 1;
  std::vector<int64_t> z(shape.begin(), shape.end() - 1);
  const std::string squeeze =
      squeezed ? "\n  %z = reshape @squeeze(%y) {shape = [" + dims(z) +
                     "]} : i32[" + dims(z) + "]\n  return %z\n}"
               : "\n  return %y\n}";
  std::unique_ptr<Graph> g = test::parseGraphText(
      "graph @t {\n  input %x : f16[" + dims(shape) +
      "]\n  %y = argmax @pick(%x) : i32[" + dims(y) + "]" + squeeze);
  ASSERT_TRUE(g);
  std::optional<CompileResult> c = compile(*g, level);
  ASSERT_TRUE(c);
  EXPECT_EQ(codegen::test::programFileProblem(c->program), "");
  SimRequest req;
  req.inputs["x"] = x;
  SimResult sim = simulate(c->program, req);
  EXPECT_TRUE(sim.findings.empty()) << sim.findings.front();
  ref::TensorMap in;
  in["x"] = {shape, std::vector<double>(x.begin(), x.end())};
  std::vector<ref::RefTensor> want = ref::evaluateGraph(*g, in);
  const std::vector<float> &got = sim.outputs[squeezed ? "z" : "y"];
  ASSERT_EQ(got.size(), want[0].values.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(static_cast<double>(got[i]), want[0].values[i]) << "row " << i;
}

TEST(Argmax, RandomRowsMatchTheReference) {
  // DL16-exact inputs, so device and reference see the same numbers.
  checkArgmax({3, 77}, randomValues(3 * 77, 11, -4, 4, isa::DType::Dl16));
  checkArgmax({2, 40, 200},
              randomValues(2 * 40 * 200, 12, -4, 4, isa::DType::Dl16));
  checkArgmax({2, 40, 200},
              randomValues(2 * 40 * 200, 12, -4, 4, isa::DType::Dl16), 0);
}

TEST(Argmax, IdsReshapedWithoutTheKeptAxis) {
  // The reshape moves each id from a stick of its own into rows of ids: a
  // transpose of INT32 elements, moved as bit patterns (ids up to 49,158
  // are denormal floats as FP32 bits).
  checkArgmax({2, 40, 200},
              randomValues(2 * 40 * 200, 14, -4, 4, isa::DType::Dl16), 2, true);
  checkArgmax({3, 49159},
              randomValues(3 * 49159, 15, -4, 4, isa::DType::Dl16), 2, true);
  checkArgmax({70, 64}, randomValues(70 * 64, 16, -4, 4, isa::DType::Dl16),
              0, true);
}

TEST(Argmax, GranitesVocabularyAndTies) {
  const int64_t v = 49159;
  std::vector<float> x =
      randomValues(static_cast<size_t>(4 * v), 13, -8, 8, isa::DType::Dl16);
  // Row 0: the largest twice; the lower index wins. Row 1: in the last,
  // partial block, whose padding (zeros) must not win over negatives.
  // Row 2: all equal gives 0. Row 3: all negative.
  x[100] = 9;
  x[40000] = 9;
  x[static_cast<size_t>(v + v - 1)] = 10;
  for (int64_t j = 0; j < v; ++j) {
    x[static_cast<size_t>(2 * v + j)] = 1;
    x[static_cast<size_t>(3 * v + j)] = -1 - static_cast<float>(j % 7);
  }
  x[static_cast<size_t>(3 * v + 49153)] = -0.5f;
  checkArgmax({4, v}, x);
}

} // namespace
} // namespace spyre::compiler
