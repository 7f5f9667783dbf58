// Batched matmuls with a B per batch (attention's Q K^T and P V) whose
// operands and result have several stick blocks per row: compiled at -O0
// and -O2, simulated with numerics and the schedule checks, and compared
// with the host reference (CompileCheck.h; tolerance depth * 2^-8 *
// (|reference| + mean |reference|) + 2^-31). Each batch's matrices are
// read and written in place, so the program declares no scratch copy for
// the matmul and, without a transposed B, writes device memory exactly
// once per stick of C. TensorRef::matrix, the in-place view, is checked
// against hand-computed strides.
#include "compiler/codegen/KernelHarness.h"
#include "compiler/codegen/TensorRef.h"
#include "compiler/driver/Compile.h"
#include "compiler/driver/CompileCheck.h"
#include "compiler/pipeline/PassRegistry.h"
#include "compiler/pm/PassManager.h"
#include "hw/HwConfig.h"

#include <gtest/gtest.h>


namespace spyre::compiler {
namespace {

using test::CheckedRun;
using test::checkCompiledWith;

std::string shapeText(const std::vector<int64_t> &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

/// One matmul @mm: a x b (b transposed when transB) -> y.
std::string matmulGraph(const std::vector<int64_t> &a,
                        const std::vector<int64_t> &b,
                        const std::vector<int64_t> &y, bool transB) {
  return "graph @t {\n  input %a : f32" + shapeText(a) +
         "\n  input %b : f32" + shapeText(b) +
         "\n  %y = matmul @mm(%a, %b) {transpose_a = false, transpose_b = " +
         (transB ? "true" : "false") + "} : f32" + shapeText(y) +
         "\n  return %y\n}";
}

/// Names of the scratch tensors emission made for op @mm (`mm.tmp<i>`):
/// the batch-outermost copies of operands and result.
std::vector<std::string> matmulScratch(const isa::Program &p) {
  std::vector<std::string> names;
  for (const isa::TensorDecl &t : p.tensors)
    if (t.name.rfind("mm.tmp", 0) == 0)
      names.push_back(t.name);
  return names;
}

/// Bytes of a DL16 [.., R, C] tensor on the device: whole 64-lane sticks.
uint64_t dl16Bytes(const std::vector<int64_t> &s) {
  uint64_t sticks = static_cast<uint64_t>((s.back() + 63) / 64);
  for (size_t i = 0; i + 1 < s.size(); ++i)
    sticks *= static_cast<uint64_t>(s[i]);
  return sticks * 128;
}

codegen::TensorRef dl16(std::vector<int64_t> shape, int blockPos = 0) {
  codegen::TensorRef t;
  t.name = "t";
  t.address = 1000;
  t.shape = std::move(shape);
  t.blockPos = blockPos;
  return t;
}

TEST(TensorRefMatrix, DefaultLayoutIsAWindowWithItsBlocksApart) {
  // [3, 77, 130] DL16: device [3 blocks, 3, 77], blocks 231 sticks apart.
  const std::optional<codegen::TensorRef> m = dl16({3, 77, 130}).matrix(2);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->shape, (std::vector<int64_t>{77, 130}));
  EXPECT_TRUE(m->window);
  const codegen::StickMatrix s = codegen::StickMatrix::of(*m);
  EXPECT_EQ(s.address, 1000u + 2 * 77);
  EXPECT_EQ(s.rows, 77);
  EXPECT_EQ(s.rowStride, 1);
  EXPECT_EQ(s.blockStride, 231);
  // Batch 0's rows 77.. are batch 1's, not zero padding.
  EXPECT_EQ(s.memRows, 77);
  // Two batch dims, counted row-major: matrix 4 of [2, 3] is (1, 1).
  const std::optional<codegen::TensorRef> m4 =
      dl16({2, 3, 20, 100}).matrix(4);
  ASSERT_TRUE(m4);
  EXPECT_EQ(codegen::StickMatrix::of(*m4).address, 1000u + 3 * 20 + 20);
  EXPECT_EQ(codegen::StickMatrix::of(*m4).blockStride, 2 * 3 * 20);
  // One block per row: the matrices are consecutive, nothing between.
  const std::optional<codegen::TensorRef> m1 = dl16({3, 77, 64}).matrix(1);
  ASSERT_TRUE(m1);
  EXPECT_FALSE(m1->window);
  EXPECT_EQ(codegen::StickMatrix::of(*m1).address, 1000u + 77);
}

TEST(TensorRefMatrix, OtherBlockPositionsAndAnUnsliceableOrder) {
  // Batch outermost, device [3, 3 blocks, 77]: matrices contiguous.
  const std::optional<codegen::TensorRef> outer =
      dl16({3, 77, 130}, 1).matrix(1);
  ASSERT_TRUE(outer);
  EXPECT_FALSE(outer->window);
  const codegen::StickMatrix so = codegen::StickMatrix::of(*outer);
  EXPECT_EQ(so.address, 1000u + 231);
  EXPECT_EQ(so.blockStride, 77);
  EXPECT_EQ(so.memRows, 77);
  // Blocks innermost, device [3, 77, 3 blocks].
  const std::optional<codegen::TensorRef> inner =
      dl16({3, 77, 130}, 2).matrix(1);
  ASSERT_TRUE(inner);
  const codegen::StickMatrix si = codegen::StickMatrix::of(*inner);
  EXPECT_EQ(si.address, 1000u + 231);
  EXPECT_EQ(si.rowStride, 3);
  EXPECT_EQ(si.blockStride, 1);
  // Rows outside the batch dim, device [3 blocks, 77, 3]: a matrix's rows
  // are 3 sticks apart and its blocks 231 apart, no [rows, cols] layout.
  codegen::TensorRef swapped = dl16({3, 77, 130});
  swapped.dimOrder = {1, 0};
  EXPECT_FALSE(swapped.matrix(0));
}

struct Case {
  std::vector<int64_t> a, b, y;
  bool transB = false;
};

void checkCase(const Case &c) {
  std::unique_ptr<Graph> g = test::parseGraphText(matmulGraph(c.a, c.b, c.y, c.transB));
  ASSERT_TRUE(g);
  for (int level : {0, 2}) {
    SCOPED_TRACE("-O" + std::to_string(level));
    CompileOptions co;
    co.optLevel = level;
    const CheckedRun run = checkCompiledWith(*g, co, 4);
    ASSERT_TRUE(run.compiled);
    EXPECT_EQ(matmulScratch(run.compiled->program),
              std::vector<std::string>{});
    // The only device-memory writes are C's sticks, each once (a copy of
    // an operand or of C would add its bytes). A transposed B is first
    // restickified by its own relayout op, which writes too.
    if (!c.transB) {
      EXPECT_EQ(run.writeBytes, dl16Bytes(c.y));
    }
  }
}

TEST(CompileBatchedMatmul, OddShapesSeveralBlocksPerRow) {
  // M = 77 (not a multiple of 8), K = 130 (a short last K stick whose
  // padding rows the kernel zeroes itself: in place, the sticks after
  // batch 0's 130 rows of B are batch 1's rows), 3 blocks per row of each.
  checkCase({{3, 77, 130}, {3, 130, 129}, {3, 77, 129}});
  // Few rows, K of 4 blocks with a short last one, N of 2 blocks.
  checkCase({{5, 8, 200}, {5, 200, 70}, {5, 8, 70}});
}

TEST(CompileBatchedMatmul, AttentionScoresAndContext) {
  // GPT-2-small's heads: Q K^T with K transposed, then P V.
  checkCase({{12, 256, 64}, {12, 256, 64}, {12, 256, 256}, true});
  checkCase({{12, 256, 256}, {12, 256, 64}, {12, 256, 64}});
}

TEST(CompileBatchedMatmul, MoreBatchesThanCoresAndTwoBatchDims) {
  // 40 batches on 32 cores run in two waves of groups.
  checkCase({{40, 9, 70}, {40, 70, 65}, {40, 9, 65}});
  checkCase({{2, 3, 20, 100}, {2, 3, 100, 70}, {2, 3, 20, 70}});
}

TEST(CompileBatchedMatmul, SharedA) {
  // A without batch dims is one matrix every batch reads.
  checkCase({{7, 100}, {3, 100, 129}, {3, 7, 129}});
}

/// Compiles `g` at `level` with matmul results kept FP32 on the device
/// (layout{f32-ops=matmul}), simulates it and checks output y against the
/// reference within `depth` DL16 roundings. Returns the program.
isa::Program checkFp32Result(const Graph &g, int level, int depth) {
  std::string text = pipelineForLevel(level, "");
  const size_t at = text.find(",layout,");
  EXPECT_NE(at, std::string::npos) << text;
  text.replace(at, 8, ",layout{f32-ops=matmul},");
  DiagnosticEngine diags;
  std::optional<Pipeline> pipeline = parsePipeline(text, diags);
  EXPECT_TRUE(pipeline) << diags.str();
  if (!pipeline)
    return {};
  std::unique_ptr<Graph> work = g.clone();
  PassManager pm(hw::builtinConfig(), {});
  pm.addPipeline(*pipeline);
  EXPECT_EQ(pm.run(*work, diags), PipelineStatus::Success) << diags.str();
  const std::optional<isa::Program> &program = pm.target().program;
  EXPECT_TRUE(program) << diags.str();
  if (!program)
    return {};
  test::checkProgram(g, *program, depth, {}, text);
  return *program;
}

TEST(CompileBatchedMatmul, Fp32Result) {
  // An FP32 C has 32 lanes per stick: 129 columns are 5 blocks.
  for (const Case &c : std::vector<Case>{
           {{3, 77, 130}, {3, 130, 129}, {3, 77, 129}},
           {{12, 256, 64}, {12, 256, 64}, {12, 256, 256}, true}}) {
    std::unique_ptr<Graph> g = test::parseGraphText(matmulGraph(c.a, c.b, c.y, c.transB));
    ASSERT_TRUE(g);
    for (int level : {0, 2}) {
      SCOPED_TRACE(shapeText(c.y) + " -O" + std::to_string(level));
      const isa::Program p = checkFp32Result(*g, level, 4);
      bool fp32 = false;
      for (const isa::TensorDecl &t : p.tensors)
        fp32 |= t.name == "y" && t.dtype == isa::DType::Fp32;
      EXPECT_TRUE(fp32) << "the matmul's result is not FP32 on the device";
      EXPECT_EQ(matmulScratch(p), std::vector<std::string>{});
    }
  }
}

} // namespace
} // namespace spyre::compiler
