// The head split and merge of attention as views: a reshape
// [S, H x 64] -> [S, H, 64] and a transpose to [H, S, 64] (or the way
// back) move nothing when each head is one stick, since stick h of row s
// is the stick of (h, s) in both default layouts. Checked end to end
// (CompileCheck.h: -O0 and -O2, numerics against the host reference, zero
// findings) and by the device bytes written, which count only the kernels'
// results; where the bytes differ (a batch dim above the rows, a reshaped
// value used by another op too) the ops still move sticks and the numbers
// still match.
#include "compiler/driver/CompileCheck.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

using test::CheckedRun;

constexpr int64_t kStickBytes = 128;

/// x [77, 192] -> heads [3, 77, 64] -> relu -> back to [77, 192] -> + x.
const char *kSwap = R"(graph @t {
  input %x : f32[77, 192]
  %h = reshape @split(%x) {shape = [77, 3, 64]} : f32[77, 3, 64]
  %hh = transpose @perm(%h) {perm = [1, 0, 2]} : f32[3, 77, 64]
  %r = relu @act(%hh) : f32[3, 77, 64]
  %m = transpose @unperm(%r) {perm = [1, 0, 2]} : f32[77, 3, 64]
  %y0 = reshape @merge(%m) {shape = [77, 192]} : f32[77, 192]
  %y = add @res(%y0, %x) : f32[77, 192]
  return %y
})";

TEST(HeadViews, SplitAndMergeMoveNothing) {
  std::unique_ptr<Graph> g = test::parseGraphText(kSwap);
  ASSERT_TRUE(g);
  // relu's [3, 77, 64] and the add's [77, 192] are 231 sticks each; the
  // four ops of the split and merge would write as much again each.
  const uint64_t results = 2 * 231 * kStickBytes;
  for (int level : {0, 2}) {
    CompileOptions o;
    o.optLevel = level;
    CheckedRun r = test::checkCompiledWith(*g, o, 2);
    ASSERT_TRUE(r.compiled);
    EXPECT_EQ(r.writeBytes, results) << "-O" << level;
  }
}

TEST(HeadViews, ABatchDimAboveTheRowsStillMovesSticks) {
  std::unique_ptr<Graph> g = test::parseGraphText(R"(graph @t {
  input %x : f32[2, 77, 192]
  %h = reshape @split(%x) {shape = [2, 77, 3, 64]} : f32[2, 77, 3, 64]
  %hh = transpose @perm(%h) {perm = [0, 2, 1, 3]} : f32[2, 3, 77, 64]
  %r = relu @act(%hh) : f32[2, 3, 77, 64]
  return %r
})");
  ASSERT_TRUE(g);
  CompileOptions o;
  CheckedRun r = test::checkCompiledWith(*g, o, 1);
  ASSERT_TRUE(r.compiled);
  // Bytes differ here (the batch is outermost in x, inside the heads'
  // blocks in the result), so the split is a copy: more than relu writes.
  EXPECT_GT(r.writeBytes, uint64_t{2 * 231 * kStickBytes});
}

TEST(HeadViews, AValueUsedByAnotherOpIsNotAView) {
  std::unique_ptr<Graph> g = test::parseGraphText(R"(graph @t {
  input %x : f32[77, 192]
  %h = reshape @split(%x) {shape = [77, 3, 64]} : f32[77, 3, 64]
  %hh = transpose @perm(%h) {perm = [1, 0, 2]} : f32[3, 77, 64]
  %s = relu @act(%h) : f32[77, 3, 64]
  return %hh, %s
})");
  ASSERT_TRUE(g);
  // The split is a copy (231 sticks), the transpose writes the output
  // %hh and relu %s: 231 sticks each. As views, the split would write
  // nothing and %hh would be copied out once: 462.
  for (int level : {0, 2}) {
    CompileOptions o;
    o.optLevel = level;
    CheckedRun r = test::checkCompiledWith(*g, o, 1);
    ASSERT_TRUE(r.compiled);
    EXPECT_EQ(r.writeBytes, uint64_t{3 * 231 * kStickBytes}) << "-O" << level;
  }
}

} // namespace
} // namespace spyre::compiler
