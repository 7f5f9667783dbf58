// The fused attention op end to end (CompileCheck.h: -O0 and -O2, numerics
// against the double-precision host reference within the DL16 tolerance of
// docs/compiler.md, zero findings): causal and not, grouped-query ratios
// of 1, 2 and 4, query and key counts that are not multiples of 64, more
// keys than queries, a head_dim that is not whole sticks, more key/value
// heads than cores (each core then runs several groups in turn). The
// device writes only the result: the scores never leave LX. The rotary op
// the same way, with tables of x's shape and of one head's.
#include "compiler/driver/CompileCheck.h"

#include "compiler/codegen/Kernels.h"
#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

namespace spyre::compiler {
namespace {

using test::CheckedRun;

struct Case {
  int64_t batch, heads, kvHeads, queries, keys, headDim;
  bool causal;
  /// Of the keys, how many come last as k_more and v_more (0: none).
  int64_t more = 0;
};

std::string shape(int64_t b, int64_t h, int64_t s, int64_t d) {
  return "f16[" + std::to_string(b) + ", " + std::to_string(h) + ", " +
         std::to_string(s) + ", " + std::to_string(d) + "]";
}

std::string graphText(const Case &c, double scale) {
  const std::string q = shape(c.batch, c.heads, c.queries, c.headDim),
                    kv = shape(c.batch, c.kvHeads, c.keys - c.more, c.headDim),
                    more = shape(c.batch, c.kvHeads, c.more, c.headDim);
  return "graph @t {\n  input %q : " + q + "\n  input %k : " + kv +
         "\n  input %v : " + kv +
         (c.more > 0 ? "\n  input %k2 : " + more + "\n  input %v2 : " + more
                     : std::string()) +
         "\n  %y = attention @attn(%q, %k, %v" +
         (c.more > 0 ? ", %k2, %v2" : "") + ") " +
         "{causal = " + (c.causal ? "true" : "false") +
         ", scale = " + std::to_string(scale) + "} : " + q + "\n  return %y\n}";
}

std::string label(const Case &c) {
  return std::to_string(c.batch) + "x" + std::to_string(c.heads) + "/" +
         std::to_string(c.kvHeads) + " heads, " + std::to_string(c.queries) +
         " queries, " + std::to_string(c.keys) + " keys, hd " +
         std::to_string(c.headDim) + (c.causal ? ", causal" : "") +
         (c.more > 0 ? ", the last " + std::to_string(c.more) + " apart"
                     : std::string());
}

/// Compiles and checks `c` at -O0 and -O2 for `config`; returns the -O2
/// run.
CheckedRun check(const Case &c,
                 const hw::HwConfig &config = hw::builtinConfig()) {
  SCOPED_TRACE(label(c));
  std::unique_ptr<Graph> g = test::parseGraphText(
      graphText(c, 1.0 / std::sqrt(static_cast<double>(c.headDim))));
  EXPECT_TRUE(g);
  if (!g)
    return {};
  CheckedRun last;
  for (int level : {0, 2}) {
    CompileOptions o;
    o.optLevel = level;
    // Three DL16 roundings on the way: the scores, the probabilities, the
    // result.
    last = test::checkCompiledFor(config, *g, o, 3, {-1, 1});
    EXPECT_TRUE(last.compiled) << "-O" << level;
  }
  return last;
}

TEST(Attention, CausalGroupedQueriesMatchTheReference) {
  check({1, 4, 2, 77, 77, 128, true});
  check({1, 8, 2, 130, 130, 128, true});
}

TEST(Attention, NonCausalMatchesTheReference) {
  check({2, 2, 1, 50, 130, 64, false});
  check({1, 3, 3, 64, 64, 128, false});
}

TEST(Attention, MoreKeysThanQueriesSeeThePast) {
  check({1, 8, 2, 40, 100, 128, true});
}

TEST(Attention, HeadDimNotWholeSticks) {
  check({1, 2, 2, 70, 70, 96, true});
}

TEST(Attention, MoreGroupsThanCoresRunInTurn) {
  // 3 x 12 = 36 key/value heads on 32 cores: some cores run two groups.
  check({3, 12, 12, 20, 20, 64, true});
}

TEST(Attention, WritesOnlyTheResult) {
  const Case c{1, 4, 2, 200, 200, 128, true};
  CheckedRun r = check(c);
  ASSERT_TRUE(r.compiled);
  // The result, [1, 4, 200, 128] DL16; the scores ([4, 200, 200], 312 KB)
  // are never written. The program's outputs are copied nowhere else.
  EXPECT_EQ(r.writeBytes, uint64_t{4 * 200 * 128 * 2});
}

/// The built-in chip with 128 KiB of LX: a few hundred keys of one head
/// then no longer fit beside the tiles, and are taken in chunks.
hw::HwConfig smallLx() {
  hw::HwConfig c = hw::builtinConfig();
  c.lx.sizeBytes = 128 * 1024;
  return c;
}

/// The chunk size planAttention chooses for `c` on `config` (0: none).
int64_t chunkKeys(const Case &c, const hw::HwConfig &config) {
  codegen::AttentionArgs args;
  args.q.shape = args.y.shape = {c.batch, c.heads, c.queries, c.headDim};
  args.k.shape = args.v.shape = {c.batch, c.kvHeads, c.keys, c.headDim};
  args.causal = c.causal;
  const codegen::AttentionPlan plan = codegen::planAttention(config, args);
  EXPECT_EQ(plan.error, "");
  return plan.chunkKeys;
}

TEST(Attention, KeysInChunksMatchTheReference) {
  const hw::HwConfig cfg = smallLx();
  const Case cases[] = {
      // Every tile sees keys of every chunk: each merges.
      {1, 4, 2, 100, 300, 64, true},
      // Without a mask, a head_dim that is not whole sticks, two
      // sequences.
      {2, 2, 1, 50, 330, 96, false},
      // Early tiles see the first chunk only; the rows of a later tile
      // that see none of a chunk's keys take nothing from it.
      {1, 2, 2, 400, 400, 64, true},
  };
  for (const Case &c : cases) {
    EXPECT_GT(chunkKeys(c, cfg), 0) << label(c);
    EXPECT_LT(chunkKeys(c, cfg), c.keys) << label(c);
    check(c, cfg);
  }
}

TEST(Attention, MoreKeysApartAreReadWhereTheyLie) {
  // A cache of 100 keys and 50 new ones (the join inside a key block), on
  // the built-in chip and in chunks on the small one (the join inside a
  // chunk, and a chunk of new keys only).
  const Case whole{1, 4, 2, 50, 150, 128, true, 50};
  CheckedRun r = check(whole);
  ASSERT_TRUE(r.compiled);
  // Nothing is joined in device memory: the result is all it writes.
  EXPECT_EQ(r.writeBytes, uint64_t{4 * 50 * 128 * 2});
  const hw::HwConfig cfg = smallLx();
  for (const Case &c : {Case{1, 4, 2, 100, 300, 64, true, 100},
                        Case{2, 2, 1, 50, 330, 96, false, 250}}) {
    EXPECT_GT(chunkKeys(c, cfg), 0) << label(c);
    check(c, cfg);
  }
}

/// rotary over [2, 70, 4 x 128] with tables of `table` elements per row.
void checkRotary(int64_t table) {
  const std::string t = "f16[2, 70, " + std::to_string(table) + "]";
  std::unique_ptr<Graph> g = test::parseGraphText(
      "graph @t {\n  input %x : f16[2, 70, 512]\n  input %c : " + t +
      "\n  input %s : " + t +
      "\n  %y = rotary @rope(%x, %c, %s) {head_dim = 128} : f16[2, 70, 512]"
      "\n  return %y\n}");
  ASSERT_TRUE(g);
  for (int level : {0, 2}) {
    CompileOptions o;
    o.optLevel = level;
    // Two DL16 roundings: the products, then their sum.
    CheckedRun r = test::checkCompiledWith(*g, o, 2);
    ASSERT_TRUE(r.compiled);
    // One pass: the result is all it writes.
    EXPECT_EQ(r.writeBytes, uint64_t{2 * 70 * 512 * 2}) << "-O" << level;
  }
}

TEST(Rotary, TablesOfXsShapeMatchTheReference) { checkRotary(512); }

TEST(Rotary, TablesOfOneHeadServeEveryHead) { checkRotary(128); }

TEST(AttentionPlan, TilesOfAGroupAreBalancedOverItsCores) {
  // Granite-3.3-8B's prefill: 32 query heads over 8 key/value heads of 128,
  // 512 tokens.
  codegen::AttentionArgs args;
  args.q.shape = {1, 32, 512, 128};
  args.k.shape = args.v.shape = {1, 8, 512, 128};
  args.y.shape = args.q.shape;
  args.causal = true;
  const codegen::AttentionPlan plan =
      codegen::planAttention(hw::builtinConfig(), args);
  ASSERT_EQ(plan.error, "");
  EXPECT_EQ(plan.tileRows, 64);
  ASSERT_EQ(plan.parts.size(),
            static_cast<size_t>(8 * plan.coresPerGroup));
  // Every tile of every head once, and the cores of a group within one
  // tile's work of each other (largest first onto the least loaded).
  int64_t tiles = 0, most = 0, least = INT64_MAX;
  for (const codegen::AttentionPlan::Part &p : plan.parts) {
    int64_t work = 0;
    for (const codegen::AttentionPlan::Tile &t : p.tiles)
      work += t.rows * t.keys;
    tiles += static_cast<int64_t>(p.tiles.size());
    most = std::max(most, work);
    least = std::min(least, work);
  }
  EXPECT_EQ(tiles, 32 * 512 / 64);
  EXPECT_LE(most - least, 64 * 512);
}

TEST(AttentionPlan, KeysThatDoNotFitLxAreTakenInChunks) {
  // One head's K^T and V (2 x 2048 x 128 DL16, 1 MiB) leave room for
  // 32-row tiles only: 64-row tiles over part of the keys at a time are
  // estimated faster. 4096 keys (2 MiB) do not fit beside any tile at
  // once.
  const hw::HwConfig &cfg = hw::builtinConfig();
  EXPECT_EQ(chunkKeys({1, 32, 8, 512, 512, 128, true}, cfg), 0);
  for (int64_t keys : {2048, 4096}) {
    SCOPED_TRACE(keys);
    codegen::AttentionArgs args;
    args.q.shape = args.y.shape = {1, 32, keys, 128};
    args.k.shape = args.v.shape = {1, 8, keys, 128};
    args.causal = true;
    const codegen::AttentionPlan plan = codegen::planAttention(cfg, args);
    EXPECT_EQ(plan.error, "");
    if (keys == 2048) {
      EXPECT_EQ(plan.tileRows, 64);
    }
    EXPECT_GT(plan.chunkKeys, 0);
    EXPECT_LT(plan.chunkKeys, keys);
    EXPECT_EQ(plan.chunkKeys % 64, 0);
    EXPECT_LE(plan.lxSticks, cfg.lxSticks());
    EXPECT_NE(
        plan.str().find("keys in chunks of " + std::to_string(plan.chunkKeys)),
        std::string::npos);
  }
  // Not even 64 keys of a 4096-wide head fit 128 KiB beside a tile.
  codegen::AttentionArgs args;
  args.q.shape = args.y.shape = {1, 1, 64, 4096};
  args.k.shape = args.v.shape = {1, 1, 64, 4096};
  const codegen::AttentionPlan plan = codegen::planAttention(smallLx(), args);
  EXPECT_NE(plan.error.find("do not fit the LX region"), std::string::npos)
      << plan.error;
}

} // namespace
} // namespace spyre::compiler
