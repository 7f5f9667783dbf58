// The planner's estimate against the simulation: every op of every example
// model and of every benchmark shape (BenchShapes.h), compiled at -O2 and
// simulated (timing only), has its estimate (compiler/plan/Estimate.h)
// within 10% of its simulated span, or its kind and model are one of the
// exceptions below, each with the reason and the range of errors measured.
// An exception that no op needs any more fails the test, as does an op
// outside the range its exception names.
#include "compiler/driver/Compile.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/plan/Estimate.h"
#include "hw/HwConfig.h"
#include "run/RunModel.h"
#include "testlib/Golden.h"

#include "BenchShapes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

namespace spyre::compiler {
namespace {

constexpr double kTolerance = 0.10;

/// Op kinds whose estimate is not yet within kTolerance of the simulation:
/// the estimate model, the op kind, the errors (estimate / simulated - 1)
/// measured over every op of the kind outside the tolerance, and why.
struct Exception {
  const char *kind;
  double low, high;
  const char *why;
};
const std::vector<Exception> kExceptions = {
    {"matmul", -0.36, 0.56,
     "the matmul planner: each op is estimated alone, but at -O2 the "
     "independent ops of a phase share the memory channel (the encoder's q "
     "and k projections, 34% below); sharing plans with several C tiles "
     "per core still count their fill in full (GPT-2's attention "
     "projection, the encoder's FFN, up to 27% above); products of a few "
     "hundred cycles are off by fixed costs the model does not hold; "
     "batched products are planned with the whole memory channel and "
     "estimated with their group's share (GPT-2's attention scores 55% "
     "above)"},
    {"transpose", -0.56, 0.64,
     "the memory model: transposes run the xpose on the SFU and walk 64 x "
     "64 blocks with a DMA per block; the bytes alone miss both, and on "
     "the small ones the fixed costs"},
    {"reshape", -0.76, -0.54,
     "the memory model: a reshape that moves sticks (heads inside sticks) "
     "goes through transposes, whose xpose and per-block DMA the bytes "
     "miss"},
    {"causal_softmax", -0.47, -0.27,
     "the memory model: the causal mask table and the row reductions' "
     "latency on the SFU, which rows of 64 to 256 scores do not hide"},
    {"softmax", 0.16, 0.29,
     "the memory model on small softmaxes (a few rows per core): the four "
     "fixed latencies overcount a kernel whose load and store overlap"},
    {"layernorm", -0.34, -0.22,
     "the memory model on small layer norms: two reductions and the "
     "normalisation per row on the SFU, latency the bytes do not cover"},
    {"add", 0.10, 0.23,
     "the memory model on adds below 1,000 cycles: the fixed latencies "
     "overcount"},
    {"mul", 0.46, 0.49,
     "the memory model on a small elementwise chain: the fixed latencies "
     "overcount"},
    {"div", 0.14, 0.17,
     "the memory model on a small div: the fixed latencies overcount"},
    {"gelu", 0.44, 0.68,
     "the memory model on small elementwise chains (gelu heads): the fixed "
     "latencies overcount"},
    {"gated_matmul", -0.17, -0.15,
     "the matmul planner with both weights counted: the post stage's silu "
     "and product on the SFU, per C tile, are not in its model "
     "(llama_block's gated MLP, 16% below)"},
    {"relu", -0.94, -0.91,
     "the memory model on the 1,000-op relu chain: one pass over the bytes, "
     "but 1,000 SFU ops per tile, which bound it"},
};

struct Measured {
  std::string where; ///< case and op
  std::string kind;
  double error = 0;
};

std::vector<Measured> measure(const std::string &name, const Graph &graph) {
  DiagnosticEngine diags;
  std::optional<CompileResult> compiled =
      compileGraph(graph, hw::builtinConfig(), CompileOptions{}, diags);
  EXPECT_TRUE(compiled.has_value()) << name << ": " << diags.str();
  if (!compiled)
    return {};
  run::RunOptions o;
  o.model = name;
  o.graph = &graph;
  o.program = &compiled->program;
  o.timingOnly = true;
  o.useSystemC = false;
  const run::RunReport r = run::runModel(o);
  std::map<std::string, uint64_t> spans;
  for (const sim::OpSummary &op : r.ops)
    spans[op.op] = op.span();
  std::vector<Measured> out;
  for (const OpEstimate &e : compiled->estimates) {
    auto span = spans.find(e.op);
    EXPECT_NE(span, spans.end()) << name << ": " << e.op << " did not run";
    if (span == spans.end())
      continue;
    Measured m;
    m.where = name + ": " + e.op;
    m.kind = e.kind;
    m.error = static_cast<double>(e.cycles) /
                  static_cast<double>(std::max<uint64_t>(1, span->second)) -
              1.0;
    std::printf("%-50s %-16s est %9lld sim %9llu err %+6.1f%%\n",
                m.where.c_str(), m.kind.c_str(),
                static_cast<long long>(e.cycles),
                static_cast<unsigned long long>(span->second), 100 * m.error);
    out.push_back(m);
  }
  return out;
}

TEST(Estimate, EveryOpOfTheExamplesAndBenchmarksWithinTenPercent) {
  std::vector<Measured> all;
  for (const char *model : kExampleModels) {
    DiagnosticEngine diags;
    std::optional<Graph> g = loadModel(
        test::srcPath(std::string("examples/models/") + model), {}, diags);
    ASSERT_TRUE(g.has_value()) << model << ": " << diags.str();
    for (Measured &m : measure(model, *g))
      all.push_back(m);
  }
  for (const auto &[name, graph] : benchShapes()) {
    ASSERT_TRUE(graph) << name;
    for (Measured &m : measure(name, *graph))
      all.push_back(m);
  }
  std::map<std::string, int> needed;
  for (const Measured &m : all) {
    if (std::abs(m.error) <= kTolerance)
      continue;
    const Exception *ex = nullptr;
    for (const Exception &e : kExceptions)
      if (m.kind == e.kind)
        ex = &e;
    if (!ex) {
      ADD_FAILURE() << m.where << " (" << m.kind << "): estimate off by "
                    << 100 * m.error << "%, and " << m.kind
                    << " is not an exception";
      continue;
    }
    ++needed[ex->kind];
    EXPECT_TRUE(m.error >= ex->low - 1e-9 && m.error <= ex->high + 1e-9)
        << m.where << ": error " << 100 * m.error
        << "% outside the exception's measured range [" << 100 * ex->low
        << "%, " << 100 * ex->high << "%]";
  }
  for (const Exception &e : kExceptions)
    EXPECT_GT(needed[e.kind], 0)
        << "every " << e.kind
        << " is within 10% now: remove its exception";
}

} // namespace
} // namespace spyre::compiler
