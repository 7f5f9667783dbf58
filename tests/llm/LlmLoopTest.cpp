// The whole model in one program (llm/LlmLoop.h): one layer's code in a
// hardware loop over the layers computes, on the simulator, the very bits
// the program with every layer's own copy of the code computes, for prefill
// and decode steps of the tiny configs with 2 to 4 layers, the embedding
// multiplier and the LM head, and the whole step as `spyre llm CONFIG`
// runs it (token ids in, the lookup, the greedy next token out); the race
// and memory checks find nothing; and
// the program's code does not grow with the layers.
#include "llm/LlmLoop.h"

#include "compiler/codegen/ProgramBuilder.h"
#include "hw/HwConfig.h"
#include "run/RunModel.h"
#include "sim/core/Machine.h"
#include "support/Diagnostic.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <ostream>

namespace spyre::llm {
namespace {

struct Case {
  const char *file;
  Mode mode;
  int64_t layers;
  bool ends; ///< the embedding multiplier and the LM head
  bool ids = false; ///< with ends: token ids in, the greedy next token out
};

std::string caseName(const Case &c) {
  return std::string(c.file) +
         (c.mode == Mode::Prefill ? " prefill, " : " decode, ") +
         std::to_string(c.layers) + " layers" + (c.ends ? ", head" : "") +
         (c.ids ? ", ids" : "");
}

void PrintTo(const Case &c, std::ostream *os) { *os << caseName(c); }

StepShape shapeOf(const Case &c) {
  StepShape s;
  s.mode = c.mode;
  s.layers = c.layers;
  s.embedding = c.ends;
  s.lmHead = c.ends;
  s.tokenIds = c.ids;
  s.greedy = c.ids;
  if (c.mode == Mode::Prefill) {
    s.tokens = 48;
  } else {
    s.batch = 2;
    s.context = 70;
  }
  return s;
}

LlmConfig configOf(const Case &c) {
  LlmConfig config = loadLlmConfig(test::srcPath("examples/llm/") + c.file);
  // The tiny configs have 1 and 2 layers; more of the same make the loop's
  // later iterations read weights the first ones never saw.
  config.numLayers = std::max(config.numLayers, c.layers);
  return config;
}

run::Simulation simulate(const compiler::Graph &graph,
                         const isa::Program &program, const hw::HwConfig &hw,
                         const run::ModelInputs &inputs) {
  return run::simulate(graph, program, hw, &inputs, /*useSystemC=*/false,
                       1000, SourceLoc{"test"});
}

class LlmLoopCase : public ::testing::TestWithParam<Case> {};

TEST_P(LlmLoopCase, MatchesTheUnrolledProgramBitForBit) {
  const Case c = GetParam();
  SCOPED_TRACE(caseName(c));
  const LlmConfig config = configOf(c);
  const StepShape shape = shapeOf(c);
  const hw::HwConfig hw = hw::loadConfigOrDefault("");
  const std::unique_ptr<compiler::Graph> graph = buildLlmGraph(config, shape);
  const run::ModelInputs inputs = llmInputs(*graph, config, shape, 7);

  const isa::Program unrolled = run::compileOrThrow(*graph, hw, 2).program;
  const LoopedProgram looped = compileLoopedModel(config, shape, hw, 2);
  EXPECT_EQ(codegen::validateProgram(looped.program, hw), "");
  EXPECT_EQ(isa::checkProgramFits(looped.program, hw), "");
  // What `spyre verify` and `spyre sim` read back.
  EXPECT_EQ(isa::readProgram(isa::writeProgram(looped.program), "looped"),
            looped.program);

  const run::Simulation a = simulate(*graph, unrolled, hw, inputs);
  const run::Simulation b = simulate(*graph, looped.program, hw, inputs);
  EXPECT_TRUE(a.machine->findings().empty());
  for (const sim::Finding &f : b.machine->findings())
    ADD_FAILURE() << f.str();
  ASSERT_EQ(a.outputs.size(), graph->outputs().size());
  ASSERT_EQ(b.outputs.size(), a.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    EXPECT_EQ(a.outputs[i].shape, b.outputs[i].shape);
    EXPECT_TRUE(a.outputs[i].data == b.outputs[i].data)
        << "output " << graph->outputs()[i]->name() << " differs";
  }
  // And the numbers are the model's: the last output against the host
  // reference within the DL16 tolerance.
  const std::vector<run::OutputCheck> checks =
      run::checkOutputs(*graph, b, {});
  for (const run::OutputCheck &check : checks)
    EXPECT_TRUE(check.result.ok()) << run::checkLine(check, 40);
}

INSTANTIATE_TEST_SUITE_P(
    TinyConfigs, LlmLoopCase,
    ::testing::Values(Case{"tiny-granite.json", Mode::Prefill, 2, true},
                      Case{"tiny-granite.json", Mode::Decode, 2, true},
                      Case{"tiny-llama.json", Mode::Prefill, 3, false},
                      Case{"tiny-llama.json", Mode::Decode, 4, false},
                      Case{"tiny-granite.json", Mode::Decode, 4, true},
                      Case{"tiny-granite.json", Mode::Prefill, 2, true, true},
                      Case{"tiny-llama.json", Mode::Decode, 3, true, true}),
    [](const ::testing::TestParamInfo<Case> &param) {
      std::string name = caseName(param.param);
      for (char &ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch)))
          ch = '_';
      return name;
    });

TEST(LlmLoop, TheCodeDoesNotGrowWithTheLayers) {
  const hw::HwConfig hw = hw::loadConfigOrDefault("");
  Case c{"tiny-granite.json", Mode::Decode, 2, true};
  const LoopedProgram two = compileLoopedModel(configOf(c), shapeOf(c), hw, 2);
  c.layers = 12;
  const LoopedProgram twelve =
      compileLoopedModel(configOf(c), shapeOf(c), hw, 2);
  EXPECT_EQ(two.program.instructionCount(), twelve.program.instructionCount());
  EXPECT_EQ(two.layerInstructions, twelve.layerInstructions);
  EXPECT_EQ(two.strideSticks, twelve.strideSticks);
  // Each layer's tensors are declared under their own names, a stride apart.
  const isa::TensorDecl *first = twelve.program.findTensor(
      "model.layers.0.self_attn.q_proj.weight.T");
  const isa::TensorDecl *last = twelve.program.findTensor(
      "model.layers.11.self_attn.q_proj.weight.T");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->address - first->address, 11 * twelve.strideSticks);
}

/// The UserError's message, or "" when `f` throws none.
template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

TEST(LlmLoop, LimitsAreNamedErrors) {
  const hw::HwConfig hw = hw::loadConfigOrDefault("");
  Case c{"tiny-granite.json", Mode::Decode, 2, false};
  // A layer of 3 x 8192 x 65536 DL16 weights (3.2 GB): more than addi steps.
  LlmConfig wide = configOf(c);
  wide.hiddenSize = 8192;
  wide.intermediateSize = 65536;
  wide.numHeads = 64;
  wide.numKvHeads = 8;
  EXPECT_NE(errorOf([&] { compileLoopedModel(wide, shapeOf(c), hw, 2); })
                .find("more than the 1 GiB a loop over the layers can step"),
            std::string::npos);
  // More layers than a loop runs.
  c.layers = hw.limits.maxLoopCount + 1;
  EXPECT_NE(errorOf([&] { compileLoopedModel(configOf(c), shapeOf(c), hw, 2); })
                .find("layers are more than a loop runs"),
            std::string::npos);
}

} // namespace
} // namespace spyre::llm
