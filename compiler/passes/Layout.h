// The `layout` pass: gives every value a device layout (DeviceLayout.h) and
// inserts a `relayout` wherever a producer's layout is not the one a
// consumer needs.
//
// What each value gets:
//  - device dtype: DL16 for float values by default (`default-dtype=f32`
//    keeps them FP32), FP32 for the results of the op kinds listed in
//    `f32-ops`; integer values keep their own type. How a kernel computes
//    inside (softmax, layernorm in FP32 on the SFU) is the kernel's business,
//    not this pass's.
//  - stick dimension: the last host dimension (none for a scalar), other
//    dimensions in host order, stick blocks outermost, padding zero.
//  - graph inputs and op results get that default; a constant gets the
//    layout its first consumer needs (weights are laid out once when they
//    are loaded, so they never need a relayout for that consumer).
//
// What consumers need (docs/hardware.md#matmul-operands):
//  - matmul: a sticked on K (its last dimension, the one before with
//    transpose_a), b sticked on N (its last dimension, the one before with
//    transpose_b), both DL16, as the PT takes them; the result, sticked on
//    N, is the default.
//  - relayout: its operand as it is.
//  - every other op: each operand sticked on its last dimension, in the
//    operand's own dtype (the SFU reads DL16 and FP32 alike).
// Where the operand's layout differs, a `relayout` op (identity on values;
// its result annotated with the needed layout) is inserted before the first
// consumer that needs it and shared by every consumer that needs the same.
//
// Postcondition: every value has a layout annotation that follows the stick
// rule for its type, and every operand's layout equals what its consumer
// needs.
#pragma once

#include "compiler/plan/DeviceLayout.h"
#include "compiler/pm/Pass.h"

namespace spyre::compiler {

const PassInfo &layoutPass();

/// The layout that operand `index` of `op` must have, given the layout
/// `current` it has now (its dtype is kept where the consumer accepts any).
DeviceLayout requiredOperandLayout(const Op &op, size_t index,
                                   const DeviceLayout &current);

} // namespace spyre::compiler
