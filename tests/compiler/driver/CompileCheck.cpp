// The end-to-end check of the compiler driver tests (CompileCheck.h).
#include "compiler/driver/CompileCheck.h"

#include "compiler/codegen/KernelHarness.h"
#include "compiler/ir/Parser.h"
#include "compiler/ref/Evaluator.h"

#include <gtest/gtest.h>

#include <cmath>

namespace spyre::compiler::test {

namespace {

using codegen::test::randomValues;
using codegen::test::simulate;

/// DL16's smallest normal magnitude, 2^-31: smaller values flush to zero.
const double kDl16Tiny = std::ldexp(1.0, -31);
/// DL16's largest finite magnitude, 2^32 * (1 + 510/512).
const double kDl16Max = std::ldexp(1.0 + 510.0 / 512.0, 32);

} // namespace

std::unique_ptr<Graph> parseGraphText(const std::string &text) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = parseGraph(text, "test.ir", diags);
  EXPECT_TRUE(g) << diags.str();
  return g;
}

CheckedRun checkCompiledWith(const Graph &graph, const CompileOptions &options,
                             int depth, Range range) {
  return checkCompiledFor(hw::builtinConfig(), graph, options, depth, range);
}

CheckedRun checkCompiledFor(const hw::HwConfig &config, const Graph &graph,
                            const CompileOptions &options, int depth,
                            Range range) {
  CheckedRun run;
  DiagnosticEngine diags;
  run.compiled = compileGraph(graph, config, options, diags);
  EXPECT_TRUE(run.compiled) << diags.str();
  if (!run.compiled)
    return run;
  CheckedRun sim =
      checkProgram(graph, run.compiled->program, depth, range,
                   "-O" + std::to_string(options.optLevel), config);
  run.cycles = sim.cycles;
  run.readBytes = sim.readBytes;
  run.writeBytes = sim.writeBytes;
  return run;
}

CheckedRun checkProgram(const Graph &graph, const isa::Program &program,
                        int depth, Range range, const std::string &label,
                        const hw::HwConfig &config) {
  EXPECT_EQ(codegen::test::programFileProblem(program, config), "");
  codegen::test::SimRequest req;
  req.config = &config;
  ref::TensorMap inputs;
  uint32_t seed = 7;
  for (const Value *in : graph.inputs()) {
    std::vector<float> v =
        randomValues(static_cast<size_t>(in->type().elementCount()), seed++,
                     range.lo, range.hi, isa::DType::Dl16);
    req.inputs[in->name()] = v;
    inputs[in->name()] = {in->type().shape,
                          std::vector<double>(v.begin(), v.end())};
  }
  codegen::test::SimResult sim = simulate(program, req);
  bool maskedOrHuge = false;
  for (const Op *op : graph.ops())
    maskedOrHuge |= op->kind() == OpKind::CausalMaskAdd;
  EXPECT_TRUE(sim.findings.empty()) << sim.findings.front();
  std::vector<ref::RefTensor> expected = ref::evaluateGraph(graph, inputs);
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const std::string &name = graph.outputs()[i]->name();
    auto it = sim.outputs.find(name);
    if (it == sim.outputs.end())
      it = sim.outputs.find(name + ".out");
    EXPECT_TRUE(it != sim.outputs.end()) << "no output " << name;
    if (it == sim.outputs.end())
      continue;
    // Where the reference is not finite (NaN, or an infinity DL16 cannot
    // hold), the device must not give an ordinary number either.
    std::vector<double> want;
    std::vector<float> got;
    for (size_t e = 0; e < expected[i].values.size(); ++e) {
      const double w = expected[i].values[e];
      const float a = it->second[e];
      if (std::isfinite(w) && std::abs(w) < kDl16Max) {
        want.push_back(w);
        got.push_back(a);
      } else if (maskedOrHuge) {
        // A causal mask's -inf is -2^24 on the device (docs/compiler.md),
        // and values past DL16's range saturate or become special: either
        // may give other numbers downstream where the reference has no
        // finite value.
      } else {
        EXPECT_FALSE(std::isfinite(a))
            << "output " << name << " element " << e << ": " << a
            << " where the reference is " << w;
      }
    }
    double mean = 0;
    for (double w : want)
      mean += std::abs(w) / static_cast<double>(want.size());
    std::vector<double> tol;
    for (double w : want)
      tol.push_back(depth * std::ldexp(1.0, -8) * (std::abs(w) + mean) +
                    kDl16Tiny);
    EXPECT_TRUE(codegen::test::allClose(got, want, tol))
        << "output " << name << " at " << label;
  }
  CheckedRun run;
  run.cycles = sim.cycles;
  run.readBytes = sim.readBytes;
  run.writeBytes = sim.writeBytes;
  return run;
}

uint64_t checkCompiled(const Graph &graph, int level, int depth,
                       Range range) {
  CompileOptions co;
  co.optLevel = level;
  return checkCompiledWith(graph, co, depth, range).cycles;
}

} // namespace spyre::compiler::test
