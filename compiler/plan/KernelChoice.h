// The kernel choice: what emission makes of each op, as far as the
// planning passes must know it before emission runs. Which ops are views
// of their operand's memory (no kernel, no cores), the product each core
// group of a matmul runs, how an elementwise op runs as one step of a
// fused chain and which operands a chain takes as they are. The planning
// passes (compiler/passes) decide with it and emission (compiler/emit)
// follows it, so both read these functions and neither the other.
//
// Also the conversions from the layout annotation to the kernels' tensor
// shapes (refShapeOf) that both use.
#pragma once

#include "compiler/codegen/Kernels.h"
#include "compiler/ir/Graph.h"
#include "compiler/plan/DeviceLayout.h"
#include "hw/HwConfig.h"
#include "isa/InstrTable.h"
#include "isa/Program.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spyre::compiler {

/// The product of dims [from, to) of `s`.
int64_t product(const std::vector<int64_t> &s, size_t from, size_t to);
/// The product of all dims of `s`.
int64_t numel(const std::vector<int64_t> &s);

/// Host dims in the order a kernel sees them: the stick dim last.
std::vector<int64_t> refOrder(const Value &v);
/// The shape of `v` in refOrder (a scalar is [1]).
std::vector<int64_t> refShapeOf(const Value &v);

/// Whether reshape `r` splits its last dim into heads of one stick
/// (`back`: merges them again).
bool splitsStickHeads(const Op &r, bool back = false);

/// A head split [S, H x L] -> [S, H, L] -> [H, S, L] (a reshape, then a
/// transpose) or the merge back (the transpose, then the reshape), with
/// heads of one stick, whose value between the two is used by nothing else:
/// `op` is either of them.
bool isHeadSwap(const Graph &graph, const Op &op);

/// Whether reshape `r` splits [B, S, H x D] into [B, S, H, D] (or, `back`,
/// merges them), D whole sticks.
bool splitsHeads(const Op &r, bool back = false);

/// The head split and merge around an attention op as views: q (or k, v)
/// = transpose(reshape([B, S, H x D] -> [B, S, H, D])) used only by
/// attention ops reads the projection's memory in place, and the merge
/// reshape(transpose(attention)) back to [B, S, H x D] is where the
/// attention kernel writes: with D whole sticks, head h of row s is
/// blocks hD/lanes .. of row s, so both ends are the same sticks in
/// another order ([H, blocks of D, B, S] as device dims) and nothing moves.
/// `op` is one of the reshapes or transposes; the values between them are
/// used by nothing else and are not graph outputs.
bool isAttentionHeadView(const Graph &graph, const Op &op);

/// Whether `op` makes its results as views of its operand's device memory
/// (same bytes, no data moved): reshapes that keep the last dimension,
/// splits at whole sticks of the last dimension or of an outermost
/// dimension, and the reshape and transpose of a head split
/// [S, H x lanes] -> [S, H, lanes] -> [H, S, lanes] or of the merge back
/// (isHeadSwap), and the head split and merge around attention
/// (isAttentionHeadView). Reads the layout annotations.
bool isFreeView(const Graph &graph, const Op &op);

/// The product each core group of a matmul runs, as emission splits it
/// (addresses zero; dtypes and shapes as on the device, the fused bias
/// included): the batch dims of A folded into M when B has none
/// (batches = 1), else one product per batch.
/// Whether the matmul kernel runs `kind`, planned as a matmul: matmul and
/// gated_matmul.
inline bool runsMatmulKernel(OpKind kind) {
  return kind == OpKind::Matmul || kind == OpKind::GatedMatmul;
}

/// Rows of a matmul's product (per matrix of B, A's batch dims folded in
/// where B has none) up to which a computed B read transposed is turned in
/// LX by the kernel rather than copied transposed (turnsBInKernel).
constexpr int64_t kTurnedBMaxRows = 64;

/// Whether matmul `op` with transpose_b reads its B as it is stored,
/// [..., N, K] sticked on K, and turns each block into K x N in LX (the
/// kernel's transB), where otherwise the layout pass gives it a copy
/// sticked on N. It does for a B that is computed or a graph input (a
/// constant is laid out once, when it is loaded, so its transposed copy
/// costs nothing per run) and a product of at most kTurnedBMaxRows rows:
/// each block of B is then turned once, where the copy reads B, writes it
/// and reads it again (decode's q K^T of 8 heads of [4096, 128] keys:
/// 239,926 of 329,200 cycles were the copy; turned, 89,414). With more
/// rows each row tile turns the block again (a 4096-token prefill's
/// scores took 31.0 M cycles so, against 18.2 M with the copy).
bool turnsBInKernel(const Op &op);

/// Whether emission runs matmul `op` with the kernel's transB: transpose_b
/// with B sticked on its last dimension (what turnsBInKernel chose; reads
/// the layout annotation).
bool readsBTurned(const Op &op);

struct MatmulWork {
  codegen::MatmulArgs args;
  int64_t batches = 1;
};
MatmulWork matmulWork(const Graph &graph, const Op &op, const std::string &fuseBias);

/// Cores of each batch's group when `batches` products share `cores`.
int64_t coresPerBatch(int64_t batches, int64_t cores);

/// The config a batch's product is estimated with when `batches` products
/// share `cores` (compiler/plan/Estimate.h): the groups that run at once
/// share the memory channel, so each gets its share of the sustained rates
/// (with the whole channel the 12 head products of GPT-2's attention were
/// estimated 6x faster than they ran). The tile pass still plans each
/// product with the whole channel: planning with the share made the K
/// split of two [64, 8192] x [8192, 64] products look no better than K
/// whole, which runs 12% slower.
hw::HwConfig batchConfig(const hw::HwConfig &config, int64_t batches,
                         int64_t cores);

/// Whether emission runs kernels for `op` (not a free view, not an add
/// folded into a matmul, not an op fused into an elementwise chain).
bool opRunsKernels(const Graph &graph, const Op &op);

/// An elementwise op as one step on its running value, the operand at
/// `running`: the SFU op, with an immediate (a constant scalar second
/// operand of add, sub and mul; pow's exponent) or the other operand,
/// which with `operandFirst` is the op's first (sub and div). The kernel
/// choice of emission, for a single op and for a step of a chain.
struct ElementwiseStep {
  isa::Opcode op = isa::Opcode::Copy; ///< an SFU op of the unary, scalar or
                                      ///< binary family
  std::optional<float> imm;
  const Value *operand = nullptr;
  bool operandFirst = false;
};
std::optional<ElementwiseStep> elementwiseStep(const Op &op, size_t running);

/// The SFU binary op of add, sub, mul or div.
isa::Opcode binaryOpcode(OpKind kind);

/// The operand of the first op of an elementwise chain that the chain runs
/// on: one with the result's shape and stick dim (the first when both have
/// them; emission converts its dtype if need be); nullopt when the op
/// cannot start a chain.
std::optional<size_t> chainInput(const Op &op);

/// Whether a chain takes `other` beside chain value `v` as it is: v's
/// shape and stick dim, or one row of v's last dim, or one element (the
/// dtype is converted if need be).
bool chainOperandFits(const Value &other, const Value &v);

} // namespace spyre::compiler
