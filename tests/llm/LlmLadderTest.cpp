// IBM's ladder (llm/LlmLadder.h) on the tiny config: each rung's graph is
// its part of the layer, the bounds are its bytes and MACs counted here
// from the shapes, and the model row adds the layer up.
#include "llm/LlmLadder.h"

#include "compiler/ir/Graph.h"
#include "hw/HwConfig.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace spyre::llm {
namespace {

const std::string &tiny() {
  static const std::string path =
      test::srcPath("examples/llm/tiny-granite.json");
  return path;
}

StepShape decode() {
  StepShape s;
  s.mode = Mode::Decode;
  s.batch = 2;
  s.context = 64;
  return s;
}

std::set<std::string> opKinds(const compiler::Graph &g) {
  std::set<std::string> kinds;
  for (const compiler::Op *op : g.ops())
    kinds.insert(std::string(op->kindName()));
  return kinds;
}

TEST(LlmLadder, RungsArePartsOfTheLayer) {
  const LlmConfig c = loadLlmConfig(tiny());
  StepShape s;
  s.tokens = 8;
  EXPECT_EQ(opKinds(*buildRungGraph(c, s, Rung::ResidualAdd)),
            (std::set<std::string>{"mul", "add"}));
  EXPECT_EQ(opKinds(*buildRungGraph(c, s, Rung::RmsNorm)),
            (std::set<std::string>{"rmsnorm"}));
  EXPECT_EQ(buildRungGraph(c, s, Rung::QkvProj)->outputs().size(), 3u);
  EXPECT_EQ(buildRungGraph(c, s, Rung::MlpProj)->outputs().size(), 3u);
  const auto attention = buildRungGraph(c, s, Rung::Attention);
  EXPECT_TRUE(opKinds(*attention).contains("attention"));
  EXPECT_TRUE(opKinds(*attention).contains("rotary"));
  EXPECT_FALSE(opKinds(*attention).contains("rmsnorm"));
  // The context, then the new keys and values.
  EXPECT_EQ(attention->outputs().size(), 3u);
  EXPECT_EQ(attention->outputs()[0]->type().shape,
            (compiler::Shape{1, 8, c.numHeads * c.headDim}));
  EXPECT_EQ(opKinds(*buildRungGraph(c, s, Rung::Mlp)),
            (std::set<std::string>{"matmul", "silu", "mul"}));
  // The layer rung is the step's one layer.
  s.layers = 1;
  EXPECT_EQ(buildRungGraph(c, s, Rung::Layer)->ops().size(),
            buildLlmGraph(c, s)->ops().size());
}

TEST(LlmLadder, ThePagedRungReadsEveryPageApart) {
  // Decode at context 128 (two full pages, the new token alone in the
  // third): per sequence and layer each full page of keys and of values is
  // an input of its own, [KV, hd, 64], and the current page an output; the
  // same bytes as the contiguous cache, so the same memory bound.
  const LlmConfig c = loadLlmConfig(tiny());
  StepShape s;
  s.mode = Mode::Decode;
  s.batch = 2;
  s.context = 128;
  const StepShape paged = pagedRungShape(s);
  EXPECT_TRUE(paged.residentCache);
  EXPECT_EQ(paged.positions, (std::vector<int64_t>{128, 128}));
  EXPECT_EQ(paged.pageRuns,
            (std::vector<std::vector<int64_t>>{{1, 1}, {1, 1}}));
  const auto g = buildRungGraph(c, s, Rung::PagedAttention);
  int pages = 0;
  for (const compiler::Value *v : g->inputs())
    if (v->name().find(".past_") != std::string::npos) {
      ++pages;
      EXPECT_EQ(v->type().shape,
                (compiler::Shape{c.numKvHeads, c.headDim, kCachePageTokens}))
          << v->name();
    }
  EXPECT_EQ(pages, 2 * 2 * 2); // sequences x pages x (keys, values)
  const LadderRow contiguous = runRung(tiny(), "", s, Rung::Attention);
  const LadderRow row = runRung(tiny(), "", s, Rung::PagedAttention);
  EXPECT_EQ(row.name, "attention (paged, one page per block)");
  EXPECT_EQ(row.macs, contiguous.macs);
  EXPECT_EQ(row.hostOps, 0u);
  EXPECT_GE(row.simulatedUs, row.boundUs());
  // Prefill writes the pages its tokens fill, one output each.
  StepShape p;
  p.tokens = 100;
  EXPECT_EQ(pagedRungShape(p).pageRuns,
            (std::vector<std::vector<int64_t>>{{1, 1}}));
  // After 70 cached tokens it reads the full page before its first token's
  // (an input), writes that page's tail and its tokens (key_page.T, over
  // key_tail.T) and the page after it (key.T.0), each of them apart.
  p.context = 70;
  const StepShape later = pagedRungShape(p);
  EXPECT_EQ(later.context, 0);
  EXPECT_EQ(later.positions, (std::vector<int64_t>{70}));
  EXPECT_EQ(later.cachedRuns, (std::vector<std::vector<int64_t>>{{1}}));
  EXPECT_EQ(later.pageRuns, (std::vector<std::vector<int64_t>>{{1}}));
  const auto pg = buildRungGraph(c, p, Rung::PagedAttention);
  for (const char *name : {"past_key.T.0", "past_value.T.0", "key_tail.T"})
    EXPECT_NE(pg->findValue(cacheTensorName(0, 0, name)), nullptr) << name;
  std::vector<std::string> outputs;
  for (const compiler::Value *v : pg->outputs())
    outputs.push_back(v->name());
  for (const char *name : {"key_page.T", "key.T.0", "value_page.T"})
    EXPECT_NE(std::find(outputs.begin(), outputs.end(),
                        cacheTensorName(0, 0, name)),
              outputs.end())
        << name;
  const LadderRow afterCache = runRung(tiny(), "", p, Rung::PagedAttention);
  EXPECT_EQ(afterCache.hostOps, 0u);
  EXPECT_GE(afterCache.simulatedUs, afterCache.boundUs());
  // Each page is an input of its own: a step of more pages than the rung
  // takes is a usage error, not millions of inputs.
  s.batch = 64;
  s.context = 64 * 257; // 257 pages a sequence, 16,448 in all
  try {
    pagedRungShape(s);
    ADD_FAILURE() << "no error";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              "--context: error: the paged rung reads every page apart: 64 x "
              "257 pages, more than 16384");
  }
}

TEST(LlmLadder, BoundsCountTheRungsBytesAndMacs) {
  const LlmConfig c = loadLlmConfig(tiny());
  const hw::HwConfig &hw = hw::builtinConfig();
  const StepShape s = decode();
  const int64_t rows = s.batch, D = c.hiddenSize, hd = c.headDim;
  // x, branch and the sum, DL16.
  const LadderRow add = runRung(tiny(), "", s, Rung::ResidualAdd);
  EXPECT_EQ(add.bytes, 3 * rows * D * 2);
  EXPECT_EQ(add.macs, 0);
  EXPECT_DOUBLE_EQ(add.memoryBoundUs, static_cast<double>(add.bytes) /
                                          (hw.memory.sustainedReadGBps * 1e3));
  const LadderRow qkv = runRung(tiny(), "", s, Rung::QkvProj);
  const int64_t out = (c.numHeads + 2 * c.numKvHeads) * hd;
  EXPECT_EQ(qkv.macs, rows * D * out);
  EXPECT_EQ(qkv.bytes, (rows * D + D * out + rows * out) * 2);
  for (const LadderRow &r : {add, qkv}) {
    EXPECT_GT(r.simulatedUs, 0);
    EXPECT_GE(r.simulatedUs, r.boundUs()) << r.name;
    EXPECT_LE(r.ptUtilisation, 1.0) << r.name;
    EXPECT_EQ(r.hostOps, 0u) << r.name;
    EXPECT_DOUBLE_EQ(r.launchUs, hw.host.launchUs);
  }
}

TEST(LlmLadder, TheModelRowIsLayersTimesTheLayerPlusTheHead) {
  const std::vector<LadderRow> rows = runLadder(tiny(), "", decode());
  ASSERT_EQ(rows.size(), std::size(kRungs) + 2);
  const LadderRow &layer = rows[8], &head = rows[9], &model = rows[10],
                  &whole = rows[11];
  EXPECT_EQ(layer.name, "one layer");
  EXPECT_EQ(head.name, "LM head");
  EXPECT_EQ(model.name, "model: 2 layers (extrapolated) + LM head");
  EXPECT_EQ(model.cycles, 2 * layer.cycles + head.cycles);
  EXPECT_EQ(model.bytes, 2 * layer.bytes + head.bytes);
  EXPECT_EQ(model.macs, 2 * layer.macs + head.macs);
  EXPECT_DOUBLE_EQ(model.launchUs, layer.launchUs);
  // The whole model simulated in one program: the same work as the
  // extrapolated row (the layers' inputs and outputs and the head's, less
  // the hidden state passed between the pieces), in one launch.
  EXPECT_EQ(whole.name, "model: 2 layers + LM head, one program");
  EXPECT_EQ(whole.macs, model.macs);
  EXPECT_GT(whole.cycles, 0u);
  EXPECT_GT(whole.programBytes, 0u);
  EXPECT_EQ(whole.hostOps, 0u);
  const std::string table = ladderTable(rows);
  EXPECT_NE(table.find("| model: 2 layers (extrapolated) + LM head | "),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| model: 2 layers + LM head, one program | "),
            std::string::npos)
      << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 2 + 12);
}

} // namespace
} // namespace spyre::llm
