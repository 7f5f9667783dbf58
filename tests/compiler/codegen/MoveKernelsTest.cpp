// Transpose and relayout kernels on the simulator. Both only move elements,
// so the outputs must equal the inputs exactly, element for element, padding
// lanes and padding sticks zero; zero findings required.
#include "KernelHarness.h"

#include "compiler/codegen/Kernels.h"
#include "hw/HwConfig.h"

#include <gtest/gtest.h>

#include <string>

namespace spyre::codegen {
namespace {

using isa::DType;
using isa::TensorKind;
using test::randomValues;
using test::simulate;

std::string shapeText(const std::vector<int64_t> &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

// ---------------------------------------------------------------- transpose

void checkTranspose(const std::vector<int64_t> &shape, DType dtype, int cores) {
  SCOPED_TRACE(shapeText(shape) + " " + std::string(isa::dtypeName(dtype)) +
               " on " + std::to_string(cores) + " cores");
  std::vector<int64_t> out = shape;
  std::swap(out[out.size() - 1], out[out.size() - 2]);
  ProgramBuilder pb(hw::builtinConfig(), "transpose");
  const auto &x = pb.addTensor("x", TensorKind::Input, dtype, shape);
  const auto &y = pb.addTensor("y", TensorKind::Output, dtype, out);
  KernelOptions opt;
  opt.cores = cores;
  emitTranspose(pb, TensorRef::of(x), TensorRef::of(y), opt);
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  std::vector<float> xv =
      randomValues(isa::elementCount(shape), 41, -50, 50, dtype);
  test::SimResult r = simulate(p, {{{"x", xv}}});
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  const int64_t pDim = shape[shape.size() - 2], qDim = shape.back();
  const auto outer = static_cast<int64_t>(xv.size()) / (pDim * qDim);
  std::vector<double> ref(xv.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < pDim; ++i)
      for (int64_t j = 0; j < qDim; ++j)
        ref[static_cast<size_t>((o * qDim + j) * pDim + i)] =
            xv[static_cast<size_t>((o * pDim + i) * qDim + j)];
  EXPECT_TRUE(test::allClose(r.outputs["y"], ref,
                             std::vector<double>(ref.size(), 0.0)));
}

TEST(TransposeKernel, EverySizeDl16) {
  const int64_t sizes[] = {1, 7, 77, 100, 129};
  int i = 0;
  for (int64_t p : sizes)
    for (int64_t q : sizes)
      checkTranspose({p, q}, DType::Dl16, 1 + i++ % 4);
}

TEST(TransposeKernel, BatchedAndFp32AndManyCores) {
  checkTranspose({3, 70, 130}, DType::Dl16, 4);
  checkTranspose({2, 3, 33, 65}, DType::Fp32, 5);
  checkTranspose({33, 65}, DType::Fp32, 1);
  checkTranspose({300, 700}, DType::Dl16, 32);
  checkTranspose({5, 129, 64}, DType::Dl16, 32);
}

// ----------------------------------------------------------------- relayout

/// x (default layout) -> scratch in `layout` -> z (default layout): z must
/// equal x, and the scratch must hold every element at the stick and lane
/// its layout says, with zero padding. `coresUsed`, when given, is how many
/// cores each of the two relayouts must share the work among.
void checkRelayout(const std::vector<int64_t> &shape, DType dtype, int blockPos,
                   const std::vector<int64_t> &padded, int cores,
                   const std::vector<int> &order = {},
                   const std::vector<size_t> &coresUsed = {}) {
  SCOPED_TRACE(shapeText(shape) + " blocks at " + std::to_string(blockPos) +
               " padded " + shapeText(padded) + " order " +
               shapeText(std::vector<int64_t>(order.begin(), order.end())) +
               " " + std::string(isa::dtypeName(dtype)));
  ProgramBuilder pb(hw::builtinConfig(), "relayout");
  const auto &x = pb.addTensor("x", TensorKind::Input, dtype, shape);
  TensorRef mid;
  mid.name = "mid";
  mid.dtype = dtype;
  mid.shape = shape;
  mid.padded = padded;
  mid.blockPos = blockPos;
  mid.dimOrder = order;
  const int64_t lanes = isa::lanesPerStick(dtype);
  // The re-laid-out tensor is a blob of whole sticks the test can look at
  // stick by stick. It starts full of garbage (an input), so the padding
  // sticks must be written as zero by the kernel.
  const auto &blob =
      pb.addTensor("mid", TensorKind::Input, dtype,
                   {static_cast<int64_t>(mid.sizeSticks()), lanes});
  mid.address = blob.address;
  const auto &z = pb.addTensor("z", TensorKind::Output, dtype, shape);
  KernelOptions opt;
  opt.cores = cores;
  const MovePlan there = emitRelayout(pb, TensorRef::of(x), mid, opt);
  pb.barrierAll();
  const MovePlan back = emitRelayout(pb, mid, TensorRef::of(z), opt);
  if (!coresUsed.empty()) {
    EXPECT_EQ(there.parts.size(), coresUsed[0]);
    EXPECT_EQ(back.parts.size(), coresUsed[1]);
  }
  isa::Program p = pb.finish();
  ASSERT_EQ(test::programFileProblem(p), "");
  std::vector<float> xv =
      randomValues(isa::elementCount(shape), 51, -9, 9, dtype);
  std::vector<float> garbage = randomValues(
      mid.sizeSticks() * static_cast<size_t>(lanes), 52, 1, 2, dtype);
  test::SimResult r = simulate(p, {{{"x", xv}, {"mid", garbage}}});
  ASSERT_TRUE(r.findings.empty()) << r.findings[0];
  std::vector<double> ref(xv.begin(), xv.end());
  EXPECT_TRUE(test::allClose(r.outputs["z"], ref,
                             std::vector<double>(ref.size(), 0.0)));
  // Where each element sits in the middle layout; everything else is zero.
  std::vector<double> expectMid(mid.sizeSticks() * static_cast<size_t>(lanes),
                                0);
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t e = 0; e < xv.size(); ++e) {
    size_t rem = e;
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = static_cast<int64_t>(rem % static_cast<size_t>(shape[d]));
      rem /= static_cast<size_t>(shape[d]);
    }
    uint64_t stick = mid.stickOf(index) - mid.address;
    expectMid[stick * static_cast<size_t>(lanes) +
              static_cast<size_t>(index.back() % lanes)] = xv[e];
  }
  EXPECT_TRUE(test::allClose(r.outputs["mid"], expectMid,
                             std::vector<double>(expectMid.size(), 0.0)));
}

TEST(RelayoutKernel, BlocksInnermost) {
  checkRelayout({3, 100}, DType::Dl16, 1, {}, 2);
  checkRelayout({129, 129}, DType::Dl16, 1, {}, 4);
  checkRelayout({7, 5, 77}, DType::Fp32, 2, {}, 3);
  checkRelayout({1, 1}, DType::Dl16, 1, {}, 1);
}

TEST(RelayoutKernel, BlocksInTheMiddleAndPadding) {
  checkRelayout({3, 5, 77}, DType::Dl16, 1, {4, 8}, 2);
  checkRelayout({100, 77}, DType::Dl16, 0, {128}, 3);
  checkRelayout({2, 3, 4, 130}, DType::Dl16, 2, {2, 5, 4}, 4);
  checkRelayout({200, 7}, DType::Fp32, 1, {256}, 32);
}

TEST(RelayoutKernel, LeadingDimsInAnotherOrder) {
  checkRelayout({3, 5, 77}, DType::Dl16, 0, {}, 2, {1, 0});
  checkRelayout({4, 3, 5, 100}, DType::Dl16, 3, {6, 3, 5}, 3, {2, 0, 1});
  checkRelayout({2, 33, 9, 40}, DType::Fp32, 1, {}, 8, {1, 2, 0});
}

// A copy whose outermost dim has fewer indices than there are cores shares
// the next dim's tiles out too. Heads [12, 256, 64] to and from the order
// of a head split ([256 rows][12 heads] of one stick each; it has no outer
// dim, so its rows are tiled for 32 cores, while the way back walks 256
// sticks per head and has 12 tiles), and a batched C [12, 256, 256] to and
// from batch-outermost (12 batches x 2 pieces of 4 blocks, 4 blocks x 6
// pieces of 12 batches).
TEST(RelayoutKernel, FewOuterIndicesStillUseTheCores) {
  checkRelayout({12, 256, 64}, DType::Dl16, 0, {}, 32, {1, 0}, {32, 12});
  checkRelayout({12, 256, 256}, DType::Dl16, 1, {}, 32, {}, {24, 24});
  checkRelayout({3, 40, 77}, DType::Fp32, 2, {5, 40}, 32, {}, {});
}

} // namespace
} // namespace spyre::codegen
