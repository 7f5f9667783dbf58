// The gated product of a SwiGLU MLP, silu(x Wg) * (x Wu), end to end
// (CompileCheck.h: numerics against the double-precision host reference
// within the DL16 tolerance of docs/compiler.md, zero findings): at -O0 as
// two matmuls, silu and mul, at -O2 as the one gated_matmul the
// fuse-gated-matmul pass makes of them, on shapes that are not multiples
// of 64 (rows, K and N), with batch dims folded into the rows, a decode
// shape of few rows over a long K, K split across cores (both partials
// summed over the reduce ring, with a tail of N), and weights given
// transposed. Fused, the device writes only the result.
#include "compiler/driver/CompileCheck.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace spyre::compiler {
namespace {

using test::CheckedRun;

struct Case {
  int64_t batch, rows, k, n;
  bool transB = false;
};

std::string label(const Case &c) {
  return std::to_string(c.batch) + "x" + std::to_string(c.rows) + " x " +
         std::to_string(c.k) + " x " + std::to_string(c.n) +
         (c.transB ? ", weights transposed" : "");
}

std::string graphText(const Case &c) {
  auto t = [](std::initializer_list<int64_t> dims) {
    std::string s = "f16[";
    for (int64_t d : dims)
      s += (s.size() > 4 ? ", " : "") + std::to_string(d);
    return s + "]";
  };
  const std::string x = t({c.batch, c.rows, c.k}),
                    w = c.transB ? t({c.n, c.k}) : t({c.k, c.n}),
                    y = t({c.batch, c.rows, c.n});
  const std::string attrs = std::string("{transpose_b = ") +
                            (c.transB ? "true" : "false") + "}";
  return "graph @t {\n  input %x : " + x + "\n  input %wg : " + w +
         "\n  input %wu : " + w + "\n  %g = matmul @gate(%x, %wg) " + attrs +
         " : " + y + "\n  %a = silu @act(%g) : " + y +
         "\n  %u = matmul @up(%x, %wu) " + attrs + " : " + y +
         "\n  %y = mul @gated(%a, %u) : " + y + "\n  return %y\n}";
}

/// Checks `c` at -O0 (unfused) and -O2 (fused); returns the -O2 run.
CheckedRun check(const Case &c) {
  SCOPED_TRACE(label(c));
  std::unique_ptr<Graph> g = test::parseGraphText(graphText(c));
  EXPECT_TRUE(g);
  if (!g)
    return {};
  CheckedRun last;
  for (int level : {0, 2}) {
    CompileOptions o;
    o.optLevel = level;
    // Unfused: the products, the silu and the product of the two are each
    // rounded to DL16; fused, only the result.
    last = test::checkCompiledWith(*g, o, 4, {-1, 1});
    EXPECT_TRUE(last.compiled) << "-O" << level;
  }
  return last;
}

TEST(GatedMatmul, OddShapesMatchTheReference) {
  check({1, 77, 200, 300});
  check({2, 35, 130, 70});
}

TEST(GatedMatmul, FewRowsOverALongKMatchTheReference) {
  check({4, 1, 1100, 250});
}

TEST(GatedMatmul, KSplitMatchesTheReference) {
  const Case c{1, 8, 1100, 130};
  SCOPED_TRACE(label(c));
  std::unique_ptr<Graph> g = test::parseGraphText(graphText(c));
  ASSERT_TRUE(g);
  const std::string file = ::testing::TempDir() + "gated_k_split.json";
  std::ofstream(file) << R"({"ops": {"gated": {"k_split": 3}}})";
  CompileOptions o;
  o.optLevel = 2;
  o.mappingIn = file;
  CheckedRun r = test::checkCompiledWith(*g, o, 4, {-1, 1});
  ASSERT_TRUE(r.compiled);
  EXPECT_NE(r.compiled->mappingJson.find("\"k_split\":3"), std::string::npos)
      << r.compiled->mappingJson;
}

TEST(GatedMatmul, TransposedWeightsMatchTheReference) {
  check({1, 50, 190, 130, true});
}

TEST(GatedMatmul, FusedWritesOnlyTheResult) {
  const Case c{1, 100, 150, 320};
  CheckedRun r = check(c);
  ASSERT_TRUE(r.compiled);
  // The gated result [100, 320] in DL16: neither product reaches memory.
  EXPECT_EQ(r.writeBytes, uint64_t{100 * 320 * 2});
}

} // namespace
} // namespace spyre::compiler
