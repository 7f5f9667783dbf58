// The gated product of a SwiGLU MLP, C = silu(A x Bg) * (A x Bu), as the
// matmul kernel runs it (MatmulKernel.cpp, MatmulArgs::up): one plan, one
// loop nest, the same operand sharing, kept panels and K split, with each
// tile doing the work of both products side by side:
//  - a B tile holds the gate weight's columns and, a tile of columns
//    further on, the up weight's same columns (two loads per tile; the up
//    weight's address register steps with the gate's);
//  - the PT units multiply the A tile by both, into two FP32 C tiles, the
//    up product's right after the gate's (a K split's partials carry both);
//  - the post stage (SFU) takes silu of the gate tile in place, multiplies
//    it by the up tile on the way into the convert's stage, and converts
//    the product to DL16: only the gated result is stored.
// So A is read once for both products, and the two [M, N] products and
// the elementwise pass that would gate them never reach device memory.
// The planner weighs B traffic, PT work, the reduction and LX for both
// weights (Problem::weights).
#include "compiler/codegen/MatmulModel.h"

namespace spyre::codegen::matmul {

void checkGated(const Problem &p) {
  SPYRE_ASSERT(p.up->dtype == isa::DType::Dl16 && p.up->rows == p.b.rows &&
                   p.up->cols == p.b.cols && p.up->memRows == p.b.memRows &&
                   p.up->rowStride == p.b.rowStride &&
                   p.up->blockStride == p.b.blockStride,
               "gated matmul: the up weight must be laid out as the gate's");
  SPYRE_ASSERT(!p.transB, "gated matmul: the weights must be sticked on N");
  SPYRE_ASSERT(!p.outF32, "gated matmul: C must be DL16");
  SPYRE_ASSERT(!p.bias, "gated matmul: no bias");
}

void siluInPlace(StreamBuilder &s, Addr gate, int64_t rows, int64_t fBlocks,
                 int64_t tileM) {
  s.append(sfuUnary(isa::Opcode::Silu, gate, gate,
                    {rows, fBlocks, tileM, tileM, 0, 0}, true));
}

InstrBuilder gateRows(Addr dst, Addr gate, Addr up, int64_t rows) {
  return sfuBinary(isa::Opcode::Mul, dst, gate, up, {1, rows, 2, 1, 1, 0},
                   false, true);
}

} // namespace spyre::codegen::matmul
