// The `canonicalize` pass: rewrites a model into the smaller set of op forms
// the later passes and the kernels handle, without changing what it
// computes.
//
// Rules, each counted by a statistic:
//  - linear(x, W, b) -> matmul(x, W) {transpose_b = true} + add of b
//    (broadcast over the last dimension); W stays [out, in] as PyTorch
//    stores it. A 1-D x goes through a [1, in] reshape and back.
//  - matmul of a transpose (of its last two dimensions) of a constant uses
//    the constant with the transpose attribute flipped; no transposed copy
//    of a constant is ever made.
//  - chains of reshape/squeeze/unsqueeze collapse: a chain that comes back
//    to its source's shape (or one view to the same shape) disappears, any
//    other chain becomes a single reshape of the source.
//  - pow with exponent 1 disappears; 2 -> mul x x, 0.5 -> sqrt, -0.5 ->
//    rsqrt, -1 -> reciprocal.
//  - neg(neg(x)) disappears.
//  - the erf form of GELU as exporters write it, x * 0.5 * (1 + erf(x /
//    sqrt 2)), becomes gelu {approximate = "none"}: the three factors x,
//    0.5 and 1 + erf(...) in any grouping and order (0.5 applied first or
//    last), x / 1.4142135 or x * 0.70710678 inside erf, constants with one
//    element. The steps in between must feed nothing else. The constants
//    are matched within float32 rounding of sqrt 2 and 1 / sqrt 2, so the
//    fused op differs from the float32 decomposition by about 1e-8
//    relative.
//  - softmax(causal_mask_add(x)) over the last axis, with at least as many
//    keys as queries, becomes causal_softmax(x) {scale = 1}; a mul or div
//    of its x by a positive scalar constant (scores * scale, scores /
//    sqrt(d), as PyTorch and ONNX exporters write attention) is taken into
//    its scale. The masked scores and the scaled ones must feed nothing
//    else.
//  - ops whose results nobody uses (and that are not outputs) are erased.
// A rewrite that would make a graph output an alias of another value is not
// done: outputs keep their names. The rules repeat until none applies.
//
// pow -> sqrt/rsqrt/reciprocal follow PyTorch's and ONNX exporters'
// meaning of these exponents; they differ from C pow only at -0 and -inf
// (pow(-inf, 0.5) = +inf where sqrt gives NaN).
//
// Postcondition: no linear op remains, and no pow with exponent 2, 0.5,
// -0.5 or -1.
#pragma once

#include "compiler/pm/Pass.h"

namespace spyre::compiler {

const PassInfo &canonicalizePass();

} // namespace spyre::compiler
