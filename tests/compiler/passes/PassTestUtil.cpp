// Helpers for the pass tests.
#include "PassTestUtil.h"

#include "compiler/ir/Parser.h"
#include "compiler/pipeline/PassRegistry.h"
#include "compiler/ref/Random.h"
#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

namespace spyre::compiler::test {

std::unique_ptr<Graph> parseIr(const std::string &text) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = parseGraph(text, "test.ir", diags);
  EXPECT_NE(g, nullptr) << diags.str();
  return g;
}

std::string runPasses(Graph &graph, const std::string &pipeline) {
  DiagnosticEngine diags;
  std::optional<Pipeline> p = parsePipeline(pipeline, diags);
  EXPECT_TRUE(p.has_value()) << diags.str();
  if (!p)
    return "";
  PassManager pm(hw::builtinConfig());
  pm.addPipeline(*p);
  EXPECT_EQ(pm.run(graph, diags), PipelineStatus::Success) << diags.str();
  return pm.statisticsReport();
}

std::vector<ref::RefTensor> evaluateOnRandomInputs(const Graph &graph,
                                                   uint64_t seed) {
  ref::TensorMap inputs;
  for (const Value *v : graph.inputs())
    inputs[v->name()] =
        ref::tensorFromNpy(ref::randomInput(v->type(), seed, v->name()));
  return ref::evaluateGraph(graph, inputs);
}

namespace {

/// Position of a double on a line where neighbouring doubles are 1 apart.
int64_t orderedBits(double d) {
  int64_t bits = std::bit_cast<int64_t>(d);
  return bits < 0 ? std::numeric_limits<int64_t>::min() - bits : bits;
}

} // namespace

void expectSameOutputs(const std::vector<ref::RefTensor> &before,
                       const std::vector<ref::RefTensor> &after, int64_t ulps) {
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    ASSERT_EQ(before[i].shape, after[i].shape) << "output " << i;
    for (size_t j = 0; j < before[i].values.size(); ++j) {
      double a = before[i].values[j], b = after[i].values[j];
      if (std::isnan(a) || std::isnan(b)) {
        EXPECT_TRUE(std::isnan(a) && std::isnan(b))
            << "output " << i << "[" << j << "]";
        continue;
      }
      int64_t x = orderedBits(a), y = orderedBits(b);
      uint64_t distance =
          x > y ? static_cast<uint64_t>(x) - static_cast<uint64_t>(y)
                : static_cast<uint64_t>(y) - static_cast<uint64_t>(x);
      EXPECT_LE(distance, static_cast<uint64_t>(ulps))
          << "output " << i << "[" << j << "]: " << a << " vs " << b;
    }
  }
}

} // namespace spyre::compiler::test
