// A Granite layer exported as PyTorch writes it (scripts/gen_onnx_models.py:
// weights as inputs, repeat_kv by Expand and Reshape, the past joined by
// Concat into the present outputs, a constant causal mask, rotary by Slice,
// Neg and Concat, SwiGLU by Sigmoid) in the shape of
// examples/llm/tiny-granite.json: it imports with no host op, into the
// fused attention and rotary ops; on the host reference it computes what
// the config.json form of the same layer computes from the same weights;
// and compiled and simulated it has no host op, no finding, and outputs
// within the DL16 tolerance of the host reference.
#include "compiler/import/ModelLoader.h"
#include "compiler/ref/Evaluator.h"
#include "hw/HwConfig.h"
#include "llm/LlmGraph.h"
#include "run/RunModel.h"
#include "sim/core/Machine.h"
#include "support/Npy.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace spyre::llm {
namespace {

using compiler::OpKind;
using compiler::ref::RefTensor;

compiler::Graph loadExport(const std::string &folder) {
  return compiler::loadModelOrThrow(
      test::srcPath("tests/data/onnx/" + folder + "/model.onnx"), {});
}

int countOps(const compiler::Graph &g, OpKind kind) {
  int n = 0;
  for (const compiler::Op *op : g.ops())
    n += op->kind() == kind;
  return n;
}

/// [d0, d1, d2, d3] -> [d0, d1, d3, d2].
RefTensor swapLastTwo(const RefTensor &t) {
  const int64_t a = t.shape[0] * t.shape[1], r = t.shape[2], c = t.shape[3];
  RefTensor out{{t.shape[0], t.shape[1], c, r}, t.values};
  for (int64_t i = 0; i < a; ++i)
    for (int64_t y = 0; y < r; ++y)
      for (int64_t x = 0; x < c; ++x)
        out.values[static_cast<size_t>((i * c + x) * r + y)] =
            t.values[static_cast<size_t>((i * r + y) * c + x)];
  return out;
}

/// The export's inputs from the config form's: the same weights, hidden
/// states and cache; the rotary tables of one head per token (the config
/// form's sines hold -sin on each head's first half, the export's sin), and
/// the past keys as the export holds them, [B, KV, L, hd].
compiler::ref::TensorMap exportInputs(const compiler::Graph &exported,
                                      const compiler::ref::TensorMap &form) {
  compiler::ref::TensorMap out;
  const std::string p = "model.layers.0.";
  for (const compiler::Value *v : exported.inputs()) {
    const std::string &n = v->name();
    if (n == "hidden_states") {
      out[n] = form.at("hidden");
    } else if (n == "cos") {
      out[n] = form.at("rope.cos_q");
    } else if (n == "sin") {
      RefTensor s = form.at("rope.sin_q");
      const int64_t hd = s.shape.back();
      for (size_t i = 0; i < s.values.size(); ++i)
        if (static_cast<int64_t>(i) % hd < hd / 2)
          s.values[i] = -s.values[i];
      out[n] = s;
    } else if (n == "past_key") {
      out[n] = swapLastTwo(form.at(p + "past_key.T"));
    } else if (n == "past_value") {
      out[n] = form.at(p + "past_value");
    } else {
      out[n] = form.at(n);
    }
    EXPECT_EQ(out[n].shape, v->type().shape) << n;
  }
  return out;
}

/// Within 1e-6 x (|b| + mean |b|): both graphs in double precision, apart
/// from the export's float32 constants (eps, the residual multiplier).
void expectClose(const std::vector<double> &a, const std::vector<double> &b,
                 const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  double mean = 0;
  for (double x : b)
    mean += std::fabs(x) / static_cast<double>(b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]) / (std::fabs(b[i]) + mean));
  EXPECT_LT(worst, 1e-6) << what;
}

struct Case {
  const char *folder;
  Mode mode;
};

class LlmOnnxExport : public ::testing::TestWithParam<Case> {};

TEST_P(LlmOnnxExport, ImportsWithoutHostOpsAndComputesTheConfigForm) {
  const Case c = GetParam();
  const LlmConfig config =
      loadLlmConfig(test::srcPath("examples/llm/tiny-granite.json"));
  StepShape shape;
  shape.mode = c.mode;
  shape.tokens = c.mode == Mode::Prefill ? 8 : 1;
  shape.context = c.mode == Mode::Prefill ? 0 : 8;
  shape.elementType = compiler::ElementType::F32;
  const std::unique_ptr<compiler::Graph> form = buildLlmGraph(config, shape);
  const compiler::Graph exported = loadExport(c.folder);

  // The pattern ops, and nothing left for the host.
  EXPECT_EQ(countOps(exported, OpKind::Host), 0);
  EXPECT_EQ(countOps(exported, OpKind::Attention), 1);
  EXPECT_EQ(countOps(exported, OpKind::Rotary), 2);
  EXPECT_EQ(countOps(exported, OpKind::Concat),
            c.mode == Mode::Prefill ? 0 : 2);

  // The same layer: both forms on the host reference from one set of
  // weights, hidden states and cache.
  const run::ModelInputs drawn = llmInputs(*form, config, shape, 5);
  compiler::ref::TensorMap formInputs;
  for (const auto &[name, array] : drawn.arrays)
    formInputs[name] = compiler::ref::tensorFromNpy(array);
  const compiler::ref::TensorMap inputs = exportInputs(exported, formInputs);
  const std::vector<RefTensor> want =
      compiler::ref::evaluateGraph(*form, formInputs);
  const std::vector<RefTensor> got =
      compiler::ref::evaluateGraph(exported, inputs);
  ASSERT_EQ(want.size(), 3u); // hidden, new key, new value
  ASSERT_EQ(got.size(), 3u);  // hidden_states_out, present_key, present_value
  expectClose(got[0].values, want[0].values, "hidden states");
  for (size_t i = 1; i < 3; ++i) {
    // The present is the past, then the new token(s).
    const RefTensor &present = got[i];
    if (c.mode == Mode::Prefill) {
      expectClose(present.values, want[i].values,
                  "present " + std::to_string(i));
      continue;
    }
    // Decode, B = 1: [1, KV, L + 1, hd]; per head, L past rows then the new.
    const int64_t KV = present.shape[1], rows = present.shape[2],
                  hd = present.shape[3];
    const RefTensor &past = inputs.at(i == 1 ? "past_key" : "past_value");
    std::vector<double> pastPart, newPart;
    for (int64_t h = 0; h < KV; ++h)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t d = 0; d < hd; ++d)
          (r + 1 < rows ? pastPart : newPart)
              .push_back(
                  present.values[static_cast<size_t>((h * rows + r) * hd + d)]);
    EXPECT_EQ(pastPart, past.values);
    expectClose(newPart, want[i].values, "new token " + std::to_string(i));
  }

  // On the device: no host op in the program, no finding, and every output
  // within the DL16 tolerance of the host reference.
  const hw::HwConfig hw = hw::loadConfigOrDefault("");
  const isa::Program program = run::compileOrThrow(exported, hw, 2).program;
  EXPECT_TRUE(program.hostOps.empty());
  run::ModelInputs deviceInputs;
  for (const auto &[name, t] : inputs)
    deviceInputs.arrays[name] = compiler::ref::toNpyF32(t);
  const run::Simulation sim =
      run::simulate(exported, program, hw, &deviceInputs, /*useSystemC=*/false,
                    1000, SourceLoc{"test"});
  for (const sim::Finding &f : sim.machine->findings())
    ADD_FAILURE() << f.str();
  for (const run::OutputCheck &check : run::checkOutputs(exported, sim, {}))
    EXPECT_TRUE(check.result.ok()) << run::checkLine(check, 20);
}

INSTANTIATE_TEST_SUITE_P(TinyGranite, LlmOnnxExport,
                         ::testing::Values(Case{"granite_layer", Mode::Prefill},
                                           Case{"granite_layer_decode",
                                                Mode::Decode}),
                         [](const ::testing::TestParamInfo<Case> &param) {
                           return std::string(param.param.mode == Mode::Prefill
                                                  ? "Prefill"
                                                  : "Decode");
                         });

/// The smaller exports of tests/data/onnx (heads of 16, so split, neg and
/// concat for the rotary; a padding mask, so products over the unrepeated
/// keys and values instead of the attention op) on the device with their
/// saved inputs: no host op, no finding, the host reference's numbers
/// (which OnnxModelsTest checks against NumPy's).
class SmallExport : public ::testing::TestWithParam<std::string> {};

TEST_P(SmallExport, RunsOnTheDeviceWithoutHostOps) {
  const compiler::Graph g = loadExport(GetParam());
  EXPECT_EQ(countOps(g, OpKind::Host), 0);
  run::ModelInputs inputs;
  for (const compiler::Value *v : g.inputs())
    inputs.arrays[v->name()] = readNpy(test::srcPath(
        "tests/data/onnx/" + GetParam() + "/inputs/" + v->name() + ".npy"));
  const hw::HwConfig hw = hw::loadConfigOrDefault("");
  const isa::Program program = run::compileOrThrow(g, hw, 2).program;
  EXPECT_TRUE(program.hostOps.empty());
  const run::Simulation sim = run::simulate(
      g, program, hw, &inputs, /*useSystemC=*/false, 1000, SourceLoc{"test"});
  for (const sim::Finding &f : sim.machine->findings())
    ADD_FAILURE() << f.str();
  for (const run::OutputCheck &check : run::checkOutputs(g, sim, {}))
    EXPECT_TRUE(check.result.ok()) << run::checkLine(check, 20);
}

INSTANTIATE_TEST_SUITE_P(Exports, SmallExport,
                         ::testing::Values("granite_layer_small",
                                           "granite_layer_padded",
                                           "granite_layer_padded_decode"));

} // namespace
} // namespace spyre::llm
