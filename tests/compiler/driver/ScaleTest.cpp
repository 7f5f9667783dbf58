// Compile time that grows with the graph: the passes look up uses and op
// positions without walking the whole graph, so a chain of 20,000 relu ops
// compiles (in seconds; bench/CompilerBench.cpp BM_CompileReluChain times
// it) and computes what the reference does.
#include "CompileCheck.h"

#include "compiler/driver/Compile.h"
#include "compiler/ir/Graph.h"

#include <gtest/gtest.h>

namespace spyre::compiler::test {
namespace {

std::unique_ptr<Graph> reluChain(int length) {
  auto g = std::make_unique<Graph>("chain");
  Value *v = g->addInput("x", TensorType{ElementType::F32, {7, 64}});
  for (int i = 0; i < length; ++i)
    v = buildOp(*g, OpKind::Relu, "r" + std::to_string(i), {v})->result();
  g->setOutputs({v});
  return g;
}

TEST(CompileScale, ChainOf20000ReluOps) {
  std::unique_ptr<Graph> g = reluChain(20000);
  CheckedRun run = checkCompiledWith(*g, CompileOptions{}, 1);
  ASSERT_TRUE(run.compiled.has_value());
  EXPECT_GT(run.cycles, 0u);
}

} // namespace
} // namespace spyre::compiler::test
